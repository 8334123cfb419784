"""Builds a `transitions.Machine` from an FsmModel: guards as conditions, actions as callbacks, tool calls recorded.

This is the independent oracle that the replay engine (mbt/goldens/replay_fsm.py) and generated tests are checked
against, so it shares nothing with replay beyond the model classes and `compile_expr`. It is built from whatever
FsmModel it is given, so a mutated copy (a transition retargeted, a guard negated) runs just as well.

Semantics (the DSL's): on an event, the transitions leaving the current state on that event are tried in declaration
order and the first whose guard holds fires; its actions run in order, each seeing the effects of the ones before it;
an event with no enabled transition leaves the configuration unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from transitions import EventData, Machine

from mbt.model.expr import Expr, compile_expr
from mbt.model.fsm import Assign, Discard, FsmModel, ToolCall, Transition


class ToolCallRecord(NamedTuple):
    """One tool call made by an action; compares equal to the plain tuple `(tool, {arg: value})`."""

    tool: str
    args: dict[str, Any]


class _Holder:
    """The object `transitions` drives: it carries the `state` attribute and the trigger methods bound to it."""

    state: str  # set by `transitions`


class ReferenceMachine:
    """An FSM model executed by `transitions`; `send` one event at a time and read the configuration back."""

    def __init__(self, model: FsmModel):
        self.model = model
        self._declared = {name: [p.name for p in e.params] for name, e in model.events.items()}
        self._types = {name: {p.name: p.type for p in e.params} for name, e in model.events.items()}
        # `discard X` creates `discarded.X`; read from the actions too, in case a mutant added a discard.
        self._discardable = sorted(set(model.discardable) | {a.target for t in model.transitions for a in t.actions
                                                              if isinstance(a, Discard)})
        self._handled = {(t.source, t.event) for t in model.transitions}
        self._holder = _Holder()
        self.machine = Machine(model=self._holder, states=list(model.states), initial=model.initial_state,
                               auto_transitions=False, ignore_invalid_triggers=True, send_event=True)
        for name in model.events:
            # One trigger per event, also for events no transition uses (sending them is a refusal, not an error).
            self.machine.add_transition(name, source=[], dest=None)
        for index, t in enumerate(model.transitions):
            # `transitions` tries an event's transitions from one state in the order they were added: first wins.
            guard = self._condition(t, t.guard) if t.guard is not None else None
            self.machine.add_transition(t.event, t.source, t.target, conditions=guard,
                                        before=self._callback(t, t.key or f"#{index}"))
        self.variables: dict[str, Any] = {}
        self.discarded: dict[str, Any] = {}
        self.tool_calls: list[ToolCallRecord] = []
        self.last_calls: list[ToolCallRecord] = []  # the calls made by the most recent `send`
        self.last_transition: str | None = None  # key of the transition the most recent `send` fired
        self.reset()

    # ---- configuration
    @property
    def state(self) -> str:
        return self._holder.state

    def reset(self, state: str | None = None, variables: dict[str, Any] | None = None,
              discarded: dict[str, Any] | None = None) -> None:
        """Back to the initial configuration, then override the control state and any variable / discarded value."""
        m = self.model
        state = m.initial_state if state is None else state
        if state not in m.states:
            raise ValueError(f"unknown state `{state}`")
        self.variables = {name: v.initial for name, v in m.variables.items()}
        for name, value in (variables or {}).items():
            var = m.variables.get(name)
            if var is None:
                raise ValueError(f"unknown variable `{name}`")
            if not var.type.admits(value):
                raise ValueError(f"`{name}: {value!r}` is not a value of {var.type.text()}")
            self.variables[name] = value
        self.discarded = {name: None for name in self._discardable}
        for name, value in (discarded or {}).items():
            if name not in self.discarded:
                raise ValueError(f"the model never discards `{name}`")
            self.discarded[name] = value
        self.tool_calls, self.last_calls, self.last_transition = [], [], None
        self.machine.set_state(state, model=self._holder)

    # ---- events
    def send(self, event: str, args: dict[str, Any] | None = None) -> bool:
        """Fire `event` with its arguments (by declared parameter name); True when a transition fired."""
        if event not in self._types:
            raise ValueError(f"unknown event `{event}`")
        values = self._arguments(event, dict(args or {}))
        self.last_calls, self.last_transition = [], None
        if (self.state, event) not in self._handled:
            # What `ignore_invalid_triggers` would do, without the warning `transitions` logs for every refusal.
            return False
        return self.machine.events[event].trigger(self._holder, arguments=values)

    def _arguments(self, event: str, args: dict[str, Any]) -> dict[str, Any]:
        types = self._types[event]
        for name, value in args.items():
            if name not in types:
                raise ValueError(f"event `{event}` has no parameter `{name}`")
            if not types[name].admits(value):
                raise ValueError(f"`{name}: {value!r}` is not a value of {types[name].text()} (event `{event}`)")
        for name, vtype in types.items():
            if name not in args:
                if not vtype.optional:
                    raise ValueError(f"event `{event}` needs parameter `{name}`")
                args[name] = None
        return args

    # ---- guards and actions as `transitions` callbacks
    def _scope(self, t: Transition, args: dict[str, Any]) -> dict[str, Any]:
        """What a guard or action sees: variables, `discarded.X`, and the event's arguments under the local names."""
        env = dict(self.variables)
        for name, value in self.discarded.items():
            env[f"discarded.{name}"] = value
        declared = self._declared[t.event]
        for local, name in zip(t.params or declared, declared):
            env[local] = args[name]
        return env

    def _condition(self, t: Transition, guard_expr: Expr) -> Callable[[EventData], bool]:
        guard = compile_expr(guard_expr)

        def condition(event: EventData) -> bool:
            return bool(guard(self._scope(t, event.kwargs["arguments"])))

        return condition

    def _callback(self, t: Transition, key: str) -> Callable[[EventData], None]:
        steps = [_compile_action(a) for a in t.actions]

        def run_actions(event: EventData) -> None:
            env = self._scope(t, event.kwargs["arguments"])
            for step in steps:
                step(self, env)
            self.last_transition = key

        return run_actions


def _compile_action(action) -> Callable[[ReferenceMachine, dict], None]:
    """An action as a function of the machine and the running scope (later actions see earlier writes)."""
    if isinstance(action, Assign):
        target, value = action.target, compile_expr(action.value)

        def assign(rm: ReferenceMachine, env: dict) -> None:
            env[target] = rm.variables[target] = value(env)

        return assign
    if isinstance(action, Discard):
        target = action.target

        def discard(rm: ReferenceMachine, env: dict) -> None:
            env[f"discarded.{target}"] = rm.discarded[target] = rm.variables[target]
            env[target] = rm.variables[target] = None

        return discard
    if isinstance(action, ToolCall):
        tool, args = action.tool, [(name, compile_expr(expr)) for name, expr in action.args]

        def call(rm: ReferenceMachine, env: dict) -> None:
            record = ToolCallRecord(tool, {name: fn(env) for name, fn in args})
            rm.tool_calls.append(record)
            rm.last_calls.append(record)

        return call
    raise TypeError(f"unknown action {type(action).__name__}")
