"""FSM mutation operators, the mutant's replayer (the original's compiled engine with the changed slots rebuilt), and
the search for an input on which the original and a mutant disagree.

Every FSM mutant changes what one (state, event) slot does. Goldens may start anywhere (a precondition sets the state
and the variables) and may assert the state, every variable and every call after any turn, so two models differ
exactly when some single step from a settable configuration in a changed slot differs: the search tries every such
step, with the values of each variable the slot reads and of each parameter taken from the candidates that
mbt/analysis/explore.py uses (constants, bounds and neighbours, the whole range of a small int, one fresh string).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import random
import weakref
import zlib
from collections import ChainMap, defaultdict
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from mbt.elements import fsm as ids

# The one place mutation reads the FSM replay engine's internals (its compiled slots): a mutant is the original's
# compiled engine with the changed slots rebuilt, as compiling (and enumerating) a 20,000-transition model per
# mutant would take seconds.
from mbt.engine.fsm import CompiledFsm, CompiledTransition, compile_action
from mbt.goldens.cases import GoldenCase, Turn
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.kind import narrow
from mbt.model.expr import And, Arith, Compare, Expr, Lit, Member, Not, Or, compile_expr, refs
from mbt.model.fsm import Action, Assign, Discard, Forbid, FsmModel, ToolCall, Transition, action_text
from mbt.model.types import ValueType
from mbt.mutate.mutant import Distinction, Mutant, Operators

OPERATORS = {
    "FTS": "wrong target state: a transition goes to the next state in declaration order instead of its target",
    "FMT": "missing transition: a transition is removed",
    "FET": "extra transition: an event refused in a state that is not final is accepted there (a self-loop)",
    "FGN": "guard negated: a transition's guard is replaced by its negation",
    "FRO": "relational operator replaced: < and <=, > and >=, == and != swap in one comparison of a guard",
    "FBS": "boundary shifted: an integer constant of a guard comparison moves by the declared precision (1)",
    "FAD": "action dropped: one action of a transition is removed",
    "FAC": "assignment changed: an assigned value is replaced by another value of the variable's type",
    "FAS": "tool-call arguments swapped: two arguments of a call exchange their values",
    "FAR": "tool-call argument dropped: one argument of a call is left out",
    "FFR": "forbid removed: the forbidden behaviour happens (the forbidden move, call or acceptance of the event)",
}
_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
INT_RANGE_LIMIT = 64  # as mbt/analysis/explore.py: an int with at most this many values is tried whole
MAX_STEPS = 4096  # single steps tried per mutant; beyond, a seeded sample (and the mutant is not called equivalent)
FRESH = "mbt-fresh-value"  # a string no model constant equals (data independence: one such value is enough)


# ------------------------------------------------------------------ operators
def fsm_mutants(model: FsmModel) -> list[Mutant]:
    """Every mutant of the model. Changed transitions are made only when a mutant is judged (closures): a large
    model has hundreds of thousands of candidates and the benchmark samples them."""
    ops = Operators(OPERATORS)
    ts = model.transitions
    states = list(model.states)
    position = {name: k for k, name in enumerate(states)}
    used = {(t.source, t.event) for t in ts}
    for i, t in enumerate(ts):
        el, slot = ids.transition_id(t), frozenset({(t.source, t.event)})
        if len(states) > 1:
            other = states[(position[t.target] + 1) % len(states)]
            ops.add("FTS", el, t.loc, f"{t.key}: target `{t.target}` -> `{other}`",
                    *_replacing(model, i, partial(t.model_copy, update={"target": other})), slot)
        ops.add("FMT", el, t.loc, f"{t.key} removed", *_replacing(model, i, lambda: None), slot)
        guard = t.guard
        if guard is not None:
            ops.add("FGN", el, t.loc, f"{t.key}: guard [{guard.text()}] negated",
                    *_replacing(model, i, partial(t.model_copy, update={"guard": Not(guard)})), slot)
            for k, node in enumerate(_compares(guard)):
                if node.op in _SWAP:
                    new = dataclasses.replace(node, op=_SWAP[node.op])
                    ops.add("FRO", el, _at(t, node), f"{t.key}: `{node.text()}` -> `{new.text()}`",
                            *_guard_change(model, i, guard, k, new), slot)
                for side, lit in (("left", node.left), ("right", node.right)):
                    if isinstance(lit, Lit) and isinstance(lit.value, int) and not isinstance(lit.value, bool):
                        for delta in (-1, 1):
                            shifted = Lit(lit.value + delta)
                            new = (dataclasses.replace(node, left=shifted) if side == "left"
                                   else dataclasses.replace(node, right=shifted))
                            ops.add("FBS", el, _at(t, node), f"{t.key}: `{node.text()}` -> `{new.text()}`",
                                    *_guard_change(model, i, guard, k, new), slot)
        for j, action in enumerate(t.actions):
            at = action.loc
            ops.add("FAD", el, at, f"{t.key}: action `{_action_text(action)}` dropped",
                    *_action_change(model, i, j, lambda: None), slot)
            if isinstance(action, Assign) and action.target in model.variables:
                other_value = _other_value(model.variables[action.target].type, action.value)
                if other_value is not _NONE:
                    ops.add("FAC", el, at, f"{t.key}: `{action.target} := {action.value.text()}` -> "
                                           f"`{action.target} := {Lit(other_value).text()}`",
                            *_action_change(model, i, j, partial(action.model_copy,
                                                                 update={"value": Lit(other_value)})), slot)
            if isinstance(action, ToolCall):
                for a in range(len(action.args) - 1):
                    (n1, v1), (n2, v2) = action.args[a], action.args[a + 1]
                    if v1 != v2:
                        args = list(action.args)
                        args[a], args[a + 1] = (n1, v2), (n2, v1)
                        ops.add("FAS", el, at, f"{t.key}: call {action.tool}: `{n1}` and `{n2}` swapped",
                                *_action_change(model, i, j, partial(action.model_copy, update={"args": args})),
                                slot)
                for a, (name, _) in enumerate(action.args):
                    args = action.args[:a] + action.args[a + 1:]
                    ops.add("FAR", el, at, f"{t.key}: call {action.tool}: argument `{name}` dropped",
                            *_action_change(model, i, j, partial(action.model_copy, update={"args": args})), slot)
    forbidden_slots = {(f.source, f.event) for f in model.forbids}
    # A final state has no outgoing transition by definition (the resolver refuses one): a self-loop there would
    # not be a model at all, only a mutant no golden is expected to kill.
    for s in (name for name in states if not model.states[name].final):
        for e in model.events:
            if (s, e) not in used and (s, e) not in forbidden_slots:
                def extra(s=s, e=e) -> Transition:
                    return Transition(source=s, target=s, event=e, key=f"{s}.{e}->{s}~extra", loc=model.states[s].loc)
                ops.add("FET", ids.state_id(s), model.states[s].loc, f"`{e}` accepted in `{s}` (a self-loop)",
                        *_inserting(model, extra), frozenset({(s, e)}), name=f"{s}.{e}")
    first_of: dict[tuple[str, str], Transition] = {}
    for t in ts:
        first_of.setdefault((t.source, t.event), t)
    for f in model.forbids:
        forced = _forbidden_behaviour(model, f, first_of)
        if forced is not None:
            build, data = _inserting(model, partial(_given, forced[0]))
            data["forbid"] = f
            ops.add("FFR", ids.forbidden_id(f), f.loc, f"forbid {f.label()} removed: {forced[1]}",
                    _without_forbid(build, f), data, frozenset({(f.source, f.event)}))
    return ops.found


_NONE = object()
T = TypeVar("T")


Change = tuple[Callable[[], FsmModel], dict[str, Any]]  # (build, data): the mutant and what mutant_replayer reads


def _replacing(model: FsmModel, i: int, make: Callable[[], Transition | None]) -> Change:
    """(build, data): the model with transition i replaced by make() (None: removed)."""
    old = model.transitions[i]
    new_of = _once(make)
    data: dict[str, Any] = {"old": old, "new": new_of}

    def build() -> FsmModel:
        ts = list(model.transitions)
        new = new_of()
        if new is None:
            del ts[i]
        else:
            ts[i] = new
        return model.model_copy(update={"transitions": ts})
    return build, data


def _inserting(model: FsmModel, make: Callable[[], Transition]) -> Change:
    """(build, data): make() goes before the first transition of its slot, so it is the one taken there."""
    new_of = _once(make)
    data: dict[str, Any] = {"old": None, "new": new_of}

    def build() -> FsmModel:
        new = new_of()
        ts = list(model.transitions)
        at = next((k for k, t in enumerate(ts) if (t.source, t.event) == (new.source, new.event)), len(ts))
        ts.insert(at, new)
        return model.model_copy(update={"transitions": ts})
    return build, data


def _given(t: Transition) -> Transition:
    """The transition itself: partial(_given, t) hands over one that exists already, as the others are made."""
    return t


def _once(make: Callable[[], T]) -> Callable[[], T]:
    """make(), called once: the mutant's model and its replayer share the changed transition."""
    made: list[T] = []

    def get() -> T:
        if not made:
            made.append(make())
        return made[0]
    return get


