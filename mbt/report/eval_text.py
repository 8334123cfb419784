"""The `mbt eval` report as text, in seed 001's overview: cases run successfully and with errors, the pass count and
rate overall and per criterion, then each case's verdict per criterion with its reason and judge. Formats only."""

from __future__ import annotations

from mbt.answers.results import EvalReport


def _rate(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:g}%"


def eval_text(report: EvalReport) -> str:
    lines = [f"mbt eval: {report.cases_total} case(s), judge {report.judge}, overall threshold {report.threshold} "
             "(a case passes when the weights of its passed criteria add up to more)"
             + (f"; runs also judged on {', '.join(report.models)}" if report.models else ""),
             f"  run successfully: {report.cases_ok}   with errors: {report.cases_with_errors}",
             f"  overall: {report.passed} pass, {report.failed} fail, {report.not_judged} not judged "
             f"(pass rate {_rate(report.pass_rate)})"]
    for c in report.criteria:
        what = f"weight {c.weight}" if c.gating else "soft rubric, not gating"
        lines.append(f"  {c.key} ({what}): {c.passed} pass, {c.failed} fail, {c.not_judged} not judged, "
                     f"{c.errors} error (pass rate {_rate(c.pass_rate)})")
    lines.append("")
    for case in report.cases:
        run = f"run {case.run} by {case.matched_by}" if case.run else "no run"
        lines.append(f"{case.overall.verdict.upper():10} {case.where} case {case.id} ({run})")
        for key, v in case.criteria.items():
            lines.append(f"  {key}{'' if v.gating else ' (not gating)'}: {v.verdict} [{v.judge}] {v.reason}")
        if case.contract is not None:
            gate = "passed" if case.contract.hard_gate_passed else "NOT passed"
            lines.append(f"  contract {case.contract.id}: hard gate {gate} ({case.contract.verdict})")
            lines += [f"    {i.id} {i.text}: {i.verdict} [{i.judge}] {i.reason}" for i in case.contract.items]
        if case.must_not_violated:
            lines.append(f"  must_not violated: {'; '.join(case.must_not_violated)}")
        lines.append(f"  overall: {case.overall.reason}")
        if case.model is not None:
            lines.append(f"  on the model: {case.model.verdict}: {case.model.reason}")
    sections = (("Runs without a case", report.runs_without_case), ("Invalid cases", report.invalid_cases),
                ("Unreadable runs", report.invalid_runs), ("Notes", report.notes))
    for title, items in sections:
        if items:
            lines += ["", f"{title} ({len(items)}):"] + [f"  {i.where}: {i.message}" for i in items]
    lines.append("")
    if report.gate.passed:
        lines.append("Gate: passed (every case passed overall)")
    else:
        lines.append(f"Gate: FAILED ({len(report.gate.failures)})")
        lines += [f"  {f}" for f in report.gate.failures]
    return "\n".join(lines) + "\n"
