"""Markdown: a compact coverage summary for a CI job page ($GITHUB_STEP_SUMMARY), and the traceability matrix."""

from __future__ import annotations

from mbt.analysis.findings import CheckReport
from mbt.measure.answer_models import ModelAnswers
from mbt.measure.coverage import CoverageReport
from mbt.measure.numbers import Numbers, in_goldens, percent_text
from mbt.measure.review import TraceRow
from mbt.render.table import no_tags

UNCOVERED_SHOWN = 10


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell: pipes escaped, newlines flattened, HTML tags neutralised."""
    s = "" if text is None else str(text)
    s = " ".join(s.split())
    return (no_tags(s.replace("\\", "\\\\")).replace("|", "\\|")
            .replace("`", "\\`").replace("*", "\\*").replace("_", "\\_").replace("[", "\\[").replace("]", "\\]"))


def code(text: object, table: bool = False) -> str:
    """An inline code span that survives backticks (and, inside a table cell, pipes) in the text."""
    s = " ".join(str(text).split())
    if table:
        s = s.replace("|", "\\|")
    fence = "``" if "`" in s else "`"
    return f"{fence} {s} {fence}" if fence == "``" else f"`{s}`"


def _pct(n: Numbers, weighted: bool = False) -> str:
    r = n.weighted_ratio if weighted else n.ratio
    return percent_text(r)


def coverage_markdown(report: CoverageReport) -> str:
    g = report.goldens
    gate = report.gate
    if gate is None:
        verdict = "coverage report (no gate)"
    elif gate.passed:
        verdict = "✅ gate passed"
    else:
        verdict = f"❌ gate failed ({len(gate.failures)} failure{'s' if len(gate.failures) != 1 else ''})"
    out = [f"## mbt coverage: {verdict}", "",
           f"{g.read} golden cases read ({g.valid} valid, {g.invalid} invalid); {g.bound} bound, "
           f"{g.unbound} with unbound turns. Coverage counts elements a golden *verifies*; "
           "*exercised* = reached without a check.", ""]
    for m in report.models:
        out += [f"### {cell(m.model)} ({m.kind}, {code(m.file)})", "",
                "| criterion | verified | % | weighted | exercised | % |",
                "|---|---:|---:|---:|---:|---:|"]
        for c in m.criteria:
            extra = f" ({c.infeasible} infeasible)" if c.infeasible else ""
            out.append(f"| {c.criterion}{extra} | {c.verified.covered}/{c.verified.total} | {_pct(c.verified)} | "
                       f"{_pct(c.verified, True)} | {c.exercised.covered}/{c.exercised.total} | {_pct(c.exercised)} |")
        answered = report.answers.model(m.model) if report.answers is not None else None
        if answered is not None:
            out += _answer_table(answered)
        forbidden = m.uncovered_alarms()  # the kind's alarm criteria (CriterionCoverage.alarm)
        waived = report.waived_in(m.model)
        if forbidden:
            out += ["", f"**Uncovered forbidden elements ({len(forbidden)})** — behaviour that must never happen "
                        "and no golden checks:", ""]
            for ec in forbidden:
                tag = " *(waived)*" if ec.element.id in waived else ""
                cite = f" — cites {cell(ec.element.span.describe())}" if ec.element.span else ""
                said = answered.element(ec.element.id) if answered is not None else None
                answer = f" — {_ANSWER_STATE[said.status]}" + (f": {said.verdict}" if said.verdict else "") \
                    if said is not None and said.status != "no_answer" else ""
                out.append(f"- {code(ec.element.id)}{tag} ({ec.element.severity.value}, "
                           f"{code(str(ec.element.location))}){cite}{answer}")
        alarms = m.alarm_criteria()
        others = [ec for ec in m.uncovered() if ec.element.criterion not in alarms]
        if others:
            out += ["", f"<details><summary>Other uncovered elements ({len(others)})</summary>", ""]
            for ec in others[:UNCOVERED_SHOWN * 5]:
                tag = " *(waived)*" if ec.element.id in waived else ""
                out.append(f"- {code(ec.element.id)} ({ec.element.criterion}, "
                           f"{'exercised' if ec.exercised else 'not reached'}){tag}")
            if len(others) > UNCOVERED_SHOWN * 5:
                out.append(f"- ... and {len(others) - UNCOVERED_SHOWN * 5} more")
            out += ["", "</details>"]
        out.append("")
    if report.sources is not None and report.sources.documents:
        out += ["### Source documents", "", "| document | units | modelled | tested by a golden | not modelled |",
                "|---|---:|---:|---:|---:|"]
        for d in report.sources.documents:
            if d.error:
                out.append(f"| {code(d.path, True)} | — | — | — | {cell(d.error)} |")
                continue
            missing = d.modelled.total - d.modelled.covered
            out.append(f"| {code(d.path, True)} | {d.modelled.total} | {d.modelled.covered} ({_pct(d.modelled)}) | "
                       f"{d.tested.covered} ({_pct(d.tested)}) | {missing} |")
        if report.sources.silent:
            out.append("")
            out.append(f"{len(report.sources.silent)} model part(s) marked `unspecified` (the document is silent).")
        out.append("")
    if report.answers is not None and report.answers.notes:
        out += [f"**Answers not counted ({len(report.answers.notes)})** — what the eval reports name that the "
                "loaded models do not have:", ""]
        out += [f"- {code(n.report)}: {cell(n.message)}" for n in report.answers.notes]
        out.append("")
    findings = [("Contradictions", report.count("contradictions"), g.contradicting),
                ("Goldens expecting forbidden behaviour", report.count("forbidden_expected"), g.expecting_forbidden),
                ("Divergences", report.count("divergences"), None),
                ("Unbound turns", report.count("unbound_turns"), None),
                ("Invalid cases", report.count("invalid_cases"), None)]
    if any(n for _, n, _ in findings):
        out += ["### Findings", "", "| finding | count |", "|---|---:|"]
        # Contradictions and forbidden expectations are counted per expectation: the goldens holding them beside.
        out += [f"| {name} | {n if goldens is None else in_goldens(n, goldens)} |" for name, n, goldens in findings
                if n]
        out.append("")
        for found in report.contradictions[:UNCOVERED_SHOWN]:
            out.append(f"- **{cell(found.case)}** ({code(found.where)}): {cell(found.message)} — expected "
                       f"{code(_v(found.expected))}, model gives {code(_v(found.actual))}")
        if report.contradictions:
            out.append("")
        for f in report.forbidden_expected[:UNCOVERED_SHOWN]:
            out.append(f"- **{cell(f.case)}** ({code(f.where)}): {cell(f.message)}")
        if report.forbidden_expected:
            out.append("")
    if gate is not None:
        source = code(gate.source or 'default gate') if not gate.baseline else \
            f"{code(gate.source) + '; ' if gate.source else ''}ratchet on baseline {code(gate.baseline)}"
        out += [f"### Gate: {'passed' if gate.passed else 'FAILED'} ({source})", ""]
        for failure in gate.failures:
            out.append(f"- ❌ {cell(failure.message)}")
        active = [w for w in gate.waivers if w.status == "active"]
        for w in active:
            out.append(f"- waived until {w.expires}: {code(w.element)} — {cell(w.reason)}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


_ANSWER_STATE = {"verified": "verified by a judged answer", "undecided": "judged, undecided",
                 "no_answer": "no judged answer"}


def _answer_table(answered: ModelAnswers) -> list[str]:
    """Per criterion, the elements judged answers verified (a figure of its own), then each element with its first
    judged answer (a failing one first)."""
    named = "" if answered.named_by else " no eval report names this model, so no answer counts;"
    out = ["", f"Verified by a judged answer (`--answers`;{named} never added into verified or exercised):", "",
           "| criterion | verified by a judged answer | % | failed | undecided |", "|---|---:|---:|---:|---:|"]
    out += [f"| {f.criterion} | {f.verified.covered}/{f.verified.total} | {_pct(f.verified)} | {f.failed} | "
            f"{f.undecided} |" for f in answered.criteria]
    out += ["", f"<details><summary>Elements an answer can verify ({len(answered.elements)})</summary>", ""]
    for e in answered.elements:
        if e.status == "verified":
            a = e.answers[0]
            out.append(f"- {code(e.element)}: {e.verdict} — {cell(a.judge)}, case {cell(a.case)} "
                       f"({code(a.where or a.report)}): {cell(a.reason)}")
        else:
            out.append(f"- {code(e.element)}: {_ANSWER_STATE[e.status]}")
    return out + ["", "</details>"]


def _v(value: object) -> str:
    return "none" if value is None else str(value)


def trace_markdown(rows: list[TraceRow]) -> str:
    out = ["# Traceability matrix", "",
           "| source span | element | criterion | coverage | verified by | exercised only by | expected result |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        tags = f" (requirement {cell(', '.join(r.tags))})" if r.tags else ""
        out.append(f"| {cell(_span(r))} | {code(r.element, True)}{tags} | {r.criterion} | {r.coverage} | "
                   f"{cell(', '.join(r.verified_by))} | {cell(', '.join(r.exercised_by))} | {cell(r.expected)} |")
    return "\n".join(out) + "\n"


def _span(r: TraceRow) -> str:
    if r.source is None:
        return f"({r.status}, no citation)"
    where = r.source
    if r.line_start is not None and r.column_start is not None and r.column_end is not None:
        where += f":{r.line_start}:{r.column_start}-{r.line_end or r.line_start}:{r.column_end}"
    elif r.line_start is not None:
        where += f":{r.line_start}" + (f"-{r.line_end}" if r.line_end and r.line_end != r.line_start else "")
    if r.quote:
        where += f' "{r.quote}"'
    if not r.found:
        where += " (quote not found)"
    return where + ("" if r.status == "stated" else f" ({r.status})")


def trace_csv(rows: list[TraceRow]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["model", "element", "criterion", "status", "severity", "source", "document", "line_start", "line_end",
                "quote", "quote_found", "coverage", "verified_by", "exercised_only_by", "expected", "requirements"])
    for r in rows:
        w.writerow([safe_cell(v) for v in (r.model, r.element, r.criterion, r.status, r.severity, r.source or "",
                                       r.document or "", r.line_start or "", r.line_end or "", r.quote or "",
                                       "yes" if r.found else "no", r.coverage, " ".join(r.verified_by),
                                       " ".join(r.exercised_by), r.expected, "; ".join(r.tags))])
    return BOM + buf.getvalue()


# Excel opens a UTF-8 CSV as UTF-8 only when it starts with a byte order mark (else CJK and Vietnamese text breaks).
BOM = "\ufeff"


def safe_cell(value: object) -> str:
    """Spreadsheets run cells starting with = + - @ as formulas; a leading apostrophe keeps them text."""
    s = str(value)
    return "'" + s if s[:1] in ("=", "+", "-", "@", "\t", "\r") else s


def check_markdown(report: CheckReport) -> str:
    errors, warnings, infos = report.count("error"), report.count("warning"), report.count("info")
    verdict = "❌ failed" if errors else "✅ passed"
    out = [f"## mbt check: {verdict}", "",
           f"{len(report.files)} file(s), {len(report.models)} model(s): {errors} error(s), {warnings} warning(s), "
           f"{infos} info.", ""]
    if report.findings:
        out += ["| severity | location | code | message |", "|---|---|---|---|"]
        for f in report.findings:
            out.append(f"| {f.severity} | {code(str(f.location), True)} | {f.code} {f.name} | {cell(f.message)} |")
    return "\n".join(out) + "\n"
