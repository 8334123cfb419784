"""Witnesses: the shortest event run from the initial state (or a declared precondition) that covers an element.

Search is A* over run prefixes: the cost is the number of steps, the heuristic the guard-free distance to a state the
element's last step can start from (admissible, so the first run found is a shortest one). Each prefix carries its
path condition; z3 prunes prefixes whose guards cannot all hold, and its answer for the finished run is checked, and
made canonical, by running the plan concretely. Search is bounded by `max_depth` steps and `max_paths` expanded
prefixes, so it always terminates, and says which bound it hit.
"""

from __future__ import annotations

import heapq
import itertools
from bisect import bisect_right
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from mbt.analysis.fsm_checks import FsmChecker
from mbt.analysis.smt import constants_of
from mbt.generate.enforced import EnforcedCalls
from mbt.generate.symbolic import (
    REFUSED,
    Constraint,
    PlannedStep,
    SymbolicFsm,
    concrete,
    split,
    store_key,
    symbolic_key,
)
from mbt.generate.targets import Suffix, Target, fsm_targets
from mbt.model.fsm import FsmModel
from mbt.model.policy import Enforcement, PolicyModel
from mbt.model.types import ValueType

DEFAULT_MAX_DEPTH = 40
DEFAULT_MAX_PATHS = 5000


@dataclass
class Start:
    """Where runs begin: the initial configuration, or a declared precondition (state and values) on top of it."""

    precondition: dict[str, Any]
    state: str
    store: dict[str, Any]


@dataclass
class Witness:
    """A concrete run covering `element`: from `start`, fire each (event, arguments) in turn."""

    element: str
    start: Start
    plan: list[PlannedStep]
    args: list[dict[str, Any]]

    @property
    def events(self) -> list[tuple[str, dict[str, Any]]]:
        return [(step.event, args) for step, args in zip(self.plan, self.args)]


@dataclass
class NoWitness:
    """Why an element has no witness. `reason` is one of: infeasible, unusable, unreachable, unsatisfiable, depth,
    limit, sampled, model, unknown, replay (user guide, section 6). Only an exhaustive search says infeasible or
    unsatisfiable; one over sampled candidates that finds nothing says sampled."""

    element: str
    reason: str
    message: str


@dataclass
class _Node:
    state: str
    store: dict[str, Any]
    constraints: tuple[Constraint, ...]
    pending: int  # how many of the last constraints are not checked yet
    depth: int
    parent: _Node | None = None  # with the step into this node and its arguments (symbols, or values)
    step: PlannedStep | None = None
    start: Start | None = None  # where the run began (None: a detour's root, which continues a run being built)
    args: dict[str, Any] | None = None
    key: Hashable | None = None  # the configuration's key when every value is concrete (set once searched)

    def steps_since(self, root: _Node | None = None) -> list[tuple[PlannedStep, dict[str, Any]]]:
        """The steps into the nodes after `root` (None: the start) up to this one, with their arguments, in order."""
        out: list[tuple[PlannedStep, dict[str, Any]]] = []
        cursor = self
        while cursor is not root and cursor.parent is not None:
            if cursor.step is None or cursor.args is None:
                raise ValueError("a node made by a step is given the step and its arguments")
            out.append((cursor.step, cursor.args))
            cursor = cursor.parent
        out.reverse()
        return out


@dataclass
class _Finish:
    conds: list[Constraint]
    arguments: list[dict[str, Any]]
    state: str
    store: dict[str, Any]


@dataclass
class Detour:
    """Steps continuing a run (arguments symbolic), the constraints they add, and where they end."""

    steps: list[tuple[PlannedStep, dict[str, Any]]]
    constraints: list[Constraint]
    state: str
    store: dict[str, Any]


@dataclass
class _Search:
    found: tuple[_Node, Suffix, _Finish] | None = None
    cut_by_depth: bool = False
    cut_by_limit: bool = False
    unknown: bool = False
    paths: int = 0
    max_paths: int = 0


