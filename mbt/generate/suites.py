"""Full suites: every transition (or transition pair) covered by the fewest steps, found by min-cost flow.

Strongly connected models get the optimal directed Chinese-postman tour: one closed run from the initial state.
Models with terminal states (most business lifecycles) get a minimum path cover with resets: runs from the initial
state, each ending anywhere, with the fewest total steps and, among those, the fewest runs. Both are min-cost flows
over the graph of transitions that can be taken at all (reachable from the initial state, guard satisfiable); for
transition pairs the same flow runs over the line graph (a node per transition, an edge per pair).

The flow ignores variable values, so its optimum is a lower bound for any suite that respects the guards. The runs
are then executed symbolically: arguments are chosen concretely where a readable value fits, z3 decides the rest; a
step whose guard cannot hold where the tour takes it ends that run, and a witness (mbt.generate.witnesses) starts the
next one there. The report shows both the flow optimum and what the guard-respecting suite costs.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import networkx as nx

from mbt.elements import fsm as ids
from mbt.generate.exact import ExactResult, ExactSuite, exact_search
from mbt.generate.symbolic import Constraint, PlannedStep, SymbolicFsm, concrete, split, store_key
from mbt.generate.witnesses import NoWitness, Start, Witness, WitnessFinder

CRITERIA = ids.SUITE_CRITERIA
_START, _END = "\x00start", "\x00end"  # extra nodes of the flow network; `\x00` cannot occur in a name


_UNSEEN = object()  # a cache's "not asked yet", where None is an answer


@dataclass
class Tour:
    """The guard-free optimum: the flow's figures, and the multigraph whose Euler circuits are the runs."""

    method: str  # "chinese-postman" or "path-cover"
    steps: int
    tests: int
    graph: nx.MultiDiGraph | None = None
    origin: Hashable | None = None
    convert: Callable[[list[Any]], list[int]] | None = None  # from circuit edge keys to transition indexes

    def runs(self, ordering: int = 0) -> list[list[int]]:
        """The runs of one Euler circuit; `ordering` > 0 visits the edges in another (seeded) order, which gives
        another optimal decomposition (its guards may fit better)."""
        if self.graph is None:
            return []
        graph = self.graph
        if ordering:
            edges = list(graph.edges(keys=True))
            random.Random(ordering).shuffle(edges)
            graph = nx.MultiDiGraph()
            graph.add_nodes_from(self.graph.nodes)
            graph.add_edges_from(edges)
        closed = self.method == "chinese-postman"
        runs: list[list[Any]] = []
        current: list[Any] = []
        for u, v, key in nx.eulerian_circuit(graph, source=self.origin, keys=True):
            if closed:
                current.append(_key(key))
            elif u == _END:
                current = []
            elif v == _END:
                runs.append(current)
            else:
                current.append(_key(key))
        if closed:
            runs = [current]
        convert = self.convert or list
        return [convert(r) for r in runs if r]


@dataclass
class SuiteRun:
    """One test of the suite: a concrete run from `start`, and the elements it covers first."""

    start: Start
    plan: list[PlannedStep]
    args: list[dict[str, Any]]
    covers: list[str] = field(default_factory=list)

    @property
    def events(self) -> list[tuple[str, dict[str, Any]]]:
        return [(step.event, a) for step, a in zip(self.plan, self.args)]


@dataclass
class Suite:
    criterion: str
    method: str
    items: int  # elements of the criterion
    lower_bound: int  # elements to cover: every step covers at most one new one
    optimum_steps: int  # the guard-free min-cost-flow optimum
    optimum_tests: int
    runs: list[SuiteRun]
    missing: list[NoWitness]
    strongly_connected: bool
    exact: int | None = None  # configurations explored when the suite is the exact guard-respecting optimum
    # Where the exact search stopped before the optimum: the fewest steps any guard-respecting suite covering what
    # can be covered takes at least (proven), and the search states it reached; else why there is no such figure.
    guarded_lower_bound: int | None = None
    searched: int | None = None
    no_exact: str | None = None

    @property
    def steps(self) -> int:
        return sum(len(r.plan) for r in self.runs)


# ---------------------------------------------------------------- the guard-free optimum


def required_transitions(engine: SymbolicFsm, edge_ok: list[bool], initial: str) -> tuple[list[int], set[str]]:
    """Transitions a suite can cover (reachable from `initial`, guard satisfiable) and the reachable states."""
    reach = {initial}
    frontier = [initial]
    while frontier:
        state = frontier.pop()
        for i in engine.outgoing[state]:
            if edge_ok[i]:
                target = engine.transitions[i].target
                if target not in reach:
                    reach.add(target)
                    frontier.append(target)
    return [i for i, t in enumerate(engine.transitions) if edge_ok[i] and t.source in reach], reach


