"""Writing a result set: created `running`, its cases added in batches (one transaction each), marked `done` at the
end in a last transaction with its totals.

A set is `done` only when that last transaction commits: a writer stopped before it (killed, or its machine lost)
leaves the set `running` with whole batches in it, never a half batch and never `done`. An error while the set is
written marks it `failed`, Ctrl-C marks it `cancelled` (each with why), and the error goes on to the caller.

Resuming (`mbt eval --resume NAME`): a set whose run was interrupted — `failed`, `cancelled`, or `running` with its
writer gone — is taken over by a new writer, which keeps the cases stored and adds the rest. The set's meta names
its writer (machine, process, a token of its own) and, while a writer that asked for it runs, a heartbeat it renews
every HEARTBEAT_S seconds. A `running` set's writer is gone when it ran on this machine and its process is no more,
or when its heartbeat is older than LEASE_S seconds (mbt.store.writers); a live writer's set is never taken. Taking a set over replaces
the token in one transaction that rechecks all of this; every batch a writer adds, and its finish, first checks that
the token is still its own (in the same transaction, the set's row locked), so two writers never add to one set.

What the run's LLM judges cost (mbt.judges.usage) is written with the set as the run's rows of `judge_usage` and
`judge_budgets` (mbt.store.schema): a snapshot with each batch an eval run stores (`add(..., usage=...)`: what its
judges cost until then) and the last at the finish, each replacing the run's rows before it. A run stopped midway so
leaves what its judges cost up to its last batch; the run that resumes the set, or retries its errored cases
(mbt.store.update), writes its own rows under the next run number, and the set's cost is the sum over its runs.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from mbt import __version__
from mbt.errors import MbtError
from mbt.judges.usage import EvalBudget, JudgeUsage
from mbt.store.db import Store
from mbt.store.query import overview, set_info, set_row
from mbt.store.records import CaseRecord, NewSet, check_name, now
from mbt.store.schema import case_docs, cases, judge_budgets, judge_usage, result_sets, verdicts
from mbt.store.writers import writer_alive

BATCH = 2000  # cases per transaction
HEARTBEAT_S = 10.0  # how often a writer that keeps a heartbeat renews it
RESUMABLE = ("running", "failed", "cancelled")
# What a run's LLM judges cost until now: each judge's usage and the run's budget (mbt.judges.usage.judge_usage).
RunUsage = tuple[list[JudgeUsage], EvalBudget | None]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class SetWriter:
    """`with SetWriter(store, new) as writer: writer.add(records); writer.finish(summary)`; or, for an interrupted
    set, `with SetWriter.resume(store, name, ...) as writer: ...` (module docstring). `heartbeat`: the writer renews
    a heartbeat from a thread of its own while it runs, so that a resumed run elsewhere can tell it is alive (asked
    for by `mbt eval --save`, whose sets are resumable; a process that forks workers, as `mbt runs` does, keeps no
    thread)."""

    def __init__(self, store: Store, new: NewSet | None, name_given: bool = True, heartbeat: bool = False) -> None:
        self.store = store
        self.new = new
        self.seq = 0
        self.finished = False
        self.token = secrets.token_hex(8)
        self.kept = 0  # cases a resumed set held when this writer took it over
        self.run = 1  # this run's number among those that wrote the set (its LLM judges' usage rows)
        self._stop = threading.Event()
        self._beating: threading.Thread | None = None
        self._lost: str | None = None
        if new is not None:
            self.set_id, self.name = self._create(name_given)
            self._start(heartbeat)

    def _writer(self) -> dict[str, Any]:
        """This writer as a set's meta names it; `heartbeat` is the wall clock (seconds since the epoch), never
        SOURCE_DATE_EPOCH's fixed time."""
        return {"host": socket.gethostname(), "pid": os.getpid(), "token": self.token, "heartbeat": time.time()}

    def _start(self, heartbeat: bool) -> None:
        if heartbeat:
            self._beating = threading.Thread(target=self._beat, name="mbt-store-heartbeat", daemon=True)
            self._beating.start()

    def _create(self, name_given: bool) -> tuple[int, str]:
        """The set's row, `running`. A name given by the user must be free; a generated one gets `_2`, `_3`, ...
        when another set took it in the same second."""
        assert self.new is not None
        base = check_name(self.new.name)
        started = self.new.started_at or now()
        meta = {"mbt_version": __version__, **self.new.meta, "writer": self._writer()}
        for attempt in range(1, 1000):
            name = base if attempt == 1 else f"{base}_{attempt}"
            try:
                with self.store.write() as conn:
                    row = conn.execute(result_sets.insert().values(
                        name=name, suite=self.new.suite, status="running", run_type=self.new.run_type,
                        started_at=started, executor=self.new.executor, judge=_json(self.new.judge),
                        meta=_json(meta)).returning(result_sets.c.id)).scalar_one()
                return int(row), name
            except MbtError:
                if not self._taken(name):
                    raise
                if name_given:
                    raise MbtError(taken_name_message(name, self.store.url.shown)) from None
        raise MbtError(f"no free name for the result set after {base}_999")

    @classmethod
    def resume(cls, store: Store, name: str, run_type: str, judge: dict[str, Any], inputs: dict[str, Any],
               heartbeat: bool = True, normalise: Callable[[dict[str, Any]], dict[str, Any]] | None = None
               ) -> SetWriter:
        """Take over the interrupted set `name` (module docstring): it must be of `run_type`, not `done`, its writer
        gone, and started with the same judge configuration (`judge`; `normalise` puts the set's own in the same
        form: the judge, the criteria's weights, the threshold) and the same `inputs` (the meta's keys the command
        records: goldens, runs or agent, models). MbtError saying why otherwise."""
        writer = cls(store, None)
        with store.write() as conn:
            row = conn.execute(select(result_sets).where(result_sets.c.name == name).with_for_update()) \
                .mappings().first()
            if row is None:
                set_row(conn, name, store)  # the error naming the closest name
                raise AssertionError("unreachable")
            meta = json.loads(row["meta"] or "{}")
            why = _not_resumable(row, meta, run_type, judge, inputs, normalise)
            if why:
                raise MbtError(f"result set `{name}` cannot be resumed: {why}")
            meta.pop("error", None)
            meta["writer"] = writer._writer()
            meta["resumed"] = [*meta.get("resumed", []), {"at": now(), "status": row["status"]}]
            conn.execute(result_sets.update().where(result_sets.c.id == row["id"])
                         .values(status="running", ended_at=None, meta=_json(meta)))
            writer.set_id, writer.name = int(row["id"]), name
            writer.seq = int(conn.execute(select(func.coalesce(func.max(cases.c.seq), 0))
                                          .where(cases.c.set_id == row["id"])).scalar_one())
            writer.kept = int(conn.execute(select(func.count()).select_from(cases)
                                           .where(cases.c.set_id == row["id"])).scalar_one())
            writer.run = next_run(conn, writer.set_id)
        writer._start(heartbeat)
        return writer

    def stored_keys(self) -> set[str]:
        """The keys of the cases the set holds (a resumed set's cases kept)."""
        with self.store.read() as conn:
            return set(conn.execute(select(cases.c.case_key).where(cases.c.set_id == self.set_id)).scalars())

    def stored_docs(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The documents of the set's cases of these keys, by key."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        with self.store.read() as conn:
            for start in range(0, len(wanted), 500):  # below SQLite's bound-parameter limit
                rows = conn.execute(select(cases.c.case_key, case_docs.c.doc)
                                    .join(case_docs, case_docs.c.case_row == cases.c.id)
                                    .where(cases.c.set_id == self.set_id,
                                           cases.c.case_key.in_(wanted[start:start + 500])))
                found.update((key, json.loads(doc)) for key, doc in rows)
        return found

    def _taken(self, name: str) -> bool:
        with self.store.read() as conn:
            return conn.execute(select(result_sets.c.id).where(result_sets.c.name == name)).first() is not None

    def _beat(self) -> None:
        """The heartbeat thread: renew this writer's heartbeat until stopped, or until another writer took the set
        over (then say so to the next batch)."""
        while not self._stop.wait(HEARTBEAT_S):
            try:
                with self.store.write() as conn:
                    meta = self._owned_meta(conn)
                    if meta is None:
                        return
                    meta["writer"]["heartbeat"] = time.time()
                    conn.execute(result_sets.update().where(result_sets.c.id == self.set_id).values(meta=_json(meta)))
            except MbtError:
                continue  # the store was busy or away: the next beat tries again (the lease allows for a few)

    def _owned_meta(self, conn: Connection) -> dict[str, Any] | None:
        """The set's meta, its row locked for this transaction, when this writer still owns the set; else None,
        with why kept for `_check_owner`."""
        raw = conn.execute(select(result_sets.c.meta).where(result_sets.c.id == self.set_id).with_for_update()) \
            .scalar_one_or_none()
        if raw is None:
            self._lost = "the set was deleted while it was written"
            return None
        meta = json.loads(raw)
        holder = meta.get("writer") or {}
        if holder.get("token") != self.token:
            self._lost = (f"the set was resumed by another writer (process {holder.get('pid')} on "
                          f"{holder.get('host')}) while this one was silent")
            return None
        return meta

    def _check_owner(self, conn: Connection) -> dict[str, Any]:
        meta = self._owned_meta(conn)
        if meta is None:
            raise MbtError(f"result set `{self.name}`: {self._lost}; this run stops without writing to it")
        return meta

    def _stop_beating(self) -> None:
        self._stop.set()
        if self._beating is not None and self._beating is not threading.current_thread():
            self._beating.join()
            self._beating = None

    def __enter__(self) -> SetWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: object) -> None:
        self._stop_beating()
        if kind is None and not self.finished:
            self.end("failed", "the writer stopped before the set was finished")
        elif kind is not None and not self.finished:
            status = "cancelled" if issubclass(kind, KeyboardInterrupt) else "failed"
            why = ("interrupted (Ctrl-C)" if status == "cancelled"
                   else getattr(value, "message", None) or f"{kind.__name__}: {value}")
            try:
                self.end(status, self.store.url.scrub(str(why)))
            except MbtError:  # the store itself failed: the set stays `running`, the first error is the one shown
                pass

    def add(self, records: Iterable[CaseRecord], batch: int = BATCH, usage: RunUsage | None = None) -> int:
        """Append cases in order, one transaction per `batch` cases; returns how many were added. `usage`: what the
        run's LLM judges cost until now, written with the last batch (module docstring)."""
        added = 0
        chunks = _chunks(records, batch)
        chunk = next(chunks, None)
        while chunk is not None:
            following = next(chunks, None)
            with self.store.write() as conn:
                self._check_owner(conn)
                self._insert(conn, chunk)
                if following is None and usage is not None:
                    write_usage(conn, self.set_id, self.run, usage)
            added += len(chunk)
            chunk = following
        return added

    def _insert(self, conn: Connection, chunk: list[CaseRecord]) -> None:
        numbered = []
        for record in chunk:
            self.seq += 1
            numbered.append((self.seq, record))
        insert_cases(conn, self.set_id, numbered)

    def finish(self, summary: dict[str, Any] | None = None, judge: dict[str, Any] | None = None,
               expected: int | None = None, usage: RunUsage | None = None) -> None:
        """Totals and versions from the cases written, the report's summary (and the judge configuration as the
        report gives it), what the run's LLM judges cost (`usage`), `done`: one transaction. `expected`: the cases
        the run has; a set holding another number is not marked done (MbtError: it ends `failed`), so a set is never
        `done` half written."""
        self._stop_beating()
        with self.store.write() as conn:
            self._check_owner(conn)
            held = conn.execute(select(func.count()).select_from(cases).where(cases.c.set_id == self.set_id)) \
                .scalar_one()
            if expected is not None and held != expected:
                raise MbtError(f"result set `{self.name}` holds {held} case(s) where the run has {expected}: it is "
                               "not marked done")
            if usage is not None:
                write_usage(conn, self.set_id, self.run, usage)
            finish_set(conn, self.set_id, summary, judge)
        self.finished = True

    def end(self, status: str, why: str) -> None:
        """The set ended without finishing: `failed` or `cancelled`, with why (kept in its meta). A writer whose set
        another writer took over leaves it as it is."""
        self._stop_beating()
        with self.store.write() as conn:
            meta = self._owned_meta(conn)
            if meta is not None:
                meta["error"] = why
                meta.pop("writer", None)
                conn.execute(result_sets.update().where(result_sets.c.id == self.set_id)
                             .values(status=status, ended_at=now(), meta=_json(meta)))
        self.finished = True