def _guard_change(model: FsmModel, i: int, guard: Expr, k: int, new: Compare) -> Change:
    t = model.transitions[i]
    return _replacing(model, i, lambda: t.model_copy(update={"guard": _replace_compare(guard, k, new)}))


def _action_change(model: FsmModel, i: int, j: int, make: Callable[[], Action | None]) -> Change:
    t = model.transitions[i]

    def changed() -> Transition:
        actions = list(t.actions)
        new = make()
        if new is None:
            del actions[j]
        else:
            actions[j] = new
        return t.model_copy(update={"actions": actions})
    return _replacing(model, i, changed)


def _without_forbid(build: Callable[[], FsmModel], f: Forbid) -> Callable[[], FsmModel]:
    def without() -> FsmModel:
        m = build()
        return m.model_copy(update={"forbids": [g for g in m.forbids if g is not f]})
    return without


def _forbidden_behaviour(model: FsmModel, f: Forbid, first_of: dict) -> tuple[Transition, str] | None:
    """The transition that does what `f` forbids, in its slot; None for `say` effects (the model does not speak),
    for forbids on any state or any event (no one slot) and for forbids in a final state (no transition leaves one)."""
    if f.source is None or f.event is None or f.source not in model.states or model.states[f.source].final:
        return None
    first = first_of.get((f.source, f.event))
    if f.target is not None:
        target, actions, what = f.target, [], f"`{f.event}` moves to `{f.target}`"
    elif f.effect is not None and f.effect.kind == "call" and f.effect.tool:
        target = first.target if first is not None else f.source
        actions = list(first.actions) if first is not None else []
        actions.append(ToolCall(tool=f.effect.tool, args=[], loc=f.loc))
        what = f"`{f.event}` calls {f.effect.tool}"
    elif f.effect is None:
        target, actions, what = f.source, [], f"`{f.event}` accepted in `{f.source}`"
    else:
        return None
    return Transition(source=f.source, target=target, event=f.event, guard=f.guard, actions=actions,
                      key=f"{f.source}.{f.event}->{target}~forbidden", loc=f.loc), what


