"""Explicit-state exploration of an FSM: every configuration reachable within a depth bound, breadth first.

Event parameters need finite candidate values. Strings are only ever compared for equality (the DSL has no string
operators), so a run's behaviour depends only on which values are equal: the candidates for a string parameter are
the string constants of the model, the values the configuration already holds, and one fresh value. That choice is
complete up to renaming (data independence), so strings never make the exploration miss a behaviour. Enums and
booleans take every value; an int parameter takes its whole range when it has at most INT_RANGE_LIMIT values, else
its bounds, the constants of the model and the variables' current values (each with its neighbours) — then the
exploration is a sample, and says so.

Steps use the replay engine's own compiled guards and actions (compile_expr, engine/fsm.compile_action), so a step
means exactly what it means when a golden is replayed: the first transition whose guard holds, its actions left to
right. (Not the whole CompiledFsm: its element indexes cost seconds on a model of thousands of transitions.)
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mbt.engine.fsm import compile_action
from mbt.engine.temporal import CallAt, Position
from mbt.goldens.replay_invariant import fire
from mbt.model.expr import Expr, Lit, compile_expr
from mbt.model.fsm import Assign, FsmModel, ToolCall, Transition
from mbt.model.types import ValueType

INT_RANGE_LIMIT = 64  # int parameters with at most this many values are enumerated whole
MAX_CONFIGURATIONS = 200_000  # the exploration stops (and says so) beyond this many configurations

Config = tuple[str, tuple]


@dataclass(slots=True)
class Edge:
    """One accepted event from a configuration: what fired, what it called, where it leads."""

    id: int
    event: str
    args: dict[str, Any]
    transition: str  # the transition's key
    calls: list[CallAt]
    target: int


@dataclass
class StateGraph:
    """The configurations reachable from the initial one within `depth` steps, and the steps between them."""

    model: FsmModel
    depth: int
    names: list[str]  # variables, then `discarded.X`, in the order of a configuration's values
    nodes: list[Config] = field(default_factory=list)
    level: list[int] = field(default_factory=list)  # the fewest steps that reach each node
    edges: list[list[Edge] | None] = field(default_factory=list)  # None: not expanded (at the bound)
    edge_count: int = 0
    exhausted: bool = False  # every reachable configuration was expanded (the bound was never reached)
    sampled: bool = False  # some int parameter was sampled rather than enumerated
    truncated: bool = False  # stopped at MAX_CONFIGURATIONS

    @property
    def complete(self) -> bool:
        """True when the graph is every run of the model, of any length."""
        return self.exhausted and not self.sampled and not self.truncated

    _envs: dict[int, dict[str, Any]] = field(default_factory=dict)
    _positions: dict[int, Position] = field(default_factory=dict)

    def env(self, node: int) -> dict[str, Any]:
        """The node's variables and `state`; built once and shared (readers never change it)."""
        env = self._envs.get(node)
        if env is None:
            state, values = self.nodes[node]
            env = self._envs[node] = dict(zip(self.names, values))
            env["state"] = state
        return env

    def position(self, node: int, edge: Edge | None = None) -> Position:
        """The position reached by `edge` (or the node itself, for the start); built once for every invariant."""
        if edge is None:
            return Position(self.env(node))
        found = self._positions.get(edge.id)
        if found is None:
            found = self._positions[edge.id] = Position(self.env(edge.target), edge.event, edge.args, edge.calls)
        return found

    def terminal(self, node: int) -> bool:
        """A run that ends here is complete: a final state, or nothing is accepted any more."""
        if self.model.states[self.nodes[node][0]].final:
            return True
        edges = self.edges[node]
        return edges is not None and not edges

    def variables(self, node: int) -> dict[str, Any]:
        return dict(zip(self.names, self.nodes[node][1]))


