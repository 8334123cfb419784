"""GitHub Actions workflow commands: `::error file=...,line=...::` annotations on the model and golden files."""

from __future__ import annotations

from mbt.analysis.findings import CheckReport
from mbt.measure.coverage import CoverageReport


def _data(text: str) -> str:
    """Escape a command's message (GitHub's rules: % CR LF)."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    """Escape a property value (also : and ,)."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, file: str | None = None, line: int | None = None,
               col: int | None = None, title: str | None = None) -> str:
    props = []
    if file:
        props.append(f"file={_prop(file)}")
    if line:
        props.append(f"line={line}")
    if col:
        props.append(f"col={col}")
    if title:
        props.append(f"title={_prop(title)}")
    return f"::{level}{' ' + ','.join(props) if props else ''}::{_data(message)}"


def _where(where: str) -> tuple[str, int | None]:
    file, _, line = where.rpartition(":")
    return (file, int(line)) if file and line.isdigit() else (where, None)


# GitHub shows at most 10 error, 10 warning and 10 notice annotations per step and drops the rest silently.
LIMIT = 10
_SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def _limited(errors: list[str], warnings: list[str], notices: list[str], full_report: str | None) -> str:
    """The first LIMIT of each level (the lists come most important first), and, when any was cut, one notice that
    says how many more there are and where the full report is (it takes the last notice slot)."""
    cut = {"error": max(0, len(errors) - LIMIT), "warning": max(0, len(warnings) - LIMIT)}
    shown_notices = notices[:LIMIT - 1] if (any(cut.values()) or len(notices) > LIMIT) else notices
    cut["notice"] = len(notices) - len(shown_notices)
    out = errors[:LIMIT] + warnings[:LIMIT] + shown_notices
    if any(cut.values()):
        more = ", ".join(f"{n} more {level}{'s' if n != 1 else ''}" for level, n in cut.items() if n)
        where = f"the full report is {full_report}" if full_report else \
            "run mbt with --format text (or sarif, html) for the full report"
        out.append(annotation("notice", f"{more} not shown (GitHub shows {LIMIT} per level and step); {where}",
                              title="mbt: more findings"))
    return "\n".join(out) + ("\n" if out else "")


def coverage_github(report: CoverageReport, full_report: str | None = None) -> str:
    """Errors: the gate's verdict first, then uncovered forbidden elements (not waived; most severe first),
    contradictions, goldens expecting forbidden behaviour, invalid cases, the gate's failures; warnings: divergences,
    unbound turns; notices: other uncovered elements (most severe first). At most LIMIT of each (see _limited)."""
    gate = report.gate
    waived = report.waived()
    errors: list[str] = []
    warnings: list[str] = []
    notices: list[tuple[int, str]] = []
    if gate is not None and not gate.passed:
        rules = ", ".join(dict.fromkeys(f.rule for f in gate.failures))
        errors.append(annotation("error", f"the gate failed: {len(gate.failures)} rule(s) broken ({rules})",
                                 gate.source, None, None, "mbt gate: FAILED"))
    forbidden: list[tuple[int, str]] = []
    for m in report.models:
        alarms = m.alarm_criteria()  # errors when uncovered (CriterionCoverage.alarm)
        for ec in m.uncovered():
            e = ec.element
            rank = _SEVERITY_RANK.get(e.severity.value, 9)
            if e.criterion in alarms and (m.model, e.id) not in waived:
                cite = f" (cites {e.span.describe()})" if e.span else ""
                forbidden.append((rank, annotation("error", f"forbidden behaviour not tested: {e.label}{cite}",
                                                   e.location.file, e.location.line, e.location.column,
                                                   f"mbt: uncovered forbidden {e.id}")))
            else:
                state = "waived" if (m.model, e.id) in waived else \
                    "exercised, not verified" if ec.exercised_by else "not reached"
                notices.append((rank, annotation("notice", f"{e.label} ({state})", e.location.file, e.location.line,
                                                 e.location.column, f"mbt: not covered {e.id}")))
    errors += [text for _, text in sorted(forbidden, key=lambda x: x[0])]  # stable: report order within a rank
    for c in report.contradictions:
        file, line = _where(c.where)
        errors.append(annotation("error", f"{c.message}: expected {c.expected!r}, the model gives {c.actual!r}",
                                 file, line, None, f"mbt: {c.case} contradicts model {c.model}"))
    for f in report.forbidden_expected:
        file, line = _where(f.where)
        errors.append(annotation("error", f.message, file, line, None, f"mbt: {f.case} expects forbidden behaviour"))
    for i in report.invalid_cases:
        errors.append(annotation("error", i.message, i.file, i.line, None, "mbt: invalid golden case"))
    if gate is not None:
        for failure in gate.failures:
            errors.append(annotation("error", failure.message, gate.source, None, None, f"mbt gate: {failure.rule}"))
    for d in report.divergences:
        file, line = _where(d.where)
        warnings.append(annotation("warning", d.message, file, line, None, f"mbt: {d.case} diverges from {d.model}"))
    for u in report.unbound_turns:
        file, line = _where(u.where)
        warnings.append(annotation("warning", f"turn {u.turn}: {u.reason}", file, line, None,
                                   f"mbt: unbound turn in {u.case}"))
    return _limited(errors, warnings, [text for _, text in sorted(notices, key=lambda x: x[0])], full_report)


def check_github(report: CheckReport, full_report: str | None = None) -> str:
    level = {"error": "error", "warning": "warning", "info": "notice"}
    by_level: dict[str, list[str]] = {"error": [], "warning": [], "notice": []}
    for f in report.findings:
        by_level[level[f.severity]].append(annotation(level[f.severity], f.message, f.location.file, f.location.line,
                                                      f.location.column, f"mbt check: {f.code} {f.name}"))
    return _limited(by_level["error"], by_level["warning"], by_level["notice"], full_report)