def _not_resumable(row: Any, meta: dict[str, Any], run_type: str, judge: dict[str, Any], inputs: dict[str, Any],
                   normalise: Callable[[dict[str, Any]], dict[str, Any]] | None) -> str | None:
    """Why the set `row` cannot be taken over by a resumed run, or None."""
    if row["run_type"] != run_type:
        return f"it is a set of `mbt {row['run_type']}`, not of `mbt {run_type}`"
    if row["status"] not in RESUMABLE:
        return f"it is {row['status']}: only an interrupted set (running with its writer gone, failed, cancelled) is"
    if row["status"] == "running":
        alive = writer_alive(meta.get("writer"))
        if alive:
            return alive
    stored = json.loads(row["judge"] or "{}")
    started = normalise(stored) if normalise is not None else \
        {k: v for k, v in stored.items() if k in ("judge", "criteria", "threshold")}
    if started != judge:
        return (f"it was started with the judge configuration {_json(started)} and this run gives {_json(judge)}; "
                "resume it with the options it was started with")
    for key, given in inputs.items():
        if meta.get(key, []) != given:
            return (f"it was started with {key} {_json(meta.get(key, []))} and this run gives {_json(given)}; resume "
                    "it with the inputs it was started with")
    return None



def insert_cases(conn: Connection, set_id: int, numbered: list[tuple[int, CaseRecord]]) -> None:
    """Cases written into a set at their places (`seq`), with their documents and verdicts."""
    rows = []
    for seq, record in numbered:
        rows.append({
            "set_id": set_id, "seq": seq, "case_key": record.case_key, "case_id": record.case_id,
            "location": record.location, "turns": record.turns, "question": record.question,
            "answer": record.answer, "overall": record.overall, "agent_version": record.agent_version,
            "model": record.model, "prompt_version": record.prompt_version, "wall_ms": record.wall_ms,
            "error": record.error, "search": record.search,
            "first_deviation": record.first_deviation,
            "first_deviation_element": record.first_deviation_element,
            "flags": _json(record.flags) if record.flags is not None else None})
    records = [record for _, record in numbered]
    ids = conn.execute(cases.insert().returning(cases.c.id, sort_by_parameter_order=True), rows).scalars().all()
    conn.execute(case_docs.insert(), [{"case_row": row_id, "set_id": set_id, "doc": _json(record.doc)}
                                      for row_id, record in zip(ids, records)])
    judged = [{"case_row": row_id, "set_id": set_id, "criterion": c, "verdict": v, "reason": r, "judge": j}
              for row_id, record in zip(ids, records) for c, v, r, j in record.verdicts]
    if judged:
        conn.execute(verdicts.insert(), judged)


