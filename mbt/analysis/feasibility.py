"""Which coverage elements no run can ever cover (guards that never hold, exhaustive guards), with the reason."""

from __future__ import annotations

from mbt.analysis.fsm_checks import FsmChecker, GuardCondition
from mbt.elements import fsm as ids
from mbt.model.expr import Expr, Not, atoms
from mbt.model.fsm import FsmModel


def infeasible_fsm_elements(model: FsmModel) -> dict[str, str]:
    """Element id -> reason, decided with z3 (witnesses replayed on the evaluator by FsmChecker).

    Unreachable states stay in the denominator on purpose: a golden's precondition can start there, and
    `mbt check` reports them. Only what no valuation can satisfy is excluded; "unknown" (solver timeout) counts
    as feasible, so nothing is excluded without proof.
    """
    groups = ids.guard_groups(model)
    if not groups:
        return {}
    checker = FsmChecker(model)
    out: dict[str, str] = {}

    def never(expr: Expr, renames: dict[str, str]) -> bool:
        return checker.witness([checker.guard_condition(expr, renames)])[0] == "unsat"

    for (source, event), group in groups.items():
        negations: list[GuardCondition] | None = []
        for t in group:
            renames = checker.transition_renames(t)
            if t.guard is None:
                negations = None  # an unguarded branch always takes the event
                continue
            if never(t.guard, renames):
                out[ids.branch_id(t)] = f"guard `{t.guard.text()}` can never hold"
            for k, atom in enumerate(atoms(t.guard)):
                if never(atom, renames):
                    out[ids.condition_id(t, k, True)] = f"`{atom.text()}` can never be true"
                if never(Not(atom), renames):
                    out[ids.condition_id(t, k, False)] = f"`{atom.text()}` can never be false"
            if negations is not None:
                negations.append(checker.guard_condition(Not(t.guard), renames))
        if negations is None:
            out[ids.no_branch_id(source, event)] = "an unguarded transition always takes the event"
        elif checker.witness(negations)[0] == "unsat":
            out[ids.no_branch_id(source, event)] = "the guards are exhaustive: some branch always holds"
    return out
