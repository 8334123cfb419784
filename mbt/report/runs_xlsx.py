"""The `mbt runs` report as an Excel workbook (`--format xlsx:PATH`): an overview (the counts, the gate and its
failures, the run metrics of all runs, per suite and per group, what an LLM judge cost), a row per run (its verdict,
first deviation, what was not judged, its part in the run metrics, versions, tokens and time), and the
first-deviation distributions. Formatting only: every figure comes from the report.

Written by mbt.report.xlsx_results' `workbook`: every text is a text cell, never a formula or an error value (a run
id `=HYPERLINK(...)` stays that text, with Excel's quote prefix); the same report gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mbt.report.llm_cost import usage_rows
from mbt.report.xlsx_results import workbook
from mbt.runs.results import Metrics, RunResult, RunsReport

METRIC_COLUMNS = ["Scope", "Runs", "Passed", "Deviating", "Not judged", "Intent accuracy (%)", "Intent runs",
                  "Task completion (%)", "Completion runs", "Escalation success (%)", "Escalation runs",
                  "Critical failures", "Tokens in", "Tokens out", "Wall (ms)"]


def _percent(value: float | None) -> float | str:
    return "n/a" if value is None else round(value * 100, 2)


def _metrics(scope: str, m: Metrics) -> list[Any]:
    return [scope, m.runs, m.passed, m.deviations, m.not_judged, _percent(m.intent_accuracy), m.intent_runs,
            _percent(m.task_completion_rate), m.completion_runs, _percent(m.escalation_success_rate),
            m.escalation_runs, m.critical_failures, m.input_tokens, m.output_tokens, round(m.wall_ms, 1)]


def _overview(report: RunsReport) -> Iterator[list[Any]]:
    m = report.metrics
    gate = report.gate
    yield ["mbt runs", f"{len(report.runs)} run(s) from {len(report.files)} file(s)"]
    yield ["Passed", m.passed]
    yield ["With a deviation", m.deviations]
    yield ["Not judged (evidence missing; never counted as passed)", m.not_judged]
    yield ["Invalid", len(report.invalid) + sum(r.verdict == "invalid" for r in report.runs)]
    if gate is not None:
        yield ["Gate", "passed" if gate.passed else "FAILED", gate.source or "default"]
        for failure in gate.failures:
            yield ["", failure.message]
    yield []
    yield METRIC_COLUMNS
    yield _metrics("all runs", m)
    for name, suite in report.suites.items():
        yield _metrics(f"suite {name}" + (" (required)" if name in report.required_suites else ""), suite)
    for g in report.groups:
        yield _metrics(f"{report.group_by} {g.value if g.value is not None else '(not recorded)'}", g.metrics)
    costs = usage_rows(report.judge_usage)
    if costs:  # what the LLM judge of --judge cost
        yield []
        yield from costs
    for item in report.invalid:
        yield ["Invalid input", item]


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _run(r: RunResult) -> list[Any]:
    d, c = r.deviation, r.context
    return [r.id, r.where, r.format, r.model or "", r.suite or "", r.verdict,
            d.type if d else "", (d.element or "") if d else "", d.severity if d else "", d.where if d else "",
            d.message if d else "", "\n".join(r.not_judged), r.invalid or "", r.intent or "", r.expected_intent or "",
            _yes(r.completed), _yes(r.escalation_expected), _yes(r.escalated), _yes(r.critical),
            c.service_version or "", c.response_model or c.request_model or "", c.prompt_version or "",
            c.input_tokens if c.input_tokens is not None else "", c.output_tokens if c.output_tokens is not None else "",
            round(c.wall_ms, 1) if c.wall_ms is not None else "", r.steps]


RUN_COLUMNS = ["Run", "Where", "Format", "Model", "Suite", "Verdict", "First deviation", "Element", "Severity",
               "Deviation at", "What", "Not judged", "Invalid", "Intent", "Expected intent", "Completed",
               "Escalation expected", "Escalated", "Critical", "Agent version", "LLM", "Prompt version", "Tokens in",
               "Tokens out", "Wall (ms)", "Steps"]


def _runs(report: RunsReport) -> Iterator[list[Any]]:
    yield RUN_COLUMNS
    for r in report.runs:
        yield _run(r)


def _deviations(report: RunsReport) -> Iterator[list[Any]]:
    dist = report.first_deviations
    yield ["First deviation", "By", "Runs"]
    for label, counts in (("type", dist.by_type), ("element", dist.by_element), ("signature", dist.by_signature)):
        for key, runs in counts.items():
            yield [key, label, runs]


def runs_xlsx(report: RunsReport) -> bytes:
    return workbook([("Overview", (44, 22, 12, 12, 12, 16, 12, 16, 14, 18, 14, 14, 12, 12, 12), _overview(report)),
                     ("Runs", (28, 36, 12, 16, 14, 11, 20, 28, 10, 30, 50, 40, 30, 14, 14, 10, 10, 10, 10, 14, 18,
                               14, 10, 10, 10, 8), _runs(report)),
                     ("First deviations", (60, 12, 8), _deviations(report))])
