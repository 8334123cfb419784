"""Table views for kinds drawn as tables (decision tables, policies, invariants): rows per element with coverage."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from mbt.elements.policy import applicable_id, decisive_id
from mbt.elements.table import rule_id
from mbt.kind import support
from mbt.measure.coverage import ModelCoverage
from mbt.model.common import ModelBase
from mbt.model.policy import PolicyModel
from mbt.model.table import TableModel, value_text
from mbt.render.graph import RenderOptions, coverage_of

# Only `<` before a letter, `/`, `!` or `?` can open an HTML tag (CommonMark); `>=`, `< 50` and `a > b` stay as they
# are, so the Markdown reads right as plain text too (pandoc, a terminal), not as `&gt;=`.
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


# An `&name;` or `&#123;` in the text would be shown as the character it names: keep it literal.
_ENTITY = re.compile(r"&(#?\w+);")


def no_tags(text: str) -> str:
    """The text with what Markdown would read as HTML (a tag, an entity) escaped, and nothing else."""
    return _TAG_START.sub("&lt;", _ENTITY.sub(r"&amp;\1;", text))


_TEXT = {"verified": "verified", "exercised": "exercised only", "uncovered": "NOT COVERED", "waived": "waived",
         "infeasible": "infeasible", None: ""}


@dataclass
class TableRow:
    element: str
    label: str
    coverage: str | None
    span: str
    goldens: str


@dataclass
class TableSection:
    criterion: str
    rows: list[TableRow] = field(default_factory=list)


@dataclass
class RuleGrid:
    """The model's own rules as a grid (a decision table's inputs and outputs, a policy's effect/target/condition),
    each row with the coverage of the rule's element(s): the view a product owner recognises from the document."""

    caption: str
    headers: list[str]
    rows: list[list[str]]
    coverage: list[list[tuple[str, str | None]]]  # per row: (element label, coverage state)


@dataclass
class TableView:
    name: str
    kind: str
    title: str
    sections: list[TableSection]
    has_coverage: bool
    grid: RuleGrid | None = None

    def __html__(self) -> str:  # embedded as is in the HTML report's model page
        return table_html(self)


def element_table(model: ModelBase, model_cov: ModelCoverage | None, options: RenderOptions) -> TableView:
    """Every element of the model by criterion (rules, partitions, boundaries, conflicts, triggers ...), with its
    coverage; the elements come from the kind's own enumeration, so this view fits every kind. The kind's view may
    also draw the model's own rules as a grid (tables and policies do)."""
    kind = support(model.kind)
    grid = kind.view.grid if kind.view is not None else None
    cov = coverage_of(model_cov, options.waived)
    goldens = {ec.element.id: ec.verified_by or ec.exercised_by for ec in (model_cov.elements if model_cov else [])}
    elements = [ec.element for ec in model_cov.elements] if model_cov is not None else kind.elements(model)
    sections = []
    for criterion in (c.name for c in kind.criteria):
        mine = [e for e in elements if e.criterion == criterion]
        if not mine:
            continue
        sections.append(TableSection(criterion, [
            TableRow(e.id, e.label, cov.get(e.id), e.span.describe() if e.span else "",
                     ", ".join(goldens.get(e.id, [])[:8]) + (" ..." if len(goldens.get(e.id, [])) > 8 else ""))
            for e in mine]))
    return TableView(model.name, model.kind, model.title or model.name, sections, model_cov is not None,
                     grid(model, cov) if grid is not None else None)


def table_rule_grid(model: TableModel, cov: dict[str, str]) -> RuleGrid:
    """A decision table's rules: input entries and outputs, with each rule's coverage."""
    headers = ["rule", *(f"{c.name} (in)" for c in model.inputs), *(f"{c.name} (out)" for c in model.outputs)]
    rows = [[r.name, *(e.text() for e in r.entries), *("-" if v is None else value_text(v) for v in r.outputs)]
            for r in model.rules]
    coverage = [[("rule", cov.get(rule_id(r)))] for r in model.rules]
    return RuleGrid(f"hit policy {model.hit_text}", headers, rows, coverage)


def policy_rule_grid(model: PolicyModel, cov: dict[str, str]) -> RuleGrid:
    """A policy's rules: effect, target and condition, with whether each was applicable and decisive."""
    rows = [[r.name, str(r.effect), r.target.text() if r.target is not None else "(any request)",
             r.condition.text() if r.condition is not None else "-"] for r in model.rules]
    coverage = [[("applicable", cov.get(applicable_id(r))), ("decisive", cov.get(decisive_id(r)))]
                for r in model.rules]
    return RuleGrid(f"combining algorithm {model.algorithm}", ["rule", "effect", "target", "condition"], rows,
                    coverage)


