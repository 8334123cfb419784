"""The runs report model: per run its verdict, the first-deviation distribution, run metrics, usage-weighted coverage."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from mbt.judges.usage import EvalBudget, JudgeUsage
from mbt.measure.coverage import CoverageReport, GateResult
from mbt.measure.level_models import Undocumented
from mbt.runs.steps import RunContext

# 2.1: grounding (runs[].grounding, the metrics' grounding figures), contract items; 2.2: runs[].tags, marked,
# undocumented, deviation.event; 2.3: judge_usage (what an LLM `--judge` cost)
SCHEMA_VERSION = "2.3"


class DeviationOut(BaseModel):
    type: str
    where: str
    step: int
    element: str | None
    severity: str
    message: str
    tool: str | None = None
    argument: str | None = None
    expected: Any = None
    actual: Any = None
    source: str | None = None
    sources: dict[str, str] = Field(default_factory=dict)  # every recorded argument source of the call
    event: str | None = None  # step_not_allowed: the event the model refused


class Evidence(BaseModel):
    """What one run exposed (docs/runs.md, "The evidence contract"): counts of each kind of evidence."""

    steps: int = 0
    user_texts: int = 0
    assistant_texts: int = 0
    tool_calls: int = 0
    tool_calls_with_arguments: int = 0
    argument_sources: int = 0  # tool calls that record where an argument came from
    tool_results: int = 0
    state_exports: int = 0
    turn_records: int = 0  # seed 003's per-turn records
    stop_reasons: int = 0
    usage: bool = False  # token usage recorded
    records_tool_calls: bool = True  # False: the run's format cannot show calls (a session store, turn results)


class DocumentOut(BaseModel):
    """A retrieved document as the run recorded it (None: not recorded)."""

    id: str
    score: float | None = None
    approved: bool | None = None
    status: str | None = None


class GroundingFailureOut(BaseModel):
    """A grounding failure (docs/runs.md, "Grounding"): its type, where, what, the document and claim it concerns."""

    type: str  # unapproved_source | expired_source | source_not_retrieved | source_not_allowed | ungrounded_claim
    #            | critical_hallucination
    where: str
    message: str
    source: str | None = None
    claim: str | None = None
    kinds: list[str] = Field(default_factory=list)  # a critical hallucination: status, result, time, quantity


class ItemOut(BaseModel):
    """A contract item, or one of the trace's own must_not items, as the run judged it."""

    item: str  # the contract's key (`must_not[2]`) or the trace's location and text
    verdict: str  # pass | fail | not_judged (a must_not: pass = kept, fail = violated)
    reason: str = ""


class GroundingOut(BaseModel):
    """A run's retrieval evidence and what the grounding rules found. `judged`: grounding measured (a failure found,
    or every rule judged); `hallucinations_judged`: critical hallucinations measured (one found, or every claim
    recorded and decided). Runs judged on a model of another kind than `contract` keep their evidence, not judged."""

    route: str | None = None
    queries: list[str] = Field(default_factory=list)
    documents: list[DocumentOut] = Field(default_factory=list)
    selected: list[str] | None = None
    used: list[str] = Field(default_factory=list)
    claims: int | None = None  # None: the run records no claims
    claims_grounded: int = 0
    judged: bool = False
    hallucinations_judged: bool = False
    failures: list[GroundingFailureOut] = Field(default_factory=list)
    critical_hallucinations: int = 0
    must_not: list[ItemOut] = Field(default_factory=list)  # the trace's own must_not items
    not_judged: list[str] = Field(default_factory=list)


class RunResult(BaseModel):
    id: str
    where: str
    format: str
    model: str | None
    suite: str | None
    verdict: str  # pass | deviation | not_judged | invalid
    steps: int
    file: str = ""
    not_judged: list[str] = Field(default_factory=list)  # what was not judged, and why (any verdict may have some)
    evidence: Evidence = Field(default_factory=Evidence)
    context: RunContext = Field(default_factory=RunContext)  # a plain dataclass: pydantic reads and writes it
    notes: list[str] = Field(default_factory=list)  # telemetry the reader read as nothing
    handed_off: bool = False  # judged without deviation or gap, ending in a final state by a correct hand-off
    deviation: DeviationOut | None = None
    invalid: str | None = None
    critical: bool = False
    completed: bool = False
    escalation_expected: bool = False
    escalated: bool = False
    intent: str | None = None
    expected_intent: str | None = None
    final_state: str | None = None
    unbound: list[str] = Field(default_factory=list)  # results of tools no binding speaks of
    path_judged: bool = True  # False: its model has no path to say the task complete or handed off (a contract)
    grounding: GroundingOut | None = None  # None: the run records no retrieval evidence
    items: list[ItemOut] = Field(default_factory=list)  # a contract's items as this run judged them
    tags: list[str] = Field(default_factory=list)  # the run's own tags: `incident`, `adversarial` mark it


