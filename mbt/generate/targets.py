"""What a run must end with to cover each FSM element: the states it may start from and the planned last step(s)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import z3

from mbt.elements import fsm as ids
from mbt.generate.symbolic import ANY, REFUSED, Cond, Constraint, Extra, PlannedStep, SymbolicFsm
from mbt.model.expr import Expr, atoms
from mbt.model.fsm import Effect, Forbid, FsmModel, ToolCall

Suffix = list[PlannedStep]


@dataclass
class Target:
    """How to cover one element: reach a state of `sources` (None: any state), then run one of its suffixes."""

    element: str
    sources: frozenset[str] | None
    suffixes: Callable[[str], list[Suffix]]  # the suffixes that start in a given state
    length: int  # steps in every suffix
    describe: str  # what the run must end with, for messages ("`confirm_email` in `collecting_email`")
    forbid: Forbid | None = None
    unusable: str | None = None  # why no golden could verify the element, whatever the run
    preferred: Callable[[str], list[Suffix]] | None = None  # tried first: suffixes that make a stronger test


class TargetIndex:
    """The Target of each element id, built on first use (a large model has hundreds of thousands of elements, and
    generation asks about a few); transition pairs are found from their id."""

    def __init__(self, model: FsmModel, engine: SymbolicFsm):
        self.model, self.engine = model, engine
        self._made: dict[str, Target] = {}
        self._recipes: dict[str, tuple] = {}
        transitions = model.transitions
        self._entering: dict[str, list[int]] = {s: [] for s in model.states}
        self._by_key: dict[str, int] = {}
        for i, t in enumerate(transitions):
            self._entering[t.target].append(i)
            self._by_key[t.key] = i
            self._recipes[ids.transition_id(t)] = ("transition", i)
        for name in model.states:
            self._recipes[ids.state_id(name)] = ("state", name)
        index = {id(t): i for i, t in enumerate(transitions)}
        for (source, event), group in ids.guard_groups(model).items():
            for t in group:
                i = index[id(t)]
                self._recipes[ids.branch_id(t)] = ("branch", i)
                if t.guard is not None:
                    for k in range(len(atoms(t.guard))):
                        for value in (True, False):
                            self._recipes[ids.condition_id(t, k, value)] = ("condition", i, k, value)
            self._recipes[ids.no_branch_id(source, event)] = ("none", source, event)
        for n, f in enumerate(model.forbids):
            self._recipes[ids.forbidden_id(f)] = ("forbidden", n)

    def get(self, element: str) -> Target | None:
        found = self._made.get(element)
        if found is None:
            found = self._make(element)
            if found is not None:
                self._made[element] = found
        return found

    def _make(self, element: str) -> Target | None:
        model, engine, transitions = self.model, self.engine, self.model.transitions
        recipe = self._recipes.get(element)
        if recipe is None:
            return self._pair(element)
        kind = recipe[0]
        if kind == "state":
            return _state_target(model, engine, recipe[1], self._entering[recipe[1]])
        if kind in ("transition", "branch"):
            i = recipe[1]
            t = transitions[i]
            return Target(element, frozenset([t.source]), _only(t.source, _take(t.event, i)), 1,
                          f"`{t.event}` taking `{t.key}` in `{t.source}`")
        if kind == "condition":
            _, i, k, value = recipe
            t = transitions[i]
            atom = atoms(t.guard)[k]
            extra = _atom_extra(i, atom, value)
            return Target(element, frozenset([t.source]), _only(t.source, _planned(t.event, ANY, extra)), 1,
                          f"`{t.event}` in `{t.source}` with `{atom.text()}` {str(value).lower()}")
        if kind == "none":
            _, source, event = recipe
            return Target(element, frozenset([source]), _only(source, _planned(event, REFUSED)), 1,
                          f"`{event}` refused in `{source}` (no branch holds)")
        return _forbid_target(model, engine, model.forbids[recipe[1]])

    def _pair(self, element: str) -> Target | None:
        prefix = "transition-pair:"
        if not element.startswith(prefix) or element.count("|") != 1:
            return None
        first_key, second_key = element[len(prefix):].split("|")
        i, j = self._by_key.get(first_key), self._by_key.get(second_key)
        if i is None or j is None:
            return None
        first, second = self.model.transitions[i], self.model.transitions[j]
        if first.target != second.source:
            return None
        suffix = [PlannedStep(first.event, i), PlannedStep(second.event, j)]
        return Target(element, frozenset([first.source]), _only(first.source, lambda: list(suffix)), 2,
                      f"`{first.key}` then `{second.key}`")


def fsm_targets(model: FsmModel, engine: SymbolicFsm) -> TargetIndex:
    """The Target of every element id of the model (every criterion), built on demand."""
    return TargetIndex(model, engine)


def _take(event: str, index: int) -> Callable[[], Suffix]:
    return lambda: [PlannedStep(event, index)]


def _planned(event: str, outcome: int | str, *extras: Extra) -> Callable[[], Suffix]:
    """One planned step, made afresh on each call (a caller may add extras to it)."""
    return lambda: [PlannedStep(event, outcome, list(extras))]


def _only(source: str, make: Callable[[], Suffix]) -> Callable[[str], list[Suffix]]:
    return lambda state: [make()] if state == source else []


def _state_target(model: FsmModel, engine: SymbolicFsm, name: str, entering: list[int]) -> Target:
    """A state is verified by a checked step that enters it or fires an event in it."""
    transitions = model.transitions
    outgoing = engine.outgoing[name]
    sources = {transitions[i].source for i in entering} | {name}

    def suffixes(state: str) -> list[Suffix]:
        found = [[PlannedStep(transitions[i].event, i)] for i in entering if transitions[i].source == state]
        if state == name:
            found += [[PlannedStep(transitions[i].event, i)] for i in outgoing]
            # An event the state has no transition for is refused there, and the checked refusal verifies the state.
            handled = {transitions[i].event for i in outgoing}
            found += [[PlannedStep(e, REFUSED)] for e in model.events if e not in handled]
        return found

    return Target(ids.state_id(name), frozenset(sources), suffixes, 1, f"a checked step in or into `{name}`")


def _atom_extra(t_index: int, atom: Expr, value: bool) -> Extra:
    def build(engine: SymbolicFsm, store: dict, args: dict) -> list[Cond]:
        return [engine.condition(atom, engine.local_env(store, t_index, args), value, engine.local_types(t_index))]

    return Extra(f"`{atom.text()}` is {str(value).lower()}", build)


def _forbid_guard(f: Forbid) -> Extra:
    def build(engine: SymbolicFsm, store: dict, args: dict) -> list[Cond]:
        if f.guard is None:
            return []
        return [engine.condition(f.guard, engine.named_env(store, args), True,
                                 engine.param_types[f.event] if f.event is not None else {})]

    return Extra("the forbid's guard holds", build)


def _any_of(engine: SymbolicFsm, options: list[Cond]) -> Cond:
    symbolic = []
    for c in options:
        if c is True:
            return True
        if c is not False:
            symbolic.append(c)
    if not symbolic:
        return False
    return Constraint(z3.Or([c.formula for c in symbolic]), frozenset().union(*(c.leaves for c in symbolic)))


def calls_tool(engine: SymbolicFsm, index: int, tool: str) -> bool:
    return any(isinstance(a, ToolCall) and a.tool == tool for a in engine.transitions[index].actions)


def tempting(engine: SymbolicFsm, effect: Effect, tool: str, state: str, event: str, store: dict, args: dict
             ) -> list[Cond]:
    """For each transition of (state, event) that calls the forbidden `tool`: its call's arguments (computed from the
    store as its actions run, its guard ignored) satisfy the effect's condition."""
    options: list[Cond] = []
    for i in engine.groups.get((state, event), ()):
        if not calls_tool(engine, i, tool):
            continue

        def on_call(call: ToolCall, values: dict[str, Any], env: dict[str, Any], types: dict, i: int = i) -> None:
            if call.tool != tool:
                return
            if effect.condition is None:
                options.append(True)
                return
            scope = {k: v for k, v in env.items() if k not in engine.local_names[i]}
            scope.update(args)  # the forbid names the event's parameters by their declared names
            scope.update({f"args.{name}": value for name, value in values.items()})
            scope_types = {k: v for k, v in types.items() if k not in engine.local_names[i]}
            scope_types.update(engine.param_types[event])
            options.append(engine.condition(effect.condition, scope, True, scope_types))

        engine.apply(store, i, args, on_call)
    return options


