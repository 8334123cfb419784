"""How an FSM steps: the model compiled for speed (transitions by state and event, guards and actions as closures,
the element indices each step exercises precomputed) and the one step function every replay, exploration and
generator uses."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mbt.model import fsm as ids  # the element ids (mbt.elements.fsm enumerates the elements, a floor above)
from mbt.model.expr import EnumLit, Lit, Ref, atoms, compile_expr
from mbt.model.fsm import Assign, Discard, Forbid, FsmModel, Transition

if TYPE_CHECKING:
    from mbt.elements.base import Element

# ------------------------------------------------------------------ compiled model


@dataclass
class CompiledTransition:
    t: Transition
    index: int  # position in model.transitions
    guard: Callable | None
    conditions: list[tuple[Callable, int, int]]  # (atom fn, element idx when true, element idx when false)
    actions: list[Callable[[dict, dict, list], None]]
    param_names: list[str]
    transition_el: int
    branch_el: int | None
    target_el: int
    assigned: tuple[str, ...] = ()  # variables its assignments and discards change, in declaration order
    pairs_after: dict[int, int] = field(default_factory=dict)  # index of the next transition -> its pair element
    taken: tuple[int, ...] = ()  # what taking it exercises: its transition, target state and branch (set below)
    # Of `assigned`, those whose new value may lie outside the variable's type (not a constant of the type), which a
    # replay checks after the step; None: all of `assigned`.
    checked: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        # Precomputed once, so a step writes these indices without building them (a mutant's copy gets its own).
        self.taken = (self.transition_el, self.target_el) + (() if self.branch_el is None else (self.branch_el,))
        if self.checked is None:
            self.checked = self.assigned


@dataclass
class CompiledForbid:
    f: Forbid
    guard: Callable | None
    element: int
    phrases: list[str]
    element_id: str = ""
    severity: str = ""
    condition: Callable | None = None  # an `effect call T [cond]` condition, over `args.NAME` and the variables
    condition_args: frozenset[str] = frozenset()  # the argument names the condition reads
    call_tool: str | None = None  # `effect call T`: T (read on every asserted turn, so worked out once)
    bare: bool = False  # a forbid on the event itself: no target, no effect

    def __post_init__(self) -> None:
        effect = self.f.effect
        self.call_tool = effect.tool if effect is not None and effect.kind == "call" else None
        self.bare = effect is None and self.f.target is None


@dataclass
class ToolCallMade:
    tool: str
    args: dict[str, Any]
    step: int


@dataclass
class Snapshot:
    """The configuration after one step (the differential test compares these with the reference machine)."""

    state: str
    variables: dict[str, Any]
    discarded: dict[str, Any]
    transition: str | None  # key of the transition taken; None when the event was refused
    calls: list[ToolCallMade] = field(default_factory=list)
    event: str | None = None  # the bound event and its arguments (declared names): invariants read them
    args: dict[str, Any] = field(default_factory=dict)


class CompiledFsm:
    """An FSM prepared for fast replay: transitions by (state, event), guards and actions as closures, element indices."""

    def __init__(self, model: FsmModel, elements: list[Element]):
        self.model = model
        self.index = {e.id: i for i, e in enumerate(elements)}
        idx = self.index
        self.params = {name: [p.name for p in e.params] for name, e in model.events.items()}
        self.param_types = {name: {p.name: p.type for p in e.params} for name, e in model.events.items()}
        # A mapping, not only a dict: a mutant's replayer (mbt/mutate/fsm.py) lays its changed slots over it (a ChainMap).
        self.by_state_event: MutableMapping[tuple[str, str], list[CompiledTransition]] = defaultdict(list)
        grouped = ids.guard_groups(model)
        self.no_branch = {key: idx[ids.no_branch_id(*key)] for key in grouped}
        self.transitions: list[CompiledTransition] = []
        for i, t in enumerate(model.transitions):
            in_group = (t.source, t.event) in grouped
            conditions = []
            if in_group and t.guard is not None:
                for k, atom in enumerate(atoms(t.guard)):
                    conditions.append((compile_expr(atom), idx[ids.condition_id(t, k, True)],
                                       idx[ids.condition_id(t, k, False)]))
            ct = CompiledTransition(
                t=t, index=i, guard=compile_expr(t.guard) if t.guard is not None else None, conditions=conditions,
                actions=[compile_action(a) for a in t.actions],
                param_names=t.params or self.params[t.event], transition_el=idx[ids.transition_id(t)],
                branch_el=idx[ids.branch_id(t)] if in_group else None, target_el=idx[ids.state_id(t.target)],
                assigned=_assigned(model, t),
                checked=_may_leave_range(model, t))
            self.by_state_event[(t.source, t.event)].append(ct)
            self.transitions.append(ct)
        by_source = defaultdict(list)
        for i, t in enumerate(model.transitions):
            by_source[t.source].append((i, t.key))
        for i, t in enumerate(model.transitions):
            prefix = ids.pair_id_prefix(t)  # pair ids built in bulk (ids.pair_id, without a call per pair)
            for j, key in by_source.get(t.target, ()):
                self.transitions[i].pairs_after[j] = idx[prefix + key]
        self.forbids = [self._compile_forbid(f, idx[ids.forbidden_id(f)], elements) for f in model.forbids]
        self.state_el = {name: idx[ids.state_id(name)] for name in model.states}
        # Forbids by (source, event) as written (None: any); a slot merges its four keys in declaration order.
        self._forbid_positions: dict[tuple[str | None, str | None], list[int]] = defaultdict(list)
        for position, cf in enumerate(self.forbids):
            self._forbid_positions[(cf.f.source, cf.f.event)].append(position)
        self.tools = set(model.tools())
        # Preconditions are checked against the types; only a hand-built model can start out of range.
        self.initial_in_range = all(v.type.admits(v.initial) for v in model.variables.values())
        self._slots: dict[tuple[str, str], Slot] = {}
        self._initial: tuple[str, dict[str, Any]] | None = None

    def slot(self, state: str, event: str) -> Slot:
        """What an event in a state can touch, worked out on first use (a replay asks for it on every turn)."""
        key = (state, event)
        found = self._slots.get(key)
        if found is None:
            where = self._forbid_positions
            positions = sorted(p for k in {(state, event), (state, None), (None, event), (None, None)}
                               for p in where.get(k, ()))
            forbids = [self.forbids[p] for p in positions]
            group = self.by_state_event.get(key, ())
            state_el, no_branch_el = self.state_el[state], self.no_branch.get(key)
            found = self._slots[key] = Slot(
                group, forbids, state_el, no_branch_el, all(cf.guard is None for cf in forbids),
                any(ct.conditions for ct in group), [(state_el, *ct.taken) for ct in group],
                (state_el,) if no_branch_el is None else (state_el, no_branch_el),
                tuple(cf.element for cf in forbids))
        return found

    @staticmethod
    def _compile_forbid(f: Forbid, element: int, elements: list[Element]) -> CompiledForbid:
        condition = f.effect.condition if f.effect is not None and f.effect.kind == "call" else None
        read = frozenset(node.name[5:] for node in (condition.walk() if condition is not None else ())
                         if isinstance(node, Ref) and node.name.startswith("args."))
        e = elements[element]
        return CompiledForbid(f, compile_expr(f.guard) if f.guard is not None else None, element,
                              [p.casefold() for p in _phrases(f)], e.id, e.severity.value,
                              compile_expr(condition) if condition is not None else None, read)

    def initial_config(self) -> tuple[str, dict[str, Any]]:
        if self._initial is None:  # worked out once: every replayed case starts from a copy
            variables = {name: v.initial for name, v in self.model.variables.items()}
            for name in self.model.discardable:
                variables[f"discarded.{name}"] = None
            self._initial = (self.model.initial_state, variables)
        state, variables = self._initial
        return state, dict(variables)


def _assigned(model: FsmModel, t: Transition) -> tuple[str, ...]:
    """The variables a transition's actions assign or discard, in declaration order."""
    targets = {a.target for a in t.actions if isinstance(a, (Assign, Discard))}
    return tuple(name for name in model.variables if name in targets) if targets else ()


