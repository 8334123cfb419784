"""Which coverage elements no run can ever cover (guards that never hold, exhaustive guards), with the reason."""

from __future__ import annotations

from mbt.model.fsm import FsmModel


def infeasible_fsm_elements(model: FsmModel) -> dict[str, str]:
    """Element id -> reason. Unreachable states stay in the denominator on purpose: a golden's precondition can
    start there, and `mbt check` reports them; only what no valuation can satisfy is excluded."""
    return {}
