"""What every kind's mutation operators produce: a Mutant (built lazily) and a Distinction (equivalent, or a witness)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mbt.model.common import ModelBase


@dataclass
class Mutant:
    """One small fault seeded into a model. `build` makes the mutated model only when it is needed (a large model
    has hundreds of thousands of candidate mutants, and the benchmark samples them)."""

    id: str  # `<code>@<element id>`, with `~n` when one element gets several mutants of one operator
    operator: str  # the operator's short code, e.g. FTS
    element: str  # the id of the model element it touches
    at: str  # file:line:col of what it changes
    description: str  # what was changed, in words
    build: Callable[[], ModelBase]  # -> the mutated model (the kind's model class)
    # For kinds whose goldens are step sequences (FSM): the (state, event) slots whose behaviour changes; a golden
    # that never steps through one of them replays identically on the mutant. None: every golden may differ.
    slots: frozenset | None = None
    data: dict[str, Any] = field(default_factory=dict)  # the operator's own record of the change (for fast replay)
    _model: ModelBase | None = None

    @property
    def model(self) -> ModelBase:
        if self._model is None:
            self._model = self.build()
        return self._model


@dataclass
class Distinction:
    """How the original and a mutant compare on every input the search tried."""

    # True when the search found no difference: over every input (exhaustive), or, for invariants, over every run
    # within the depth bound (exhaustive False, and the reason says "within the bound only")
    equivalent: bool
    reason: str  # why equivalent, or what differs, or why it could not be decided
    witness: dict[str, Any] | None = None  # a golden case (JSON) on which the original and the mutant disagree
    exhaustive: bool = True


class Operators:
    """Collects one kind's mutants, giving each a unique id."""

    def __init__(self, docs: dict[str, str]):
        self.docs = docs
        self.found: list[Mutant] = []
        self._ids: dict[str, int] = {}

    def add(self, code: str, element: str, at: object, description: str, build: Callable[[], ModelBase],
            data: dict[str, Any] | None = None, slots: frozenset | None = None, name: str | None = None) -> None:
        """`name`: the id's body when it is not the element id (an extra transition names its state and event)."""
        assert code in self.docs, code
        base = f"{code}@{name or element}"
        n = self._ids.get(base, 0) + 1
        mutant_id = base if n == 1 else f"{base}~{n}"
        while mutant_id in self._ids:  # element ids may end in `#2` themselves, so `~n` is checked too
            n += 1
            mutant_id = f"{base}~{n}"
        self._ids[base] = n
        self._ids[mutant_id] = 0
        self.found.append(Mutant(mutant_id, code, element, str(at), description, build, slots, dict(data or {})))
