"""The store's tables and their migrations: a small ordered list of steps and a version table.

`MIGRATIONS[n]` takes a store at schema version n to n + 1; `mbt_schema` holds the version a store is at. Opening a
store runs the steps it lacks, all in one transaction under a lock (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: an
advisory lock), so two processes opening a new store at once migrate it once, and a failed step leaves the store as
it was. A shipped step is never edited: a change is a new step. Each step declares its own tables as they were when
it shipped (it never uses the current definitions below), so an old store migrates the same way however far the
current schema has moved on.

Why not Alembic: its value is generated migrations for an application's evolving models, run by its developers from
a scripts folder. Here the migrations ship inside a command-line tool and run on users' files and servers when a
command opens them; a list of Python functions over SQLAlchemy Core, tested by migrating a store written at the first
version, does that with no further dependency and no environment script to ship.

What is filtered, searched or compared is a column of `cases`; the rest of a case (whatever the eval or runs report
holds for it, fields added later included, and its session) is kept whole as a JSON document in `case_docs`, so a
report that grows needs no migration. The documents have a table of their own so that the `cases` rows stay narrow:
a filter or a search over 100,000 cases reads the columns it tests, not 100,000 documents.

What a set's LLM judges cost has tables of its own (version 3): `judge_usage`, a row per judge of each run that
wrote the set (its first run, then each resumed or retried run: `run` 1, 2, ...), and `judge_budgets`, a row per
run given a budget. A set without a row had no LLM judge (or was written before version 3 without one): its cost is
not measured, never 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    select,
)
from sqlalchemy.engine import Connection

from mbt.errors import MbtError

# The current tables, for queries: what the migrations below build, step by step (a test compares the two).
metadata = MetaData()

schema_version = Table("mbt_schema", metadata, Column("version", Integer, nullable=False))

result_sets = Table(
    "result_sets", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("suite", String(255), nullable=False),
    Column("status", String(16), nullable=False),  # running | done | failed | cancelled
    Column("run_type", String(16), nullable=False),  # eval | runs | coverage
    Column("started_at", String(32), nullable=False),  # ISO 8601, UTC: "2025-01-06T08:30:00Z" (sorts as text)
    Column("ended_at", String(32)),
    Column("executor", String(255), nullable=False),  # user:NAME, or the CI job (mbt.store.executor)
    Column("agent_version", Text),  # the versions the cases name, comma-separated
    Column("model_version", Text),
    Column("prompt_version", Text),
    Column("judge", Text, nullable=False),  # JSON: the judge configuration
    Column("summary", Text),  # JSON: the report without its cases (metrics, gate, invalid inputs)
    Column("meta", Text, nullable=False),  # JSON: mbt's version, the command's inputs, why a set failed
    Column("cases_total", Integer, nullable=False, default=0),
    Column("passed", Integer, nullable=False, default=0),
    Column("failed", Integer, nullable=False, default=0),
    Column("not_judged", Integer, nullable=False, default=0),
    Column("errors", Integer, nullable=False, default=0),
)
Index("ix_result_sets_started", result_sets.c.started_at)

cases = Table(
    "cases", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), nullable=False),
    Column("seq", Integer, nullable=False),  # the case's place in its set, from 1
    Column("case_key", String(512), nullable=False),  # what pairs a case across sets (docs/results.md)
    Column("case_id", String(255), nullable=False),
    Column("location", Text, nullable=False),  # file:row of the golden, or where the run was read
    Column("turns", Integer, nullable=False),
    Column("question", Text, nullable=False),  # the first question: the case's representative (seed 001)
    Column("answer", Text),  # the agent's answer to it
    Column("overall", String(16), nullable=False),  # pass | fail | not_judged | error
    Column("agent_version", String(255)),
    Column("model", String(255)),
    Column("prompt_version", String(255)),
    Column("wall_ms", Float),
    Column("error", Text),
    Column("search", Text, nullable=False),  # every question and answer, case-folded: what --search reads
    Column("first_deviation", String(64)),  # version 2: the first deviation's type (runs; eval with --model)
    Column("first_deviation_element", String(512)),
    Column("flags", Text),  # JSON: the case's part in the run metrics (completed, intent_correct, ...)
)
Index("ix_cases_set_seq", cases.c.set_id, cases.c.seq)
Index("ix_cases_set_overall", cases.c.set_id, cases.c.overall)
Index("ix_cases_set_key", cases.c.set_id, cases.c.case_key)
Index("ix_cases_set_turns", cases.c.set_id, cases.c.turns)

case_docs = Table(
    "case_docs", metadata,
    Column("case_row", Integer, ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True),
    Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), nullable=False),
    Column("doc", Text, nullable=False),  # JSON: the whole case as its report had it, with `transcript` (the session)
)
Index("ix_case_docs_set", case_docs.c.set_id)

verdicts = Table(
    "verdicts", metadata,
    Column("case_row", Integer, ForeignKey("cases.id", ondelete="CASCADE"), nullable=False),
    Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), nullable=False),
    Column("criterion", String(128), nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("reason", Text, nullable=False),
    Column("judge", String(255), nullable=False),
)
Index("ix_verdicts_case", verdicts.c.case_row)
Index("ix_verdicts_set_criterion", verdicts.c.set_id, verdicts.c.criterion, verdicts.c.verdict)

# Version 3: what each LLM judge of each run that wrote a set cost (mbt.judges.usage.JudgeUsage), and each run's budget.
judge_usage = Table(
    "judge_usage", metadata,
    Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), primary_key=True),
    Column("run", Integer, primary_key=True),  # 1: the run that started the set; then each resumed or retried run
    Column("judge", String(255), primary_key=True),  # openai:MODEL
    Column("asked", Integer, nullable=False),
    Column("requests", Integer, nullable=False),
    Column("retries", Integer, nullable=False),
    Column("cache_hits", Integer, nullable=False),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("replies_without_usage", Integer, nullable=False),
    Column("not_asked", Integer, nullable=False),
    Column("cost", Float),  # dollars; NULL: not measured (no price for the model), never 0
    Column("cost_note", Text, nullable=False),
)

judge_budgets = Table(
    "judge_budgets", metadata,
    Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), primary_key=True),
    Column("run", Integer, primary_key=True),
    Column("max_cost", Float),
    Column("max_requests", Integer),
    Column("requests", Integer, nullable=False),  # requests the budget granted
    Column("reached", Text),  # why sending stopped; NULL: within the budget
)


def _version_1(conn: Connection) -> None:
    """The first schema: result sets, their cases with their documents, the verdicts per criterion (as shipped;
    never edit)."""
    frozen = MetaData()
    Table("mbt_schema", frozen, Column("version", Integer, nullable=False))
    sets = Table(
        "result_sets", frozen,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("name", String(255), nullable=False, unique=True),
        Column("suite", String(255), nullable=False),
        Column("status", String(16), nullable=False),
        Column("run_type", String(16), nullable=False),
        Column("started_at", String(32), nullable=False),
        Column("ended_at", String(32)),
        Column("executor", String(255), nullable=False),
        Column("agent_version", Text),
        Column("model_version", Text),
        Column("prompt_version", Text),
        Column("judge", Text, nullable=False),
        Column("summary", Text),
        Column("meta", Text, nullable=False),
        Column("cases_total", Integer, nullable=False, default=0),
        Column("passed", Integer, nullable=False, default=0),
        Column("failed", Integer, nullable=False, default=0),
        Column("not_judged", Integer, nullable=False, default=0),
        Column("errors", Integer, nullable=False, default=0),
    )
    Index("ix_result_sets_started", sets.c.started_at)
    rows = Table(
        "cases", frozen,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), nullable=False),
        Column("seq", Integer, nullable=False),
        Column("case_key", String(512), nullable=False),
        Column("case_id", String(255), nullable=False),
        Column("location", Text, nullable=False),
        Column("turns", Integer, nullable=False),
        Column("question", Text, nullable=False),
        Column("answer", Text),
        Column("overall", String(16), nullable=False),
        Column("agent_version", String(255)),
        Column("model", String(255)),
        Column("prompt_version", String(255)),
        Column("wall_ms", Float),
        Column("error", Text),
        Column("search", Text, nullable=False),
    )
    Index("ix_cases_set_seq", rows.c.set_id, rows.c.seq)
    Index("ix_cases_set_overall", rows.c.set_id, rows.c.overall)
    Index("ix_cases_set_key", rows.c.set_id, rows.c.case_key)
    Index("ix_cases_set_turns", rows.c.set_id, rows.c.turns)
    docs = Table(
        "case_docs", frozen,
        Column("case_row", Integer, ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True),
        Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), nullable=False),
        Column("doc", Text, nullable=False),
    )
    Index("ix_case_docs_set", docs.c.set_id)
    judged = Table(
        "verdicts", frozen,
        Column("case_row", Integer, ForeignKey("cases.id", ondelete="CASCADE"), nullable=False),
        Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), nullable=False),
        Column("criterion", String(128), nullable=False),
        Column("verdict", String(16), nullable=False),
        Column("reason", Text, nullable=False),
        Column("judge", String(255), nullable=False),
    )
    Index("ix_verdicts_case", judged.c.case_row)
    Index("ix_verdicts_set_criterion", judged.c.set_id, judged.c.criterion, judged.c.verdict)
    frozen.create_all(conn)


def _version_2(conn: Connection) -> None:
    """`mbt runs` result sets: each case's first deviation and its part in the run metrics (as shipped)."""
    for column in ("first_deviation VARCHAR(64)", "first_deviation_element VARCHAR(512)", "flags TEXT"):
        conn.exec_driver_sql(f"ALTER TABLE cases ADD COLUMN {column}")


