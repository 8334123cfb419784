"""Per-case results: what each golden case covers and where it contradicts the model (docs/coverage-rules/cases.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mbt.measure.coverage import CoverageReport
from mbt.measure.run import CaseEntry

# The verdicts, strongest first: a case gets the first that holds (docs/coverage-rules/cases.md).
VERDICTS = ("invalid", "contradicts", "expects-forbidden", "not-applicable", "unbound", "verifies", "exercises-only",
            "covers-nothing")


@dataclass
class CaseResult:
    """One row of the per-case view (the Excel export, the HTML report's per-golden page)."""

    id: str
    where: str  # file:line
    first_question: str
    turns: int
    models: list[str]
    verdict: str
    verified: list[str] = field(default_factory=list)  # "model: element id", in report order
    exercised: list[str] = field(default_factory=list)  # exercised but not verified
    first_finding: str = ""  # the first contradiction (or forbidden expectation, divergence, unbound turn)
    explanation: str = ""


def _key(case: str, where: str) -> tuple[str, str]:
    return case, where


def case_results(report: CoverageReport, entries: list[CaseEntry]) -> list[CaseResult]:
    """One CaseResult per valid case (in reading order), then one per invalid case."""
    verified: dict[str, list[str]] = {}
    exercised: dict[str, list[str]] = {}
    for m in report.models:
        for e in m.elements:
            label = f"{m.model}: {e.element.id}"
            for case in dict.fromkeys(e.verified_by):
                verified.setdefault(case, []).append(label)
            for case in dict.fromkeys(e.exercised_by):
                if case not in e.verified_by:
                    exercised.setdefault(case, []).append(label)
    findings: dict[tuple[str, str], dict[str, list[str]]] = {}

    def add(kind: str, case: str, where: str, text: str) -> None:
        findings.setdefault(_key(case, where), {}).setdefault(kind, []).append(text)

    for c in report.contradictions:
        add("contradicts", c.case, c.where, f"{c.model}: {c.message}")
    for f in report.forbidden_expected:
        add("expects-forbidden", f.case, f.where, f"{f.model}: {f.message}")
    for d in report.divergences:
        add("divergence", d.case, d.where, f"{d.model}: {d.message}")
    for u in report.unbound_turns:
        add("unbound", u.case, u.where, f"{u.model}: turn {u.turn}: {u.reason}")
    rows = []
    for entry in entries:
        where = f"{entry.file}:{entry.line}"
        found = findings.get(_key(entry.id, where), {})
        ver, exe = verified.get(entry.id, []), exercised.get(entry.id, [])
        if found.get("contradicts"):
            verdict = "contradicts"
        elif found.get("expects-forbidden"):
            verdict = "expects-forbidden"
        elif not entry.models:
            verdict = "not-applicable"
        elif found.get("unbound"):
            verdict = "unbound"
        elif ver:
            verdict = "verifies"
        elif exe:
            verdict = "exercises-only"
        else:
            verdict = "covers-nothing"
        first = next((texts[0] for kind in ("contradicts", "expects-forbidden", "divergence", "unbound")
                      for texts in [found.get(kind, [])] if texts), "")
        rows.append(CaseResult(entry.id, where, entry.first_question, entry.turns, entry.models, verdict, ver, exe,
                               first, _explain(verdict, entry, ver, exe, found)))
    for i in report.invalid_cases:
        rows.append(CaseResult("", f"{i.file}:{i.line}", "", 0, [], "invalid", first_finding=i.message,
                               explanation="the case could not be read or replayed; it counts nowhere"))
    return rows


def _explain(verdict: str, entry: CaseEntry, ver: list[str], exe: list[str], found: dict[str, list[str]]) -> str:
    models = ", ".join(entry.models)
    if verdict == "contradicts":
        n = len(found["contradicts"])
        return (f"{n} check(s) disagree with model {models}: the golden or the model is wrong; "
                "until a human decides which, it verifies nothing there")
    if verdict == "expects-forbidden":
        return "the golden expects behaviour a forbid forbids; it verifies nothing on that model"
    if verdict == "not-applicable":
        return "no loaded model takes this case (other contract or model)"
    if verdict == "unbound":
        return f"{len(found['unbound'])} turn(s) bound to no event; the run stops there"
    if verdict == "verifies":
        return f"verifies {len(ver)} element(s) on {models}" + (f", exercises {len(exe)} more" if exe else "")
    if verdict == "exercises-only":
        return f"reaches {len(exe)} element(s) on {models} but checks none of their outcomes"
    return f"replayed on {models}; reaches no element"
