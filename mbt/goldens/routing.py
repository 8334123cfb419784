"""Which golden cases a model takes: the case names the model, or its contract, or neither."""

from __future__ import annotations

from mbt.goldens.cases import GoldenCase
from mbt.model.common import ModelBase


def applies(model: ModelBase, case: GoldenCase) -> bool:
    """A case names its model, or its contract (seed 000's `contract`), or neither (then it applies to every model)."""
    if case.model is not None:
        # Invariants answer to the name of the FSM they constrain too: its goldens are theirs.
        return case.model == model.name or case.model == getattr(model, "fsm", None)
    if case.contract is not None and model.contracts:
        return case.contract in model.contracts
    return True