class WitnessFinder:
    """Finds witnesses for the elements of one FSM model; reuse one finder for many elements (caches are shared).

    `enforcements`: the policies that enforce the model's tool calls (mbt/generate/enforced.py): a witness's calls of
    their tools make valid requests, and with `permitted` requests they permit, as replaying its stub on them asks."""

    def __init__(self, model: FsmModel, preconditions: list[dict[str, Any]] | None = None,
                 max_depth: int = DEFAULT_MAX_DEPTH, max_paths: int = DEFAULT_MAX_PATHS,
                 enforcements: list[tuple[PolicyModel, Enforcement]] | None = None, permitted: bool = True):
        self.model = model
        self.preconditions = list(preconditions or [])
        self.max_depth = max_depth
        self.max_paths = max_paths
        self.enforcements = list(enforcements or [])
        self.permitted = permitted
        self.engine = SymbolicFsm(self.model)
        if self.enforcements:
            self.engine.enforced = EnforcedCalls(self.engine, self.enforcements, self.permitted)
        self.targets = fsm_targets(self.model, self.engine)
        self.starts = [Start({}, *self.engine.start())]
        for pre in self.preconditions:
            self.starts.append(Start(dict(pre), *self.engine.start(pre)))
        self.edge_ok = usable_transitions(self.model)
        self._reverse: dict[str, list[str]] = {s: [] for s in self.model.states}
        # Per state, the transitions a run can take from it (guard satisfiable) and their targets.
        self.number = {s: k for k, s in enumerate(self.model.states)}  # what distances are indexed by
        self.usable_out: dict[str, list[tuple[int, int]]] = {
            s: [(i, self.number[self.engine.transitions[i].target]) for i in self.engine.outgoing[s]
                if self.edge_ok[i]]
            for s in self.model.states}
        forward: dict[str, list[str]] = {s: [] for s in self.model.states}
        for i, t in enumerate(self.model.transitions):
            if self.edge_ok[i]:
                self._reverse[t.target].append(t.source)
                forward[t.source].append(t.target)
        self.reachable = _bfs({s.state for s in self.starts}, forward)
        self._backward_graph = _Graph(self.number, self._reverse)
        self._forward_graph = _Graph(self.number, forward)
        self._distances: dict[frozenset[str], list[int]] = {}
        # Per target's sources (None: any state), each state's steps cheapest first (_Frontier._successors): the
        # searches for one target, and for targets reached from the same states, share them.
        self._successor_lists: dict[frozenset[str] | None, dict[str, list[tuple[int, int, int]]]] = {}
        constants = constants_of(self.model.expressions())
        self._candidates: dict[tuple[str, str], list[Any]] = {}
        self._constants = constants
        self._atlas: Atlas | None = None
        self._forward = forward
        self._from_starts: list[int] | None = None
        self._searches: dict[tuple[str, bool, int], _Frontier] = {}
        self._steps: dict[tuple[Hashable, int, int], Any] = {}  # (configuration key, transition, depth): _step

    # ------------------------------------------------------------ entry point
    def find(self, element: str, max_paths: int | None = None) -> Witness | NoWitness:
        target = self.targets.get(element)
        if target is None:
            return NoWitness(element, "unusable", "not an element of this model")
        if target.unusable:
            return NoWitness(element, "unusable", target.unusable)
        if target.sources is not None and not (target.sources & self.reachable):
            names = ", ".join(f"`{s}`" for s in sorted(target.sources))
            where = "the initial state" + (" or a declared precondition" if len(self.starts) > 1 else "")
            return NoWitness(element, "unreachable",
                             f"unreachable: no path from {where} leads to {names}, even ignoring guards")
        for suffixes in ([target.preferred] if target.preferred is not None else []) + [target.suffixes]:
            # The atlas first: a run it has at the guard-free lower bound is a shortest one; a longer one bounds
            # the search, which then only looks for something shorter (and proves there is none when it ends).
            quick = self._from_atlas(target, suffixes)
            if quick is not None and quick[0].depth + target.length <= (self._guard_free_length(target) or 0):
                return self._witness(target, *quick)
            limit = quick[0].depth + target.length - 1 if quick is not None else None
            search = self._search(target, suffixes, limit=limit, max_paths=max_paths)
            if search.found is not None:
                return self._witness(target, *search.found)
            if quick is not None:
                return self._witness(target, *quick)
        return self._failure(target, search)

    # ------------------------------------------------------------ the atlas
    @property
    def atlas(self) -> Atlas:
        if self._atlas is None:
            self._atlas = Atlas(self)
        return self._atlas

    def _from_atlas(self, target: Target, suffixes):
        """The shortest run from the atlas's configurations at the element's source states that ends with one of
        `suffixes` (None when it has none)."""
        result = _Search()
        for node in self.atlas.at(target.sources):
            if node.depth + target.length > self.max_depth:
                break
            for suffix in suffixes(node.state):
                done = self._finish(node, suffix, result)
                if done is not None:
                    return node, suffix, done
        return None

    # ------------------------------------------------------------ search
    def distances(self, sources: frozenset[str] | None) -> list[int] | None:
        """Guard-free steps from each state (by its number) to the nearest of `sources`, -1 where none is reached
        (None: every state is one)."""
        if sources is None:
            return None
        found = self._distances.get(sources)
        if found is None:
            found = self._distances[sources] = self._backward_graph.distances(sources)
        return found

    def _roots(self) -> list[_Node]:
        return [_Node(start.state, start.store, (), 0, 0, start=start) for start in self.starts]

    def _search(self, target: Target, suffixes, roots: list[_Node] | None = None, limit: int | None = None,
                max_paths: int | None = None) -> _Search:
        """A* from `roots` (default: the starts) to a run of at most `limit` steps ending with one of `suffixes`.

        A search from the starts is a function of (element, suffixes, limit) and of its budget, and a suite asks
        the same one again and again (a repair with a small budget, the last chance with the full one, once per
        attempt): it is kept and goes on where it stopped, with the steps a fresh search would take after redoing
        these (whose solver questions are all answered from the cache, so the solver sees the same questions)."""
        limit = self.max_depth if limit is None else limit
        max_paths = self.max_paths if max_paths is None else max_paths
        if roots is not None:
            return _Frontier(self, target, suffixes, roots, limit).run(max_paths)
        key = (target.element, suffixes is target.preferred, limit)
        frontier = self._searches.get(key)
        if frontier is None or not frontier.answers(max_paths):
            frontier = self._searches[key] = _Frontier(self, target, suffixes, self._roots(), limit)
        return frontier.run(max_paths)

    def _finish(self, node: _Node, suffix: Suffix, result: _Search) -> _Finish | None:
        """Running `suffix` after the prefix `node`: its constraints, arguments and end, or None when impossible."""
        engine = self.engine
        state, store, conds, arguments = node.state, node.store, [], []
        for k, step in enumerate(suffix):
            args = engine.arguments(node.depth + 1 + k, step.event)
            arguments.append(args)
            if isinstance(step.outcome, int):
                found = engine.takes(store, step.outcome, args)
            elif step.outcome == REFUSED:
                found = engine.refuses(store, state, step.event, args)
            else:  # ANY: whatever the model does
                found = []
            for extra in step.extras:
                found += extra.build(engine, store, args)
            ok, symbolic = split(found)
            if not ok:
                return None
            conds += symbolic
            if isinstance(step.outcome, int):
                store = engine.apply(store, step.outcome, args)
                state = engine.transitions[step.outcome].target
        status = engine.satisfiable(node.constraints, conds)
        if status == "unknown":
            result.unknown = True
        return _Finish(conds, arguments, state, store) if status == "sat" else None

    def detour(self, element: str, state: str, store: dict[str, Any], constraints: list[Constraint], depth: int,
               extra: int) -> Detour | None:
        """The shortest continuation (at most `extra` steps) of a run being built (at `depth` steps, in `state` with
        `store` under `constraints`) that covers `element`; its arguments stay symbolic."""
        target = self.targets.get(element)
        if target is None or target.unusable:
            return None
        root = _Node(state, store, tuple(constraints), 0, depth)
        search = self._search(target, target.suffixes, [root], depth + extra, max_paths=200)
        if search.found is None:
            return None
        node, suffix, done = search.found
        steps = node.steps_since(root) + list(zip(suffix, done.arguments))
        return Detour(steps, list(node.constraints[len(constraints):]) + done.conds, done.state, done.store)

    # ------------------------------------------------------------ results
    def _witness(self, target: Target, node: _Node, suffix: Suffix, done: _Finish) -> Witness | NoWitness:
        engine = self.engine
        trail = node.steps_since()
        plan = [step for step, _ in trail] + list(suffix)
        names = [f"@{k}:{step.event}:{p}" for k, step in enumerate(plan, start=1) for p in engine.declared[step.event]]
        values = engine.solve(list(node.constraints) + done.conds, names)
        if values is None:
            return NoWitness(target.element, "unknown", "the solver could not produce values for the run (timeout)")
        given: list[dict[str, Any] | None] = [known if all(concrete(v) for v in known.values()) else None
                                              for _, known in trail] + [None] * len(suffix)
        # Steps the atlas took with concrete arguments keep them; the rest come from the solver.
        args = [dict(known) if (known := given[k - 1]) is not None else
                {p: values[f"@{k}:{step.event}:{p}"] for p in engine.declared[step.event]}
                for k, step in enumerate(plan, start=1)]
        start = node.start
        if start is None:
            raise ValueError("a witness is searched from the starts")
        if not self.holds(start, plan, args):
            return NoWitness(target.element, "replay", "the solver's values do not satisfy the run on mbt's evaluator "
                                                       "(an mbt bug, please report it)")
        return Witness(target.element, start, plan, self.canonical(start, plan, args))

    def _failure(self, target: Target, search: _Search) -> NoWitness:
        element = target.element
        if search.cut_by_limit:
            return NoWitness(element, "limit", f"search limit: {search.max_paths:,} run prefixes explored without a run "
                                               f"ending with {target.describe} whose guards all hold (raise "
                                               "--max-paths)")
        if search.cut_by_depth:
            shortest = self._guard_free_length(target)
            hint = f" (ignoring guards it takes {shortest} steps)" if shortest is not None else ""
            return NoWitness(element, "depth", f"no witness within --max-depth {self.max_depth}{hint}: no run of at most "
                                               f"{self.max_depth} steps ends with {target.describe} with every guard "
                                               "holding; raise --max-depth")
        if search.unknown:
            return NoWitness(element, "unknown", "the solver could not decide some runs (timeout)")
        broken = "breaks a guard on the way"
        enforced = self.engine.enforced
        if enforced is not None:
            broken += (f", or calls a tool with a request that {' or '.join(enforced.names())} "
                       + ("would not permit" if enforced.permitted else "cannot take (a value outside its range)"))
        return NoWitness(element, "unsatisfiable", f"unsatisfiable: every run that ends with {target.describe} "
                                                   f"{broken} (all runs explored)")

    def _guard_free_length(self, target: Target) -> int | None:
        """The fewest steps any run covering the target takes, ignoring guards (a lower bound): one breadth-first
        walk from the starts serves every target."""
        if target.sources is None:
            return target.length
        if self._from_starts is None:
            self._from_starts = self._forward_graph.distances(frozenset(s.state for s in self.starts))
        number, steps = self.number, self._from_starts
        options = [steps[number[s]] for s in target.sources if s in number and steps[number[s]] >= 0]
        return min(options) + target.length if options else None

    # ------------------------------------------------------------ concrete check and canonical values
    def holds(self, start: Start, plan: list[PlannedStep], args: list[dict[str, Any]]) -> bool:
        """Run the plan concretely: every planned outcome and extra condition holds with these arguments."""
        engine = self.engine
        state, store = start.state, start.store
        for step, values in zip(plan, args):
            if isinstance(step.outcome, int):
                if engine.transitions[step.outcome].source != state:
                    return False
                conds = engine.takes(store, step.outcome, values)
            elif step.outcome == REFUSED:
                conds = engine.refuses(store, state, step.event, values)
            else:  # ANY: whatever the model does
                conds = []
            for extra in step.extras:
                conds = conds + extra.build(engine, store, values)
            if not all(c is True for c in conds):
                return False
            if isinstance(step.outcome, int):
                store = engine.apply(store, step.outcome, values)
                state = engine.transitions[step.outcome].target
        return True

    def canonical(self, start: Start, plan: list[PlannedStep], args: list[dict[str, Any]],
                  only: set[tuple[int, str]] | None = None) -> list[dict[str, Any]]:
        """Replace the solver's values by the first of a fixed list of readable candidates that keeps the run valid.

        The solver's choice can depend on what else it was asked before; this makes the output depend only on the
        model (byte-identical files) and gives readable values (`email-1` rather than `\\u{0}`).
        """
        args = [dict(a) for a in args]
        types = self.engine.param_types
        for k, step in enumerate(plan):
            for name, vtype in types[step.event].items():
                if only is not None and (k, name) not in only:
                    continue
                current = args[k][name]
                # Later arguments equal to this one follow it: runs often need two arguments to be equal.
                same = [(j, other) for j in range(k, len(plan)) for other, t in types[plan[j].event].items()
                        if t == vtype and _same(args[j][other], current)]
                for candidate in self.candidates(name, vtype):
                    if _same(candidate, current):
                        break
                    trial = [dict(a) for a in args]
                    for j, other in same:
                        trial[j][other] = candidate
                    if self.holds(start, plan, trial):
                        args = trial
                        break
        return args

    def candidates(self, name: str, vtype: ValueType) -> list[Any]:
        key = (name, vtype.text())
        found = self._candidates.get(key)
        if found is None:
            found = self._candidates[key] = candidate_values(name, vtype, self._constants)
        return found


