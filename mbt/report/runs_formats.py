"""`mbt runs`' report formats (`--format NAME[:PATH]`, repeatable, as `mbt coverage` and `mbt eval` take them): text
(the default), json (schema `runs`), markdown (a compact summary for a CI job page, $GITHUB_STEP_SUMMARY) and xlsx
(an Excel workbook: an overview with the run metrics, a row per run, the first-deviation distributions).
Formatting only: every figure comes from the report."""

from __future__ import annotations

from mbt.report.core import Body
from mbt.report.formats import Format
from mbt.runs.results import Metrics, RunResult, RunsReport

RUNS_FORMATS: dict[str, Format] = {f.name: f for f in [
    Format("text", "first deviations, runs not judged, run metrics, usage, the gate (default)", None),
    Format("json", "the full report (docs/schemas/runs.schema.json)", None),
    Format("markdown", "a compact summary for $GITHUB_STEP_SUMMARY", None),
    Format("xlsx", "an Excel workbook: overview and run metrics, a row per run, first deviations "
                   "(--format xlsx:PATH)", None, binary=True),
]}
LISTED = 25  # runs listed per Markdown section; the rest are counted


def runs_body(name: str, report: RunsReport, pretty: bool = True) -> Body:
    """The report in the format named (one of RUNS_FORMATS)."""
    if name == "json":
        from mbt.report.jsonout import with_coverage_json  # on use: start-up time

        return with_coverage_json(report, indent=2 if pretty else None) + b"\n"
    if name == "markdown":
        return runs_markdown(report)
    if name == "xlsx":
        from mbt.report.runs_xlsx import runs_xlsx  # on use: start-up time

        return runs_xlsx(report)
    from mbt.report.runs_text import runs_text  # on use: start-up time

    return runs_text(report)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _metric_row(name: str, m: Metrics) -> str:
    from mbt.report.markdown import cell  # on use: start-up time
    return (f"| {cell(name)} | {m.runs} | {m.passed} | {m.deviations} | {m.not_judged} | "
            f"{_pct(m.intent_accuracy)} ({m.intent_correct}/{m.intent_runs}) | "
            f"{_pct(m.task_completion_rate)} ({m.completed}/{m.completion_runs}) | "
            f"{_pct(m.escalation_success_rate)} ({m.escalated}/{m.escalation_runs}) | {m.critical_failures} |")


METRIC_HEADER = ["| scope | runs | passed | deviating | not judged | intent accuracy | task completion | "
                 "escalation success | critical |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]


def _more(shown: int, total: int) -> list[str]:
    return ["", f"… and {total - shown} more (the text, JSON and Excel reports list every run)"] \
        if total > shown else []


def _run_name(r: RunResult) -> str:
    return r.id if r.where.startswith(r.id) else f"{r.id} ({r.where})"


def runs_markdown(report: RunsReport) -> str:
    """A compact summary: the gate, the counts, the run metrics per suite (and per group), the first deviations
    by type, the runs with a deviation and those not judged (the first LISTED of each), the gate's failures. Every
    text from the runs is escaped for a Markdown table or line (mbt.report.markdown.cell)."""
    from mbt.report.llm_cost import usage_lines  # on use: start-up time (it loads the judges)
    from mbt.report.markdown import cell  # on use: start-up time

    m = report.metrics
    invalid = len(report.invalid) + sum(r.verdict == "invalid" for r in report.runs)
    gate = report.gate
    if gate is None:
        verdict = "report (no gate)"
    elif gate.passed:
        verdict = "✅ gate passed"
    else:
        verdict = f"❌ gate failed ({len(gate.failures)} failure{'s' if len(gate.failures) != 1 else ''})"
    out = [f"## mbt runs: {verdict}", "",
           f"{len(report.runs)} run(s) read from {len(report.files)} file(s): {m.passed} passed, {m.deviations} with a "
           f"deviation, {m.not_judged} not judged (evidence missing; never counted as passed), {invalid} invalid.",
           "", "### Run metrics", "", *METRIC_HEADER, _metric_row("all runs", m)]
    out += [_metric_row(name + (" (required)" if name in report.required_suites else ""), s)
            for name, s in report.suites.items()]
    out += ["", "Task completion and escalation success are measured on the fully judged runs (passed or deviating)."]
    if report.groups:
        out += ["", f"### By {cell(report.group_by or '')}", "", *METRIC_HEADER]
        out += [_metric_row(g.value if g.value is not None else "(not recorded)", g.metrics) for g in report.groups]
    dist = report.first_deviations
    if dist.by_type:
        out += ["", "### First deviation by type", "", "| type | runs |", "|---|---:|"]
        out += [f"| {cell(t)} | {n} |" for t, n in dist.by_type.items()]
        deviating = [r for r in report.runs if r.deviation is not None]
        out += ["", f"### Runs with a deviation ({len(deviating)})", "", "| run | type | severity | where | what |",
                "|---|---|---|---|---|"]
        for r in deviating[:LISTED]:
            d = r.deviation
            assert d is not None
            out.append(f"| {cell(_run_name(r))} | {cell(d.type)} | {cell(d.severity)} | {cell(d.where)} | "
                       f"{cell(d.message)} |")
        out += _more(min(len(deviating), LISTED), len(deviating))
    not_judged = [r for r in report.runs if r.verdict == "not_judged"]
    if not_judged:
        out += ["", f"### Runs not judged ({len(not_judged)})", "", "| run | what is missing |", "|---|---|"]
        out += [f"| {cell(_run_name(r))} | {cell('; '.join(r.not_judged))} |" for r in not_judged[:LISTED]]
        out += _more(min(len(not_judged), LISTED), len(not_judged))
    if m.retrieval_runs:
        failures = "not measured" if m.grounding_failures is None else \
            f"{m.grounding_failures} with a grounding failure (of {m.grounding_runs} judged on it)"
        out += ["", f"Grounding: {m.retrieval_runs} run(s) with retrieval evidence: {failures}."]
    bad = list(report.invalid) + [f"{r.where} ({r.id}): invalid run: {r.invalid}" for r in report.runs
                                  if r.verdict == "invalid"]
    if bad:
        out += ["", f"### Invalid runs ({len(bad)})", ""]
        out += [f"- {cell(b)}" for b in bad[:LISTED]]
        out += _more(min(len(bad), LISTED), len(bad))
    if report.judge_usage:
        out += ["", "### LLM judge (--judge)", ""]
        out += [f"- {cell(line.strip())}" for line in usage_lines(report.judge_usage, None)]
    if gate is not None:
        out += ["", f"### Gate{' ' + cell(gate.source) if gate.source else ' (default)'}: "
                    f"{'passed' if gate.passed else 'FAILED'}", ""]
        out += [f"- {cell(f.message)}" for f in gate.failures]
    return "\n".join(out) + "\n"
