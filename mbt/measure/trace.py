"""The traceability matrix: source span -> element -> covering goldens -> the expected result the model computes."""

from __future__ import annotations

from collections.abc import Callable

from mbt.elements import fsm as ids
from mbt.elements.base import Element
from mbt.kind import support
from mbt.measure.coverage import ModelCoverage
from mbt.measure.review import TraceRow
from mbt.measure.sources import _shown
from mbt.model.common import ModelBase
from mbt.model.fsm import action_text
from mbt.sources import source_path


def fsm_expected(model) -> Callable[[Element], str]:
    """What the FSM says should happen for each element (the outcome a golden checks)."""
    by_id: dict[str, str] = {}
    for s in model.states.values():
        by_id[ids.state_id(s.name)] = f"in state {s.name}" + (" (final)" if s.final else "")
    for t in model.transitions:
        result = f"goes to {t.target}"
        if t.actions:
            result += "; " + "; ".join(action_text(a) for a in t.actions)
        by_id[ids.transition_id(t)] = result
        by_id[ids.branch_id(t)] = result
    for (source, event) in ids.guard_groups(model):
        by_id[ids.no_branch_id(source, event)] = f"`{event}` refused; stays in {source}"
    for f in model.forbids:
        if f.effect is not None and f.effect.kind == "call":
            what = f"never calls {f.effect.tool}" + (f" with {f.effect.condition.text()}" if f.effect.condition else "")
        elif f.effect is not None:
            what = f"never {f.effect.description}"
        elif f.target is not None:
            what = f"never goes to {f.target}"
        else:
            what = f"`{f.event or 'the event'}` refused"
        by_id[ids.forbidden_id(f)] = what
    by_target = {ids.transition_id(t): t.target for t in model.transitions}

    def expected(e: Element) -> str:
        if e.id in by_id:
            return by_id[e.id]
        if e.criterion == "transition-pair":
            return e.label.split(" (", 1)[0]
        if e.criterion == "guard" and ":c" in e.id:
            return e.label.split(": ", 1)[-1]
        return by_target.get(e.id, e.label)

    return expected


def _expected_for(model: ModelBase | None) -> Callable[[Element], str]:
    """The kind's expected result per element (KindSupport.expected); without one, the element's label."""
    factory = support(model.kind).expected if model is not None else None
    return factory(model) if factory is not None and model is not None else (lambda e: e.label)


def trace_rows(models: list[ModelBase], coverage: list[ModelCoverage], resolved: dict,
               waived: dict[str, set[str]] | None = None) -> list[TraceRow]:
    """A row per element, in the report's order; `resolved` comes from mbt.measure.sources.measure_sources."""
    waived = waived or {}
    by_name = {m.name: m for m in models}
    rows = []
    for mc in coverage:
        model = by_name.get(mc.model)
        expected = _expected_for(model)
        for ec in mc.elements:
            e = ec.element
            if not e.feasible:
                cov = "infeasible"
            elif ec.verified_by:
                cov = "verified"
            elif e.id in waived.get(mc.model, set()):
                cov = "waived"
            elif ec.exercised_by:
                cov = "exercised"
            else:
                cov = "uncovered"
            row = TraceRow(model=mc.model, element=e.id, criterion=e.criterion, label=e.label, status=e.status.value,
                           severity=e.severity.value, coverage=cov, verified_by=ec.verified_by,
                           exercised_by=[c for c in ec.exercised_by if c not in set(ec.verified_by)],
                           expected=expected(e), tags=list(e.tags))
            if e.span is not None:
                row.source = e.span.source
                row.quote = e.span.quote
                decl = model.sources.get(e.span.source) if model is not None else None
                if decl is not None and model is not None:
                    row.document = _shown(source_path(model.file, decl))
                r = resolved.get((mc.model, e.id))
                if r is not None:
                    row.line_start, row.line_end, row.found = r.line_start, r.line_end, r.found
                    row.column_start, row.column_end = r.column_start, r.column_end
                else:
                    row.line_start, row.line_end = e.span.line_start, e.span.line_end
                    row.column_start, row.column_end = e.span.column_start, e.span.column_end
            rows.append(row)
    return rows
