"""The one place observed runs use the FSM engine (mbt.engine.fsm) and golden replay's binder: start, bind, step."""

from __future__ import annotations

from typing import Any

from mbt.elements.base import Element
from mbt.engine import fsm as engine
from mbt.engine.fsm import CompiledFsm, CompiledTransition, Step
from mbt.goldens.binding import Binder
from mbt.model.fsm import FsmModel

# User texts remembered with what they bind to: runs repeat the same words far more often than a model has bindings,
# and binding is deterministic (seed 003's fixed routing). Forgotten all at once past this many, to bound memory.
BOUND_TEXTS = 100_000


class UserTurn:
    """What the binder reads of a user step (the attributes of a golden Turn, without pydantic's validation)."""

    __slots__ = ("user", "intent", "event", "args")

    def __init__(self, user: str | None, intent: str | None):
        self.user, self.intent = user, intent
        self.event: str | None = None
        self.args: dict[str, Any] = {}


class Stepper:
    """Steps an FSM event by event with golden replay's own semantics, so a run and a golden mean the same."""

    def __init__(self, model: FsmModel, elements: list[Element]):
        self.model = model
        self.elements = elements
        self.compiled = CompiledFsm(model, elements)
        self.binder = Binder(model)
        self._bound: dict[str, tuple[str, dict[str, Any]] | str] = {}

    def start(self, precondition: dict[str, Any]) -> tuple[str, dict[str, Any], set[int]]:
        """The starting configuration and the elements it exercises; raises ValueError when the precondition is not
        one of the model's."""
        found = engine.start(self.compiled, precondition)
        if isinstance(found, str):
            raise ValueError(found)
        state, variables = found
        return state, variables, {self.compiled.state_el[state]}

    def bind_text(self, text: str | None) -> tuple[str, dict[str, Any]] | str:
        """(event, its arguments as the text gives them) a user text binds to, or why it binds to none. The arguments
        are shared between calls: read them, never change them."""
        key = text or ""
        found = self._bound.get(key)
        if found is None:
            bound = self.binder.bind(UserTurn(text, None))  # type: ignore[arg-type]  # a Turn's fields
            found = bound if isinstance(bound, str) else (bound.event, bound.args)
            if len(self._bound) >= BOUND_TEXTS:
                self._bound.clear()
            self._bound[key] = found
        return found

    def args(self, event: str, raw: dict[str, Any]) -> dict[str, Any] | str:
        """The event's arguments checked against its parameter types, or the reason they are not usable."""
        if not raw and not self.compiled.params[event]:
            return {}
        return engine.arguments(self.compiled, event, raw)

    def enabled(self, state: str, event: str) -> bool:
        return (state, event) in self.compiled.by_state_event

    def fire(self, state: str, variables: dict[str, Any], event: str, args: dict[str, Any],
             prev: CompiledTransition | None, number: int, exercised: set[int]) -> Step:
        """The step (its `calls`, `forbids`, `refused`, new `state` and transition `taken`); what it exercised is
        added to `exercised`."""
        done = engine.step(self.compiled, state, variables, event, args, prev, number)
        exercised.update(done.elements)
        if done.forbids:
            exercised.update([cf.element for cf in done.forbids])
        return done