def _compares(expr: Expr) -> list[Compare]:
    return [n for n in expr.walk() if isinstance(n, Compare)]


def _replace_compare(expr: Expr, k: int, new: Compare) -> Expr:
    """`expr` with its k-th comparison (in walk order) replaced."""
    count = [-1]

    def go(node: Expr) -> Expr:
        if isinstance(node, Compare):
            count[0] += 1
            if count[0] == k:
                return new
            return dataclasses.replace(node, left=go(node.left), right=go(node.right))
        if isinstance(node, Not):
            return dataclasses.replace(node, operand=go(node.operand))
        if isinstance(node, (And, Or)):
            return dataclasses.replace(node, items=tuple(go(i) for i in node.items))
        if isinstance(node, Member):
            return dataclasses.replace(node, operand=go(node.operand))
        if isinstance(node, Arith):
            return dataclasses.replace(node, left=go(node.left), right=go(node.right))
        return node
    return go(expr)


def _at(t: Transition, node: Expr) -> str:
    return f"{t.loc.file}:{node.line}:{node.column}" if node.line else str(t.loc)


def _action_text(action: Action) -> str:
    return action_text(action)


def _other_value(vtype: ValueType, value: Expr) -> Any:
    """Another value of the type than the assigned literal (or the first value of the type for an expression)."""
    current = value.value if isinstance(value, Lit) else _NONE
    if vtype.kind == "string":  # not FRESH: the search's fresh value must differ from every constant of both models
        return "mbt-changed-value" if current != "mbt-changed-value" else "mbt-changed-value-2"
    for candidate in _type_values(vtype, []):
        if candidate is not None and (current is _NONE or not _same(candidate, current)):
            return candidate
    return _NONE


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


