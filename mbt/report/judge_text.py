"""`mbt judge calibrate` and `mbt judge sensitivity` as text: the figures per criterion or operator, the confusion
table, the controls, what an LLM judge cost. Formats only (mbt.answers.selftest computes)."""

from __future__ import annotations

from mbt.answers.selftest import CalibrationReport, SensitivityReport
from mbt.judges.verdicts import VERDICTS
from mbt.report.llm_cost import usage_lines


def _ratio(value: float | None, undefined: str = "n/a") -> str:
    return undefined if value is None else f"{value:.3f}"


def calibration_text(report: CalibrationReport) -> str:
    labelled = sum(c.labelled for c in report.criteria)
    lines = [f"mbt judge calibrate: {labelled} labelled answer(s) in {report.labels}, {len(report.criteria)} "
             "criterion(s); agreement and Cohen's kappa count the answers the judge decided (pass or fail)"]
    for c in report.criteria:
        lines += ["", f"{c.criterion} (judge {c.judge}): decided {c.decided}/{c.labelled} "
                      f"({_ratio(c.decided_share)}), agreement {_ratio(c.agreement)}, "
                      f"Cohen's kappa {_ratio(c.kappa, 'undefined')}",
                  "  human \\ judge " + " ".join(f"{v:>10}" for v in VERDICTS)]
        lines += [f"  {human:<14}" + " ".join(f"{row.get(v, 0):>10}" for v in VERDICTS)
                  for human, row in c.confusion.items()]
    if not report.criteria:
        lines.append("no labelled answer")
    if report.judge_usage:
        lines += ["", "LLM judges:", *usage_lines(report.judge_usage, report.budget)]
    return "\n".join(lines) + "\n"


def sensitivity_text(report: SensitivityReport) -> str:
    lines = [f"mbt judge sensitivity: {report.caught}/{report.mutants} mutants caught (fail) by {report.judge}, "
             f"from {report.expected_answers} expected answer(s)",
             f"{'operator':<20}{'mutants':>8}{'caught':>8}{'missed':>8}{'undecided':>10}"]
    lines += [f"{o.operator:<20}{o.mutants:>8}{o.caught:>8}{o.missed:>8}{o.undecided:>10}" for o in report.operators]
    control = ", ".join(f"{k} {v}" for k, v in report.controls.items())
    lines.append(f"controls (each expected answer judged against itself; a sound judge passes them): "
                 f"{control or 'none'}")
    lines += [f"  missed ({o.operator}): {example}" for o in report.operators for example in o.missed_examples]
    if report.invalid_cases:
        lines += ["", f"Invalid cases ({len(report.invalid_cases)}):"]
        lines += [f"  {i.where}: {i.message}" for i in report.invalid_cases]
    if not report.expected_answers:
        lines.append("no expected answer to mutate: nothing was measured")
    if report.judge_usage:
        lines += ["", "LLM judge:", *usage_lines(report.judge_usage, report.budget)]
    return "\n".join(lines) + "\n"