def candidate_values(name: str, vtype: ValueType, constants: list[Any]) -> list[Any]:
    """Readable values of a type, in a fixed order: what canonical witnesses are made of."""
    if vtype.kind == "bool":
        values: list[Any] = [False, True]
    elif vtype.kind == "int":
        lo, hi = vtype.lo, vtype.hi
        if lo is None or hi is None:
            raise ValueError(f"`{name}`: an FSM's int has bounds (int[lo..hi])")
        numbers: set[int | Decimal] = {0, 1, -1, lo, hi}
        for c in constants:
            if isinstance(c, int) and not isinstance(c, bool):
                numbers.update((c - 1, c, c + 1))
        values = sorted((n for n in numbers if lo <= n <= hi), key=lambda n: (abs(n), n))
    elif vtype.kind == "enum":
        values = list(vtype.values)
    else:
        texts = [c for c in constants if isinstance(c, str)]
        values = list(dict.fromkeys([f"{name}-1", f"{name}-2", f"{name}-3", "", *texts]))
    return values + [None] if vtype.optional else values


def usable_transitions(model: FsmModel) -> list[bool]:
    """For each transition: can its guard hold at all (z3, cached per guard)? Edges that cannot are never taken."""
    checker = FsmChecker(model)
    return [t.guard is None or checker.can_hold(t.guard, checker.transition_renames(t)) != "unsat"
            for t in model.transitions]