# ------------------------------------------------------------------ the mutant's replayer
def mutant_replayer(base: FsmReplayer, mutant: Mutant) -> FsmReplayer:
    """The original's compiled engine with the mutant's slot rebuilt (and its forbid left out): the slot's
    transitions are the original's, with the changed one replaced, removed, or a new one put first."""
    c0: CompiledFsm = base.c
    c = copy.copy(c0)
    c.model = narrow(mutant.model, FsmModel, "fsm")
    c._slots = {}
    old, new = mutant.data.get("old"), mutant.data["new"]()
    overrides: dict = {}
    for key in mutant.slots or ():
        group = list(c0.by_state_event.get(key, ()))
        if old is not None:
            at = next(k for k, ct in enumerate(group) if ct.t is old)
            if new is None:
                del group[at]
            else:
                group[at] = _compiled(c0, new, group[at])
        elif new is not None:
            group.insert(0, _compiled(c0, new, None))
        overrides[key] = group
    c.by_state_event = ChainMap(overrides, c0.by_state_event)
    removed = mutant.data.get("forbid")
    if removed is not None:
        kept = [cf for cf in c0.forbids if cf.f is not removed]
        c.forbids = kept
        positions = defaultdict(list)
        for position, cf in enumerate(kept):
            positions[(cf.f.source, cf.f.event)].append(position)
        c._forbid_positions = positions
    replayer = FsmReplayer(c)
    replayer.share_names(base)  # which forbid a golden's phrase names is the original's decision, made once
    return replayer


def _compiled(c0: CompiledFsm, t: Transition, like: CompiledTransition | None) -> CompiledTransition:
    """A changed or new transition compiled; it keeps the element indices of the one it replaces (the kill matrix
    reads contradictions, not elements), a new one gets -1."""
    return CompiledTransition(
        t=t, index=like.index if like else -1, guard=compile_expr(t.guard) if t.guard is not None else None,
        conditions=[], actions=[compile_action(a) for a in t.actions],
        param_names=t.params or c0.params[t.event], transition_el=like.transition_el if like else -1,
        branch_el=like.branch_el if like else None, target_el=c0.state_el[t.target],
        assigned=tuple(name for name in c0.model.variables
                       if any(isinstance(a, (Assign, Discard)) and a.target == name for a in t.actions)),
        pairs_after=like.pairs_after if like else {})


def footprint(base: FsmReplayer, case: GoldenCase):
    """The original's run of the case and the slots it steps through."""
    run = base.replay(case, keep_snapshots=True)
    keys = set()
    if run.start is not None:
        state = run.start.state
        for snap in run.snapshots:
            keys.add((state, snap.event))
            state = snap.state
    return run, frozenset(keys)