def _forbid_target(model: FsmModel, engine: SymbolicFsm, f: Forbid) -> Target:
    element = ids.forbidden_id(f)
    sources = frozenset([f.source]) if f.source is not None else None
    events = [f.event] if f.event is not None else list(model.events)
    phrases = list(f.effect.matching) if f.effect is not None else []
    effect = f.effect
    guard = _forbid_guard(f)
    where = f"`{f.event or 'any event'}` in `{f.source or 'any state'}`"
    unusable = None
    if effect is not None and effect.kind == "say" and not phrases:
        unusable = ("a `say` effect without `matching` phrases: no golden can assert that it did not happen "
                    "(add `matching \"...\"` to the forbid)")
    if effect is None and f.target is None:
        outcome = REFUSED  # the event itself is forbidden: the model must refuse it
    else:
        outcome = ANY

    def suffixes(state: str) -> list[Suffix]:
        if sources is not None and state not in sources:
            return []
        # Whatever the step does: a forbidden call is verified by `must_not_call` where the step makes no call of
        # the tool, and (with a condition) by `tool_arguments` where it makes an allowed one (coverage rule 3).
        return [[PlannedStep(event, outcome, [guard])] for event in events]

    preferred = None
    tool = effect.tool if effect is not None and effect.kind == "call" else None
    if effect is not None and tool is not None and any(calls_tool(engine, i, tool)
                                                       for i in range(len(engine.transitions))):
        preferred = _tempted(engine, effect, tool, suffixes)
    return Target(element, sources, suffixes, 1, where, forbid=f, unusable=unusable, preferred=preferred)


def _tempted(engine: SymbolicFsm, effect: Effect, tool: str, suffixes: Callable[[str], list[Suffix]]
             ) -> Callable[[str], list[Suffix]]:
    """A forbidden call's preferred suffixes: those whose last step has a transition that would call `tool` with
    forbidden arguments if its guard let it (a stronger test than one where no transition could)."""

    def preferred(state: str) -> list[Suffix]:
        out = []
        for suffix in suffixes(state):
            step = suffix[-1]
            if not any(calls_tool(engine, i, tool) for i in engine.groups.get((state, step.event), ())):
                continue

            def build(eng: SymbolicFsm, store: dict, args: dict, s: str = state, e: str = step.event) -> list[Cond]:
                return [_any_of(eng, tempting(eng, effect, tool, s, e, store, args))]

            tempted = Extra(f"a transition of `{step.event}` would call `{tool}` with forbidden arguments "
                            "if its guard let it", build)
            out.append([PlannedStep(step.event, step.outcome, [*step.extras, tempted])])
        return out

    return preferred
