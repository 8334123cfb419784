"""The `mbt eval` report as text, in seed 001's overview: cases run successfully and with errors, the pass count and
rate overall and per criterion (over the cases run successfully), then each case's verdict per criterion with its
reason and judge, with --model each model's say and claim elements verified by judged answers, and the gate with each
of its rules. Formats only."""

from __future__ import annotations

from mbt.answers.results import EvalReport, GateCheck
from mbt.report.llm_cost import usage_lines


def _rate(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:g}%"


def _share(passed_ok: int, rate: float | None, ok: int) -> str:
    """Seed 001's pass rate: the passes among the cases run successfully, over them."""
    return f"pass rate {_rate(rate)} ({passed_ok} of {ok} run successfully)"


def _check(check: GateCheck) -> str:
    if check.actual is None:
        measured = "not measured"
    elif check.key.endswith("pass_rate"):
        measured = f"{check.actual * 100:.4g}%"
    else:
        measured = f"{check.actual:g}"
    source = " (default)" if check.default else ""
    return f"  {'ok    ' if check.passed else 'FAILED'} {check.key} {check.expected}{source}: {measured}"


def _sayings(report: EvalReport) -> list[str]:
    """With --model: each model's say and claim elements (verified by a judged answer, exercised only, not reached)
    and the golden phrases judged by the same judges."""
    lines: list[str] = []
    for m in report.sayings:
        counts = {s: sum(e.status == s for e in m.elements) for s in ("verified", "exercised", "not_reached")}
        lines += ["", f"Say and claim elements of {m.model} ({counts['verified']} verified by a judged answer, "
                      f"{counts['exercised']} exercised only, {counts['not_reached']} not reached):"]
        for e in m.elements:
            if e.status == "verified":
                lines.append(f"  {e.id}: verified by a judged answer, {e.verdict}")
                lines += [f"    {a.verdict} [{a.judge}] case {a.case} ({a.where}): {a.reason}" for a in e.judged]
            elif e.status == "exercised":
                lines.append(f"  {e.id}: exercised only, by case(s) {', '.join(e.reached_by)}: no answer on it "
                             "decided")
            else:
                lines.append(f"  {e.id}: not reached by any case's run")
        if m.phrases:
            lines.append(f"  golden phrases ({len(m.phrases)}):")
            for p in m.phrases:
                named = f" (names {', '.join(p.names)})" if p.names else ""
                lines.append(f"    case {p.case} turn {p.turn} {p.key} {p.phrase!r}{named}: {p.verdict} [{p.judge}] "
                             f"{p.reason}")
    return lines


def eval_text(report: EvalReport) -> str:
    judges = {c.judge for c in report.criteria if c.judge and c.judge != report.judge}
    lines = [f"mbt eval: {report.cases_total} case(s), judge {report.judge}"
             + (" (and " + ", ".join(sorted(judges)) + " for some criteria)" if judges else "")
             + f", overall threshold {report.threshold} (a case passes when the weights of its passed criteria add "
               "up to more)"
             + (f"; runs also judged on {', '.join(report.models)}" if report.models else ""),
             *([f"  agent: {report.agent} (one session per case)"] if report.agent else []),
             f"  run successfully: {report.cases_ok}   with errors: {report.cases_with_errors}"
             + (f" (agent errors: {report.agent_errors}, judge errors: {report.judge_errors})"
                if report.agent_errors else ""),
             f"  overall: {report.passed} pass, {report.failed} fail, {report.not_judged} not judged, "
             f"{report.errors} error; {_share(report.passed_ok, report.pass_rate, report.cases_ok)}"]
    for c in report.criteria:
        judge = f", judge {c.judge}" if c.judge and c.judge != report.judge else ""
        what = f"weight {c.weight}" if c.gating else "soft rubric, not gating"
        lines.append(f"  {c.key} ({what}{judge}): {c.passed} pass, {c.failed} fail, {c.not_judged} not judged, "
                     f"{c.errors} error; {_share(c.passed_ok, c.pass_rate, report.cases_ok)}")
    if report.must_not_violated:
        lines.append(f"  must_not phrases said: {report.must_not_violated}")
    lines += usage_lines(report.judge_usage, report.budget)
    lines.append("")
    for case in report.cases:
        run = f"run {case.run} by {case.matched_by}" if case.run else "no run"
        lines.append(f"{case.overall.verdict.upper():10} {case.where} case {case.id} ({run})")
        if case.agent_error is not None:
            lines.append(f"  agent error: {case.agent_error}")
        for key, v in case.criteria.items():
            lines.append(f"  {key}{'' if v.gating else ' (not gating)'}: {v.verdict} [{v.judge}] {v.reason}")
        if case.contract is not None:
            hard = "passed" if case.contract.hard_gate_passed else "NOT passed"
            lines.append(f"  contract {case.contract.id}: hard gate {hard} ({case.contract.verdict})")
            lines += [f"    {i.id} {i.text}: {i.verdict} [{i.judge}] {i.reason}" for i in case.contract.items]
        if case.must_not_violated:
            lines.append(f"  must_not violated: {'; '.join(case.must_not_violated)}")
        lines.append(f"  overall: {case.overall.reason}")
        if case.model is not None:
            lines.append(f"  on the model: {case.model.verdict}: {case.model.reason}")
    lines += _sayings(report)
    sections = (("Runs without a case", report.runs_without_case), ("Invalid cases", report.invalid_cases),
                ("Unreadable runs", report.invalid_runs), ("Notes", report.notes))
    for title, items in sections:
        if items:
            lines += ["", f"{title} ({len(items)}):"] + [f"  {i.where}: {i.message}" for i in items]
    lines.append("")
    gate = report.gate
    named = f"gate file {gate.source}" if gate.source else "default gate: every case passes overall"
    lines.append(f"Gate: passed [{named}]" if gate.passed else f"Gate: FAILED ({len(gate.failures)}) [{named}]")
    lines += [_check(c) for c in gate.checks]
    lines += [f"  {f}" for f in gate.failures]
    return "\n".join(lines) + "\n"
