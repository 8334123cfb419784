"""The typed FSM model: variables, states, events, bindings, guarded transitions with actions, forbidden transitions."""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mbt.model.common import Annotated, Location, ModelBase
from mbt.model.expr import Expr
from mbt.model.types import ValueType


class Variable(Annotated):
    name: str
    type: ValueType
    initial: object = None


class State(Annotated):
    name: str
    initial: bool = False
    final: bool = False


class Param(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    type: ValueType


class Event(Annotated):
    name: str
    params: list[Param] = []

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


class Binding(Annotated):
    """Routes a golden turn to an event: by its intent, a case-insensitive text fragment, or a regex."""

    how: Literal["intent", "text", "regex"]
    pattern: str
    event: str


class ToolBinding(Annotated):
    """Maps an observed tool result to an event: `bind tool T ok(fields) -> event(params)` or `error(code)`."""

    tool: str
    outcome: Literal["ok", "error"]
    fields: list[str] = []  # result fields (ok) or the error type (error), passed to the event in order
    codes: list[str] = []  # error("CODE"): only these error types match (empty: any)
    event: str
    params: list[str] = []  # the event parameters the fields fill, in order (empty: the event's own order)


class Claim(Annotated):
    """`claim STATE matching "..."`: saying one of the phrases claims the model is in STATE (a success outcome)."""

    state: str
    phrases: list[str]


class Assign(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    target: str  # a variable name
    value: Expr
    loc: Location


class Discard(BaseModel):
    """`discard VAR`: the current value moves to `discarded.VAR` (seed 000's corrected recovery e-mail)."""

    target: str
    loc: Location


class ToolCall(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: str
    args: list[tuple[str, Expr]] = []
    loc: Location


Action = Assign | Discard | ToolCall


class Transition(Annotated):
    """`source -> target on event(params) [guard] / actions`; `params` renames the event's parameters locally."""

    source: str
    target: str
    event: str
    params: list[str] = []
    guard: Expr | None = None
    actions: list[Action] = []
    key: str = ""  # stable readable id body, filled in by the parser

    def label(self) -> str:
        text = self.event + (f"({', '.join(self.params)})" if self.params else "")
        if self.guard is not None:
            text += f" [{self.guard.text()}]"
        if self.actions:
            text += " / " + ", ".join(action_text(a) for a in self.actions)
        return text


# Where a tool argument came from (seed 002's second layer; not in the OpenTelemetry conventions: docs/runs.md).
ARGUMENT_SOURCES = ("user_input", "retrieval", "memory", "model_inference")


class Effect(BaseModel):
    """What a forbidden transition must not do: call a tool (optionally with given arguments) or say something."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kind: Literal["call", "say"]
    tool: str | None = None
    condition: Expr | None = None  # over `args.NAME` and the state, for `call`
    description: str | None = None  # for `say`
    matching: list[str] = []  # phrases that a golden's must_not may use to name this behaviour
    # `when args.NAME from SOURCE, ...` (for `call`): forbidden only when each named argument's recorded source is one
    # of its listed sources (seed 002: an order id the model inferred); observed runs record sources, goldens do not
    sources: dict[str, list[str]] = {}

    def sources_text(self) -> str:
        return " and ".join(f"args.{arg} from {', '.join(names)}" for arg, names in self.sources.items())


class Forbid(Annotated):
    """`forbid SOURCE on EVENT [guard] (-> TARGET)? (effect ...)?`; SOURCE `any` and EVENT `*` match everything."""

    source: str | None  # None: any state
    event: str | None  # None: any event
    guard: Expr | None = None
    target: str | None = None
    effect: Effect | None = None
    key: str = ""
    sneak: bool = False  # generated for `complete` models: the event has no transition in that state

    def label(self) -> str:
        text = f"{self.source or 'any'} on {self.event or '*'}"
        if self.guard is not None:
            text += f" [{self.guard.text()}]"
        if self.target:
            text += f" -> {self.target}"
        if self.effect is not None:
            if self.effect.kind == "call":
                text += f" effect call {self.effect.tool}"
                if self.effect.condition is not None:
                    text += f" [{self.effect.condition.text()}]"
                if self.effect.sources:
                    text += f" when {self.effect.sources_text()}"
            else:
                text += f' effect say "{self.effect.description}"'
        return text


class FsmModel(ModelBase):
    kind: Literal["fsm"] = "fsm"
    variables: dict[str, Variable] = {}
    states: dict[str, State] = {}
    events: dict[str, Event] = {}
    bindings: list[Binding] = []
    tool_bindings: list[ToolBinding] = []  # observed runs: tool results -> events (docs/runs.md)
    claims: list[Claim] = []
    escalations: list[str] = []  # tools that hand the conversation to a human
    transitions: list[Transition] = []
    forbids: list[Forbid] = []
    complete: bool = False
    discardable: list[str] = []  # variables some action discards: `discarded.VAR` exists for them

    @property
    def initial_state(self) -> str:
        return next(s.name for s in self.states.values() if s.initial)

    def state_scope(self) -> dict[str, ValueType]:
        """Types of what a guard can read besides event parameters: the variables and `discarded.VAR`."""
        scope = {name: v.type for name, v in self.variables.items()}
        for name in self.discardable:
            if name in self.variables:
                t = self.variables[name].type
                scope[f"discarded.{name}"] = ValueType(t.kind, t.lo, t.hi, t.values, optional=True)
        return scope

    def expressions(self):
        """Every expression the model evaluates: guards, assigned values, tool arguments, forbid conditions."""
        for t in self.transitions:
            if t.guard is not None:
                yield t.guard
            for a in t.actions:
                if isinstance(a, Assign):
                    yield a.value
                elif isinstance(a, ToolCall):
                    yield from (value for _, value in a.args)
        for f in self.forbids:
            if f.guard is not None:
                yield f.guard
            if f.effect is not None and f.effect.condition is not None:
                yield f.effect.condition

    def tools(self) -> list[str]:
        names = {a.tool for t in self.transitions for a in t.actions if isinstance(a, ToolCall)}
        return sorted(names)


def action_text(action: Action) -> str:
    if isinstance(action, Assign):
        return f"{action.target} := {action.value.text()}"
    if isinstance(action, Discard):
        return f"discard {action.target}"
    args = ", ".join(f"{name} = {value.text()}" for name, value in action.args)
    return f"call {action.tool}({args})"


# The ids of an FSM's coverage elements, named here, on the model's floor: the replay engine (mbt.engine.fsm) indexes
# a run's elements by them, and the enumeration (mbt.elements.fsm, a floor above the engine) makes the elements.
def state_id(name: str) -> str:
    return f"state:{name}"


def transition_id(t: Transition) -> str:
    return f"transition:{t.key}"


def branch_id(t: Transition) -> str:
    return f"guard:{t.key}"


def no_branch_id(source: str, event: str) -> str:
    return f"guard:{source}.{event}:none"


def condition_id(t: Transition, index: int, value: bool) -> str:
    return f"guard:{t.key}:c{index + 1}={'true' if value else 'false'}"


def forbidden_id(f: Forbid) -> str:
    return f"forbidden:{f.key}"


def pair_id(first: Transition, second: Transition) -> str:
    return pair_id_prefix(first) + second.key


def pair_id_prefix(first: Transition) -> str:
    """The start of every pair id beginning with `first`: pairs are numerous, so their ids are built in bulk."""
    return f"transition-pair:{first.key}|"


def guard_groups(model: FsmModel) -> dict[tuple[str, str], list[Transition]]:
    """Transitions by (source, event) for the groups where at least one transition has a guard."""
    groups: dict[tuple[str, str], list[Transition]] = defaultdict(list)
    for t in model.transitions:
        groups[(t.source, t.event)].append(t)
    return {k: v for k, v in groups.items() if any(t.guard is not None for t in v)}
