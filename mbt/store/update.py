"""Updating a finished result set in place: `mbt eval --retry-errors NAME` re-runs the set's errored cases (the agent
did not answer, or a judge failed) and puts their new results where the old ones were.

The set's cases are read first (`errored`: which to re-run, and every case as its report had it, to sum the set up
again); the re-run cases then replace theirs — each at its place in the set, under the same key, with its new
document and verdicts — and the set's totals, overview, summary and judge configuration are counted again, and what
the retry's LLM judges cost is added as the set's next run (mbt.store.write.write_usage), all in one
write transaction: a reader sees the set before the retry or after it, never half of it, and an interrupted retry
leaves it as it was. Its meta keeps each retry (`retries`: when, how many cases, how many are still errors).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from mbt.errors import MbtError
from mbt.store.db import Store
from mbt.store.query import set_info, set_row
from mbt.store.records import CaseRecord, now
from mbt.store.schema import case_docs, cases, result_sets, verdicts
from mbt.store.write import RunUsage, finish_set, insert_cases, next_run, write_usage


@dataclass
class StoredCase:
    key: str
    overall: str
    doc: dict[str, Any]


@dataclass
class StoredSet:
    name: str
    run_type: str
    judge: dict[str, Any]
    cases: list[StoredCase]

    @property
    def errored(self) -> list[str]:
        """The keys of the cases whose overall verdict is error, in the set's order."""
        return [c.key for c in self.cases if c.overall == "error"]


def stored_set(store: Store, name: str, run_type: str = "eval") -> StoredSet:
    """A finished set's cases in order; MbtError for a set of another run type or one not done."""
    with store.read() as conn:
        row = set_row(conn, name, store)
        if row["run_type"] != run_type:
            raise MbtError(f"result set `{name}` holds `mbt {row['run_type']}` results; --retry-errors re-runs the "
                           f"cases of an `mbt {run_type}` set")
        if row["status"] != "done":
            raise MbtError(f"result set `{name}` is {row['status']}: only a finished (done) set can be retried in "
                           "place; run the suite again with --save")
        found = conn.execute(select(cases.c.case_key, cases.c.overall, case_docs.c.doc)
                             .join(case_docs, case_docs.c.case_row == cases.c.id)
                             .where(cases.c.set_id == row["id"]).order_by(cases.c.seq))
        kept = [StoredCase(key, overall, json.loads(doc)) for key, overall, doc in found]
        return StoredSet(row["name"], row["run_type"], json.loads(row["judge"] or "{}"), kept)


def replace_cases(store: Store, name: str, records: Sequence[CaseRecord], summary: dict[str, Any],
                  judge: dict[str, Any], usage: RunUsage | None = None) -> Any:
    """The set's cases with the records' keys replaced by the records (at their places), and the set counted again;
    `usage`, what the retry's LLM judges cost, kept as the set's next run: one transaction. Returns the set's new
    mbt.store.model.SetInfo."""
    with store.write() as conn:
        row = set_row(conn, name, store)
        set_id = row["id"]
        places = dict(conn.execute(select(cases.c.case_key, cases.c.seq).where(cases.c.set_id == set_id)).all())
        missing = [r.case_key for r in records if r.case_key not in places]
        if missing:
            raise MbtError(f"result set `{name}` has no case `{missing[0]}` to replace")
        keys = [r.case_key for r in records]
        rows = conn.execute(select(cases.c.id).where(cases.c.set_id == set_id, cases.c.case_key.in_(keys))
                            ).scalars().all()
        for start in range(0, len(rows), 900):  # below SQLite's bound-parameter limit
            part = rows[start:start + 900]
            conn.execute(verdicts.delete().where(verdicts.c.case_row.in_(part)))
            conn.execute(case_docs.delete().where(case_docs.c.case_row.in_(part)))
            conn.execute(cases.delete().where(cases.c.id.in_(part)))
        if records:
            insert_cases(conn, set_id, [(places[r.case_key], r) for r in records])
        meta = json.loads(row["meta"] or "{}")
        retries = list(meta.get("retries") or [])
        retries.append({"at": now(), "cases": len(records),
                        "still_errors": sum(r.overall == "error" for r in records)})
        if usage is not None:
            write_usage(conn, set_id, next_run(conn, set_id), usage)
        finish_set(conn, set_id, summary, judge, {"retries": retries})
        return set_info(conn.execute(select(result_sets).where(result_sets.c.id == set_id)).mappings().one())