# ------------------------------------------------------------------ distinguishing search
def distinguish(base: FsmReplayer, replayer: FsmReplayer, mutant: Mutant) -> Distinction:
    """Every single step from a settable configuration in the mutant's slots, on both models: the first that
    differs becomes a witness golden (checked to agree with the original and contradict the mutant)."""
    original: FsmModel = base.model
    model = narrow(mutant.model, FsmModel, "fsm")
    tried, exhaustive = 0, True
    for state, event in sorted(mutant.slots or ()):
        group = [ct.t for ct in itertools.chain(base.c.by_state_event.get((state, event), ()),
                                                replayer.c.by_state_event.get((state, event), ()))]
        # The original's constants (worked out once per model), and those the mutant's slot brings.
        constants = _constants(base) + [n.value for t in group for e in _transition_exprs(t) for n in e.walk()
                                        if isinstance(n, Lit)]
        read = set()
        for t in group:
            for expr in _transition_exprs(t):
                read |= refs(expr)
            # A variable an action sets matters too: its value before the step decides whether a change shows.
            read |= {a.target for a in t.actions if isinstance(a, (Assign, Discard))}
        for f in itertools.chain(original.forbids, model.forbids):
            if f.guard is not None:
                read |= refs(f.guard)
        # Every parameter is tried (a transition may rename them: `on ask(c)` reads `c`, bound by position).
        params = {p.name: p.type for p in original.events[event].params}
        variables = sorted(v for v in read if v in original.variables)
        if any(r.startswith("discarded.") for r in read):
            exhaustive = False  # a precondition cannot set `discarded.X`: the settable steps are not all of them
        names = [("var", v) for v in variables] + [("arg", p) for p in params]
        types = [original.variables[n].type if k == "var" else params[n] for k, n in names]
        if not all(_whole(t) for t in types):
            exhaustive = False  # a large int or a number is tried at its bounds and constants only: a sample
        pools = [_type_values(t, constants) for t in types]
        combos = _combinations(pools)
        if combos is None:
            exhaustive = False
            combos = _sampled(pools, mutant.id)
        for values in combos:
            tried += 1
            pre: dict[str, object] = {"state": state}
            args: dict[str, object] = {}
            for (k, n), v in zip(names, values):
                (pre if k == "var" else args)[n] = v
            witness = _witness(base, replayer, original, mutant, pre, event, args)
            if witness is not None:
                return Distinction(False, f"differs on `{event}` in `{state}` ({_show(pre, args)})", witness)
    if exhaustive:
        return Distinction(True, f"no single step in {_slots_text(mutant)} differs over all {tried} settable "
                                 "configurations and arguments (every later step is the original's)")
    return Distinction(False, f"no difference found in {tried} sampled steps of {_slots_text(mutant)} "
                              "(not proven equivalent)", exhaustive=False)


def _witness(base, replayer, original: FsmModel, mutant: Mutant, pre, event, args) -> dict | None:
    case = GoldenCase(id="probe", precondition=dict(pre), turns=[Turn(event=event, args=dict(args))])
    a, b = base.replay(case, keep_snapshots=True), replayer.replay(case, keep_snapshots=True)
    if a.invalid or a.unbound or b.invalid or b.unbound or not a.snapshots or not b.snapshots:
        return None
    sa, sb = a.snapshots[0], b.snapshots[0]
    same = (sa.state == sb.state and sa.variables == sb.variables and sa.discarded == sb.discarded
            and (sa.transition is None) == (sb.transition is None)
            and [(x.tool, x.args) for x in sa.calls] == [(x.tool, x.args) for x in sb.calls])
    if same:
        return None
    turn: dict[str, Any] = {"event": event}
    if args:
        turn["args"] = dict(args)
    if sa.transition is None:
        turn["rejected"] = True
    turn["assert_state"] = {"state": sa.state, **{k: v for k, v in sa.variables.items()}}
    if sa.discarded != sb.discarded:
        turn["discarded"] = dict(sa.discarded)
    made = {x.tool for x in sa.calls}
    if sa.calls:
        turn["tool_arguments"] = {x.tool: dict(x.args) for x in sa.calls}
    banned = sorted({x.tool for x in sb.calls} - made)
    if banned:
        turn["must_not_call"] = banned
    return {"id": f"kill:{original.name}:{mutant.id}", "model": original.name, "precondition": dict(pre),
            "turns": [turn]}