def next_run(conn: Connection, set_id: int) -> int:
    """The number of the next run to write into a set: one past the highest its LLM judges' usage rows name."""
    found = [conn.execute(select(func.max(table.c.run)).where(table.c.set_id == set_id)).scalar_one()
             for table in (judge_usage, judge_budgets)]
    return max((int(n) for n in found if n is not None), default=0) + 1


def write_usage(conn: Connection, set_id: int, run: int, usage: RunUsage) -> None:
    """What run `run`'s LLM judges cost, in place of what it wrote before (inside the caller's transaction); a run
    without an LLM judge writes nothing."""
    judges, budget = usage
    conn.execute(judge_usage.delete().where(judge_usage.c.set_id == set_id, judge_usage.c.run == run))
    conn.execute(judge_budgets.delete().where(judge_budgets.c.set_id == set_id, judge_budgets.c.run == run))
    if judges:
        conn.execute(judge_usage.insert(), [
            {"set_id": set_id, "run": run, "judge": u.judge, "asked": u.asked, "requests": u.requests,
             "retries": u.retries, "cache_hits": u.cache_hits, "prompt_tokens": u.prompt_tokens,
             "completion_tokens": u.completion_tokens, "replies_without_usage": u.replies_without_usage,
             "not_asked": u.not_asked, "cost": u.cost, "cost_note": u.cost_note} for u in judges])
    if budget is not None:
        conn.execute(judge_budgets.insert().values(set_id=set_id, run=run, max_cost=budget.max_cost,
                                                   max_requests=budget.max_requests, requests=budget.requests,
                                                   reached=budget.reached))


