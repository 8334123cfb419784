"""The HTML report: a folder of static pages (index, a page per model, source documents, traceability, findings)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

import jinja2
from markupsafe import Markup, escape

from mbt import __version__
from mbt.measure.answer_models import ANSWER_DENOMINATOR, ModelAnswers
from mbt.measure.cases import CaseResult
from mbt.measure.coverage import ModelCoverage
from mbt.measure.coverage_run import CoverageRun
from mbt.measure.numbers import in_goldens, percent_text
from mbt.measure.review import DocumentCoverage, SourceUnit, TraceRow
from mbt.render.dot import anchor
from mbt.render.table import ticks
from mbt.report.levels_text import figure_text

STATUS_TEXT = {
    "covered": "modelled, every element citing it verified",
    "partial": "modelled, some citing elements verified",
    "exercised": "modelled, exercised but never verified",
    "uncovered": "modelled, no golden covers it",
    "modelled": "modelled (variables, events, bindings), no coverage element",
    "not-modelled": "not modelled: no model part cites it",
    "excluded": "excluded from source coverage",
}
ANSWER_STATE = {"verified": "verified by a judged answer", "undecided": "judged, undecided",
                "no_answer": "no judged answer"}
COVERAGE_TEXT = {"verified": "verified", "exercised": "exercised only", "uncovered": "not covered",
                 "waived": "waived", "infeasible": "infeasible"}


def slug(text: str) -> str:
    """A file-name-safe, collision-free name for a model or document."""
    base = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "x"
    return f"{base}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:6]}"


def value(v: object) -> Markup:
    """An expected or actual value: as code, or, when it is a sentence quoting names in backticks, via `ticks`."""
    text = "none" if v is None else str(v)
    return ticks(text) if "`" in text else Markup(f"<code>{escape(text)}</code>")


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("mbt.report.html", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["pct"] = percent_text
    env.filters["width"] = lambda r: 0 if r is None else round(r * 100, 1)
    env.filters["anchor"] = anchor
    env.filters["ticks"] = ticks
    env.filters["value"] = value
    env.globals["in_goldens"] = in_goldens
    env.filters["figure"] = figure_text
    env.globals["answer_denominator"] = ANSWER_DENOMINATOR
    env.globals["answer_state"] = ANSWER_STATE
    return env


def _asset(name: str) -> str:
    return resources.files("mbt.report.html").joinpath("static", name).read_text(encoding="utf-8")


def html_files(run: CoverageRun) -> dict[str, bytes]:
    """Every page of the report, by file name: the run's report, diagrams, tables, comparison and cases."""
    report = run.report
    env = _env()
    gate = report.gate
    waived = report.waived()
    docs = report.sources.documents if report.sources else []
    doc_pages = {d.path: f"source-{slug(d.path)}.html" for d in docs}
    model_pages = {m.model: f"model-{slug(m.model)}.html" for m in report.models}
    trace = {(r.model, r.element): r for r in report.traceability}

    def span_link(row: TraceRow | None) -> str | None:
        if row is None or row.document not in doc_pages or row.line_start is None:
            return None
        return f"{doc_pages[row.document]}#L{row.line_start}-L{row.line_end or row.line_start}"

    answers = report.answers

    def answered_in(m: ModelCoverage) -> ModelAnswers | None:
        return answers.model(m.model) if answers is not None else None

    def rows_for(m: ModelCoverage) -> list[dict]:
        out = []
        alarms = m.alarm_criteria()  # the kind's alarm criteria (CriterionCoverage.alarm)
        answered = answered_in(m)
        for ec in m.elements:
            e = ec.element
            row = trace.get((m.model, e.id))
            state = ec.state((m.model, ec.element.id) in waived)
            out.append({"id": e.id, "anchor": anchor(e.id), "model": m.model, "kind": m.kind,
                        "criterion": e.criterion, "label": e.label, "state": state,
                        "state_text": COVERAGE_TEXT[state], "severity": e.severity.value, "status": e.status.value,
                        "weight": e.weight, "location": str(e.location), "reason": e.reason,
                        "span": e.span.describe() if e.span else None, "span_link": span_link(row),
                        "found": row.found if row else True, "expected": row.expected if row else "",
                        "verified_by": ec.verified_by, "verified_more": ec.verified_more,
                        "exercised_by": [c for c in ec.exercised_by if c not in set(ec.verified_by)],
                        # beyond the covering cap: exercised, some of them perhaps also verifying
                        "exercised_more": ec.exercised_more,
                        "alarm": state in ("uncovered", "exercised") and e.criterion in alarms,
                        # --answers: the element's judged answers, beside its goldens (never in its state)
                        "answer": answered.element(e.id) if answered is not None else None,
                        "model_page": model_pages[m.model]})
        return out

    counts = {"contradictions": report.count("contradictions"), "divergences": report.count("divergences"),
              "forbidden_expected": report.count("forbidden_expected"),
              # per expectation above; the goldens holding them here (a golden may hold several)
              "contradicting": report.goldens.contradicting, "expecting_forbidden": report.goldens.expecting_forbidden,
              "unbound_turns": report.count("unbound_turns"), "invalid_cases": report.count("invalid_cases"),
              "notes": report.unchecked_notes(), "compared_notes": len(report.notes_compared()),
              "silent": len(report.sources.silent) if report.sources else 0}
    common = {"css": Markup(_asset("report.css")), "js": Markup(_asset("report.js")), "version": __version__,
              "report": report, "gate": gate, "model_pages": model_pages, "doc_pages": doc_pages,
              "counts": counts, "docs": docs, "prov": run.provenance, "comparison": run.comparison}
    files: dict[str, bytes] = {}

    def page(name: str, template: str, title: str, active: str, **values: object) -> None:
        html = env.get_template(template).render(title=title, active=active, **common, **values)
        files[name] = html.encode("utf-8")

    mutation = {mm.model: mm for mm in report.mutation.models} if report.mutation is not None else {}

    def mutants_for(m: ModelCoverage, rows: list[dict]) -> dict | None:
        """The model's mutation score and its surviving mutants, each linked to the element it touches."""
        mm = mutation.get(m.model)
        if mm is None:
            return None
        known = {r["id"]: r for r in rows}
        survivors = [{"id": r.id, "operator": r.operator, "at": r.at, "description": r.description,
                      "element": r.element, "anchor": anchor(r.element) if r.element in known else None,
                      "span": known[r.element]["span"] if r.element in known else None,
                      "span_link": known[r.element]["span_link"] if r.element in known else None,
                      "reason": r.reason, "witness": r.witness is not None}
                     for r in mm.results if r.status == "survived"]
        return {"m": mm, "survivors": survivors}

    all_rows = []
    for m in report.models:
        rows = rows_for(m)
        all_rows += rows
        forbidden_alarms = [r for r in rows if r["alarm"]]
        svg = run.diagrams.get(m.model)
        page(model_pages[m.model], "model.html", f"{m.model} — mbt coverage", "models", m=m, rows=rows,
             alarms=forbidden_alarms, svg=Markup(svg) if svg else None,
             diagram_error=run.diagram_errors.get(m.model), diagram_note=run.diagram_notes.get(m.model),
             table=run.tables.get(m.model),
             criteria=[c.criterion for c in m.criteria], mutants=mutants_for(m, rows), answered=answered_in(m),
             severities=sorted({r["severity"] for r in rows}, key=_severity_order))
    page("index.html", "index.html", "mbt coverage report", "index")
    page("elements.html", "elements.html", "All elements — mbt coverage", "elements", rows=all_rows,
         kinds=sorted({r["kind"] for r in all_rows}), criteria=_ordered(r["criterion"] for r in all_rows),
         severities=sorted({r["severity"] for r in all_rows}, key=_severity_order))
    for d in docs:
        page(doc_pages[d.path], "source.html", f"{d.path} — mbt source coverage", "sources", d=d,
             lines=_shaded_lines(d), status_text=STATUS_TEXT,
             citations=_citations(report.traceability, d.path, model_pages))
    trace_rows = [dict(r.model_dump(), anchor=anchor(r.element),
                       model_page=model_pages.get(r.model, "index.html"),
                       span_link=span_link(r)) for r in report.traceability]
    page("trace.html", "trace.html", "Traceability matrix — mbt", "trace", rows=trace_rows,
         criteria=_ordered(r.criterion for r in report.traceability))
    page("findings.html", "findings.html", "Findings — mbt", "findings", sources=report.sources)
    cases = [_case_row(c, model_pages) for c in run.cases]
    page("goldens.html", "goldens.html", "Golden cases — mbt", "goldens", cases=cases,
         verdicts=_ordered(c["verdict"] for c in cases))
    if report.levels is not None:
        page("levels.html", "levels.html", "Levels of coverage — mbt", "levels", levels=report.levels)
    return files


