"""The runs report as text: first-deviation tables, each failing run, run metrics per suite, usage, the gate."""

from __future__ import annotations

from mbt.runs.results import Metrics, RunsReport


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


def _metric_cells(m: Metrics) -> list[str]:
    return [f"{m.runs}", f"{m.passed}",
            f"{_pct(m.intent_accuracy)} ({m.intent_correct}/{m.intent_runs})",
            f"{_pct(m.task_completion_rate)} ({m.completed}/{m.runs})",
            f"{_pct(m.escalation_success_rate)} ({m.escalated}/{m.escalation_runs})",
            f"{m.critical_failures}"]


def runs_text(report: RunsReport) -> str:
    out: list[str] = []
    judged = report.metrics.runs
    invalid = len(report.invalid) + sum(r.verdict == "invalid" for r in report.runs)
    out.append(f"mbt runs: {len(report.runs)} run(s) read from {len(report.files)} file(s); {judged} judged, "
               f"{report.metrics.passed} passed, {report.metrics.deviations} with a deviation, {invalid} invalid")
    out.append("")
    dist = report.first_deviations
    if dist.by_type:
        out.append("First deviation by type")
        out += _table(["type", "runs"], [[t, str(n)] for t, n in dist.by_type.items()])
        out.append("")
        out.append("First deviation by element")
        out += _table(["element", "runs"], [[e, str(n)] for e, n in dist.by_element.items()])
        out.append("")
        out.append("Runs with a deviation (the first one)")
        rows = []
        for r in report.runs:
            d = r.deviation
            if d is None:
                continue
            rows.append([r.id, d.type, d.severity, d.where])
            rows.append(["", "", "", d.message])
        out += _table(["run", "type", "severity", "where / what"], rows)
        out.append("")
    out.append("Run metrics")
    scopes = [("all runs", report.metrics)] + list(report.suites.items())
    rows = []
    for name, m in scopes:
        mark = " (required)" if name in report.required_suites else ""
        rows.append([name + mark] + _metric_cells(m))
    for name in report.required_suites:
        if name not in report.suites:
            rows.append([name + " (required)", "0", "-", "-", "-", "-", "-"])
    out += _table(["suite", "runs", "passed", "intent accuracy", "task completion", "escalation success",
                   "critical"], rows)
    if report.separately:
        out.append("")
        out.append("Reported separately")
        for s in report.separately:
            value = "-" if s.value is None else (f"{s.value:.1%}" if isinstance(s.value, float) else str(s.value))
            out.append(f"  {s.name}: {value}  ({s.note})")
    for u in report.usage:
        out.append("")
        out.append(f"Usage: {u.model}: {u.seen_in_runs} of {u.elements} elements seen in runs")
        out += ["  " + line for line in _table(
            ["criterion", "exercised by runs", "verified by goldens"],
            [[c, _pct(v), _pct(u.golden_coverage.get(c))] for c, v in u.run_coverage.items()])]
        out.append(f"  verified coverage (goldens, unweighted): {_pct(u.verified_coverage)}; "
                   f"usage-weighted verified coverage (runs x verified): {_pct(u.usage_weighted_verified)}")
        if u.frequent_unverified:
            out.append("  frequent in runs, verified by no golden:")
            out += [f"    {row.element}  ({row.runs} run(s))" for row in u.frequent_unverified]
        if u.verified_unseen:
            out.append(f"  verified by goldens, never seen in runs: {len(u.verified_unseen)}")
            out += [f"    {e}" for e in u.verified_unseen[:10]]
            if len(u.verified_unseen) > 10:
                out.append(f"    ... and {len(u.verified_unseen) - 10} more")
    unbound = [f"{r.deviation.where}: {r.deviation.message}" for r in report.runs
               if r.deviation is not None and r.deviation.type == "unbound_step"]
    unbound += [u for r in report.runs for u in r.unbound]
    if unbound:
        out.append("")
        out.append(f"Unbound steps: {len(unbound)}")
        out += [f"  {u}" for u in unbound]
    bad = list(report.invalid) + [f"{r.where} ({r.id}): invalid run: {r.invalid}" for r in report.runs
                                  if r.verdict == "invalid"]
    if bad:
        out.append("")
        out.append(f"Invalid runs: {len(bad)}")
        out += [f"  {b}" for b in bad]
    out.append("")
    failing = report.metrics.deviations
    line = f"Regression goldens: {report.regression_goldens} from {failing} run(s) with a deviation"
    if report.regressions:
        line += " -> " + ", ".join(report.regressions)
    out.append(line)
    out += [f"  no golden: {s}" for s in report.regressions_skipped]
    if report.gate is not None:
        out.append("")
        g = report.gate
        out.append(f"Gate{' ' + g.source if g.source else ' (default)'}: {'PASSED' if g.passed else 'FAILED'}")
        out += [f"  - {f.message}" for f in g.failures]
    return "\n".join(out) + "\n"