def finish_set(conn: Connection, set_id: int, summary: dict[str, Any] | None = None,
               judge: dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> None:
    """A set's totals and versions counted from its cases, its summary (and judge configuration) stored, `done`
    (inside the caller's transaction); `meta`: entries added to its meta (a retry's record)."""
    counts: dict[str, int] = dict(conn.execute(select(cases.c.overall, func.count()).where(cases.c.set_id == set_id)
                                               .group_by(cases.c.overall)).all())
    values: dict[str, Any] = {"cases_total": sum(counts.values()), "passed": counts.get("pass", 0),
                              "failed": counts.get("fail", 0), "not_judged": counts.get("not_judged", 0),
                              "errors": counts.get("error", 0), "status": "done", "ended_at": now(),
                              "summary": _json(summary) if summary is not None else None}
    if judge is not None:
        values["judge"] = _json(judge)
    for column, target in (("agent_version", "agent_version"), ("model", "model_version"),
                           ("prompt_version", "prompt_version")):
        found = conn.execute(select(cases.c[column]).where(cases.c.set_id == set_id,
                                                           cases.c[column].is_not(None)).distinct())
        names = sorted(str(v) for v in found.scalars())
        values[target] = ", ".join(names) or None
    conn.execute(result_sets.update().where(result_sets.c.id == set_id).values(**values))
    # The overview (counts overall, per criterion, per kind of conversation), kept: showing a finished set
    # of 100,000 cases then reads one row instead of counting them again.
    row = conn.execute(select(result_sets).where(result_sets.c.id == set_id)).mappings().one()
    kept = json.loads(row["meta"])
    kept.update(meta or {})
    kept.pop("writer", None)  # a finished set has no writer (one that resumed it would be taken for alive)
    kept["overview"] = overview(conn, set_id, set_info(row)).model_dump(mode="json")
    conn.execute(result_sets.update().where(result_sets.c.id == set_id).values(meta=_json(kept)))


def _chunks(records: Iterable[CaseRecord], size: int) -> Iterator[list[CaseRecord]]:
    chunk: list[CaseRecord] = []
    for record in records:
        chunk.append(record)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def taken_name_message(name: str, shown: str) -> str:
    return (f"a result set named `{name}` is in the store {shown} already: pick another name, or rename or delete "
            "that one (mbt results rename / delete)")

