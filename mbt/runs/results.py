"""The runs report model: per run its verdict, the first-deviation distribution, run metrics, usage-weighted coverage."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from mbt.measure.coverage import CoverageReport, GateResult

SCHEMA_VERSION = "1.0"


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


class RunResult(BaseModel):
    id: str
    where: str
    format: str
    model: str | None
    suite: str | None
    verdict: str  # pass | deviation | invalid
    steps: int
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


class Metrics(BaseModel):
    """Run-level figures (docs/runs.md gives each rule); a ratio is None when its denominator is 0."""

    runs: int = 0  # judged runs (invalid ones are not)
    passed: int = 0
    deviations: int = 0
    intent_runs: int = 0  # runs with an expected intent
    intent_correct: int = 0
    intent_accuracy: float | None = None
    completed: int = 0
    task_completion_rate: float | None = None
    escalation_runs: int = 0  # runs on which the model hands off
    escalated: int = 0  # ... and the run did, with the model's arguments
    escalation_success_rate: float | None = None
    critical_failures: int = 0


class Distribution(BaseModel):
    """First deviations counted by type and by model element (seed 002: what guides engineering work)."""

    by_type: dict[str, int] = Field(default_factory=dict)
    by_element: dict[str, int] = Field(default_factory=dict)


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
    note: str = ""


class RunsReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    files: list[str] = Field(default_factory=list)
    runs: list[RunResult] = Field(default_factory=list)
    invalid: list[str] = Field(default_factory=list)  # file:line: message
    metrics: Metrics = Field(default_factory=Metrics)
    suites: dict[str, Metrics] = Field(default_factory=dict)
    required_suites: list[str] = Field(default_factory=list)
    separately: list[Separate] = Field(default_factory=list)
    first_deviations: Distribution = Field(default_factory=Distribution)
    usage: list[UsageCoverage] = Field(default_factory=list)
    coverage: CoverageReport | None = None  # the goldens' coverage, when goldens were given
    gate: GateResult | None = None
    regressions: list[str] = Field(default_factory=list)  # regression golden files written
    regression_goldens: int = 0
    regressions_skipped: list[str] = Field(default_factory=list)  # failing runs without a golden, and why