def _may_leave_range(model: FsmModel, t: Transition) -> tuple[str, ...]:
    """The variables the transition's actions change, in declaration order, but those it only ever sets to a
    constant of their type (a literal, or `none` by a discard where the type admits it): those stay in range."""
    unsure = set()
    for a in t.actions:
        if isinstance(a, (Assign, Discard)) and a.target in model.variables:
            vtype = model.variables[a.target].type
            value = a.value if isinstance(a, Assign) else Lit(None)
            if not (isinstance(value, (Lit, EnumLit)) and vtype.admits(value.value)):
                unsure.add(a.target)
    return tuple(name for name in model.variables if name in unsure)


def _phrases(f: Forbid) -> list[str]:
    return list(f.effect.matching) if f.effect is not None else []


@dataclass(slots=True)
class Slot:
    """One (state, event): its transitions in declaration order and the forbids whose source and event match."""

    group: list[CompiledTransition] | tuple
    forbids: list[CompiledForbid]  # their guards are evaluated at each step
    state_el: int
    no_branch_el: int | None
    unguarded_forbids: bool  # every forbid of the slot fires whenever the event comes (most slots): no guard to run
    conditions: bool  # some transition records condition outcomes: every guard of the slot is evaluated
    fixed: list[tuple[int, ...]]  # per transition of `group`: the state and what taking it exercises
    refused: tuple[int, ...]  # what a refusal exercises: the state, and the "no branch holds" outcome of a group
    forbid_els: tuple[int, ...]  # the elements of `forbids`, in order
    entries: list[tuple[CompiledTransition, Callable | None, tuple[int, ...]]] = field(default_factory=list)
    # Some forbid has a target or is bare: an asserted state, or a refusal, can then verify it or expect it (the
    # other forbids are judged only by must_not, must_have, must_not_call and tool_arguments assertions).
    forbids_by_state: bool = False

    def __post_init__(self) -> None:
        # Per transition of `group`, what a step of a slot without recorded conditions reads: itself, its guard and
        # what taking it exercises (`fixed`), unpacked in one go.
        self.entries = [(ct, ct.guard, fixed) for ct, fixed in zip(self.group, self.fixed)]
        self.forbids_by_state = any(cf.f.target is not None or cf.bare for cf in self.forbids)


