"""Writing a result set: created `running`, its cases added in batches (one transaction each), marked `done` at the
end in a last transaction with its totals.

A set is `done` only when that last transaction commits: a writer stopped before it (killed, or its machine lost)
leaves the set `running` with whole batches in it, never a half batch and never `done`. An error while the set is
written marks it `failed`, Ctrl-C marks it `cancelled` (each with why), and the error goes on to the caller.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from mbt import __version__
from mbt.errors import MbtError
from mbt.store.db import Store
from mbt.store.query import overview, set_info
from mbt.store.records import CaseRecord, NewSet, check_name, now
from mbt.store.schema import case_docs, cases, result_sets, verdicts

BATCH = 2000  # cases per transaction


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class SetWriter:
    """`with SetWriter(store, new) as writer: writer.add(records); writer.finish(summary)`."""

    def __init__(self, store: Store, new: NewSet, name_given: bool = True) -> None:
        self.store = store
        self.new = new
        self.seq = 0
        self.finished = False
        self.set_id, self.name = self._create(name_given)

    def _create(self, name_given: bool) -> tuple[int, str]:
        """The set's row, `running`. A name given by the user must be free; a generated one gets `_2`, `_3`, ...
        when another set took it in the same second."""
        base = check_name(self.new.name)
        started = self.new.started_at or now()
        meta = {"mbt_version": __version__, **self.new.meta}
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

    def _taken(self, name: str) -> bool:
        with self.store.read() as conn:
            return conn.execute(select(result_sets.c.id).where(result_sets.c.name == name)).first() is not None

    def __enter__(self) -> SetWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: object) -> None:
        if kind is None and not self.finished:
            self.end("failed", "the writer stopped before the set was finished")
        elif kind is not None:
            status = "cancelled" if issubclass(kind, KeyboardInterrupt) else "failed"
            why = ("interrupted (Ctrl-C)" if status == "cancelled"
                   else getattr(value, "message", None) or f"{kind.__name__}: {value}")
            try:
                self.end(status, self.store.url.scrub(str(why)))
            except MbtError:  # the store itself failed: the set stays `running`, the first error is the one shown
                pass

    def add(self, records: Iterable[CaseRecord], batch: int = BATCH) -> int:
        """Append cases in order, one transaction per `batch` cases; returns how many were added."""
        added = 0
        for chunk in _chunks(records, batch):
            with self.store.write() as conn:
                self._insert(conn, chunk)
            added += len(chunk)
        return added

    def _insert(self, conn: Connection, chunk: list[CaseRecord]) -> None:
        numbered = []
        for record in chunk:
            self.seq += 1
            numbered.append((self.seq, record))
        insert_cases(conn, self.set_id, numbered)

    def finish(self, summary: dict[str, Any] | None = None, judge: dict[str, Any] | None = None) -> None:
        """Totals and versions from the cases written, the report's summary (and the judge configuration as the
        report gives it), `done`: one transaction."""
        with self.store.write() as conn:
            finish_set(conn, self.set_id, summary, judge)
        self.finished = True

    def end(self, status: str, why: str) -> None:
        """The set ended without finishing: `failed` or `cancelled`, with why (kept in its meta)."""
        with self.store.write() as conn:
            meta = json.loads(conn.execute(select(result_sets.c.meta).where(result_sets.c.id == self.set_id))
                              .scalar_one())
            meta["error"] = why
            conn.execute(result_sets.update().where(result_sets.c.id == self.set_id)
                         .values(status=status, ended_at=now(), meta=_json(meta)))
        self.finished = True


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