def _transition_exprs(t: Transition):
    if t.guard is not None:
        yield t.guard
    for a in t.actions:
        if isinstance(a, Assign):
            yield a.value
        elif isinstance(a, ToolCall):
            yield from (v for _, v in a.args)


_CONSTANTS: weakref.WeakKeyDictionary[FsmReplayer, list[object]] = weakref.WeakKeyDictionary()


def _constants(base: FsmReplayer) -> list[object]:
    """The literal values of the original model, worked out once per replayer (and gone with it)."""
    found = _CONSTANTS.get(base)
    if found is None:
        values = dict.fromkeys((type(n.value), n.value) for expr in base.model.expressions()
                               for n in expr.walk() if isinstance(n, Lit))
        found = _CONSTANTS[base] = [v for _, v in values]
    return found


def _whole(vtype: ValueType) -> bool:
    """Whether _type_values gives every value that can behave differently: booleans, enums, strings (only ever
    compared with ==, so the constants and one fresh value stand for all), ints of at most INT_RANGE_LIMIT values."""
    if vtype.kind == "int":
        return vtype.lo is not None and vtype.hi is not None and vtype.hi - vtype.lo < INT_RANGE_LIMIT
    return vtype.kind in ("bool", "enum", "string")


def _type_values(vtype: ValueType, constants: list) -> list:
    if vtype.kind == "bool":
        values: list = [False, True]
    elif vtype.kind == "enum":
        values = list(vtype.values)
    elif vtype.kind == "int":
        lo, hi = vtype.lo, vtype.hi
        if isinstance(lo, int) and isinstance(hi, int) and hi - lo < INT_RANGE_LIMIT:  # an int's bounds are ints
            values = list(range(lo, hi + 1))
        else:
            near = {0} | {b for b in (lo, hi) if b is not None}
            for c in constants:
                if isinstance(c, int) and not isinstance(c, bool):
                    near |= {c - 1, c, c + 1}
            values = sorted(v for v in near if (lo is None or v >= lo) and (hi is None or v <= hi))
    elif vtype.kind == "string":
        values = sorted({c for c in constants if isinstance(c, str)}) + [FRESH]
    else:  # number
        step = vtype.step
        near = {b for b in (vtype.lo, vtype.hi) if b is not None}
        for c in constants:
            if not isinstance(c, (bool, str)) and c is not None:
                near |= {c - step, c, c + step}
        values = sorted(near) or [0]
    if vtype.optional:
        values.append(None)
    return values


def _combinations(pools: list[list]):
    total = 1
    for p in pools:
        total *= len(p)
    return itertools.product(*pools) if total <= MAX_STEPS else None


def _sampled(pools: list[list], seed: str):
    rng = random.Random(zlib.crc32(seed.encode()))
    return [tuple(rng.choice(p) for p in pools) for _ in range(MAX_STEPS)]


def _show(pre: dict, args: dict) -> str:
    parts = [f"{k} = {v!r}" for k, v in pre.items() if k != "state"] + [f"{k} = {v!r}" for k, v in args.items()]
    return ", ".join(parts) or "any values"


def _slots_text(mutant: Mutant) -> str:
    return ", ".join(f"`{e}` in `{s}`" for s, e in sorted(mutant.slots or ()))