def optimal_cover(nodes: Sequence[Hashable], edges: Sequence[tuple[Hashable, Hashable, Hashable]], start: Hashable,
                  start_edges: Sequence[tuple[Hashable, Hashable]] | None = None, closed: bool | None = None) -> Tour:
    """Min-cost cover of every edge (u, v, key) by runs from `start`.

    `start_edges` (for line graphs) are extra first steps leaving a virtual start node; they cost one step each.
    `closed`: force a Chinese-postman tour (True) or a path cover (False). None takes the better of the two: a
    closed tour exists only on a strongly connected graph, and runs with resets may still take fewer steps (a run
    need not come back), so both are computed there and the fewer steps win (then the fewer runs).
    """
    if closed is not None:
        return _cover(nodes, edges, start, start_edges, closed)
    opened = _cover(nodes, edges, start, start_edges, False)
    simple = nx.DiGraph()
    ends = {u for u, _, _ in edges} | {v for _, v, _ in edges}  # a set: asking each node of every edge was quadratic
    simple.add_nodes_from(n for n in nodes if n == start or n in ends)
    simple.add_edges_from((u, v) for u, v, _ in edges)
    if start_edges is None and edges and start in simple and nx.is_strongly_connected(simple):
        tour = _cover(nodes, edges, start, start_edges, True)
        if (tour.steps, tour.tests) <= (opened.steps, opened.tests):
            return tour
    return opened


def _cover(all_nodes: Sequence[Hashable], edges: Sequence[tuple[Hashable, Hashable, Hashable]], start: Hashable,
           start_edges: Sequence[tuple[Hashable, Hashable]] | None, closed: bool) -> Tour:
    touched = {start} | {u for u, _, _ in edges} | {v for _, v, _ in edges}
    nodes = [n for n in all_nodes if n in touched]  # an Euler circuit may not leave isolated nodes behind
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(nodes)
    for u, v, key in edges:
        graph.add_edge(u, v, key=key)
    required = len(edges)
    if not edges:
        return Tour("chinese-postman" if closed else "path-cover", 0, 0)
    step_cost = required + 1  # any number of runs costs less than one more step: fewest steps first, then runs
    balance: dict[Hashable, int] = {n: 0 for n in nodes}
    for u, v, _ in edges:
        balance[u] += 1  # a departure needs an arrival: demand = out - in
        balance[v] -= 1
    flow_net = nx.DiGraph()
    for n in nodes:
        flow_net.add_node(n, demand=balance[n])
    representative: dict[tuple[Hashable, Hashable], Hashable] = {}
    for u, v, key in edges:
        if u != v:
            flow_net.add_edge(u, v, weight=step_cost)
            representative.setdefault((u, v), key)
    if not closed:
        # At least one run: one unit of the reset edge is sent up front (a lower bound of 1 on it), else a
        # balanced graph would get a flow of zero runs.
        first = start if start_edges is None else _START
        flow_net.add_node(_END, demand=1)
        if start_edges is not None:
            flow_net.add_node(_START, demand=0)
        flow_net.nodes[first]["demand"] -= 1
        for n in nodes:
            flow_net.add_edge(n, _END, weight=0)
        flow_net.add_edge(_END, first, weight=1)
        for v, key in start_edges or []:
            flow_net.add_edge(_START, v, weight=step_cost)
            representative.setdefault((_START, v), key)
    try:
        _, flow = nx.network_simplex(flow_net)
    except nx.NetworkXUnfeasible:
        raise ValueError("no suite can cover every edge from the start (an mbt bug: edges are reachable)") from None
    if not closed:
        flow[_END][first] += 1
    tours = nx.MultiDiGraph(graph)
    extra_steps = 0
    copies = itertools.count()
    for u, targets in flow.items():
        for v, amount in targets.items():
            if not amount:
                continue
            if v == _END or (u == _END):
                for _ in range(amount):
                    tours.add_edge(u, v, key=_Copy("reset", next(copies)))
                continue
            extra_steps += amount
            for _ in range(amount):
                tours.add_edge(u, v, key=_Copy(representative[(u, v)], next(copies)))
    tour = Tour("chinese-postman" if closed else "path-cover", required + extra_steps, flow_tests(flow, closed),
                tours, start if closed else _END)
    return tour


