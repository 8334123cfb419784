"""Reading result sets: the list with seed 001's search and filters, one set's overview and case list (filtered by
single or multi-turn and by result, searched in questions and actual answers), one case in detail, every case for an
export; renaming and deleting."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, select
from sqlalchemy.engine import Connection, RowMapping

from mbt.errors import MbtError, did_you_mean
from mbt.judges.usage import JudgeUsage, combined, hit_rate, totals
from mbt.store.db import Store
from mbt.store.model import (
    CaseDetail,
    CaseRow,
    ExportCase,
    Overview,
    Rate,
    RunBudget,
    SetInfo,
    SetList,
    SetUsage,
    SetView,
    Verdict,
)
from mbt.store.records import RUN_TYPES, STATUSES, check_name, fold
from mbt.store.schema import case_docs, cases, judge_budgets, judge_usage, result_sets, verdicts
from mbt.store.writers import writer_alive

RESULT_FILTERS = ("pass", "fail", "not_judged", "error", "ok")  # ok: run without error (seed 001: "thành công")
TURN_FILTERS = ("single", "multi")


def _rate(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def set_info(row: RowMapping) -> SetInfo:
    meta = json.loads(row["meta"] or "{}")
    writer = writer_alive(meta.get("writer")) if row["status"] == "running" else None
    ok = row["cases_total"] - row["errors"]
    return SetInfo(name=row["name"], suite=row["suite"], status=row["status"], run_type=row["run_type"],
                   started_at=row["started_at"], ended_at=row["ended_at"], executor=row["executor"],
                   agent_version=row["agent_version"], model_version=row["model_version"],
                   prompt_version=row["prompt_version"], judge=json.loads(row["judge"] or "{}"),
                   cases_total=row["cases_total"], passed=row["passed"], failed=row["failed"],
                   not_judged=row["not_judged"], errors=row["errors"], pass_rate=_rate(row["passed"], ok),
                   error=meta.get("error"), mbt_version=meta.get("mbt_version"),
                   writer=writer, interrupted=row["status"] == "running" and writer is None)


def set_row(conn: Connection, name: str, store: Store) -> RowMapping:
    """The set named `name`; MbtError naming the closest name when there is none."""
    row = conn.execute(select(result_sets).where(result_sets.c.name == name)).mappings().first()
    if row is None:
        known = conn.execute(select(result_sets.c.name)).scalars().all()
        hint = did_you_mean(name, known) or (" (the store is empty)" if not known else
                                             " (mbt results list shows the names)")
        raise MbtError(f"no result set named `{name}` in the store {store.url.shown}{hint}")
    return row


def _when(text: str, end_of_day: bool, option: str) -> str:
    """A date (YYYY-MM-DD) or ISO 8601 time as the store writes times; a date alone covers the whole day."""
    try:
        if len(text) == 10:
            day = dt.date.fromisoformat(text)
            return f"{day.isoformat()}T{'23:59:59' if end_of_day else '00:00:00'}Z"
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise MbtError(f"{option} {text!r}: expected a date YYYY-MM-DD or a time YYYY-MM-DDTHH:MM[:SS][+00:00]") \
            from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class SetFilters:
    search: str | None = None  # in the name, ignoring case
    statuses: Sequence[str] = ()
    run_types: Sequence[str] = ()
    executor: str | None = None  # in the executor, ignoring case
    since: str | None = None
    until: str | None = None
    limit: int | None = None


def list_sets(store: Store, filters: SetFilters) -> SetList:
    """The sets, newest first, that every given filter lets through."""
    for status in filters.statuses:
        if status not in STATUSES:
            raise MbtError(f"--status {status}: one of {', '.join(STATUSES)}")
    for kind in filters.run_types:
        if kind not in RUN_TYPES:
            raise MbtError(f"--type {kind}: one of {', '.join(RUN_TYPES)}")
    query = select(result_sets).order_by(result_sets.c.started_at.desc(), result_sets.c.name)
    if filters.statuses:
        query = query.where(result_sets.c.status.in_(filters.statuses))
    if filters.run_types:
        query = query.where(result_sets.c.run_type.in_(filters.run_types))
    if filters.since:
        query = query.where(result_sets.c.started_at >= _when(filters.since, False, "--since"))
    if filters.until:
        query = query.where(result_sets.c.started_at <= _when(filters.until, True, "--until"))
    with store.read() as conn:
        rows = conn.execute(query).mappings().all()
    # Text is matched here, case-folded as Python folds it (SQLite's lower() folds ASCII only); the sets of a store
    # are few next to their cases.
    needle = filters.search.casefold() if filters.search else None
    who = filters.executor.casefold() if filters.executor else None
    found = [set_info(r) for r in rows if (needle is None or needle in r["name"].casefold())
             and (who is None or who in r["executor"].casefold())]
    shown = found if filters.limit is None else found[:filters.limit]
    return SetList(store=store.url.shown, matching=len(found), sets=shown)


@dataclass
class CaseFilters:
    turns: str | None = None  # single | multi
    results: Sequence[str] = ()  # RESULT_FILTERS
    search: str | None = None  # in questions and actual answers, ignoring case
    limit: int | None = None  # None or 0: all
    offset: int = 0

    def check(self) -> None:
        if self.turns is not None and self.turns not in TURN_FILTERS:
            raise MbtError(f"--turns {self.turns}: one of {', '.join(TURN_FILTERS)}")
        for result in self.results:
            if result not in RESULT_FILTERS:
                raise MbtError(f"--result {result}: one of {', '.join(RESULT_FILTERS)}")

    def shown(self) -> dict[str, Any]:
        return {"turns": self.turns, "results": list(self.results), "search": self.search}


def _filtered(set_id: int, filters: CaseFilters, dialect: str) -> Any:
    conditions: list[ColumnElement[bool]] = [cases.c.set_id == set_id]
    if filters.turns == "single":
        conditions.append(cases.c.turns <= 1)
    elif filters.turns == "multi":
        conditions.append(cases.c.turns > 1)
    if filters.results:
        chosen: list[ColumnElement[bool]] = []
        verdicts_wanted = [r for r in filters.results if r != "ok"]
        if verdicts_wanted:
            chosen.append(cases.c.overall.in_(verdicts_wanted))
        if "ok" in filters.results:
            chosen.append(and_(cases.c.error.is_(None), cases.c.overall != "error"))
        conditions.append(chosen[0] if len(chosen) == 1 else chosen[0] | chosen[1])
    if filters.search:
        # A plain substring test of the case-folded text (no LIKE: its wildcards and SQLite's ASCII-only folding
        # have no part in it, and it is faster): instr on SQLite, strpos on PostgreSQL.
        find = func.instr if dialect == "sqlite" else func.strpos
        conditions.append(find(cases.c.search, fold(filters.search)) > 0)
    return and_(*conditions)


ROW_COLUMNS = (cases.c.id, cases.c.seq, cases.c.case_key, cases.c.case_id, cases.c.location, cases.c.turns,
               cases.c.question, cases.c.answer, cases.c.overall, cases.c.agent_version, cases.c.first_deviation,
               cases.c.error)


def _criteria_of(conn: Connection, row_ids: list[int]) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {i: {} for i in row_ids}
    for start in range(0, len(row_ids), 900):  # below SQLite's bound-parameter limit
        part = row_ids[start:start + 900]
        found = conn.execute(select(verdicts.c.case_row, verdicts.c.criterion, verdicts.c.verdict)
                             .where(verdicts.c.case_row.in_(part)))
        for row_id, criterion, verdict in found:
            out[row_id][criterion] = verdict
    return out


def verdicts_of(conn: Connection, row_ids: list[int]) -> dict[int, list[Verdict]]:
    """Each case row's verdicts with their reasons, by criterion (a page of cases at a time: the export, the viewer)."""
    out: dict[int, list[Verdict]] = {i: [] for i in row_ids}
    for start in range(0, len(row_ids), 900):  # below SQLite's bound-parameter limit
        rows = conn.execute(select(verdicts.c.case_row, verdicts.c.criterion, verdicts.c.verdict, verdicts.c.reason,
                                   verdicts.c.judge)
                            .where(verdicts.c.case_row.in_(row_ids[start:start + 900]))
                            .order_by(verdicts.c.case_row, verdicts.c.criterion))
        for row_id, criterion, verdict, reason, judge in rows:
            out[row_id].append(Verdict(criterion=criterion, verdict=verdict, reason=reason, judge=judge))
    return out


