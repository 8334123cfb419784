"""The runs report as text: first-deviation tables, each failing run, the runs not judged and what they lacked, run
metrics per suite (and per group), usage, unread telemetry, what an LLM judge cost, the gate."""

from __future__ import annotations

from mbt.measure.level_models import Undocumented
from mbt.report.llm_cost import usage_lines
from mbt.runs.results import Evidence, Metrics, RunResult, RunsReport

SIGHTINGS_SHOWN = 10  # where a candidate was seen: the first ones (the JSON report has them all)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


def _metric_cells(m: Metrics) -> list[str]:
    return [f"{m.runs}", f"{m.passed}", f"{m.deviations}", f"{m.not_judged}",
            f"{_pct(m.intent_accuracy)} ({m.intent_correct}/{m.intent_runs})",
            f"{_pct(m.task_completion_rate)} ({m.completed}/{m.completion_runs})",
            f"{_pct(m.escalation_success_rate)} ({m.escalated}/{m.escalation_runs})",
            f"{m.critical_failures}"]


METRIC_HEADERS = ["runs", "passed", "deviating", "not judged", "intent accuracy", "task completion",
                  "escalation success", "critical"]


def _ms(value: float) -> str:
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def _name(r: RunResult) -> str:
    """A run as a reader finds it: its id, and the file (with line) it came from when the id does not say."""
    return r.id if r.where.startswith(r.id) or r.id in r.where.rsplit("/", 1)[-1] else f"{r.id} ({r.where})"


def _where(r: RunResult, where: str) -> str:
    """A step's location with its file: traces name their span, transcripts their file already."""
    return where if where.startswith(r.file) or not r.file else f"{r.file}: {where}"


def _evidence(e: Evidence) -> str:
    parts = [f"{e.steps} step(s)", f"{e.user_texts} user text(s)", f"{e.assistant_texts} answer(s)"]
    parts.append(f"{e.tool_calls} tool call(s)" + (f", {e.tool_calls_with_arguments} with arguments"
                                                   if e.tool_calls else "")
                 + ("" if e.records_tool_calls else " (the format records none)"))
    parts.append(f"{e.tool_results} tool result(s)")
    if e.turn_records:
        parts.append(f"{e.turn_records} turn record(s)")
    parts.append("usage" if e.usage else "no usage")
    return ", ".join(parts)


def _grounding(report: RunsReport) -> list[str]:
    """The runs with retrieval evidence: what each used, its grounding failures, the trace's own must_not items."""
    runs = [r for r in report.runs if r.grounding is not None]
    if not runs:
        return []
    m = report.metrics
    failures = "not measured" if m.grounding_failures is None else \
        f"{m.grounding_failures} with a grounding failure (of {m.grounding_runs} judged on it)"
    critical = "not measured" if m.critical_hallucinations is None else \
        f"{m.critical_hallucinations} with a critical hallucination (of {m.hallucination_runs} whose claims were judged)"
    out = ["", f"Grounding: {m.retrieval_runs} run(s) with retrieval evidence: {failures}; {critical}"]
    for r in runs:
        g = r.grounding
        assert g is not None
        said = [f"route {g.route}"] if g.route else []
        said.append("selected " + (", ".join(g.selected) or "nothing") if g.selected is not None
                    else "selection not recorded")
        said.append(f"{g.claims} claim(s), {g.claims_grounded} grounded" if g.claims is not None
                    else "claims not recorded")
        verdict = "failed" if g.failures else "passed" if g.judged and not g.not_judged else "not judged"
        out.append(f"  {_name(r)}: {'; '.join(said)}: {verdict}")
        for f in g.failures:
            kinds = f" ({', '.join(f.kinds)})" if f.kinds else ""
            out.append(f"    - {f.type}{kinds}: {_where(r, f.where)}: {f.message}")
        for item in g.must_not:
            word = {"pass": "kept", "fail": "violated"}.get(item.verdict, "not judged")
            out.append(f"    trace must_not {item.item}: {word} ({item.reason})")
        out += [f"    - not judged: {gap}" for gap in g.not_judged if gap not in r.not_judged]
    return out


def _marked(report: RunsReport) -> list[str]:
    """The runs marked as incidents or adversarial, each mark's metrics apart (seed 004's level 4)."""
    if not report.marked:
        return []
    out = ["", "Marked runs (reported apart: a run tagged `incident` or `adversarial`, docs/runs.md; a run with both "
               "counts in both)"]
    out += _table(["mark"] + METRIC_HEADERS, [[row.mark] + _metric_cells(row.metrics) for row in report.marked])
    for row in report.marked:
        if row.first_deviations.by_signature:
            out.append(f"  {row.mark}: first deviations")
            out += [f"    {n} of {row.metrics.runs} run(s): {sig}" for sig, n in row.first_deviations.by_signature.items()]
    return out


