"""Replays golden cases on an FSM: takes the enabled transition per event, runs actions, marks exercised/verified elements."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mbt.elements import fsm as ids
from mbt.elements.base import Element
from mbt.goldens.binding import Binder
from mbt.goldens.cases import Assertions, GoldenCase
from mbt.goldens.results import Contradiction, Divergence, ForbiddenExpected, Note, UnboundTurn
from mbt.model.expr import Ref, atoms, compile_expr
from mbt.model.fsm import Assign, Discard, Forbid, FsmModel, Transition

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
        self.binder = Binder(model)
        self.params = {name: [p.name for p in e.params] for name, e in model.events.items()}
        self.param_types = {name: {p.name: p.type for p in e.params} for name, e in model.events.items()}
        self.by_state_event: dict[tuple[str, str], list[CompiledTransition]] = defaultdict(list)
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
                actions=[self._compile_action(a) for a in t.actions],
                param_names=t.params or self.params[t.event], transition_el=idx[ids.transition_id(t)],
                branch_el=idx[ids.branch_id(t)] if in_group else None, target_el=idx[ids.state_id(t.target)],
                assigned=tuple(name for name in model.variables
                               if any(isinstance(a, (Assign, Discard)) and a.target == name for a in t.actions)))
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
        self._slots: dict[tuple[str, str], _Slot] = {}
        self._initial: tuple[str, dict[str, Any]] | None = None

    def slot(self, state: str, event: str) -> _Slot:
        """What an event in a state can touch, worked out on first use (a replay asks for it on every turn)."""
        key = (state, event)
        found = self._slots.get(key)
        if found is None:
            where = self._forbid_positions
            positions = sorted(p for k in {(state, event), (state, None), (None, event), (None, None)}
                               for p in where.get(k, ()))
            forbids = [self.forbids[p] for p in positions]
            group = self.by_state_event.get(key, ())
            found = self._slots[key] = _Slot(group, forbids, self.state_el[state], self.no_branch.get(key))
            if len(group) == 1 and group[0].guard is None and all(cf.guard is None for cf in forbids):
                found.simple = only = group[0]
                found.forbid_elements = tuple(cf.element for cf in forbids)
                found.fixed = (found.state_el, only.transition_el, only.target_el) + (
                    () if only.branch_el is None else (only.branch_el,))
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

    @staticmethod
    def _compile_action(action) -> Callable[[dict, dict, list], None]:
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

    def initial_config(self) -> tuple[str, dict[str, Any]]:
        if self._initial is None:  # worked out once: every replayed case starts from a copy
            variables = {name: v.initial for name, v in self.model.variables.items()}
            for name in self.model.discardable:
                variables[f"discarded.{name}"] = None
            self._initial = (self.model.initial_state, variables)
        state, variables = self._initial
        return state, dict(variables)


def _phrases(f: Forbid) -> list[str]:
    return list(f.effect.matching) if f.effect is not None else []


@dataclass(slots=True)
class _Slot:
    """One (state, event): its transitions in declaration order and the forbids whose source and event match."""

    group: list[CompiledTransition] | tuple
    forbids: list[CompiledForbid]  # their guards are evaluated at each step
    state_el: int
    no_branch_el: int | None
    # One unguarded transition and only unguarded forbids (most steps): the outcome is known in advance.
    simple: CompiledTransition | None = None
    fixed: tuple[int, ...] = ()  # the elements such a step exercises, in _step's order, before any pair
    forbid_elements: tuple[int, ...] = ()  # of those unguarded forbids


# ------------------------------------------------------------------ replay of one case


@dataclass
class CaseRun:
    case: GoldenCase
    exercised: set[int] = field(default_factory=set)
    verified: set[int] = field(default_factory=set)
    contradictions: list[Contradiction] = field(default_factory=list)
    divergences: list[Divergence] = field(default_factory=list)
    unbound: list[UnboundTurn] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    invalid: str | None = None  # the case cannot be replayed on this model (bad precondition, ...)
    forbidden_expected: list[ForbiddenExpected] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    step_elements: dict[int, list[int]] = field(default_factory=dict)  # turn number -> elements its step exercised
    out_of_range: bool = False  # some variable left its range: every variable is re-checked after each step
    start: Snapshot | None = None  # with keep_snapshots: the configuration the case starts from


@dataclass(slots=True)
class _Step:
    elements: list[int]  # exercised by this step, verified when the step's outcome is checked and agrees
    forbids: list[CompiledForbid]
    refused: bool
    state_before: str
    event: str
    calls: list[ToolCallMade]


class FsmReplayer:
    def __init__(self, compiled: CompiledFsm):
        self.c = compiled
        self.model = compiled.model

    # ---- entry point
    def replay(self, case: GoldenCase, keep_snapshots: bool = False) -> CaseRun:
        run = CaseRun(case)
        run.invalid = self._assertion_problem(case)
        start = self._start(case, run) if run.invalid is None else None
        if start is None:
            return run
        state, variables = start
        if keep_snapshots:
            run.start = Snapshot(state, {k: v for k, v in variables.items() if not k.startswith("discarded.")},
                                 {k[10:]: v for k, v in variables.items() if k.startswith("discarded.")}, None)
        run.out_of_range = not self.c.initial_in_range
        run.exercised.add(self.c.state_el[state])
        prev: CompiledTransition | None = None
        steps: list[_Step] = []
        all_calls: list[ToolCallMade] = []
        last_turn = len(case.turns)
        first_intent = case.final.intent
        final_quiet = case.final.empty()
        param_types = self.c.param_types
        for number, turn in enumerate(case.turns, start=1):
            event = turn.event
            if event is not None and event in param_types:
                raw_args = turn.args  # an explicit, known event binds as itself (Binder.bind, without the copy)
            else:
                bound = self.c.binder.bind(turn, first_intent if number == 1 else None)
                if isinstance(bound, str):
                    run.unbound.append(UnboundTurn(case=case.id, where=case.where, model=self.model.name,
                                                   turn=number, user=turn.user,
                                                   reason=bound + "; replay of this case stops here"))
                    last_turn = number - 1
                    break
                event, raw_args = bound.event, bound.args
            args = self._args(event, raw_args, case, number, run) if raw_args or param_types[event] else {}
            if args is None:
                last_turn = number - 1
                break
            step, state, taken = self._step(state, variables, event, args, prev, number, run)
            if step.calls:
                all_calls.extend(step.calls)
            steps.append(step)
            run.step_elements[number] = step.elements
            if keep_snapshots:
                run.snapshots.append(Snapshot(state, {k: v for k, v in variables.items() if not k.startswith("discarded.")},
                                              {k[10:]: v for k, v in variables.items() if k.startswith("discarded.")},
                                              taken.t.key if taken else None, step.calls, event, args))
            prev = taken if taken is not None else prev
            last = number == len(case.turns)
            if step.forbids and (turn.expect.must_have or not turn.expect.empty()
                                 or (last and (not final_quiet or case.final.must_have))):
                self._expects_forbidden(step, [turn.expect] + ([case.final] if last else []), turn.rejected,
                                        variables, args, number, run)
            if not turn.rejected and turn.expect.empty() and (final_quiet or not last):
                # Nothing asserted here (the common turn): nothing to contradict or verify; a refusal diverges.
                if step.refused:
                    run.divergences.append(self._divergence(case, number, step))
                continue
            # Turn-level expectations, then the final ones after the last turn.
            checks = [turn.expect]
            if number == len(case.turns):
                checks.append(case.final)
            agree = self._check(checks, state, variables, step, all_calls, number, run)
            refusal_ok = turn.rejected or any(a.state is not None and a.state == step.state_before for a in checks)
            if step.refused:
                forbids_verified = [f for f in step.forbids
                                    if self._forbid_verified(f, checks, step, turn.rejected, variables)]
                if not (refusal_ok or forbids_verified):
                    run.divergences.append(self._divergence(case, number, step))
            elif turn.rejected:
                run.contradictions.append(Contradiction(
                    case=case.id, where=case.where, model=self.model.name, turn=number, path="rejected",
                    expected=f"`{event}` refused in `{step.state_before}`", actual=f"transition {taken.t.key}",
                    message=f"the golden expects `{event}` to be refused, the model takes {taken.t.key}"))
                agree = False
            checked = any(a.checks_outcome() for a in checks) or (turn.rejected and step.refused)
            if checked and agree:
                run.verified.update(step.elements)
            for f in step.forbids:
                if self._forbid_verified(f, checks, step, turn.rejected, variables):
                    run.verified.add(f.element)
        else:
            last_turn = len(case.turns)
        # Final must_not / must_not_call speak of the whole conversation: they verify earlier forbids too.
        if last_turn == len(case.turns) and steps and (case.final.must_not or case.final.must_not_call):
            for step in steps[:-1]:
                for f in step.forbids:
                    if self._forbid_verified_by_final(f, case.final):
                        run.verified.add(f.element)
        if run.contradictions or run.forbidden_expected:
            # A golden that contradicts the model, or expects what it forbids, verifies nothing on it: one of
            # the two is wrong, and until a human decides which, none of its checks can be trusted.
            run.verified.clear()
        return run

    def _assertion_problem(self, case: GoldenCase) -> str | None:
        """Assertions whose meaning is unclear make the case invalid: `tool_arguments: {TOOL: null}`."""
        tools = self.c.tools
        for label, a in [(f"turn {n}", t.expect) for n, t in enumerate(case.turns, start=1)] + [("final", case.final)]:
            for key, value in a.tool_arguments.items():
                if key in tools and value is None:
                    return (f"{label}: `tool_arguments: {{{key}: null}}` is ambiguous: write `must_not_call: [{key}]` "
                            f"to assert that {key} is not called, or `{{{key}: {{}}}}` that it is called")
        return None

    def _divergence(self, case: GoldenCase, number: int, step: _Step) -> Divergence:
        return Divergence(case=case.id, where=case.where, model=self.model.name, turn=number, state=step.state_before,
                          event=step.event,
                          message=f"the model does not allow `{step.event}` in state `{step.state_before}`, "
                                  "and the golden does not treat it as refused")

    # ---- start configuration
    def _start(self, case: GoldenCase, run: CaseRun):
        state, variables = self.c.initial_config()
        for key, value in case.precondition.items():
            if key == "state":
                if value not in self.model.states:
                    run.invalid = f"precondition names unknown state `{value}`"
                    return None
                state = value
            elif key in self.model.variables:
                vtype = self.model.variables[key].type
                if not vtype.admits(value):
                    run.invalid = f"precondition `{key}: {value!r}` is not a value of {vtype.text()}"
                    return None
                variables[key] = value
            else:
                run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=None,
                                      message=f"precondition `{key}` is not a variable of the model (ignored)"))
        return state, variables

    def _args(self, event: str, given: dict, case: GoldenCase, number: int, run: CaseRun) -> dict | None:
        types = self.c.param_types[event]
        args: dict[str, Any] = {}
        if not types and not given:
            return args
        for name, value in given.items():
            if name not in types:
                run.unbound.append(UnboundTurn(case=case.id, where=case.where, model=self.model.name, turn=number,
                                               user=None, reason=f"event `{event}` has no parameter `{name}`"))
                return None
            if not types[name].admits(value):
                run.unbound.append(UnboundTurn(case=case.id, where=case.where, model=self.model.name, turn=number,
                                               user=None, reason=f"`{name}: {value!r}` is not a value of "
                                                                 f"{types[name].text()} (event `{event}`)"))
                return None
            args[name] = value
        for name, vtype in types.items():
            if name not in args:
                if not vtype.optional:
                    run.unbound.append(UnboundTurn(case=case.id, where=case.where, model=self.model.name, turn=number,
                                                   user=None, reason=f"event `{event}` needs parameter `{name}`"))
                    return None
                args[name] = None
        return args

    # ---- one event
    def _step(self, state, variables, event, args, prev, number, run):
        c = self.c
        slot = c.slot(state, event)
        if slot.simple is not None:
            return self._simple_step(slot, state, variables, event, args, prev, number, run)
        exercised: list[int] = []
        env = variables  # guards only read; actions write `variables` anyway, so no copy unless parameters join
        taken = None
        for ct in slot.group:
            local = variables
            if args:
                local = dict(variables)
                for declared, name in zip(c.params[event], ct.param_names):
                    local[name] = args[declared]
            for fn, when_true, when_false in ct.conditions:
                exercised.append(when_true if fn(local) else when_false)
            if taken is None and (ct.guard is None or ct.guard(local)):
                taken, env = ct, local
        # Forbidden elements: exercised when the event fires in their source state with their guard holding.
        forbids = []
        named = None
        for cf in slot.forbids:
            if cf.guard is not None:
                if named is None:
                    named = dict(env)
                    for declared in c.params[event]:
                        named[declared] = args.get(declared)
                if not cf.guard(named):
                    continue
            forbids.append(cf)
            run.exercised.add(cf.element)
        calls: list[ToolCallMade] = []
        before = state
        exercised.append(slot.state_el)  # checking the outcome of an event verifies behaviour in its state
        if taken is None:
            if slot.no_branch_el is not None:
                exercised.append(slot.no_branch_el)
            refused = True
        else:
            made: list = []
            for action in taken.actions:
                action(env, variables, made)
            if made:
                calls = [ToolCallMade(tool, a, number) for tool, a in made]
            state = taken.t.target
            exercised.append(taken.transition_el)
            exercised.append(taken.target_el)
            if taken.branch_el is not None:
                exercised.append(taken.branch_el)
            if prev is not None:
                pair = prev.pairs_after.get(taken.index)
                if pair is not None:
                    exercised.append(pair)
            refused = False
            # Values change only by assignments and discards: while all are in range, only those need a look.
            if run.out_of_range:
                self._check_ranges(variables, run, number, self.model.variables)
            elif taken.assigned:
                self._check_ranges(variables, run, number, taken.assigned)
        run.exercised.update(exercised)
        return _Step(exercised, forbids, refused, before, event, calls), state, taken

    def _simple_step(self, slot: _Slot, state, variables, event, args, prev, number, run):
        """_step for a slot with one unguarded transition and unguarded forbids: the same outcome, less work."""
        taken = slot.simple
        assert taken is not None  # only called for slots that have one
        env = variables
        if args:
            env = dict(variables)
            for declared, name in zip(self.c.params[event], taken.param_names):
                env[name] = args[declared]
        if slot.forbid_elements:
            run.exercised.update(slot.forbid_elements)
        made: list = []
        for action in taken.actions:
            action(env, variables, made)
        calls = [ToolCallMade(tool, a, number) for tool, a in made] if made else []
        exercised = list(slot.fixed)
        if prev is not None:
            pair = prev.pairs_after.get(taken.index)
            if pair is not None:
                exercised.append(pair)
        if run.out_of_range:
            self._check_ranges(variables, run, number, self.model.variables)
        elif taken.assigned:
            self._check_ranges(variables, run, number, taken.assigned)
        run.exercised.update(exercised)
        return _Step(exercised, slot.forbids, False, state, event, calls), taken.t.target, taken

    def _check_ranges(self, variables, run: CaseRun, number: int, names) -> None:
        for name in names:
            var = self.model.variables[name]
            if not var.type.admits(variables[name]):
                run.out_of_range = True
                run.notes.append(Note(case=run.case.id, where=run.case.where, model=self.model.name, turn=number,
                                      message=f"the model sets `{name}` to {variables[name]!r}, outside {var.type.text()}"))

    # ---- expectations
    def _check(self, checks: list[Assertions], state, variables, step: _Step, all_calls, number, run) -> bool:
        agree = True
        case = run.case
        for i, a in enumerate(checks):
            turn = number if i == 0 else None
            label = f"turn {number}" if turn else "final assertions"

            def contradict(path, expected, actual, what, turn=turn, label=label):  # bound now: defined in a loop
                nonlocal agree
                agree = False
                run.contradictions.append(Contradiction(case=case.id, where=case.where, model=self.model.name,
                                                        turn=turn, path=path, expected=expected, actual=actual,
                                                        message=f"{label}: {what}"))

            if a.state is not None:
                if a.state not in self.model.states:
                    run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=turn,
                                          message=f"{label}: asserted state `{a.state}` is not a state of the model"))
                elif a.state != state:
                    contradict("state", a.state, state, f"golden expects state `{a.state}`, the model is in `{state}`")
            for name, expected in a.variables.items():
                if name not in self.model.variables:
                    run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=turn,
                                          message=f"{label}: `{name}` is not a variable of the model (not checked)"))
                elif not _same(variables[name], expected):
                    contradict(f"variables.{name}", expected, variables[name],
                               f"golden expects {name} = {expected!r}, the model has {variables[name]!r}")
            for name, expected in a.discarded.items():
                key = f"discarded.{name}"
                if key not in variables:
                    run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=turn,
                                          message=f"{label}: the model never discards `{name}` (not checked)"))
                elif not _same(variables[key], expected):
                    contradict(key, expected, variables[key],
                               f"golden expects discarded {name} = {expected!r}, the model has {variables[key]!r}")
            calls = step.calls if turn else all_calls
            for banned in a.must_not_call:
                if banned not in self.c.tools:
                    run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=turn,
                                          message=f"{label}: `must_not_call: [{banned}]`: the model never calls "
                                                  f"`{banned}` (the check holds trivially)"))
                made = next((c for c in calls if c.tool == banned), None)
                if made is not None:
                    contradict(f"must_not_call.{banned}", f"no call to {banned}", f"{banned}({_args_text(made.args)})",
                               f"golden expects no call to {banned}{' in this turn' if turn else ''}, the model calls "
                               f"{banned}({_args_text(made.args)})" + ("" if turn else f" at turn {made.step}"))
            if a.tool_arguments:
                for tool, arg, expected in self._expected_args(a.tool_arguments):
                    if arg is None:  # `{TOOL: {}}`: the call happens, whatever its arguments
                        made = next((c for c in reversed(calls) if c.tool == tool), None)
                        if made is None:
                            contradict(f"tool_arguments.{tool}", f"a call to {tool}", f"no call to {tool}",
                                       f"golden expects a call to {tool}, the model makes none"
                                       + ("" if turn is None else " in this turn"))
                        elif turn is None:
                            run.verified.update(run.step_elements.get(made.step, ()))
                        continue
                    actual = _latest_arg(calls, tool, arg)
                    path = f"tool_arguments.{tool + '.' if tool else ''}{arg}"
                    if actual is _MISSING:
                        contradict(path, expected, None,
                                   f"golden expects a tool call with {arg} = {expected!r}, the model makes none"
                                   + ("" if turn is None else " in this turn"))
                    elif not _same(actual[0], expected):
                        contradict(path, expected, actual[0],
                                   f"golden expects {arg} = {expected!r} in the call to {actual[1]}, "
                                   f"the model passes {actual[0]!r}")
                    elif turn is None:
                        # The step that made the checked call is verified too.
                        run.verified.update(run.step_elements.get(actual[2], ()))
        return agree

    def _expected_args(self, tool_arguments: dict) -> list[tuple[str | None, str | None, Any]]:
        """(tool or None, argument or None, value): None as the argument asserts the call itself (`{TOOL: {}}`)."""
        tools = self.c.tools
        out: list[tuple[str | None, str | None, Any]] = []
        for key, value in tool_arguments.items():
            if key in tools and isinstance(value, dict):
                out.extend((key, arg, v) for arg, v in value.items())
                if not value:
                    out.append((key, None, None))  # the call itself is asserted
            else:
                out.append((None, key, value))
        return out

    # ---- forbidden elements
    def _forbid_verified(self, cf: CompiledForbid, checks: list[Assertions], step: _Step, rejected: bool,
                         variables: dict) -> bool:
        """The golden asserts that the forbidden outcome did not happen at this step."""
        f = cf.f
        for a in checks:
            if cf.phrases and a.must_not and any(p in item.casefold() for item in a.must_not for p in cf.phrases):
                return True
            if f.effect is not None and f.effect.kind == "call" and f.effect.tool in a.must_not_call:
                return True
            if self._pins_allowed_call(cf, a, step, variables):
                return True
            if f.target is not None and a.state is not None and a.state != f.target:
                return True
        # A forbid on the event itself (no target, no effect): the golden expects the refusal, or asserts that the
        # state did not change.
        if f.effect is None and f.target is None and step.refused:
            return rejected or any(a.state == step.state_before for a in checks)
        return False

    def _pins_allowed_call(self, cf: CompiledForbid, a: Assertions, step: _Step, variables: dict) -> bool:
        """For `effect call T [cond]`: the golden pins this step's one call of T to arguments under which `cond` is
        false (it asserts every argument `cond` reads, as the model passes them), so the call made is not the
        forbidden one. A positive check of an unconditional forbid's tool is the opposite: it expects the call."""
        if cf.condition is None or not a.tool_arguments or cf.f.effect is None:
            return False
        tool = cf.f.effect.tool
        made = [c for c in step.calls if c.tool == tool]
        if len(made) != 1:
            return False
        call = made[0]
        asserted = {}
        for t, arg, expected in self._expected_args(a.tool_arguments):
            if arg is None or t not in (None, tool) or arg not in call.args:
                continue
            if t is None and _latest_arg(step.calls, None, arg)[1] != tool:
                continue  # a plain argument check that speaks of another tool's call
            asserted[arg] = expected
        if not cf.condition_args <= asserted.keys() or not all(_same(call.args[k], v) for k, v in asserted.items()):
            return False
        env = dict(variables)
        env.update({f"args.{k}": v for k, v in call.args.items()})
        return not cf.condition(env)

    def _expects_forbidden(self, step: _Step, checks: list[Assertions], rejected: bool, variables: dict, args: dict,
                           number: int, run: CaseRun) -> None:
        """Findings for the forbids exercised at this step whose forbidden outcome the golden expects."""
        for cf in step.forbids:
            expected = self._expected_outcome(cf, checks, rejected, step, variables)
            if expected is None:
                continue
            f, case = cf.f, run.case
            run.forbidden_expected.append(ForbiddenExpected(
                case=case.id, where=case.where, model=self.model.name, turn=number, element=cf.element_id,
                severity=cf.severity, forbid_at=str(f.loc), expected=expected,
                message=f"golden expects forbidden behaviour: {expected} at turn {number} (in `{step.state_before}` "
                        f"on `{step.event}`), which `forbid {f.label()}` ({f.loc}, severity {cf.severity}) forbids"))

    def _expected_outcome(self, cf: CompiledForbid, checks: list[Assertions], rejected: bool, step: _Step,
                          variables: dict) -> str | None:
        """What the golden expects that the forbid forbids, in words; None when it expects nothing forbidden."""
        f = cf.f
        for a in checks:
            if cf.phrases and any(p in item.casefold() for item in a.must_have for p in cf.phrases):
                return f"saying {next(i for i in a.must_have if any(p in i.casefold() for p in cf.phrases))!r}"
            if f.target is not None and a.state == f.target:
                return f"the move to `{f.target}`"
            if f.effect is None and f.target is None and not rejected and a.state is not None \
                    and a.state != step.state_before:
                return f"`{step.event}` accepted (state `{a.state}`)"
            if f.effect is not None and f.effect.kind == "call":
                tool = f.effect.tool
                asserted = {arg: value for t, arg, value in self._expected_args(a.tool_arguments)
                            if t == tool and arg is not None}
                if tool not in a.tool_arguments or not isinstance(a.tool_arguments[tool], dict):
                    continue
                if cf.condition is None:
                    return f"a call to {tool}"
                # A conditional forbid: the expected call is forbidden when the asserted arguments make the condition
                # true; when the golden leaves an argument the condition reads unasserted, it cannot be told.
                if cf.condition_args <= asserted.keys():
                    env = dict(variables)
                    env.update({f"args.{k}": v for k, v in asserted.items()})
                    if cf.condition(env):
                        return f"a call {tool}({_args_text(asserted)})"
        return None

    def _forbid_verified_by_final(self, cf: CompiledForbid, final: Assertions) -> bool:
        f = cf.f
        if cf.phrases and any(p in item.casefold() for item in final.must_not for p in cf.phrases):
            return True
        return f.effect is not None and f.effect.kind == "call" and f.effect.tool in final.must_not_call


