"""GitHub Actions workflow commands: `::error file=...,line=...::` annotations on the model and golden files."""

from __future__ import annotations

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


def coverage_github(report: CoverageReport) -> str:
    """Errors: uncovered forbidden elements (not waived), contradictions, invalid cases, gate failures;
    warnings: divergences, unbound turns; notices: other uncovered elements."""
    gate = report.gate
    waived = report.waived()
    out = []
    for m in report.models:
        for ec in m.uncovered():
            e = ec.element
            if e.criterion == "forbidden" and (m.model, e.id) not in waived:
                cite = f" (cites {e.span.describe()})" if e.span else ""
                out.append(annotation("error", f"forbidden behaviour not tested: {e.label}{cite}", e.location.file,
                                      e.location.line, e.location.column, f"mbt: uncovered forbidden {e.id}"))
            else:
                state = "waived" if (m.model, e.id) in waived else \
                    "exercised, not verified" if ec.exercised_by else "not reached"
                out.append(annotation("notice", f"{e.label} ({state})", e.location.file, e.location.line,
                                      e.location.column, f"mbt: not covered {e.id}"))
    for c in report.contradictions:
        file, line = _where(c.where)
        out.append(annotation("error", f"{c.message}: expected {c.expected!r}, the model gives {c.actual!r}",
                              file, line, None, f"mbt: {c.case} contradicts model {c.model}"))
    for f in report.forbidden_expected:
        file, line = _where(f.where)
        out.append(annotation("error", f.message, file, line, None, f"mbt: {f.case} expects forbidden behaviour"))
    for d in report.divergences:
        file, line = _where(d.where)
        out.append(annotation("warning", d.message, file, line, None, f"mbt: {d.case} diverges from {d.model}"))
    for u in report.unbound_turns:
        file, line = _where(u.where)
        out.append(annotation("warning", f"turn {u.turn}: {u.reason}", file, line, None, f"mbt: unbound turn in {u.case}"))
    for i in report.invalid_cases:
        out.append(annotation("error", i.message, i.file, i.line, None, "mbt: invalid golden case"))
    if gate is not None:
        for f in gate.failures:
            out.append(annotation("error", f.message, gate.source, None, None, f"mbt gate: {f.rule}"))
    return "\n".join(out) + ("\n" if out else "")


def check_github(report) -> str:
    level = {"error": "error", "warning": "warning", "info": "notice"}
    out = [annotation(level[f.severity], f.message, f.location.file, f.location.line, f.location.column,
                      f"mbt check: {f.code} {f.name}") for f in report.findings]
    return "\n".join(out) + ("\n" if out else "")