def flow_tests(flow: dict, closed: bool) -> int:
    if closed:
        return 1
    return sum(amount for v, amount in flow.get(_END, {}).items())


@dataclass(frozen=True)
class _Copy:
    """An extra traversal of an edge (or a reset) added by the flow: `of` is the edge key it repeats."""

    of: Any
    n: int


def _key(key: Any) -> Any:
    return key.of if isinstance(key, _Copy) else key


def transition_tour(engine: SymbolicFsm, required: list[int], reach: set[str], initial: str) -> Tour:
    transitions = engine.transitions
    edges = [(transitions[i].source, transitions[i].target, i) for i in required]
    return optimal_cover(sorted(reach), edges, initial)


def pair_tour(engine: SymbolicFsm, required: list[int], initial: str, strongly_connected: bool,
              wanted: set[str] | None = None) -> tuple[Tour, list]:
    """The line graph: a node per transition, an edge per pair (those in `wanted`); runs are transition sequences."""
    transitions = engine.transitions
    by_source: dict[str, list[int]] = {}
    for i in required:
        by_source.setdefault(transitions[i].source, []).append(i)
    pairs = [(i, j, (i, j)) for i in required for j in by_source.get(transitions[i].target, ())
             if wanted is None or ids.pair_id(transitions[i], transitions[j]) in wanted]
    used = sorted({i for i, j, _ in pairs} | {j for i, j, _ in pairs})
    required = used
    if not pairs:
        return Tour("path-cover", 0, 0), pairs
    firsts = [(i, i) for i in by_source.get(initial, ()) if i in required]
    line = optimal_cover(list(required), pairs, None, start_edges=firsts, closed=False)
    line.convert = _pair_run
    simple = nx.DiGraph()
    simple.add_nodes_from(required)
    simple.add_edges_from((i, j) for i, j, _ in pairs)
    # A closed tour of the line graph, entered once by a first step from the initial state (one step more than
    # the pairs it traverses), when the pairs to cover form a strongly connected graph that such a step enters;
    # the infeasible pairs left out may break that even when the model is strongly connected.
    if strongly_connected and firsts and nx.is_strongly_connected(simple):
        closed = optimal_cover(list(required), pairs, firsts[0][0], closed=True)
        closed.convert = lambda keys, first=closed.origin: _pair_run([first, *keys])
        closed.steps += 1
        if (closed.steps, closed.tests) <= (line.steps, line.tests):
            return closed, pairs
    return line, pairs


def _pair_run(keys: list[Any]) -> list[int]:
    """A line-graph run (first-step keys, then (i, j) pairs) as the transition sequence it stands for."""
    out: list[int] = []
    for key in keys:
        if isinstance(key, tuple):
            i, j = key
            if not out:
                out.append(i)
            out.append(j)
        else:
            out.append(key)
    return out


# ---------------------------------------------------------------- respecting the guards


