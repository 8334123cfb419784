"""GitLab Code Quality (the CodeClimate JSON subset GitLab reads): uncovered forbidden elements and findings."""

from __future__ import annotations

import hashlib
import json

from mbt.analysis.findings import CheckReport
from mbt.measure.coverage import CoverageReport

# GitLab's severities: info, minor, major, critical, blocker.
_ELEMENT_SEVERITY = {"critical": "blocker", "high": "critical", "medium": "major", "low": "minor"}
_CHECK_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def _issue(check: str, description: str, path: str, line: int | None, severity: str, *key: str) -> dict:
    return {"type": "issue", "check_name": f"mbt/{check}", "description": description, "severity": severity,
            "categories": ["Bug Risk"],
            "fingerprint": hashlib.sha256("\x00".join((check, *key)).encode("utf-8")).hexdigest(),
            "location": {"path": path, "lines": {"begin": max(1, line or 1)}}}


def _where(where: str) -> tuple[str, int | None]:
    file, _, line = where.rpartition(":")
    return (file, int(line)) if file and line.isdigit() else (where, None)


def coverage_codequality(report: CoverageReport) -> str:
    """Uncovered forbidden elements (not waived) by their severity; contradictions, goldens expecting forbidden
    behaviour and invalid cases as critical; divergences and unbound turns as minor. Other gaps are coverage, not
    code quality: they are in the JUnit and HTML reports."""
    waived = report.waived()
    issues = []
    for m in report.models:
        for ec in m.uncovered_alarms():  # the kind's alarm criteria (CriterionCoverage.alarm)
            e = ec.element
            if (m.model, e.id) in waived:
                continue
            issues.append(_issue("uncovered-forbidden", f"Forbidden behaviour not tested: {e.label} ({m.model})",
                                 e.location.file, e.location.line, _ELEMENT_SEVERITY.get(e.severity.value, "major"),
                                 m.model, e.id))
    for c in report.contradictions:
        file, line = _where(c.where)
        issues.append(_issue("contradiction", f"{c.case} contradicts {c.model}: {c.message}", file, line, "critical",
                             c.model, c.case, str(c.turn), c.path))
    for f in report.forbidden_expected:
        file, line = _where(f.where)
        issues.append(_issue("forbidden-expected", f"{f.case}: {f.message}", file, line, "critical",
                             f.model, f.case, str(f.turn), f.element))
    for i in report.invalid_cases:
        issues.append(_issue("invalid-case", f"Invalid golden case: {i.message}", i.file, i.line, "critical",
                             i.file, str(i.line), i.message))
    for d in report.divergences:
        file, line = _where(d.where)
        issues.append(_issue("divergence", f"{d.case} turn {d.turn}: {d.message}", file, line, "minor",
                             d.model, d.case, str(d.turn)))
    for u in report.unbound_turns:
        file, line = _where(u.where)
        issues.append(_issue("unbound-turn", f"{u.case} turn {u.turn}: {u.reason}", file, line, "minor",
                             u.model, u.case, str(u.turn)))
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def check_codequality(report: CheckReport) -> str:
    issues = [_issue(f.code, f"{f.message} [{f.code} {f.name}]", f.location.file, f.location.line,
                     _CHECK_SEVERITY[f.severity], f.code, f.model or "", f.message) for f in report.findings]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