def _case_row(r: RowMapping, criteria: dict[str, str]) -> CaseRow:
    return CaseRow(seq=r["seq"], key=r["case_key"], id=r["case_id"], where=r["location"], turns=r["turns"],
                   kind="multi" if r["turns"] > 1 else "single", question=r["question"], answer=r["answer"],
                   overall=r["overall"], criteria=dict(sorted(criteria.items())), agent_version=r["agent_version"],
                   first_deviation=r["first_deviation"], error=r["error"])


def overview(conn: Connection, set_id: int, info: SetInfo) -> Overview:
    """Seed 001's overview: cases run successfully and with errors; count and rate of passes, overall and per
    criterion, over the cases run successfully."""
    counted = select(cases.c.overall, (cases.c.turns > 1).label("multi"),
                     (cases.c.error.is_not(None) | (cases.c.overall == "error")).label("erred"),
                     func.count().label("n")).where(cases.c.set_id == set_id) \
        .group_by(cases.c.overall, "multi", "erred")
    total = ok = multi = 0
    overall = Rate(key="overall")
    for verdict, is_multi, erred, n in conn.execute(counted):
        total += n
        multi += n if is_multi else 0
        ok += 0 if erred else n
        _tally(overall, verdict, n)
    overall.pass_rate = _rate(overall.passed, ok)
    weights = info.judge.get("criteria", {}) if isinstance(info.judge.get("criteria"), dict) else {}
    per: dict[str, Rate] = {}
    found = conn.execute(select(verdicts.c.criterion, verdicts.c.verdict, func.count())
                         .where(verdicts.c.set_id == set_id).group_by(verdicts.c.criterion, verdicts.c.verdict))
    for criterion, verdict, n in found:
        rate = per.setdefault(criterion, Rate(key=criterion, weight=str(weights[criterion])
                                              if criterion in weights else None))
        _tally(rate, verdict, n)
    for rate in per.values():
        rate.pass_rate = _rate(rate.passed, ok)
    order = list(weights) + sorted(k for k in per if k not in weights)
    return Overview(cases_total=total, cases_ok=ok, cases_with_errors=total - ok, single_turn=total - multi,
                    multi_turn=multi, overall=overall, criteria=[per[k] for k in order if k in per])