class Metrics(BaseModel):
    """Run-level figures (docs/runs.md gives each rule); a ratio is None when its denominator is 0, and each ratio's
    denominator is a field of its own (every figure says over how many runs it was measured)."""

    runs: int = 0  # runs read and judged or not judged (invalid ones are counted apart)
    passed: int = 0
    deviations: int = 0
    not_judged: int = 0  # runs with no deviation found and some evidence missing
    fully_judged: int = 0  # passed + deviations
    intent_runs: int = 0  # runs with an expected intent
    intent_correct: int = 0
    intent_accuracy: float | None = None
    completed: int = 0
    completion_runs: int = 0  # fully judged runs whose model has a path (not a contract): task completion's denominator
    task_completion_rate: float | None = None
    escalation_runs: int = 0  # runs on which the model hands off
    escalated: int = 0  # ... and the run did, with the model's arguments
    escalation_success_rate: float | None = None
    critical_failures: int = 0
    # Grounding (docs/runs.md, "Grounding"): counts of runs over the runs that measured them; None: not measured
    retrieval_runs: int = 0  # runs that record retrieval evidence
    grounding_runs: int = 0  # ... whose grounding was judged: the denominator of grounding_failures
    grounding_failures: int | None = None  # runs with a grounding failure
    hallucination_runs: int = 0  # runs whose claims were judged: the denominator of critical_hallucinations
    critical_hallucinations: int | None = None  # runs with a critical hallucination
    # Cost and time (seed 002: "latency must be segmented"), summed over the runs that record them
    usage_runs: int = 0  # runs that record token usage
    input_tokens: int = 0
    output_tokens: int = 0
    timed_runs: int = 0  # runs that record span times
    wall_ms: float = 0.0
    model_ms: float = 0.0
    tool_ms: float = 0.0
    retries: int = 0
    retry_ms: float = 0.0


class Distribution(BaseModel):
    """First deviations counted by type and by model element (seed 002: what guides engineering work), and by
    signature: type, element and the call's argument source together ("forbidden_call after a multi-candidate
    lookup, source model_inference")."""

    by_type: dict[str, int] = Field(default_factory=dict)
    by_element: dict[str, int] = Field(default_factory=dict)
    by_signature: dict[str, int] = Field(default_factory=dict)


class Group(BaseModel):
    """`--group-by KEY`: the runs of one value side by side with the others (seed 002: "version B: ...")."""

    key: str
    value: str | None  # None: runs that do not say
    metrics: Metrics
    first_deviations: Distribution


class MarkedRuns(BaseModel):
    """Seed 004's level 4 beyond usage: the runs of one mark (`incident`, `adversarial`, or `unmarked`: neither)
    reported apart, with every run metric and their first deviations (docs/runs.md, "Marked runs")."""

    mark: str
    runs: list[str]  # the runs' ids, in run order
    metrics: Metrics
    first_deviations: Distribution


class UsageRow(BaseModel):
    element: str
    criterion: str
    runs: int  # observed runs that passed through it
    goldens_verifying: int


class UsageCoverage(BaseModel):
    """Seed 004's usage level: elements weighted by how many runs exercised them."""

    model: str
    elements: int  # feasible elements
    seen_in_runs: int
    run_coverage: dict[str, float | None] = Field(default_factory=dict)  # criterion -> exercised-by-runs ratio
    golden_coverage: dict[str, float | None] = Field(default_factory=dict)  # criterion -> verified-by-goldens ratio
    verified_coverage: float | None = None  # unweighted: verified elements / feasible elements (goldens)
    usage_weighted_verified: float | None = None  # sum(runs x verified) / sum(runs), over seen elements
    frequent_unverified: list[UsageRow] = Field(default_factory=list)
    verified_unseen: list[str] = Field(default_factory=list)


class Separate(BaseModel):
    """A `report_separately` figure: its value, or why mbt does not measure it."""

    name: str
    value: float | int | None = None
    runs: int | None = None  # the runs it was measured over, where it is a count of runs
    note: str = ""


class RunsReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    files: list[str] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list)  # per file: telemetry attributes no mapping reads
    goldens_given: bool = False
    group_by: str | None = None
    groups: list[Group] = Field(default_factory=list)
    runs: list[RunResult] = Field(default_factory=list)
    invalid: list[str] = Field(default_factory=list)  # file:line: message
    metrics: Metrics = Field(default_factory=Metrics)
    suites: dict[str, Metrics] = Field(default_factory=dict)
    required_suites: list[str] = Field(default_factory=list)
    separately: list[Separate] = Field(default_factory=list)
    first_deviations: Distribution = Field(default_factory=Distribution)
    usage: list[UsageCoverage] = Field(default_factory=list)
    marked: list[MarkedRuns] = Field(default_factory=list)  # empty when no run is marked
    undocumented: list[Undocumented] = Field(default_factory=list)  # candidates for the model, most runs first
    coverage: CoverageReport | None = None  # the goldens' coverage, when goldens were given
    gate: GateResult | None = None
    regressions: list[str] = Field(default_factory=list)  # regression golden files written
    regression_goldens: int = 0
    regressions_skipped: list[str] = Field(default_factory=list)  # failing runs without a golden, and why
    judge_usage: list[JudgeUsage] = Field(default_factory=list, description=(
        "What the LLM answer judge of `--judge openai:MODEL` cost (say forbids' descriptions, contract items): "
        "requests, tokens, cost, cache hits (empty without an LLM judge)."))
    budget: EvalBudget | None = Field(default=None, description=(
        "The LLM judge's budget (--max-cost, --max-requests, `llm:`) and whether it was reached; None: no budget."))