def _version_3(conn: Connection) -> None:
    """What the LLM judges of a set cost: `judge_usage` and `judge_budgets` (as shipped). A finished eval set that an
    earlier mbt wrote kept its LLM judges' usage and budget in its summary (the report without its cases): they are
    copied into the new tables as the set's run 1; the summary is left as it was."""
    frozen = MetaData()
    sets = Table("result_sets", frozen, Column("id", Integer, primary_key=True), Column("summary", Text))
    usage = Table(
        "judge_usage", frozen,
        Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), primary_key=True),
        Column("run", Integer, primary_key=True),
        Column("judge", String(255), primary_key=True),
        Column("asked", Integer, nullable=False),
        Column("requests", Integer, nullable=False),
        Column("retries", Integer, nullable=False),
        Column("cache_hits", Integer, nullable=False),
        Column("prompt_tokens", Integer, nullable=False),
        Column("completion_tokens", Integer, nullable=False),
        Column("replies_without_usage", Integer, nullable=False),
        Column("not_asked", Integer, nullable=False),
        Column("cost", Float),
        Column("cost_note", Text, nullable=False),
    )
    budgets = Table(
        "judge_budgets", frozen,
        Column("set_id", Integer, ForeignKey("result_sets.id", ondelete="CASCADE"), primary_key=True),
        Column("run", Integer, primary_key=True),
        Column("max_cost", Float),
        Column("max_requests", Integer),
        Column("requests", Integer, nullable=False),
        Column("reached", Text),
    )
    frozen.create_all(conn, tables=[usage, budgets])
    found = conn.execute(select(sets.c.id, sets.c.summary).where(sets.c.summary.like('%"judge_usage"%')))
    for set_id, raw in found.all():
        try:
            summary = json.loads(raw)
        except ValueError:
            continue  # not a summary mbt wrote: nothing to copy
        if not isinstance(summary, dict):
            continue
        found_rows = [_usage_row(set_id, u) for u in summary.get("judge_usage") or [] if isinstance(u, dict)]
        rows = [r for r in found_rows if r is not None]
        if not rows or len(rows) != len(found_rows) or len({r["judge"] for r in rows}) != len(rows):
            continue  # no LLM judge, or not a summary this mbt wrote: nothing is copied
        conn.execute(usage.insert(), rows)
        budget = summary.get("budget")
        if isinstance(budget, dict):
            max_cost, max_requests = budget.get("max_cost"), budget.get("max_requests")
            reached, granted = budget.get("reached"), budget.get("requests")
            conn.execute(budgets.insert().values(
                set_id=set_id, run=1, max_cost=float(max_cost) if isinstance(max_cost, (int, float)) else None,
                max_requests=max_requests if isinstance(max_requests, int) else None,
                requests=granted if isinstance(granted, int) else 0,
                reached=reached if isinstance(reached, str) else None))


