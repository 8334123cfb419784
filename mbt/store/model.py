"""What `mbt results` returns (JSON as written, and what the text reporters format): result sets, their overview and
case lists, one case in detail, exports and comparisons. Every figure is computed in mbt.store, never by a reporter."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from mbt.judges.usage import EvalBudget, JudgeUsage, UsageTotals

SCHEMA_VERSION = "1.0"


class SetInfo(BaseModel):
    """A result set as the list shows it (seed 001: status, time, run type, executor)."""

    name: str
    suite: str
    status: str = Field(description="running | done | failed | cancelled")
    run_type: str = Field(description="eval | runs | coverage")
    started_at: str = Field(description="ISO 8601, UTC")
    ended_at: str | None
    executor: str
    agent_version: str | None
    model_version: str | None
    prompt_version: str | None
    judge: dict[str, Any]
    cases_total: int
    passed: int
    failed: int
    not_judged: int
    errors: int
    pass_rate: float | None = Field(description="passed / cases run without error, in percent (seed 001)")
    error: str | None = Field(default=None, description="Why a failed or cancelled set ended.")
    mbt_version: str | None = None
    interrupted: bool = Field(default=False, description=(
        "A running set whose writer is gone (its process ended, or it went silent): `mbt eval --resume NAME` "
        "continues it."))
    writer: str | None = Field(default=None, description=(
        "A running set whose writer is alive: why it is taken to be (its process, or its last heartbeat)."))


class SetList(BaseModel):
    schema_version: str = SCHEMA_VERSION
    store: str = Field(description="The store, its password hidden.")
    matching: int
    sets: list[SetInfo]


class Rate(BaseModel):
    """Overall or one criterion over a set's cases: counts and the pass rate over the cases run without error."""

    key: str
    weight: str | None = None
    passed: int = 0
    failed: int = 0
    not_judged: int = 0
    errors: int = 0
    pass_rate: float | None = None


class Overview(BaseModel):
    cases_total: int
    cases_ok: int = Field(description="Cases run without error (seed 001: run successfully).")
    cases_with_errors: int
    single_turn: int
    multi_turn: int
    overall: Rate
    criteria: list[Rate]


class CaseRow(BaseModel):
    """One case as the detail list shows it (seed 001: number, question, actual answer, kind, results)."""

    seq: int
    key: str
    id: str
    where: str
    turns: int
    kind: str = Field(description="single | multi (turns)")
    question: str
    answer: str | None
    overall: str
    criteria: dict[str, str] = Field(description="criterion -> verdict")
    agent_version: str | None = None
    first_deviation: str | None = None
    error: str | None = None


class RunBudget(EvalBudget):
    """The budget one run that wrote the set was given (--max-cost, --max-requests), and whether it was reached."""

    run: int = Field(description="1: the run that started the set; then each resumed or retried run.")


class SetUsage(BaseModel):
    """What the set's LLM judges cost (docs/results.md): each judge's figures added up over every run that wrote
    the set, the totals over the judges, and each run's budget."""

    runs: int = Field(description="Runs that wrote the set with an LLM judge: the first, then each resumed or "
                                  "retried one.")
    judges: list[JudgeUsage]
    totals: UsageTotals
    budgets: list[RunBudget] = Field(default_factory=list, description="Each run given a budget, in run order.")


class SetView(BaseModel):
    """`mbt results show NAME`: the set, its overview, and the cases the filters let through."""

    schema_version: str = SCHEMA_VERSION
    store: str
    set: SetInfo
    overview: Overview
    usage: SetUsage | None = Field(default=None, description="What its LLM judges cost; None: the set holds no LLM "
                                                             "judge's usage (no LLM judge): not measured.")
    filters: dict[str, Any]
    matching: int = Field(description="Cases the filters let through (the list holds `limit` of them).")
    offset: int
    limit: int | None
    cases: list[CaseRow]


class Verdict(BaseModel):
    criterion: str
    verdict: str
    reason: str
    judge: str


