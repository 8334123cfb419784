"""Invariant elements: one `trigger` per invariant, covered only when a golden triggers it and asserts its consequent."""

from __future__ import annotations

from mbt.elements.base import Element, element_from
from mbt.model.common import Severity
from mbt.model.invariant import Invariant, InvariantModel

CRITERIA = ("trigger",)


def trigger_id(inv: Invariant) -> str:
    return f"trigger:{inv.key}"


def enumerate_invariants(model: InvariantModel, infeasible: dict[str, str] | None = None) -> list[Element]:
    """Every trigger element, in declaration order; `infeasible` maps ids to the reason no run can trigger them.
    Invariants say what must (never) happen, so like forbids they weigh `high` unless they name a severity."""
    out = [element_from(model.name, "invariant", "trigger", trigger_id(inv), f"{inv.key}: {inv.text()}", inv,
                        default_severity=Severity.high)
           for inv in model.invariants]
    for e in out:
        if infeasible and e.id in infeasible:
            e.feasible, e.reason = False, infeasible[e.id]
    return out