@dataclass(slots=True)
class Step:
    """What one event did in one configuration."""

    elements: tuple[int, ...] | list[int]  # exercised: condition outcomes, the state, then transition, target, branch, pair
    forbids: list[CompiledForbid]  # those whose source, event and guard matched: the step exercises them
    taken: CompiledTransition | None  # None: the event was refused
    state_before: str
    state: str  # after the step (unchanged when refused)
    event: str
    calls: list[ToolCallMade]  # the tool calls the transition's actions made
    forbid_els: tuple[int, ...] | list[int] = ()  # the elements of `forbids`

    @property
    def refused(self) -> bool:
        return self.taken is None


def _with_args(variables: dict[str, Any], args: dict[str, Any], params: tuple[str, ...] | list[str],
               names: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The variables a transition's guard and actions see: the model's, plus the event's arguments under the names
    this transition gives its parameters (called only when the event has arguments, so plain steps copy nothing)."""
    local = dict(variables)
    for declared, name in zip(params, names):
        local[name] = args[declared]
    return local


def step(c: CompiledFsm, state: str, variables: dict[str, Any], event: str, args: dict[str, Any],
         prev: CompiledTransition | None, number: int = 0) -> Step:
    """Fire `event` with its declared arguments `args` in (state, variables): the first transition of the slot whose
    guard holds is taken and its actions update `variables` in place; `prev` (the transition taken before) names the
    transition pair; `number` is the turn recorded on the calls made.

    A turn costs one dict lookup (the slot), the guards up to the one that holds (every guard of a slot whose
    conditions are recorded), the actions, and the slot's precomputed element indices."""
    slot = c._slots.get((state, event)) or c.slot(state, event)
    env = variables  # guards only read; actions write `variables` anyway, so no copy unless parameters join
    taken = None
    elements: tuple[int, ...] | list[int]
    if not slot.conditions:  # most slots: guards are pure, so the first that holds ends the search
        if args:
            params: list[str] | tuple[()] = c.params[event]
            for ct, guard, fixed in slot.entries:
                local = _with_args(variables, args, params, ct.param_names)
                if guard is None or guard(local):
                    taken, env, elements = ct, local, fixed
                    break
            else:
                elements = slot.refused
        else:
            for ct, guard, fixed in slot.entries:
                if guard is None or guard(variables):
                    taken, elements = ct, fixed
                    break
            else:
                elements = slot.refused
    else:
        params = c.params[event] if args else ()
        outcomes: list[int] = []
        for ct in slot.group:
            local = _with_args(variables, args, params, ct.param_names) if args else variables
            for fn, when_true, when_false in ct.conditions:
                outcomes.append(when_true if fn(local) else when_false)
            if taken is None and (ct.guard is None or ct.guard(local)):
                taken, env = ct, local
        outcomes.append(slot.state_el)  # checking the outcome of an event verifies behaviour in its state
        elements = outcomes + list(taken.taken) if taken is not None else outcomes + list(slot.refused[1:])
    # Forbidden elements: exercised when the event fires in their source state with their guard holding.
    forbid_els: tuple[int, ...] | list[int]
    if slot.unguarded_forbids:
        forbids, forbid_els = slot.forbids, slot.forbid_els
    else:
        named = dict(env)  # a forbid's guard reads the event's parameters by their declared names
        for declared in c.params[event]:
            named[declared] = args.get(declared)
        forbids = [cf for cf in slot.forbids if cf.guard is None or cf.guard(named)]
        forbid_els = [cf.element for cf in forbids]
    if taken is None:
        return Step(elements, forbids, None, state, state, event, [], forbid_els)
    calls: list[ToolCallMade] = []
    if taken.actions:
        made: list = []
        for action in taken.actions:
            action(env, variables, made)
        if made:
            calls = [ToolCallMade(tool, a, number) for tool, a in made]
    if prev is not None:
        pair = prev.pairs_after.get(taken.index)
        if pair is not None:
            elements = (*elements, pair)
    return Step(elements, forbids, taken, state, taken.t.target, event, calls, forbid_els)


def arguments(c: CompiledFsm, event: str, given: dict[str, Any]) -> dict[str, Any] | str:
    """The event's declared arguments from the given ones (absent optional ones are None), or why they do not fit."""
    types = c.param_types[event]
    args: dict[str, Any] = {}
    if not types and not given:
        return args
    for name, value in given.items():
        if name not in types:
            return f"event `{event}` has no parameter `{name}`"
        if not types[name].admits(value):
            return f"`{name}: {value!r}` is not a value of {types[name].text()} (event `{event}`)"
        args[name] = value
    if len(args) == len(types):  # every parameter given (the given names are the declared ones)
        return args
    for name, vtype in types.items():
        if name not in args:
            if not vtype.optional:
                return f"event `{event}` needs parameter `{name}`"
            args[name] = None
    return args


def start(c: CompiledFsm, precondition: dict[str, Any]) -> tuple[str, dict[str, Any]] | str:
    """The configuration a precondition gives (its `state`, its values on the initial ones; names that are not the
    model's variables are ignored), or why it is not one of the model's."""
    state, variables = c.initial_config()
    if not precondition:
        return state, variables
    model = c.model
    for name, value in precondition.items():
        if name == "state":
            if value not in model.states:
                return f"precondition names unknown state `{value}`"
            state = value
        elif name in model.variables:
            vtype = model.variables[name].type
            if not vtype.admits(value):
                return f"precondition `{name}: {value!r}` is not a value of {vtype.text()}"
            variables[name] = value
    return state, variables


def snapshot(state: str, variables: dict[str, Any], done: Step | None = None,
             args: dict[str, Any] | None = None) -> Snapshot:
    """The configuration (state, variables, discarded values) after `done`, or a start configuration."""
    return Snapshot(state, {k: v for k, v in variables.items() if not k.startswith("discarded.")},
                    {k[10:]: v for k, v in variables.items() if k.startswith("discarded.")},
                    done.taken.t.key if done is not None and done.taken is not None else None,
                    done.calls if done is not None else [], done.event if done is not None else None, args or {})


def run_events(model: FsmModel, elements: list[Element], events: list[tuple[str, dict]],
               state: str | None = None, variables: dict | None = None,
               compiled: CompiledFsm | None = None) -> list[Snapshot]:
    """Step a plain event sequence from the initial configuration (or the given state and variables): the
    configuration after each step. Raises ValueError for an unknown state, event, argument or out-of-type value.
    Used by the differential test and to confirm invariant counterexamples (which pass `compiled`, built once)."""
    c = compiled or CompiledFsm(model, elements)
    found = start(c, {**({"state": state} if state is not None else {}), **(variables or {})})
    if isinstance(found, str):
        raise ValueError(found)
    current, env = found
    snapshots: list[Snapshot] = []
    prev: CompiledTransition | None = None
    for number, (event, given) in enumerate(events, start=1):
        if event not in c.params:
            raise ValueError(f"`{event}` is not an event of the model")
        args = arguments(c, event, given)
        if isinstance(args, str):
            raise ValueError(args)
        done = step(c, current, env, event, args, prev, number)
        current = done.state
        snapshots.append(snapshot(current, env, done, args))
        prev = done.taken or prev
    return snapshots


def compile_action(action) -> Callable[[dict, dict, list], None]:
    """Each action reads/writes `env` (variables + `discarded.X` + parameters); writes mirror into `variables`."""
    if isinstance(action, Assign):
        target, value = action.target, compile_expr(action.value)

        def assign(env, variables, calls):
            env[target] = variables[target] = value(env)

        return assign
    if isinstance(action, Discard):
        target, key = action.target, f"discarded.{action.target}"

        def discard(env, variables, calls):
            env[key] = variables[key] = env.get(target)
            env[target] = variables[target] = None

        return discard
    tool = action.tool
    args = [(name, compile_expr(expr)) for name, expr in action.args]

    def call(env, variables, calls):
        calls.append((tool, {name: fn(env) for name, fn in args}))

    return call
