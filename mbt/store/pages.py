"""Reading result sets for the HTML viewer (`mbt results site`, mbt.report.site): the sets chosen (by name, or by the
list's filters), each with its overview and a stamp of what it holds, and its cases in order, page by page, each with
the folded text `--search` reads, its verdicts with their reasons and its document.

The stamp changes whenever what a set shows could: its row (name, status, end, totals, judge, summary, meta without
the writer's heartbeat), what its LLM judges cost, its cases (how many, the highest row id, how many verdicts), and
for a running set whether its writer is gone (mbt.store.writers.writer_alive: then the set is interrupted, and
resumable). The viewer keeps a set's pages when the stamp it wrote them from is unchanged, so a finished set of
100,000 cases is written once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from mbt.store.db import Store
from mbt.store.model import CaseRow, Overview, SetInfo, SetUsage, Verdict
from mbt.store.query import (
    ROW_COLUMNS,
    SetFilters,
    _case_row,
    list_sets,
    set_info,
    set_row,
    set_usage,
    stored_overview,
    verdicts_of,
)
from mbt.store.schema import case_docs, cases, result_sets, verdicts


@dataclass
class ViewerCase:
    """One case as the viewer lists and shows it."""

    row: CaseRow
    search: str  # every question and answer, folded (mbt.store.records.fold): what --search reads
    verdicts: list[Verdict]
    doc: dict[str, Any]


@dataclass
class ViewerSet:
    """A set for the viewer: its list entry, overview and stamp; `cases()` reads its cases page by page."""

    info: SetInfo
    overview: Overview
    summary: dict[str, Any]
    usage: SetUsage | None  # what its LLM judges cost; None: not measured
    stamp: str
    store: Store
    set_id: int
    page: int = 1000

    def cases(self) -> Iterator[ViewerCase]:
        last = 0
        while True:
            with self.store.read() as conn:
                found = conn.execute(select(*ROW_COLUMNS, cases.c.search, case_docs.c.doc)
                                     .join(case_docs, case_docs.c.case_row == cases.c.id)
                                     .where(cases.c.set_id == self.set_id, cases.c.seq > last)
                                     .order_by(cases.c.seq).limit(self.page)).mappings().all()
                if not found:
                    return
                judged = verdicts_of(conn, [r["id"] for r in found])
            for r in found:
                yield ViewerCase(row=_case_row(r, {v.criterion: v.verdict for v in judged[r["id"]]}),
                                 search=r["search"], verdicts=judged[r["id"]], doc=json.loads(r["doc"]))
            last = found[-1]["seq"]


@dataclass
class ViewerSets:
    """The sets chosen for the viewer; it holds the store open while their cases are read (`with`)."""

    store: Store
    sets: list[ViewerSet]

    def __enter__(self) -> ViewerSets:
        return self

    def __exit__(self, *exc: object) -> None:
        self.store.close()


def viewer_sets(store: Store, names: Sequence[str] = (), filters: SetFilters | None = None) -> list[ViewerSet]:
    """The sets named (in the order given), else those the list's filters let through (newest first)."""
    wanted = list(dict.fromkeys(names)) if names else [s.name for s in list_sets(store, filters or SetFilters()).sets]
    out = []
    with store.read() as conn:
        known = {row["name"]: row for row in conn.execute(
            select(result_sets).where(result_sets.c.name.in_(wanted))).mappings()} if wanted else {}
        for name in wanted:
            row = known.get(name) or set_row(conn, name, store)  # set_row: the error naming the closest name
            info = set_info(row)  # a running set's writer judged alive or gone there (info.writer, info.interrupted)
            usage = set_usage(conn, row["id"])
            out.append(ViewerSet(info=info, overview=stored_overview(conn, row, info),
                                 summary=json.loads(row["summary"] or "{}"), usage=usage,
                                 stamp=_stamp(conn, row, info.writer, usage), store=store, set_id=row["id"]))
    return out


def _stamp(conn: Any, row: Any, writer: str | None, usage: SetUsage | None) -> str:
    meta = json.loads(row["meta"] or "{}")
    meta.pop("writer", None)  # the heartbeat of a running set's writer changes nothing shown
    held = conn.execute(select(func.count(), func.max(cases.c.id)).where(cases.c.set_id == row["id"])).one()
    judged = conn.execute(select(func.count()).select_from(verdicts).where(verdicts.c.set_id == row["id"])).scalar_one()
    parts = [row["name"], row["status"], row["started_at"], row["ended_at"], row["cases_total"], row["passed"],
             row["failed"], row["not_judged"], row["errors"], row["judge"], row["summary"], meta, list(held), judged,
             writer is None,  # a running set whose writer is gone is shown as interrupted
             usage.model_dump(mode="json") if usage is not None else None]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()