class CaseDetail(BaseModel):
    """`mbt results show NAME --case KEY`: the explanation per criterion, the questions with expected and actual
    answers, and the session (seed 001's detail and its "history")."""

    schema_version: str = SCHEMA_VERSION
    set: str
    case: CaseRow
    verdicts: list[Verdict]
    doc: dict[str, Any] = Field(description="The case as its report had it, with `transcript` (the session).")


class ExportCase(BaseModel):
    row: CaseRow
    verdicts: list[Verdict]
    doc: dict[str, Any]


class ExportDoc(BaseModel):
    """`mbt results export --format json`: the set, its overview, the report's summary, every case whole (written
    piece by piece by mbt.report.results_json; this model is its schema)."""

    schema_version: str = SCHEMA_VERSION
    set: SetInfo
    overview: Overview
    summary: dict[str, Any] = Field(description="The eval or runs report without its cases (and without the "
                                                "goldens' coverage and its LLM judges' usage, which is `usage`)")
    usage: SetUsage | None = Field(default=None, description="What its LLM judges cost; None: not measured (no LLM "
                                                             "judge's usage stored).")
    cases: list[ExportCase]


class Flip(BaseModel):
    key: str
    id: str
    where: str
    question: str
    before: str
    after: str


class Delta(BaseModel):
    """A metric in A and in B (rates in percent) and the change B - A in percentage points with its 95% confidence
    interval (docs/results.md says which)."""

    metric: str
    a_passed: int
    a_n: int
    a_rate: float | None
    b_passed: int
    b_n: int
    b_rate: float | None
    delta: float | None = Field(description="B - A in percentage points; None when not measured")
    low: float | None
    high: float | None
    method: str
    pairs: int = Field(0, description="Cases in both sets with a value in both (paired methods)")
    discordant: list[int] = Field(default_factory=list, description="[A only, B only] (paired): McNemar's b and c")
    mcnemar_p: float | None = None


class DeviationColumn(BaseModel):
    """One column of the first-deviation distribution: a set, or one agent version of a set that holds several."""

    side: str = Field(description="A or B")
    set: str
    agent_version: str | None = Field(description="None: the set's one column (one version, or none recorded)")
    versions_split: bool = Field(False, description="True: the set holds several agent versions, one column each")
    cases: int
    passed: int
    pass_rate: float | None
    metrics: dict[str, float | None] = Field(default_factory=dict, description="runs sets: each run metric of the "
                                             "column's runs, in percent (None: no run it counts)")
    by_type: dict[str, int]


class TurnChange(BaseModel):
    turn: int
    same: bool
    changed: dict[str, list[Any]]


class SessionDiff(BaseModel):
    key: str
    a_where: str | None
    b_where: str | None
    recorded: bool = Field(description="False when a side kept no session (no run answered the case)")
    turns: list[TurnChange]


class UsageDelta(BaseModel):
    """One total of the LLM judges' usage in A and in B, and the change B - A (None where a side is not measured:
    a set with no LLM judge's usage, or a cost without a price, is never taken as 0)."""

    metric: str = Field(description="verdicts asked | requests | input tokens | output tokens | cost")
    a: int | float | None
    b: int | float | None
    delta: int | float | None = Field(description="B - A; None when either side is not measured")


class Comparison(BaseModel):
    schema_version: str = SCHEMA_VERSION
    store: str
    a: SetInfo
    b: SetInfo
    matched: int
    only_a: list[str]
    only_b: list[str]
    flips: list[Flip]
    metrics: list[Delta]
    deviations: list[DeviationColumn]
    sessions: list[SessionDiff] = Field(default_factory=list)
    confidence: float = 0.95
    a_usage: SetUsage | None = Field(default=None, description="What A's LLM judges cost; None: not measured.")
    b_usage: SetUsage | None = Field(default=None, description="What B's LLM judges cost; None: not measured.")
    usage: list[UsageDelta] = Field(default_factory=list, description="The LLM judges' totals of A and B and the "
                                                                      "change (dollars for the cost).")


class Regression(BaseModel):
    key: str
    where: str
    before: str
    after: str