def constants(model: FsmModel, extra: Iterable[Expr] = ()) -> list[Any]:
    """Every literal written in the model's expressions (and in `extra`), in a stable order."""
    exprs: list[Expr] = list(extra)
    for t in model.transitions:
        if t.guard is not None:
            exprs.append(t.guard)
        for a in t.actions:
            if isinstance(a, Assign):
                exprs.append(a.value)
            elif isinstance(a, ToolCall):
                exprs.extend(v for _, v in a.args)
    for f in model.forbids:
        if f.guard is not None:
            exprs.append(f.guard)
        if f.effect is not None and f.effect.condition is not None:
            exprs.append(f.effect.condition)
    seen: dict[tuple, None] = {}
    for expr in exprs:
        for node in expr.walk():
            if isinstance(node, Lit) and node.value is not None:
                seen.setdefault((type(node.value).__name__, node.value), None)
    return [value for _, value in seen]


@dataclass(slots=True)
class StepRule:
    """One transition ready to fire: what mbt.goldens.replay_invariant.fire needs, and its guard."""

    t: Transition
    guard: Callable | None
    actions: list[Callable[[dict, dict, list], None]]
    param_names: list[str]


class Explorer:
    """Builds the StateGraph of one FSM; `constants_from` adds the literals of the invariants being checked.
    `within_types`: a step that would leave a variable's declared type (`n++` past `int[0..5]`) is not taken, as
    the witness search never takes it (its solver bounds every variable by its type): the suites' exact search
    explores the runs the suites can have, and a counter no guard bounds no longer makes its space endless."""

    def __init__(self, model: FsmModel, constants_from: Iterable[Expr] = (), within_types: bool = False):
        self.model = model
        self.within_types = within_types
        self.rules: dict[tuple[str, str], list[StepRule]] = {}
        for t in model.transitions:  # declaration order: the first rule whose guard holds fires
            names = t.params or [p.name for p in model.events[t.event].params]
            self.rules.setdefault((t.source, t.event), []).append(StepRule(
                t, compile_expr(t.guard) if t.guard is not None else None,
                [compile_action(a) for a in t.actions], names))
        self.names = list(model.variables) + [f"discarded.{n}" for n in model.discardable]
        found = constants(model, constants_from)
        self.strings = sorted({c for c in found if isinstance(c, str)})
        self.ints = sorted({c for c in found if isinstance(c, int) and not isinstance(c, bool)})
        self.params = {name: [(p.name, p.type) for p in e.params] for name, e in model.events.items()}
        self.events = list(model.events)
        self.string_vars = [i for i, n in enumerate(self.names) if self._type(n).kind == "string"]
        self.int_vars = [i for i, n in enumerate(self.names) if self._type(n).kind == "int"]
        self.sampled = False
        self._static: dict[str, list[dict[str, Any]]] = {}

    def _type(self, name: str) -> ValueType:
        return self.model.variables[name.removeprefix("discarded.")].type

    def initial(self) -> Config:
        variables = {name: v.initial for name, v in self.model.variables.items()}  # as CompiledFsm.initial_config
        return self.model.initial_state, tuple(variables.get(n) for n in self.names)

    # ---- candidate arguments
    def candidates(self, name: str, vtype: ValueType, values: tuple) -> list[Any]:
        kind = vtype.kind
        if kind == "bool":
            found: list[Any] = [False, True]
        elif kind == "enum":
            found = list(vtype.values)
        elif kind == "int":
            lo, hi = _int_bounds(vtype)
            if hi - lo + 1 <= INT_RANGE_LIMIT:
                found = list(range(lo, hi + 1))
            else:
                self.sampled = True
                near = {lo, hi, 0}
                for c in itertools.chain(self.ints, (values[i] for i in self.int_vars)):
                    if isinstance(c, int):
                        near.update((c - 1, c, c + 1))
                found = sorted(n for n in near if lo <= n <= hi)
        else:
            held = {values[i] for i in self.string_vars if isinstance(values[i], str)}
            taken = held | set(self.strings)
            fresh = next(f"{name}{k}" for k in itertools.count(1) if f"{name}{k}" not in taken)
            # Fresh first: the first (so shown) counterexample then uses readable made-up values where any will do.
            found = [fresh, *sorted(held - set(self.strings)), *self.strings]
        return found + [None] if vtype.optional else found

    def arguments(self, event: str, values: tuple) -> list[dict[str, Any]]:
        cached = self._static.get(event)
        if cached is not None:
            return cached
        params = self.params[event]
        pools = [self.candidates(name, vtype, values) for name, vtype in params]
        names = [name for name, _ in params]
        found = [dict(zip(names, combo)) for combo in itertools.product(*pools)]
        if all(_static(vtype) for _, vtype in params):
            self._static[event] = found  # the same for every configuration: built once
        return found

    # ---- steps
    def successors(self, config: Config) -> list[tuple[str, dict, str, list[CallAt], Config]]:
        state, values = config
        base = dict(zip(self.names, values))
        out = []
        for event in self.events:
            group = self.rules.get((state, event))
            if not group:
                continue
            declared = [name for name, _ in self.params[event]]
            for args in self.arguments(event, values):
                taken = None
                for ct in group:
                    local = base
                    if args:
                        local = dict(base)
                        for d, name in zip(declared, ct.param_names):
                            local[name] = args[d]
                    if ct.guard is None or ct.guard(local):
                        taken = ct
                        break
                if taken is None:
                    continue  # refused: not a step of the system
                variables = dict(base)
                calls = fire(taken, variables, args, declared)
                if self.within_types and not all(self._type(n).admits(variables[n]) for n in self.model.variables):
                    continue  # leaves the declared range: no run of a suite takes it
                target = (taken.t.target, tuple(variables[n] for n in self.names))
                out.append((event, args, taken.t.key, calls, target))
        return out

    def explore(self, depth: int, limit: int = MAX_CONFIGURATIONS) -> StateGraph:
        graph = StateGraph(self.model, depth, self.names)
        start = self.initial()
        index = {start: 0}
        graph.nodes.append(start)
        graph.level.append(0)
        graph.edges.append(None)
        queue = deque([0])
        while queue:
            node = queue.popleft()
            if self.model.states[graph.nodes[node][0]].final:
                graph.edges[node] = []  # a final state ends the conversation
                continue
            if graph.level[node] >= depth:
                continue  # at the bound: left unexpanded
            edges = []
            for event, args, key, calls, target in self.successors(graph.nodes[node]):
                found = index.get(target)
                if found is None:
                    if len(graph.nodes) >= limit:
                        graph.truncated = True  # this node keeps its edges so far; nothing else is expanded
                        continue
                    found = index[target] = len(graph.nodes)
                    graph.nodes.append(target)
                    graph.level.append(graph.level[node] + 1)
                    graph.edges.append(None)
                    queue.append(found)
                edges.append(Edge(graph.edge_count, event, args, key, calls, found))
                graph.edge_count += 1
            graph.edges[node] = edges
            if graph.truncated:
                break
        graph.exhausted = all(e is not None for e in graph.edges)
        graph.sampled = self.sampled
        return graph


def _int_bounds(vtype: ValueType) -> tuple[int, int]:
    """The bounds of an FSM's int, which the DSL always writes `int[LOW..HIGH]`."""
    lo, hi = vtype.lo, vtype.hi
    if not isinstance(lo, int) or not isinstance(hi, int):
        raise ValueError(f"`{vtype.text()}` is not a bounded int")
    return lo, hi


def _static(vtype: ValueType) -> bool:
    """Candidates of this type do not depend on the configuration (strings and sampled ints do)."""
    if vtype.kind != "int":
        return vtype.kind in ("bool", "enum")
    lo, hi = _int_bounds(vtype)
    return hi - lo + 1 <= INT_RANGE_LIMIT


def explore(model: FsmModel, depth: int, constants_from: Iterable[Expr] = ()) -> StateGraph:
    return Explorer(model, constants_from).explore(depth)