_MISSING = object()


def _args_text(args: dict[str, Any]) -> str:
    return ", ".join(f"{name} = {value!r}" for name, value in args.items())


def _latest_arg(calls: list[ToolCallMade], tool: str | None, arg: str):
    for call in reversed(calls):
        if (tool is None or call.tool == tool) and arg in call.args:
            return call.args[arg], call.tool, call.step
    return _MISSING


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(actual, bool) or isinstance(expected, bool):
        return actual is expected or (isinstance(actual, bool) and isinstance(expected, bool) and actual == expected)
    return actual == expected


def run_events(model: FsmModel, elements: list[Element], events: list[tuple[str, dict]],
               state: str | None = None, variables: dict | None = None,
               compiled: CompiledFsm | None = None) -> list[Snapshot]:
    """Replay a plain event sequence (no golden): the configurations after each step. Used by the differential test
    and to confirm invariant counterexamples (which pass `compiled`, built once for all of them)."""
    from mbt.goldens.cases import Turn

    precondition = dict(variables or {})
    if state is not None:
        precondition["state"] = state
    case = GoldenCase(id="events", precondition=precondition,
                      turns=[Turn(event=e, args=a) for e, a in events])
    replayer = FsmReplayer(compiled or CompiledFsm(model, elements))
    run = replayer.replay(case, keep_snapshots=True)
    if run.invalid or run.unbound:
        raise ValueError(run.invalid or run.unbound[0].reason)
    return run.snapshots
