"""SARIF 2.1.0: uncovered elements, contradictions and gate failures (coverage) or findings (check), located in the files."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from mbt import HOMEPAGE, __version__
from mbt.analysis.findings import CheckReport
from mbt.measure.coverage import CoverageReport

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

# Stable rule ids (never renumbered): what each kind of result means.
COVERAGE_RULES = {
    "uncovered-forbidden": ("error", "Forbidden behaviour that no golden case tests",
                            "A forbidden transition or effect (behaviour the system must never show) that no golden "
                            "verifies: no golden drives the system there and asserts the forbidden outcome did not happen."),
    "uncovered-element": ("note", "Model element that no golden case verifies",
                          "A state, transition, guard outcome, rule or other coverage element that no golden verifies."),
    "contradiction": ("error", "Golden case contradicts the model",
                      "The golden expects one result and the model computes another; one of them is wrong."),
    "forbidden-expected": ("error", "Golden case expects forbidden behaviour",
                           "The golden expects what a forbid declares the system must never do (a forbidden call, "
                           "saying, target or event); it verifies nothing until the golden or the forbid is fixed."),
    "divergence": ("warning", "Golden case fires an event the model does not allow",
                   "The golden fires an event the model refuses in that state, without treating it as refused."),
    "unbound-turn": ("warning", "Golden turn bound to no event",
                     "No explicit event, intent or text binding matched the turn; its replay stopped there."),
    "invalid-case": ("error", "Golden case could not be read", "A golden case was malformed and skipped."),
    "gate": ("error", "Coverage gate failed", "A rule of the gate (threshold, limit, waiver, baseline) failed."),
}
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
# What to do about each kind of coverage result (the rule's `help`, shown by code scanning beside the result).
COVERAGE_HELP = {
    "uncovered-forbidden": "Add a golden case that drives the system to the forbidden trigger and asserts the "
                           "forbidden outcome does not happen (`must_not`, `must_not_call`), or waive it in the gate "
                           "file with a reason and an expiry date.",
    "uncovered-element": "Add a golden case that reaches the element and checks its outcome; `mbt generate` writes "
                         "a skeleton for each gap.",
    "contradiction": "Decide which is wrong, the golden case or the model, and fix that one; until then the case "
                     "verifies nothing on the model.",
    "forbidden-expected": "Fix the golden case (it expects forbidden behaviour) or the forbid in the model.",
    "divergence": "Mark the turn as refused (`rejected: true`) if the refusal is expected, else fix the model or "
                  "the golden case.",
    "unbound-turn": "Give the turn an explicit `event`, or add a binding (`bind intent`, `bind text`, `bind regex`) to the model.",
    "invalid-case": "Fix the golden case at the reported line; the other cases were processed.",
    "gate": "Cover what the gate names, or change the gate file if the rule is wrong.",
}


def _root(root: str | None) -> Path:
    """Paths in the log are relative to the repository: --root, else $GITHUB_WORKSPACE, else the working folder."""
    return Path(root or os.environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()


def _split_location(text: str) -> tuple[str, int | None, int | None]:
    """`file:line:col` (a Location printed) back into its parts."""
    parts = text.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0], int(parts[1]), int(parts[2])
    return text, None, None


def _uri(path: str, root: Path) -> dict:
    """An artifact location relative to %SRCROOT% (the repository root) when the file is inside it, else an absolute
    file URI (GitHub code scanning shows only files of the repository)."""
    p = Path(path)
    full = p if p.is_absolute() else Path(os.path.abspath(p))
    try:
        return {"uri": full.relative_to(root).as_posix(), "uriBaseId": "%SRCROOT%"}
    except ValueError:
        return {"uri": full.as_uri()}


def _located(path: str, line: int | None = None, column: int | None = None, end_line: int | None = None,
              message: str | None = None, *, root: Path, end_column: int | None = None) -> dict:
    physical: dict = {"artifactLocation": _uri(path, root)}
    if line:
        region = {"startLine": max(1, line)}
        if column:
            region["startColumn"] = max(1, column)
        if end_line and end_line >= line:
            region["endLine"] = end_line
        if end_column and column:
            region["endColumn"] = end_column  # SARIF's end column is the one after the region
        physical["region"] = region
    loc: dict = {"physicalLocation": physical}
    if message:
        loc["message"] = {"text": message}
    return loc


def fingerprint(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:32]


def _rule(rid: str, name: str, level: str, short: str, full: str, todo: str) -> dict:
    return {"id": rid, "name": name, "shortDescription": {"text": short}, "fullDescription": {"text": full},
            "help": {"text": f"{full} {todo}", "markdown": f"**{short}.** {full}\n\n{todo}"},
            "helpUri": HOMEPAGE, "defaultConfiguration": {"level": level}}


def _rules(table: dict) -> list[dict]:
    return [_rule(rid, "".join(w.capitalize() for w in rid.split("-")), level, short, full, COVERAGE_HELP[rid])
            for rid, (level, short, full) in table.items()]


def _log(rules: list[dict], results: list[dict], command: str) -> str:
    # automationDetails.id: `mbt check` and `mbt coverage` uploads are separate categories, never replacing each other.
    run = {"tool": {"driver": {"name": "mbt", "version": __version__, "informationUri": HOMEPAGE,
                               "rules": rules}},
           "automationDetails": {"id": f"mbt/{command}/"},
           "columnKind": "unicodeCodePoints", "results": results}
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2,
                      ensure_ascii=False) + "\n"


def coverage_sarif(report: CoverageReport, root: str | None = None) -> str:
    rule_ids = list(COVERAGE_RULES)
    _location = functools.partial(_located, root=_root(root))

    gate = report.gate
    waivers = report.waived()
    spans = {(r.model, r.element): r for r in report.traceability}
    results = []

    def result(rule: str, message: str, locations: list[dict], fp: str, **extra: object) -> dict:
        item = {"ruleId": rule, "ruleIndex": rule_ids.index(rule), "level": COVERAGE_RULES[rule][0],
                "message": {"text": message}, "partialFingerprints": {"mbt/v1": fp}}
        if locations:
            item["locations"] = locations
        item.update(extra)
        return item

    for m in report.models:
        alarms = m.alarm_criteria()  # reported as uncovered-forbidden (CriterionCoverage.alarm)
        for ec in m.uncovered():
            e = ec.element
            forbidden = e.criterion in alarms
            reached = "exercised by a golden but never checked" if ec.exercised_by else "not reached by any golden"
            text = (f"{'Forbidden behaviour not tested' if forbidden else 'Not covered'}: {e.id} in model "
                    f"{m.model} ({e.label}; {reached}).")
            extra: dict = {"properties": {"model": m.model, "element": e.id, "criterion": e.criterion,
                                          "severity": e.severity.value, "status": e.status.value,
                                          "exercised": bool(ec.exercised_by)}}
            trace = spans.get((m.model, e.id))
            if trace is not None and trace.document and trace.line_start:
                extra["relatedLocations"] = [dict(id=1, **_location(
                    trace.document, trace.line_start, trace.column_start, trace.line_end,
                    f"cited source: {e.span.describe() if e.span else trace.document}",
                    end_column=trace.column_end + 1 if trace.column_end is not None else None))]
            waiver = waivers.get((m.model, e.id))
            if waiver is not None:
                extra["suppressions"] = [{"kind": "external", "status": "accepted",
                                          "justification": f"waived until {waiver.expires}: {waiver.reason}"}]
            results.append(result("uncovered-forbidden" if forbidden else "uncovered-element", text,
                                  [_location(e.location.file, e.location.line, e.location.column)],
                                  fingerprint(m.model, e.id), **extra))
    for c in report.contradictions:
        file, _, line = c.where.rpartition(":")
        results.append(result("contradiction", f"{c.case} on {c.model}: {c.message} (expected {c.expected!r}, "
                                               f"the model gives {c.actual!r})",
                              [_location(file or c.where, int(line) if line.isdigit() else None)],
                              fingerprint("contradiction", c.model, c.case, str(c.turn), c.path)))
    for f in report.forbidden_expected:
        file, _, line = f.where.rpartition(":")
        forbid_file, forbid_line, forbid_col = _split_location(f.forbid_at)
        results.append(result("forbidden-expected", f"{f.case} on {f.model}: {f.message}",
                              [_location(file or f.where, int(line) if line.isdigit() else None)],
                              fingerprint("forbidden-expected", f.model, f.case, str(f.turn), f.element),
                              relatedLocations=[dict(id=1, **_location(forbid_file, forbid_line, forbid_col, None,
                                                                       f"the forbid ({f.severity})"))]))
    for d in report.divergences:
        file, _, line = d.where.rpartition(":")
        results.append(result("divergence", f"{d.case} turn {d.turn} on {d.model}: {d.message}",
                              [_location(file or d.where, int(line) if line.isdigit() else None)],
                              fingerprint("divergence", d.model, d.case, str(d.turn))))
    for u in report.unbound_turns:
        file, _, line = u.where.rpartition(":")
        results.append(result("unbound-turn", f"{u.case} turn {u.turn} on {u.model}: {u.reason}",
                              [_location(file or u.where, int(line) if line.isdigit() else None)],
                              fingerprint("unbound", u.model, u.case, str(u.turn))))
    for i in report.invalid_cases:
        results.append(result("invalid-case", i.message, [_location(i.file, i.line)],
                              fingerprint("invalid", i.file, i.message)))
    if gate is not None:
        for failure in gate.failures:
            locations = [_location(gate.source)] if gate.source else []
            results.append(result("gate", failure.message, locations,
                                  fingerprint("gate", failure.rule, *failure.elements)))
    return _log(_rules(COVERAGE_RULES), results, "coverage")


def check_sarif(report: CheckReport, root: str | None = None) -> str:
    _location = functools.partial(_located, root=_root(root))

    codes: dict[str, tuple[str, str]] = {}
    for f in report.findings:
        codes.setdefault(f.code, (f.name, f.severity))
    order = sorted(codes)
    rules = [_rule(code, codes[code][0], _LEVEL[codes[code][1]], codes[code][0].replace("-", " ").capitalize(),
                   f"mbt check finding {code} ({codes[code][0]}): a problem in the model file, found before any "
                   "golden case is replayed.",
                   "The finding's message says what to change; docs/checks.md describes every check.")
             for code in order]
    results = []
    for f in report.findings:
        item = {"ruleId": f.code, "ruleIndex": order.index(f.code), "level": _LEVEL[f.severity],
                "message": {"text": f.message},
                "locations": [_location(f.location.file, f.location.line, f.location.column)],
                "partialFingerprints": {"mbt/v1": fingerprint(f.code, f.model or "", f.message)}}
        if f.related:
            item["relatedLocations"] = [dict(id=k, **_location(r.file, r.line, r.column))
                                        for k, r in enumerate(f.related, start=1)]
        if f.witness:
            item["properties"] = {"witness": {k: f.witness[k] for k in sorted(f.witness)}}
        results.append(item)
    return _log(rules, results, "check")