def _tally(rate: Rate, verdict: str, n: int) -> None:
    field_name = {"pass": "passed", "fail": "failed", "not_judged": "not_judged"}.get(verdict, "errors")
    setattr(rate, field_name, getattr(rate, field_name) + n)


def stored_overview(conn: Connection, row: RowMapping, info: SetInfo) -> Overview:
    """A finished set's overview as its writer stored it (computed once, at the end); a running set's, counted."""
    kept = json.loads(row["meta"] or "{}").get("overview") if info.status == "done" else None
    return Overview.model_validate(kept) if kept else overview(conn, row["id"], info)


USAGE_COUNTS = ("asked", "requests", "retries", "cache_hits", "prompt_tokens", "completion_tokens",
                "replies_without_usage", "not_asked")


def set_usage(conn: Connection, set_id: int) -> SetUsage | None:
    """What the set's LLM judges cost over the runs that wrote it (mbt.store.write); None when it holds no LLM
    judge's usage: not measured."""
    rows = conn.execute(select(judge_usage).where(judge_usage.c.set_id == set_id)
                        .order_by(judge_usage.c.run, judge_usage.c.judge)).mappings().all()
    budgets = conn.execute(select(judge_budgets).where(judge_budgets.c.set_id == set_id)
                           .order_by(judge_budgets.c.run)).mappings().all()
    if not rows:
        return None
    per_run = [JudgeUsage(judge=r["judge"], **{k: r[k] for k in USAGE_COUNTS},
                          cache_hit_rate=hit_rate(r["cache_hits"], r["asked"]), cost=r["cost"],
                          cost_note=r["cost_note"]) for r in rows]
    judges = combined(per_run)
    summed = totals(judges)
    assert summed is not None  # rows were found
    return SetUsage(runs=len({r["run"] for r in rows}), judges=judges, totals=summed,
                    budgets=[RunBudget(run=b["run"], max_cost=b["max_cost"], max_requests=b["max_requests"],
                                       requests=b["requests"], reached=b["reached"]) for b in budgets])


def show(store: Store, name: str, filters: CaseFilters) -> SetView:
    filters.check()
    with store.read() as conn:
        row = set_row(conn, name, store)
        info = set_info(row)
        where = _filtered(row["id"], filters, store.url.dialect)
        if info.status == "done" and not (filters.turns or filters.results or filters.search):
            matching = info.cases_total
        else:
            matching = conn.execute(select(func.count()).select_from(cases).where(where)).scalar_one()
        query: Select = select(*ROW_COLUMNS).where(where).order_by(cases.c.seq).offset(filters.offset)
        if filters.limit:  # None or 0: every matching case
            query = query.limit(filters.limit)
        found = conn.execute(query).mappings().all()
        criteria = _criteria_of(conn, [r["id"] for r in found])
        return SetView(store=store.url.shown, set=info, overview=stored_overview(conn, row, info),
                       usage=set_usage(conn, row["id"]), filters=filters.shown(), matching=matching,
                       offset=filters.offset, limit=filters.limit, cases=[_case_row(r, criteria[r["id"]]) for r in found])