def candidate_text(c: Undocumented) -> str:
    """One candidate as a line: what was seen, where in the model, in how many runs (and of which marks)."""
    if c.kind == "event":
        what = f"`{c.event}` in state `{c.state}`"
    elif c.kind == "call":
        what = f"a call of `{c.tool}` in state `{c.state}`"
    else:
        what = (f"a result of `{c.tool}` no binding reads" if c.tool else "a user text no binding reads") + \
            f", in state `{c.state}`"
    marks = ", ".join(f"{n} {mark}" for mark, n in c.marked.items())
    return f"{c.model}: {what}: {c.runs} run(s)" + (f" ({marks})" if marks else "")


def undocumented_lines(candidates: list[Undocumented], heading: str = "U") -> list[str]:
    """Behaviour the runs show and no model documents, each candidate with where it was seen (`heading`: how the
    section's title starts, "Level 4: u" in the coverage report)."""
    if not candidates:
        return []
    seen = sum(c.runs for c in candidates)
    out = ["", f"{heading}ndocumented behaviour seen in {seen} run(s): {len(candidates)} candidate(s) for the model "
               "(steps the model neither allows nor forbids)"]
    for c in candidates:
        out.append(f"  {candidate_text(c)}")
        if c.kind == "text":
            out.append(f"    e.g. {c.example}")
        out += [f"    {s.run}: {s.where}" for s in c.seen[:SIGHTINGS_SHOWN]]
        if len(c.seen) > SIGHTINGS_SHOWN:
            out.append(f"    ... and {len(c.seen) - SIGHTINGS_SHOWN} more (--format json)")
    return out