class SuiteBuilder:
    """Turns the guard-free optimum into concrete runs that respect every guard (or says what it could not cover)."""

    def __init__(self, finder: WitnessFinder, combos: int = 64, detour_steps: int = 6):
        self.finder = finder
        self.engine = finder.engine
        self.combos = combos  # argument combinations tried before a step's arguments are left to z3
        self.detour_steps = detour_steps  # longest detour tried before a run is ended and a new one started
        self.orderings = 16  # Euler circuits tried (all optimal without guards) for models up to `small` elements
        self.small = 300
        self.repair_paths = 1000  # search limit for the witness runs that repair a suite
        self.reconnect_steps = 3  # longest concrete continuation tried before a stuck run ends
        self._closed = False
        self._fits: dict[tuple[Hashable, int], Any] = {}  # (configuration key, transition): _first_fit

    def build(self, criterion: str) -> Suite:
        if criterion not in CRITERIA:
            raise ValueError(f"unknown suite criterion {criterion!r}")
        engine, model = self.engine, self.finder.model
        initial = model.initial_state
        required, reach = required_transitions(engine, self.finder.edge_ok, initial)
        simple = nx.DiGraph()
        simple.add_nodes_from(sorted(reach))  # sorted: no graph built in generation follows a set's order
        simple.add_edges_from((engine.transitions[i].source, engine.transitions[i].target) for i in required)
        strongly = bool(required) and nx.is_strongly_connected(simple)
        transitions = model.transitions
        if criterion == "transition":
            all_items = [ids.transition_id(t) for t in transitions]
            candidates = {ids.transition_id(transitions[i]) for i in required}
        else:
            all_items = [ids.pair_id(transitions[i], transitions[j]) for i, t in enumerate(transitions)
                         for j in engine.outgoing[t.target]]
            candidates = {ids.pair_id(transitions[i], transitions[j]) for i in required
                          for j in engine.outgoing[transitions[i].target] if j in set(required)}
        missing: list[NoWitness] = []
        for item in all_items:
            if item not in candidates:
                result = self.finder.find(item)  # says why: unreachable, or a guard that never holds
                missing.append(result if isinstance(result, NoWitness) else
                               NoWitness(item, "unreachable", "not reachable over transitions whose guards can hold"))
        if len(candidates) <= self.small:
            # Small enough to ask the witness search about every element first: those no run can cover (guards
            # along every way there) stay out of the flow, so its optimum is a bound for what can be covered.
            for item in [i for i in all_items if i in candidates]:
                result = self.finder.find(item)
                if isinstance(result, NoWitness) and result.reason in ("unsatisfiable", "unreachable"):
                    candidates.discard(item)
                    missing.append(result)
        wanted = candidates
        tour = self._tour(criterion, required, reach, initial, strongly, wanted)
        self._closed = tour.method == "chinese-postman"
        best = None
        # Small models: the guard-aware walk and several Euler circuits, the best kept; large ones: the walk and
        # the flow's own Euler circuit.
        attempts = self.orderings if len(wanted) <= self.small else 1
        for ordering in range(-1, attempts):
            tried = list(missing)
            if ordering < 0:
                runs = self._greedy(tour, criterion, wanted, tried)
            else:
                runs = self._concretize(tour.runs(ordering), criterion, wanted, tried)
            score = (len(tried), sum(len(r.plan) for r in runs), len(runs))  # first cover all that can be
            if best is None or score < best[0]:
                best = (score, runs, tried)
            if score[:2] == (len(missing), tour.steps):
                break  # everything covered at the guard-free optimum: the guards did not get in the way
        assert best is not None  # range(-1, attempts) runs at least once
        (left, steps, _), runs, tried = best
        if (left, steps) == (len(missing), tour.steps):
            return Suite(criterion, tour.method, len(all_items), len(wanted), tour.steps, tour.tests, runs, tried,
                         strongly)
        if len(wanted) > self.small:
            return Suite(criterion, tour.method, len(all_items), len(wanted), tour.steps, tour.tests, runs, tried,
                         strongly, no_exact=f"more than {self.small} {criterion}s to cover")
        # Not at the guard-free bound: where the configuration space is small, the exact optimum decides.
        exact = self._exact(criterion, all_items, wanted, missing, runs)
        if isinstance(exact, str):
            return Suite(criterion, tour.method, len(all_items), len(wanted), tour.steps, tour.tests, runs, tried,
                         strongly, no_exact=exact)
        found, impossible, configurations = exact
        if found.suite is not None:
            exact_runs, exact_missing = self._exact_runs(found.suite, all_items, impossible, missing)
            coverable = {c for r in exact_runs for c in r.covers}
            if coverable != wanted:
                # The guard-free figure is for what the suite covers (never compare unequal sets).
                tour = self._tour(criterion, required, reach, initial, strongly, coverable)
            return Suite(criterion, tour.method, len(all_items), len(coverable), tour.steps, tour.tests, exact_runs,
                         exact_missing, strongly, configurations)
        # The search stopped early: the suite found stands, what no configuration takes is said to be impossible,
        # and the proven lower bound replaces any guess about where the excess comes from.
        lower = found.lower_bound if impossible & wanted else max(found.lower_bound, tour.steps)
        proven = {m.element: m for m in self._impossible(impossible, all_items, missing, configurations)}
        tried = [proven.get(m.element, m) for m in tried]
        return Suite(criterion, tour.method, len(all_items), len(wanted), tour.steps, tour.tests, runs, tried,
                     strongly, guarded_lower_bound=lower, searched=found.searched)

    def _tour(self, criterion: str, required: list[int], reach: set[str], initial: str, strongly: bool,
              wanted: set[str]) -> Tour:
        """The guard-free optimum covering `wanted`."""
        transitions = self.engine.transitions
        if criterion == "transition":
            return transition_tour(self.engine, [i for i in required if ids.transition_id(transitions[i]) in wanted],
                                   reach, initial)
        return pair_tour(self.engine, required, initial, strongly, wanted)[0]

    # ------------------------------------------------------------ the exact optimum, where it can be computed
    def _exact(self, criterion: str, all_items: list[str], wanted: set[str], missing: list[NoWitness],
               runs: list[SuiteRun]) -> tuple[ExactResult, set[str], int] | str:
        """What the exact search (mbt.generate.exact) establishes, with the elements it proves impossible; or why
        it says nothing: the configuration space is too large or sampled, runs start from a precondition, or the
        witness search disagrees with it (never falsely exact)."""
        start = self.finder.starts[0]
        model = self.finder.model
        if len(self.finder.starts) != 1 or start.precondition or start.state != model.initial_state or any(
                start.store.get(name) != v.initial for name, v in model.variables.items()):
            return "runs start from a precondition"  # the exact search starts where a golden without one does
        covered = {c for r in runs for c in r.covers}
        found = exact_search(model, criterion, all_items, (sum(len(r.plan) for r in runs), covered))
        if found is None:
            return "the configuration space is too large or has sampled arguments"
        impossible = set(found.impossible)
        for item in sorted(impossible & wanted):
            if not isinstance(self.finder.find(item), NoWitness):
                return "the two searches disagree"  # keep the flow-and-repair suite
        return found, impossible, found.configurations

    @staticmethod
    def _impossible(impossible: set[str], all_items: list[str], missing: list[NoWitness],
                    configurations: int) -> list[NoWitness]:
        """The elements no configuration takes, each as unsatisfiable (the witness search's own reason kept when
        it said so too)."""
        known = {m.element: m for m in missing}
        out = []
        for item in all_items:
            if item in impossible:
                prior = known.get(item)
                out.append(prior if prior is not None and prior.reason in ("unsatisfiable", "unreachable")
                           else NoWitness(item, "unsatisfiable", "no run of the model takes it: all "
                                          f"{configurations} reachable configurations were explored"))
        return out

    def _exact_runs(self, found: ExactSuite, all_items: list[str], impossible: set[str],
                    missing: list[NoWitness]) -> tuple[list[SuiteRun], list[NoWitness]]:
        start = self.finder.starts[0]
        runs = [SuiteRun(start, [PlannedStep(event, j) for event, _, j in run], [args for _, args, _ in run],
                         list(covers)) for run, covers in zip(found.runs, found.covers)]
        return runs, self._impossible(impossible, all_items, missing, found.configurations)

    # ------------------------------------------------------------ following the tour
    def _concretize(self, tour_runs: list[list[int]], criterion: str, wanted: set[str],
                    missing: list[NoWitness]) -> list[SuiteRun]:
        runs: list[SuiteRun] = []
        failed: set[str] = set()
        covered: set[str] = set()
        for sequence in tour_runs:
            run = self._fresh()
            for k, i in enumerate(sequence):
                if run.state == self.engine.transitions[i].source and self._take(run, i):
                    covered.add(self._last_item(criterion, run))
                    continue
                item = self._item(criterion, sequence, k)
                if item in covered or item in failed or item not in wanted:
                    continue  # skipped; the next step reconnects the run
                # The tour's step cannot be taken here: first a short detour from where the run is...
                detour = None
                if run.plan:
                    detour = self.finder.detour(item, run.state, run.store, run.constraints, len(run.plan),
                                                self.detour_steps)
                if detour is not None:
                    for step, args in detour.steps:
                        run.push(self.engine, taken(step), step.event, args, [])
                        covered.add(self._last_item(criterion, run))
                    run.constraints.extend(detour.constraints)
                    continue
                # ... else this run ends, and a witness for the step starts the next one.
                self._close(run, runs)
                run = self._fresh()
                witness = self.finder.find(item, self.repair_paths)
                if isinstance(witness, NoWitness):
                    failed.add(item)
                    if witness.reason != "limit":  # over the small budget: retried with the full one at the end
                        missing.append(witness)
                    continue
                self._replay_witness(run, witness)
                covered.update(self._items(criterion, run.plan))
            self._close(run, runs)
        return self._trim(runs, criterion, wanted, missing, failed)

    def _last_item(self, criterion: str, run: _Open) -> str:
        transitions = self.engine.transitions
        i = taken(run.plan[-1])
        if criterion == "transition" or len(run.plan) < 2:
            return ids.transition_id(transitions[i])
        return ids.pair_id(transitions[taken(run.plan[-2])], transitions[i])

    def _items(self, criterion: str, plan: list[PlannedStep]) -> set[str]:
        transitions = self.engine.transitions
        if criterion == "transition":
            return {ids.transition_id(transitions[taken(s)]) for s in plan}
        return {ids.pair_id(transitions[taken(a)], transitions[taken(b)]) for a, b in zip(plan, plan[1:])}

    def _greedy(self, tour: Tour, criterion: str, wanted: set[str], missing: list[NoWitness]) -> list[SuiteRun]:
        """Another way through the flow's edges: walk them with the guards evaluated as the run goes, at each step
        preferring an edge that covers something new. Where no remaining edge can be taken the run ends; when even
        the start offers none, a witness run for the next uncovered element starts the next run."""
        if tour.graph is None:
            return []
        transitions = self.engine.transitions
        pairs = criterion == "transition-pair"
        remaining: dict[tuple, int] = {}
        out: dict[Hashable, list[tuple]] = {}
        for u, v, key in tour.graph.edges(keys=True):
            if u == _END or v == _END or (u == _START and not pairs):
                continue
            edge = (u, v, _key(key))
            if edge not in remaining:
                out.setdefault(u, []).append(edge)
            remaining[edge] = remaining.get(edge, 0) + 1
        item_of = {e: self._edge_item(e, pairs) for e in remaining}  # worked out once: the walk asks every step
        todo = [item for item in dict.fromkeys(item_of.values()) if item is not None]
        cursor = 0
        covered = _Covered()
        if not pairs:
            # The transitions of edges still to walk whose element is not covered yet, kept up to date as the walk
            # goes (a stuck run asks for them; building the set each time cost a pass over every edge).
            covered.wanted = {e[2] for e in remaining}
            covered.transition_of = {}
            for e in remaining:
                item = item_of[e]
                if item is not None:  # always: only a pair walk's first steps cover nothing
                    covered.transition_of.setdefault(item, set()).add(e[2])
        runs: list[SuiteRun] = []
        failed: set[str] = set()
        run = self._fresh()
        while True:
            node = (run.plan[-1].outcome if run.plan else _START) if pairs else run.state
            options = [e for e in out.get(node, ()) if remaining[e]]
            options.sort(key=lambda e: item_of[e] in covered)
            for edge in options:
                i = edge[2][1] if pairs and isinstance(edge[2], tuple) else edge[2]
                if run.state == transitions[i].source and self._take(run, i):
                    remaining[edge] -= 1
                    if not remaining[edge]:
                        covered.walked(edge[2])
                    covered.add(self._last_item(criterion, run))
                    break
            else:
                if run.plan and not pairs:
                    # Stuck: a few concrete steps may reach a remaining edge that covers something new.
                    path = self._reconnect(run, covered.wanted or set())
                    if path:
                        for i, args in path:
                            run.push(self.engine, i, transitions[i].event, args, [])
                            covered.add(self._last_item(criterion, run))
                            edge = (transitions[i].source, transitions[i].target, i)
                            if remaining.get(edge):
                                remaining[edge] -= 1
                                if not remaining[edge]:
                                    covered.walked(i)
                        continue
                if run.plan:
                    self._close(run, runs)
                    run = self._fresh()
                    continue
                # Nothing can be taken from the start: a witness for the next uncovered element starts the run.
                while cursor < len(todo) and (todo[cursor] in covered or todo[cursor] in failed):
                    cursor += 1
                if cursor == len(todo):
                    break
                witness = self.finder.find(todo[cursor], self.repair_paths)
                if isinstance(witness, NoWitness):
                    failed.add(todo[cursor])
                    if witness.reason != "limit":  # over the small budget: retried with the full one at the end
                        missing.append(witness)
                    continue
                self._replay_witness(run, witness)
                covered.update(self._items(criterion, run.plan))
        return self._trim(runs, criterion, wanted, missing, failed)

    def _reconnect(self, run: _Open, wanted: set[int]) -> list[tuple[int, dict[str, Any]]] | None:
        """The shortest concrete continuation (at most `reconnect_steps` steps, readable arguments) from the run's
        configuration that ends by taking a transition of `wanted`; None if there is none, or the run's values are
        symbolic."""
        engine, finder = self.engine, self.finder
        if not wanted or any(not concrete(v) for v in run.store.values()):
            return None
        key = store_key(run.state, run.store)
        seen = {key}
        frontier = [_Reached(run.state, run.store, key)]
        edge_ok, outgoing = finder.edge_ok, engine.outgoing
        for level in range(self.reconnect_steps):
            # The first wanted transition that fits, in the walk's order, ends it: the wanted ones of a level are
            # tried first, and the others are worked out only to go one level further (never after the last).
            for node in frontier:
                for i in outgoing[node.state]:
                    if i in wanted and edge_ok[i]:
                        fit = self._fit(node.key, node.store, i)
                        if fit is not None:
                            path = [(i, fit[0])]
                            while node.via is not None:
                                node, j, args = node.via
                                path.append((j, args))
                            return path[::-1]
            if level == self.reconnect_steps - 1:
                break
            following = []
            for node in frontier:
                for i in outgoing[node.state]:
                    if i in wanted or not edge_ok[i]:
                        continue
                    fit = self._fit(node.key, node.store, i)
                    if fit is None:
                        continue
                    args, after, after_key = fit
                    if after_key not in seen:
                        seen.add(after_key)
                        following.append(_Reached(engine.transitions[i].target, after, after_key, (node, i, args)))
            frontier = following
        return None

    def _fit(self, key: Hashable, store: dict[str, Any], i: int) -> tuple[dict[str, Any], dict[str, Any], Hashable] | None:
        """_first_fit for the configuration with this key, asked once."""
        fit = self._fits.get((key, i), _UNSEEN)
        if fit is _UNSEEN:
            fit = self._fits[(key, i)] = self._first_fit(store, i)
        return fit

    def _first_fit(self, store: dict[str, Any], i: int) -> tuple[dict[str, Any], dict[str, Any], Hashable] | None:
        """The first readable arguments (in the candidates' fixed order, at most `combos` tried) with which
        transition i is taken from a concrete `store`, the store after it and its key; None if none is. A function
        of the configuration: stuck runs keep asking it about the same ones, so the builder keeps the answers."""
        engine, finder = self.engine, self.finder
        t = engine.transitions[i]
        names = engine.declared[t.event]
        pools = [finder.candidates(n, engine.param_types[t.event][n]) for n in names]
        for values in itertools.islice(itertools.product(*pools), self.combos):
            args = dict(zip(names, values))
            if all(c is True for c in engine.takes(store, i, args)):
                after = engine.apply(store, i, args)
                return args, after, store_key(t.target, after)
        return None

    def _edge_item(self, edge: tuple, pairs: bool) -> str | None:
        transitions = self.engine.transitions
        key = edge[2]
        if not pairs:
            return ids.transition_id(transitions[key])
        if isinstance(key, tuple):
            return ids.pair_id(transitions[key[0]], transitions[key[1]])
        return None  # a first step: covers no pair

    def _fresh(self) -> _Open:
        start = self.finder.starts[0]
        return _Open(start, start.state, dict(start.store))

    def _item(self, criterion: str, sequence: list[int], k: int) -> str:
        transitions = self.engine.transitions
        if criterion == "transition" or k == 0:
            return ids.transition_id(transitions[sequence[k]])
        return ids.pair_id(transitions[sequence[k - 1]], transitions[sequence[k]])

    def _take(self, run: _Open, i: int) -> bool:
        """Take transition i from the run's configuration: readable concrete arguments if some fit, else symbols."""
        engine = self.engine
        event = engine.transitions[i].event
        depth = len(run.plan) + 1
        names = engine.declared[event]
        if names:
            pools = [self.finder.candidates(n, engine.param_types[event][n]) for n in names]
            for values in itertools.islice(itertools.product(*pools), self.combos):
                args = dict(zip(names, values))
                conds = engine.takes(run.store, i, args)
                if all(c is True for c in conds):
                    run.push(engine, i, event, args, [])
                    return True
        args = engine.arguments(depth, event)
        ok, symbolic = split(engine.takes(run.store, i, args))
        if not ok:
            return False
        if symbolic and engine.satisfiable(run.constraints, symbolic) != "sat":
            return False
        run.push(engine, i, event, args, symbolic)
        return True

    def _replay_witness(self, run: _Open, witness: Witness) -> None:
        engine = self.engine
        run.start = witness.start
        run.state, run.store = witness.start.state, dict(witness.start.store)
        for step, args in zip(witness.plan, witness.args):
            if isinstance(step.outcome, int):
                run.push(engine, step.outcome, step.event, dict(args), [])
            else:  # a witness for a transition or a pair ends with taken transitions; nothing else is planned
                raise ValueError("a suite witness ended with a refusal (an mbt bug)")

    def _close(self, run: _Open, runs: list[SuiteRun]) -> None:
        """Finish a run: values for the arguments left symbolic (z3, then made canonical)."""
        if not run.plan:
            return
        symbolic = [(k, name) for k, a in enumerate(run.args) for name, value in a.items() if not concrete(value)]
        args = run.args
        if symbolic:
            names = [f"@{k + 1}:{run.plan[k].event}:{name}" for k, name in symbolic]
            values = self.engine.solve(run.constraints, names)
            if values is None:
                raise ValueError("a suite run's path condition became unsatisfiable (an mbt bug)")
            args = [dict(a) for a in args]
            for (k, name), symbol in zip(symbolic, names):
                args[k][name] = values[symbol]
            args = self.finder.canonical(run.start, run.plan, args, set(symbolic))
        runs.append(SuiteRun(run.start, list(run.plan), args))

    def _trim(self, runs: list[SuiteRun], criterion: str, wanted: set[str], missing: list[NoWitness],
              failed: set[str]) -> list[SuiteRun]:
        """Keep, per run, the elements it covers first; cut steps after a run's last new element; drop empty runs.
        Elements the tour wanted but no run covered get their own witness run (or a reason)."""
        transitions = self.engine.transitions
        covered: set[str] = set()
        out: list[SuiteRun] = []
        for run in runs:
            new: list[str] = []
            last = -1
            prev = None
            for k, step in enumerate(run.plan):
                i = taken(step)
                item = ids.transition_id(transitions[i]) if criterion == "transition" else (
                    ids.pair_id(transitions[prev], transitions[i]) if prev is not None else None)
                prev = i
                if item is not None and item in wanted and item not in covered:
                    covered.add(item)
                    new.append(item)
                    last = k
            if not new:
                continue
            if self._closed and transitions[taken(run.plan[-1])].target == run.start.state:
                last = len(run.plan) - 1  # a Chinese-postman tour returns to where it started: keep its way back
            out.append(SuiteRun(run.start, run.plan[:last + 1], run.args[:last + 1], new))
        given_up = {m.element for m in missing}
        for item in sorted(wanted - covered - given_up, key=_order(transitions, criterion)):
            if item in covered:
                continue
            # The last chance for the element: the full search budget (the repairs above used a small one).
            witness = self.finder.find(item)
            if isinstance(witness, NoWitness):
                missing.append(witness)
                continue
            out.append(SuiteRun(witness.start, witness.plan, witness.args, []))
            prev = None
            for step in witness.plan:
                i = taken(step)
                item_here = ids.transition_id(transitions[i]) if criterion == "transition" else (
                    ids.pair_id(transitions[prev], transitions[i]) if prev is not None else None)
                prev = i
                if item_here is not None and item_here in wanted and item_here not in covered:
                    covered.add(item_here)
                    out[-1].covers.append(item_here)
        return out