def _usage_row(set_id: int, usage: dict) -> dict | None:
    """A judge's usage as an earlier mbt's summary kept it, as a row of version 3's `judge_usage` (None: not one)."""
    counts = ("asked", "requests", "retries", "cache_hits", "prompt_tokens", "completion_tokens",
              "replies_without_usage", "not_asked")
    if not isinstance(usage.get("judge"), str) or not all(isinstance(usage.get(k, 0), int) for k in counts):
        return None
    cost = usage.get("cost")
    return {"set_id": set_id, "run": 1, "judge": usage["judge"], **{k: usage.get(k, 0) for k in counts},
            "cost": float(cost) if isinstance(cost, (int, float)) else None,
            "cost_note": str(usage.get("cost_note") or "")}


MIGRATIONS: list[Callable[[Connection], None]] = [_version_1, _version_2, _version_3]
CURRENT = len(MIGRATIONS)
# The PostgreSQL advisory lock that serialises migrations (any fixed number; "mbt" in ASCII).
MIGRATION_LOCK = 0x6D6274


def stored_version(conn: Connection) -> int:
    """The schema version of the store `conn` opened: 0 for an empty database. A database holding other tables
    but no `mbt_schema` is not a result store, and mbt leaves it alone."""
    names = set(inspect(conn).get_table_names())
    if "mbt_schema" not in names:
        ours = {"result_sets", "cases", "case_docs", "verdicts"} & names
        if ours:
            raise MbtError(f"the database has table(s) {', '.join(sorted(ours))} but no mbt_schema table: it is not "
                           "an mbt result store, or one damaged; give another --store")
        return 0
    found = conn.execute(select(schema_version.c.version)).scalars().all()
    if len(found) != 1:
        raise MbtError(f"the store's mbt_schema table holds {len(found)} rows, not one: the store is damaged")
    return int(found[0])


def migrate(conn: Connection, steps: list[Callable[[Connection], None]] | None = None) -> tuple[int, int]:
    """Bring the store to the newest version (or through `steps`, a test's older list) inside the caller's write
    transaction; returns (version before, version after). A store newer than this mbt is refused, not touched."""
    steps = MIGRATIONS if steps is None else steps
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
    before = stored_version(conn)
    if before > len(steps):
        raise MbtError(f"the store is at schema version {before}; this mbt knows versions up to {len(steps)}: "
                       "upgrade mbt to use it")
    for number in range(before, len(steps)):
        steps[number](conn)
        if number == 0:
            conn.execute(schema_version.insert().values(version=1))
        else:
            conn.execute(schema_version.update().values(version=number + 1))
    return before, len(steps)