def _bfs(starts: set[str], adjacency: dict[str, list[str]]) -> set[str]:
    seen, queue = set(starts), deque(sorted(starts))
    while queue:
        for nxt in adjacency[queue.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


class _Graph:
    """Adjacency lists over state numbers, for breadth-first distances: a search asks for the distances to the
    element's source states, a suite for thousands of different ones, and lists of numbers walk several times
    faster than dictionaries of names."""

    def __init__(self, number: dict[str, int], adjacency: dict[str, list[str]]):
        self.number = number
        self.next: list[list[int]] = [[] for _ in number]
        for name, k in number.items():
            self.next[k] = [number[n] for n in adjacency[name]]

    def distances(self, sources: frozenset[str]) -> list[int]:
        """Steps from the nearest of `sources` to each state (by number), -1 where none is reached (names that are
        not states are left out)."""
        dist = [-1] * len(self.next)
        frontier = [self.number[s] for s in sources if s in self.number]
        for k in frontier:
            dist[k] = 0
        d = 0
        nexts = self.next
        while frontier:
            d += 1
            following = []
            for k in frontier:
                for n in nexts[k]:
                    if dist[n] < 0:
                        dist[n] = d
                        following.append(n)
            frontier = following
        return dist


def _first(entry: tuple[int, int, int]) -> int:
    return entry[0]


def _same(a: Any, b: Any) -> bool:
    return a == b and type(a) is type(b)


class _Frontier:
    """One A* search, resumable: its open list, closed keys and what it has seen so far. `run(max_paths)` returns
    what a fresh search with that budget returns, going on from where an earlier, smaller budget stopped.

    The open list holds (estimate, -depth, counter, position, node, None, 0, 0) for the roots, and for the steps not
    taken yet one entry per expanded node: (estimate, -depth, counter, position, parent, successors, j, k), the
    parent's j-th cheapest step of the k within the depth limit. Popping it pushes the (j+1)-th, so a node's steps
    enter the open list one at a time, in the order they would leave it (most never do), and a step's node is made
    only when the search gets to it. The order of the pops is that of one entry per step keyed (estimate, -depth,
    counter of the expansion, position among the node's steps): the same search, without the pushes.
    """

    def __init__(self, finder: WitnessFinder, target: Target, suffixes, roots: list[_Node], limit: int):
        self.finder, self.target, self.suffixes, self.limit = finder, target, suffixes, limit
        self.dist = finder.distances(target.sources)
        self.heap: list | None = []
        self.counter = 0
        self.closed: set | None = set()
        self.held: _Node | None = None  # popped and counted when the budget ran out; not looked at yet
        self.state = _Search()  # flags and paths so far; `found` once found
        self.done = False  # found, or nothing left to explore
        length = target.length
        for node in roots:
            if self.dist is None:
                hv = length
            elif self.dist[finder.number[node.state]] >= 0:
                hv = self.dist[finder.number[node.state]] + length
            else:
                continue
            heapq.heappush(self.heap, (node.depth + hv, -node.depth, self.counter, 0, node, None, 0, 0))
            self.counter += 1
        self.successors: dict[str, list[tuple[int, int, int]]] | None = \
            finder._successor_lists.setdefault(target.sources, {})  # state -> its steps, cheapest first

    def answers(self, max_paths: int) -> bool:
        """Can `run(max_paths)` be answered from here (finished, or stopped by a budget below `max_paths`, or
        stopped past it), rather than by a fresh search (the open list was let go)?"""
        return self.done or self.heap is not None or self.state.paths > max_paths

    def run(self, max_paths: int) -> _Search:
        state = self.state
        if self.done or state.paths > max_paths:
            if state.paths > max_paths:  # a fresh search with this budget stops at path max_paths + 1
                return _Search(cut_by_limit=True, paths=max_paths + 1, max_paths=max_paths)
            return _Search(state.found, state.cut_by_depth, False, state.unknown, state.paths, max_paths)
        self._go(max_paths)
        if not self.done and max_paths >= self.finder.max_paths:
            self.heap = self.closed = self.held = self.successors = None  # no larger budget is asked: let it go
        if self.done:
            self.heap = self.closed = self.successors = None
            return _Search(state.found, state.cut_by_depth, False, state.unknown, state.paths, max_paths)
        return _Search(cut_by_limit=True, paths=state.paths, max_paths=max_paths)

    def _go(self, max_paths: int) -> None:
        finder, target, suffixes, limit = self.finder, self.target, self.suffixes, self.limit
        engine, result, heap, closed, successors = finder.engine, self.state, self.heap, self.closed, self.successors
        assert heap is not None and closed is not None and successors is not None
        length, sources = target.length, target.sources
        transitions = engine.transitions
        steps = finder._steps
        pop, push = heapq.heappop, heapq.heappush
        counter = self.counter
        try:
            while True:
                if self.held is not None:
                    node, self.held = self.held, None
                else:
                    if not heap:
                        self.done = True
                        return
                    _, minus_depth, expansion, _, node, following, j, k = pop(heap)
                    if following is not None:
                        # A step not taken yet: worked out now that the search gets to it. The parent's next
                        # cheapest step takes its place in the open list.
                        if j + 1 < k:
                            d, position, _ = following[j + 1]
                            push(heap, (d - minus_depth + length, minus_depth, expansion, position, node, following,
                                        j + 1, k))
                        i = following[j][2]
                        parent = node
                        depth = parent.depth + 1
                        event = transitions[i].event
                        args = engine.arguments(depth, event)
                        step = steps.get((parent.key, i, depth if args else 0)) if parent.key is not None else None
                        if step is None:
                            step = self._step(parent, i, args, depth)
                        if step is False:
                            continue
                        symbolic, store, key = step
                        if symbolic:
                            status = engine.satisfiable(parent.constraints, symbolic)
                            if status != "sat":
                                result.unknown |= status == "unknown"
                                continue
                            constraints = parent.constraints + symbolic
                        else:
                            constraints = parent.constraints
                        node = _Node(transitions[i].target, store, constraints, 0, depth, parent,
                                     PlannedStep(event, i), parent.start, args, key)
                    else:
                        key = node.key = store_key(node.state, node.store)
                    if key is None:
                        key = symbolic_key(node.state, node.store, node.constraints)
                    if key in closed:
                        continue
                    closed.add(key)
                    result.paths += 1
                    if result.paths > max_paths:
                        self.held = node
                        return
                if sources is None or node.state in sources:
                    if node.depth + length > limit:
                        result.cut_by_depth = True
                    else:
                        for suffix in suffixes(node.state):
                            done = finder._finish(node, suffix, result)
                            if done is not None:
                                result.found = (node, suffix, done)
                                self.done = True
                                return
                depth = node.depth + 1
                following = successors.get(node.state)
                if following is None:
                    following = successors[node.state] = self._successors(node.state)
                if following:
                    room = limit - depth - length  # the most steps a successor may still be from the target
                    k = len(following) if following[-1][0] <= room else bisect_right(following, room, key=_first)
                    if k < len(following):
                        result.cut_by_depth = True
                    if k:
                        # Deeper first among equal estimates: the run closest to done is finished first.
                        d, position, _ = following[0]
                        push(heap, (depth + d + length, -depth, counter, position, node, following, 0, k))
                        counter += 1
        finally:
            self.counter = counter

    def _successors(self, state: str) -> list[tuple[int, int, int]]:
        """The steps out of `state` that can reach the target, as (steps from there to the target, position among
        the state's steps, transition), cheapest first (by position among equals, the order they were pushed in)."""
        dist = self.dist
        usable = self.finder.usable_out[state]
        if dist is None:
            return [(0, position, i) for position, (i, _) in enumerate(usable)]
        return sorted((dist[to], position, i) for position, (i, to) in enumerate(usable) if dist[to] >= 0)

    def _step(self, parent: _Node, i: int, args: dict[str, Any], depth: int):
        """Taking transition i after `parent`: False when a guard is concretely false, else the new symbolic
        conditions, the store after it and its key (None when a value is symbolic). From a concrete configuration
        this depends only on it, the transition and (for the symbols of its arguments) the depth, and every search
        from the starts walks the same configurations near them: kept."""
        engine = self.finder.engine
        ok, symbolic = split(engine.takes(parent.store, i, args))
        if not ok:
            step: Any = False
        else:
            store = engine.apply(parent.store, i, args)
            step = (tuple(symbolic), store, store_key(engine.transitions[i].target, store))
        if parent.key is not None:
            self.finder._steps[(parent.key, i, depth if args else 0)] = step
        return step


class Atlas:
    """Configurations reached by one breadth-first walk from the starts, a few different ones per state, each with the
    run that reached it (arguments chosen concretely from the readable candidates).

    Shared by every element of a model: most elements are covered by a run from here whose length equals the
    guard-free lower bound, which is then a shortest witness without any search of its own.
    """

    def __init__(self, finder: WitnessFinder, per_state: int = 8, combos: int = 8):
        engine = finder.engine
        self._everywhere: list[_Node] | None = None
        self.by_state: dict[str, list[_Node]] = {}
        seen: set = set()
        queue: deque[_Node] = deque()
        for start in finder.starts:
            node = _Node(start.state, start.store, (), 0, 0, start=start)
            key = store_key(node.state, node.store)
            if key in seen:
                continue
            seen.add(key)
            self.by_state.setdefault(node.state, []).append(node)
            queue.append(node)
        limit = finder.max_depth
        while queue:
            node = queue.popleft()
            if node.depth >= limit:
                continue
            for i in engine.outgoing[node.state]:
                if not finder.edge_ok[i]:
                    continue
                t = engine.transitions[i]
                slot = self.by_state.setdefault(t.target, [])
                if len(slot) >= per_state:
                    continue
                names = engine.declared[t.event]
                pools = [finder.candidates(n, engine.param_types[t.event][n]) for n in names]
                for values in itertools.islice(itertools.product(*pools), combos):
                    args = dict(zip(names, values))
                    if not all(c is True for c in engine.takes(node.store, i, args)):
                        continue
                    store = engine.apply(node.store, i, args)
                    key = store_key(t.target, store)
                    if key in seen:
                        continue
                    seen.add(key)
                    child = _Node(t.target, store, (), 0, node.depth + 1, node, PlannedStep(t.event, i), node.start,
                                  args)
                    slot.append(child)
                    queue.append(child)
                    if len(slot) >= per_state:
                        break

    def at(self, states: frozenset[str] | None) -> list[_Node]:
        """The configurations at these states (None: every state), shallowest first."""
        if states is None:
            if self._everywhere is None:
                nodes = [n for found in self.by_state.values() for n in found]
                self._everywhere = sorted(nodes, key=lambda n: n.depth)
            return self._everywhere
        nodes = [n for s in sorted(states) for n in self.by_state.get(s, ())]  # sorted: set order follows the hash seed
        return sorted(nodes, key=lambda n: n.depth) if len(states) > 1 else nodes
