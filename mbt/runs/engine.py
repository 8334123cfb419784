"""The one place observed runs use the FSM engine (mbt.engine.fsm) and golden replay's start: start, bind, step."""

from __future__ import annotations

from typing import Any

from mbt.elements.base import Element
from mbt.engine import fsm as engine
from mbt.engine.fsm import CompiledFsm
from mbt.goldens.cases import GoldenCase
from mbt.goldens.replay_fsm import CaseRun, FsmReplayer
from mbt.model.fsm import FsmModel


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
        self.replayer = FsmReplayer(self.compiled)
        self.binder = self.replayer.binder

    def start(self, run_id: str, precondition: dict[str, Any]) -> tuple[str, dict[str, Any], CaseRun]:
        """The starting configuration; raises ValueError when the precondition is not one of the model's."""
        run = CaseRun(GoldenCase(id=run_id, precondition=precondition))
        found = self.replayer._start(run.case, run)
        if found is None:
            raise ValueError(run.invalid or "unusable precondition")
        state, variables = found
        run.exercised.add(self.compiled.state_el[state])
        return state, variables, run

    def args(self, event: str, raw: dict[str, Any], run: CaseRun) -> dict[str, Any] | str:
        """The event's arguments checked against its parameter types, or the reason they are not usable."""
        return engine.arguments(self.compiled, event, raw)

    def enabled(self, state: str, event: str) -> bool:
        return (state, event) in self.compiled.by_state_event

    def fire(self, state: str, variables: dict[str, Any], event: str, args: dict[str, Any], prev, number: int,
             run: CaseRun):
        """(step, new state, transition taken or None): the step's `calls`, `forbids` and `refused`; what it
        exercised is added to `run`."""
        done = engine.step(self.compiled, state, variables, event, args, prev, number)
        run.exercised.update(done.elements)
        run.exercised.update(cf.element for cf in done.forbids)
        return done, done.state, done.taken