class _Covered(set):
    """The elements a walk has covered; for a transition walk, also the transitions of its edges still to walk
    whose element it has not covered (`wanted`), kept as elements are covered and edges used up."""

    wanted: set[int] | None = None
    transition_of: dict[str, set[int]]

    def add(self, item: str) -> None:
        super().add(item)
        if self.wanted is not None:
            self.wanted.difference_update(self.transition_of.get(item, ()))

    def update(self, *items) -> None:
        for group in items:
            for item in group:
                self.add(item)

    def walked(self, i: int) -> None:
        """The last remaining edge of transition i is used up."""
        if self.wanted is not None:
            self.wanted.discard(i)


def _order(transitions, criterion):
    index = {ids.transition_id(t): n for n, t in enumerate(transitions)}

    def key(item: str):
        if criterion == "transition":
            return (index.get(item, 0), item)
        return (0, item)

    return key


class _Reached(NamedTuple):
    """A configuration a reconnection reaches (values concrete): its state, store and key, and the step into it
    (from where, the transition, its arguments; None at the run's own configuration)."""

    state: str
    store: dict[str, Any]
    key: Hashable
    via: tuple[_Reached, int, dict[str, Any]] | None = None


def taken(step: PlannedStep) -> int:
    """The transition a suite's step takes: each one takes a transition (a refusal covers no transition or pair)."""
    if not isinstance(step.outcome, int):
        raise ValueError(f"a suite's step `{step.event}` takes no transition (an mbt bug)")
    return step.outcome


@dataclass
class _Open:
    """A run being built: its start, configuration, planned steps, arguments (values or symbols), path condition."""

    start: Start
    state: str
    store: dict[str, Any]
    plan: list[PlannedStep] = field(default_factory=list)
    args: list[dict[str, Any]] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)

    def push(self, engine: SymbolicFsm, i: int, event: str, args: dict[str, Any], symbolic: list[Constraint]) -> None:
        self.store = engine.apply(self.store, i, args)
        self.state = engine.transitions[i].target
        self.plan.append(PlannedStep(event, i))
        self.args.append(args)
        self.constraints.extend(symbolic)
