"""Invariant mutation operators: the scope changed, the antecedent weakened (Dwyer's property patterns).

Whether an invariant mutant is equivalent is not searched for yet: an unkilled one is reported as surviving, "not
decided", and stays in the score's denominator (never called equivalent without a proof).
"""

from __future__ import annotations

from mbt.goldens.replay_invariant import InvariantReplayer
from mbt.kind import narrow, support
from mbt.model.expr import And
from mbt.model.invariant import InvariantModel, Scope
from mbt.mutate.mutant import Distinction, Mutant, Operators

OPERATORS = {
    "ISC": "scope changed: a scoped invariant is required over the whole run (global)",
    "IAW": "antecedent weakened: one conjunct of `always A -> P`'s A is dropped (or A, when it is one condition)",
}


def invariant_mutants(model: InvariantModel) -> list[Mutant]:
    ops = Operators(OPERATORS)
    for i, inv in enumerate(model.invariants):
        el = f"trigger:{inv.name}"

        def change(i=i, **update):
            def build() -> InvariantModel:
                invariants = list(model.invariants)
                invariants[i] = invariants[i].model_copy(update=update)
                return model.model_copy(update={"invariants": invariants})
            return build

        if inv.scope.kind != "global":
            ops.add("ISC", el, inv.loc, f"{inv.name}: scope `{inv.scope.text()}` -> global", change(scope=Scope()))
        a = inv.antecedent
        if a is not None:
            parts = list(a.items) if isinstance(a, And) else [a]
            for k, part in enumerate(parts):
                rest = parts[:k] + parts[k + 1:]
                weaker = None if not rest else rest[0] if len(rest) == 1 else And(tuple(rest))
                what = f"without `{part.text()}`" if rest else "removed"
                ops.add("IAW", el, inv.loc, f"{inv.name}: antecedent `{a.text()}` {what}", change(antecedent=weaker))
    return ops.found


def mutant_replayer(base: InvariantReplayer, mutant: Mutant) -> InvariantReplayer:
    """The mutant's replayer: the invariant kind's, over the mutant's own elements."""
    model = narrow(mutant.model, InvariantModel, "invariant")
    return InvariantReplayer(model, support("invariant").elements(model))


def distinguish(base: InvariantReplayer, replayer: InvariantReplayer, mutant: Mutant) -> Distinction:
    return Distinction(False, "not decided: mbt does not search for a run telling invariant mutants apart yet",
                       exhaustive=False)