def _case_row(c: CaseResult, model_pages: dict[str, str]) -> dict:
    """A per-case result (mbt.measure.cases.CaseResult) with links to the elements it covers."""
    def links(labels: list[str]) -> list[dict]:
        out = []
        for label in labels:
            model, _, element = label.partition(": ")
            out.append({"model": model, "element": element, "href": f"{model_pages.get(model, 'index.html')}#"
                                                                     f"{anchor(element)}"})
        return out

    return {"id": c.id, "where": c.where, "first_question": c.first_question, "turns": c.turns, "models": c.models,
            "verdict": c.verdict, "verified": links(c.verified), "exercised": links(c.exercised),
            "first_finding": c.first_finding, "explanation": c.explanation}


def _ordered(values: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def _severity_order(s: str) -> int:
    return ["critical", "high", "medium", "low"].index(s) if s in ("critical", "high", "medium", "low") else 9


@dataclass(frozen=True)
class Segment:
    """A run of a document line's text, shaded by the source unit it belongs to (None: no unit)."""

    text: str
    unit: SourceUnit | None


@dataclass(frozen=True)
class ShadedLine:
    number: int
    segments: list[Segment]


def _shaded_lines(d: DocumentCoverage) -> list[ShadedLine]:
    """Each document line as segments, each segment shaded by the unit it belongs to (or none)."""
    marks: dict[int, list[tuple[int, int, int]]] = {}  # line -> (start col, end col, unit index)
    for k, u in enumerate(d.units):
        for line in range(u.line_start, u.line_end + 1):
            text = d.lines[line - 1] if 0 < line <= len(d.lines) else ""
            a = u.col_start if line == u.line_start else 1
            b = u.col_end if line == u.line_end else len(text) + 1
            marks.setdefault(line, []).append((a, b, k))
    out = []
    for number, text in enumerate(d.lines, start=1):
        segments: list[Segment] = []
        pos = 1
        for a, b, k in sorted(marks.get(number, [])):
            a = max(a, pos)
            if a > pos:
                segments.append(Segment(text[pos - 1:a - 1], None))
            if b > a:
                segments.append(Segment(text[a - 1:b - 1], d.units[k]))
            pos = max(pos, b)
        if pos <= len(text):
            segments.append(Segment(text[pos - 1:], None))
        out.append(ShadedLine(number, segments))
    return out


def _citations(rows: list[TraceRow], path: str, model_pages: dict[str, str]) -> list[dict]:
    """The elements citing this document, for the page's banner when a link highlights a span."""
    return [{"element": r.element, "model": r.model, "anchor": anchor(r.element), "coverage": r.coverage,
             "line_start": r.line_start, "line_end": r.line_end or r.line_start, "quote": r.quote,
             "page": model_pages.get(r.model, "index.html")}
            for r in rows if r.document == path and r.line_start is not None]