def runs_text(report: RunsReport) -> str:
    out: list[str] = []
    invalid = len(report.invalid) + sum(r.verdict == "invalid" for r in report.runs)
    out.append(f"mbt runs: {len(report.runs)} run(s) read from {len(report.files)} file(s): "
               f"{report.metrics.passed} passed, {report.metrics.deviations} with a deviation, "
               f"{report.metrics.not_judged} not judged (evidence missing), {invalid} invalid")
    out.append("")
    dist = report.first_deviations
    if dist.by_type:
        out.append("First deviation by type")
        out += _table(["type", "runs"], [[t, str(n)] for t, n in dist.by_type.items()])
        out.append("")
        out.append("First deviation by element")
        out += _table(["element", "runs"], [[e, str(n)] for e, n in dist.by_element.items()])
        out.append("")
        out.append("First deviation by type, element and argument source")
        out += _table(["signature", "runs"], [[e, str(n)] for e, n in dist.by_signature.items()])
        out.append("")
        out.append("Runs with a deviation (the first one)")
        rows = []
        for r in report.runs:
            d = r.deviation
            if d is None:
                continue
            rows.append([r.id, d.type, d.severity, _where(r, d.where)])
            rows.append(["", "", "", d.message])
        out += _table(["run", "type", "severity", "where / what"], rows)
        out.append("")
    not_judged = [r for r in report.runs if r.verdict == "not_judged"]
    if not_judged:
        out.append(f"Runs not judged: {len(not_judged)} (no deviation found, but evidence the model needs is "
                   "missing; never counted as passed)")
        for r in not_judged:
            out.append(f"  {_name(r)}: {_evidence(r.evidence)}")
            out += [f"    - {gap}" for gap in r.not_judged]
        out.append("")
    partial = [r for r in report.runs if r.verdict != "not_judged" and r.not_judged]
    if partial:
        out.append(f"Also not judged on runs with a verdict: {len(partial)} run(s)")
        for r in partial:
            out.append(f"  {_name(r)} ({r.verdict})")
            out += [f"    - {gap}" for gap in r.not_judged]
        out.append("")
    out.append("Run metrics")
    scopes = [("all runs", report.metrics)] + list(report.suites.items())
    rows = []
    for name, m in scopes:
        mark = " (required)" if name in report.required_suites else ""
        rows.append([name + mark] + _metric_cells(m))
    for name in report.required_suites:
        if name not in report.suites:
            rows.append([name + " (required)", "0"] + ["-"] * (len(METRIC_HEADERS) - 1))
    out += _table(["suite"] + METRIC_HEADERS, rows)
    out.append("  (task completion and escalation success are measured on the fully judged runs: passed or "
               "deviating)")
    cost_scopes = [("all runs", report.metrics)] + [
        (f"{report.group_by} {g.value if g.value is not None else '(not recorded)'}", g.metrics) for g in report.groups]
    if any(m.usage_runs or m.timed_runs for _, m in cost_scopes):
        out.append("")
        out.append("Cost and time (summed over the runs that record them)")
        out += _table(["scope", "tokens in", "tokens out", "(runs)", "wall", "model", "tools", "retries", "(runs)"],
                      [[name, f"{m.input_tokens}", f"{m.output_tokens}", f"{m.usage_runs}", _ms(m.wall_ms),
                        _ms(m.model_ms), _ms(m.tool_ms), f"{m.retries} ({_ms(m.retry_ms)})", f"{m.timed_runs}"]
                       for name, m in cost_scopes])
    if report.groups:
        out.append("")
        out.append(f"By {report.group_by}")
        out += _table([report.group_by or ""] + METRIC_HEADERS,
                      [[g.value if g.value is not None else "(not recorded)"] + _metric_cells(g.metrics)
                       for g in report.groups])
        for g in report.groups:
            if g.first_deviations.by_signature:
                name = g.value if g.value is not None else "(not recorded)"
                out.append(f"  {report.group_by} {name}: first deviations")
                out += [f"    {n} of {g.metrics.runs} run(s): {sig}" for sig, n in g.first_deviations.by_signature.items()]
    out += _marked(report)
    out += _grounding(report)
    if report.separately:
        out.append("")
        out.append("Reported separately")
        for s in report.separately:
            value = "-" if s.value is None else (f"{s.value:.1%}" if isinstance(s.value, float) else str(s.value))
            out.append(f"  {s.name}: {value}  ({s.note})")
    for u in report.usage:
        out.append("")
        out.append(f"Usage: {u.model}: {u.seen_in_runs} of {u.elements} elements seen in runs")
        if report.goldens_given:
            out += ["  " + line for line in _table(
                ["criterion", "exercised by runs", "verified by goldens"],
                [[c, _pct(v), _pct(u.golden_coverage.get(c))] for c, v in u.run_coverage.items()])]
            out.append(f"  verified coverage (goldens, unweighted): {_pct(u.verified_coverage)}; "
                       f"usage-weighted verified coverage (runs x verified): {_pct(u.usage_weighted_verified)}")
        else:
            out += ["  " + line for line in _table(["criterion", "exercised by runs"],
                                                   [[c, _pct(v)] for c, v in u.run_coverage.items()])]
            out.append("  no goldens given (--goldens): what the goldens verify is not measured")
        if u.frequent_unverified and report.goldens_given:
            out.append("  frequent in runs, verified by no golden:")
            out += [f"    {row.element}  ({row.runs} run(s))" for row in u.frequent_unverified]
        if u.verified_unseen:
            out.append(f"  verified by goldens, never seen in runs: {len(u.verified_unseen)}")
            out += [f"    {e}" for e in u.verified_unseen[:10]]
            if len(u.verified_unseen) > 10:
                out.append(f"    ... and {len(u.verified_unseen) - 10} more")
    out += undocumented_lines(report.undocumented)
    unbound = [f"{_where(r, u)}" for r in report.runs for u in r.unbound]
    if unbound:
        out.append("")
        out.append(f"Tool results not judged: {len(unbound)} (no `bind tool` declaration names the tool, so the model "
                   "does not say what its result means; listed, not a deviation)")
        out += [f"  {u}" for u in unbound]
    if report.unread:
        out.append("")
        out.append(f"Unread telemetry: {len(report.unread)} (attributes that look like GenAI telemetry and that no "
                   "mapping of docs/runs.md reads: a renamed field shows here)")
        out += [f"  {u}" for u in report.unread]
    bad = list(report.invalid) + [f"{r.where} ({r.id}): invalid run: {r.invalid}" for r in report.runs
                                  if r.verdict == "invalid"]
    if bad:
        out.append("")
        out.append(f"Invalid runs: {len(bad)}")
        out += [f"  {b}" for b in bad]
    if report.judge_usage:  # what the LLM answer judge of --judge cost
        out += ["", "LLM judge (--judge):", *usage_lines(report.judge_usage, report.budget)]
    out.append("")
    failing = report.metrics.deviations
    line = f"Regression goldens: {report.regression_goldens} from {failing} run(s) with a deviation"
    if report.regressions:
        line += " -> " + ", ".join(report.regressions)
    out.append(line)
    out += [f"  no golden: {s}" for s in report.regressions_skipped]
    if report.gate is not None:
        out.append("")
        gate = report.gate
        out.append(f"Gate{' ' + gate.source if gate.source else ' (default)'}: "
                   f"{'PASSED' if gate.passed else 'FAILED'}")
        out += [f"  - {f.message}" for f in gate.failures]
    return "\n".join(out) + "\n"