def _md(text: str) -> str:
    return no_tags(" ".join(str(text).split())).replace("|", "\\|")


def table_markdown(view: TableView) -> str:
    out = [f"# {_md(view.title)} ({view.kind})", ""]
    if view.grid is not None:
        g = view.grid
        cov_head = ["coverage"] if view.has_coverage else []
        out += [f"## rules ({_md(g.caption)})", "", "| " + " | ".join(_md(h) for h in g.headers + cov_head) + " |",
                "|" + "---|" * (len(g.headers) + len(cov_head))]
        for cells, marks in zip(g.rows, g.coverage):
            extra = [", ".join(f"{label}: {_TEXT[state]}" for label, state in marks)] if view.has_coverage else []
            out.append("| " + " | ".join(_md(c) for c in cells + extra) + " |")
        out.append("")
    for s in view.sections:
        out += [f"## {s.criterion}", "", "| element | what | source span |" + (" coverage | goldens |" if view.has_coverage else ""),
                "|---|---|---|" + ("---|---|" if view.has_coverage else "")]
        for r in s.rows:
            row = f"| `{_md(r.element)}` | {_md(r.label)} | {_md(r.span)} |"
            if view.has_coverage:
                row += f" {_TEXT[r.coverage]} | {_md(r.goldens)} |"
            out.append(row)
        out.append("")
    return "\n".join(out)


_TICKS = re.compile(r"`([^`]+)`")


def ticks(text: object) -> Markup:
    """A message as HTML: escaped, and `code` in backticks (mbt's messages and quoted documents mark names so) as
    <code>, never raw backticks; None (a finding about no particular turn) as an empty cell."""
    if text is None:
        return Markup("")
    return Markup(_TICKS.sub(lambda m: f"<code>{m.group(1)}</code>", str(escape(str(text)))))


def table_html(view: TableView) -> str:
    e = html.escape
    parts = []
    if view.grid is not None:
        g = view.grid
        parts.append(f'<h3>rules <small>({e(g.caption)})</small></h3><table class="elements rule-grid"><thead><tr>'
                     + "".join(f"<th>{e(h)}</th>" for h in g.headers)
                     + ("<th>coverage</th>" if view.has_coverage else "") + "</tr></thead><tbody>")
        for cells, marks in zip(g.rows, g.coverage):
            badges = "".join(f'<span class="badge {e(state or "none")}">{e(label)}: {e(_TEXT[state])}</span> '
                             for label, state in marks)
            parts.append("<tr>" + "".join(f"<td><code>{e(c)}</code></td>" for c in cells)
                         + (f"<td>{badges}</td>" if view.has_coverage else "") + "</tr>")
        parts.append("</tbody></table>")
    for s in view.sections:
        parts.append(f'<h3>{e(s.criterion)}</h3><table class="elements"><thead><tr><th>element</th><th>what</th>'
                     f'<th>source span</th>{"<th>coverage</th><th>goldens</th>" if view.has_coverage else ""}'
                     "</tr></thead><tbody>")
        for r in s.rows:
            state = r.coverage or "none"
            parts.append(f'<tr class="state-{e(state)}"><td><code>{e(r.element)}</code></td><td>{ticks(r.label)}</td>'
                         f"<td>{ticks(r.span)}</td>" + (f'<td><span class="badge {e(state)}">{e(_TEXT[r.coverage])}'
                                                     f"</span></td><td>{e(r.goldens)}</td>" if view.has_coverage else "")
                         + "</tr>")
        parts.append("</tbody></table>")
    return Markup("".join(parts))


def table_html_page(view: TableView) -> str:
    css = ("body{font:14px Helvetica,Arial,sans-serif;margin:24px;color:#1f2933}table{border-collapse:collapse;"
           "width:100%}th,td{border-bottom:1px solid #e3e6ea;padding:4px 8px;text-align:left;vertical-align:top}"
           ".badge.verified{color:#1b7a3a}.badge.exercised{color:#b26a00}.badge.uncovered{color:#d00000;"
           "font-weight:700}")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(view.title)}</title>'
            f"<style>{css}</style></head><body><h1>{html.escape(view.title)} <small>({html.escape(view.kind)})"
            f"</small></h1>{table_html(view)}</body></html>\n")