def _verdicts(conn: Connection, row_id: int) -> list[Verdict]:
    found = conn.execute(select(verdicts.c.criterion, verdicts.c.verdict, verdicts.c.reason, verdicts.c.judge)
                         .where(verdicts.c.case_row == row_id).order_by(verdicts.c.criterion))
    return [Verdict(criterion=c, verdict=v, reason=r, judge=j) for c, v, r, j in found]


def case_detail(store: Store, name: str, key: str) -> CaseDetail:
    """One case by its key (or its id, when only one case of the set has that id)."""
    with store.read() as conn:
        set_id = set_row(conn, name, store)["id"]
        found = conn.execute(select(*ROW_COLUMNS).where(cases.c.set_id == set_id,
                                                        cases.c.case_key == key)).mappings().all()
        if not found:
            found = conn.execute(select(*ROW_COLUMNS).where(cases.c.set_id == set_id,
                                                            cases.c.case_id == key)).mappings().all()
        if len(found) != 1:
            keys = conn.execute(select(cases.c.case_key).where(cases.c.set_id == set_id)).scalars().all()
            why = "names several cases: give its key" if found else "is no case key of it" + did_you_mean(key, keys)
            raise MbtError(f"result set `{name}`: `{key}` {why}")
        r = found[0]
        judged = _verdicts(conn, r["id"])
        doc = conn.execute(select(case_docs.c.doc).where(case_docs.c.case_row == r["id"])).scalar_one()
        return CaseDetail(set=name, case=_case_row(r, {v.criterion: v.verdict for v in judged}), verdicts=judged,
                          doc=json.loads(doc))


@dataclass
class Export:
    """A set for export: its info and overview, and its cases streamed in order (read in pages, never all at
    once)."""

    info: SetInfo
    overview: Overview
    summary: dict[str, Any]
    usage: SetUsage | None
    store: Store
    set_id: int
    filters: CaseFilters = field(default_factory=CaseFilters)
    page: int = 2000

    def __enter__(self) -> Export:
        return self

    def __exit__(self, *exc: object) -> None:
        self.store.close()

    def cases(self) -> Iterator[ExportCase]:
        last = 0
        where = _filtered(self.set_id, self.filters, self.store.url.dialect)
        while True:
            with self.store.read() as conn:
                found = conn.execute(select(*ROW_COLUMNS, case_docs.c.doc)
                                     .join(case_docs, case_docs.c.case_row == cases.c.id)
                                     .where(where, cases.c.seq > last)
                                     .order_by(cases.c.seq).limit(self.page)).mappings().all()
                if not found:
                    return
                judged = verdicts_of(conn, [r["id"] for r in found])
            for r in found:
                yield ExportCase(row=_case_row(r, {v.criterion: v.verdict for v in judged[r["id"]]}),
                                 verdicts=judged[r["id"]], doc=json.loads(r["doc"]))
            last = found[-1]["seq"]


def export(store: Store, name: str, filters: CaseFilters | None = None) -> Export:
    filters = filters or CaseFilters()
    filters.check()
    with store.read() as conn:
        row = set_row(conn, name, store)
        info = set_info(row)
        return Export(info=info, overview=stored_overview(conn, row, info),
                      summary=json.loads(row["summary"] or "{}"), usage=set_usage(conn, row["id"]), store=store,
                      set_id=row["id"], filters=filters)


def rename(store: Store, old: str, new: str) -> SetInfo:
    check_name(new, "the new name")
    with store.write() as conn:
        row = set_row(conn, old, store)
        if old != new and conn.execute(select(result_sets.c.id).where(result_sets.c.name == new)).first():
            raise MbtError(f"a result set named `{new}` is in the store {store.url.shown} already")
        conn.execute(result_sets.update().where(result_sets.c.id == row["id"]).values(name=new))
        return set_info({**row, "name": new})  # type: ignore[arg-type]  # a mapping of the same columns


def delete(store: Store, names: Sequence[str]) -> list[str]:
    """Every named set with its cases, in one transaction: all or none (an unknown name deletes nothing)."""
    with store.write() as conn:
        ids = [set_row(conn, name, store)["id"] for name in dict.fromkeys(names)]
        # Cases, documents, verdicts and usage go explicitly: a database without the cascade still ends clean.
        conn.execute(judge_usage.delete().where(judge_usage.c.set_id.in_(ids)))
        conn.execute(judge_budgets.delete().where(judge_budgets.c.set_id.in_(ids)))
        conn.execute(verdicts.delete().where(verdicts.c.set_id.in_(ids)))
        conn.execute(case_docs.delete().where(case_docs.c.set_id.in_(ids)))
        conn.execute(cases.delete().where(cases.c.set_id.in_(ids)))
        conn.execute(result_sets.delete().where(result_sets.c.id.in_(ids)))
    return list(dict.fromkeys(names))

