"""The exact guard-respecting optimum of a full suite where the configuration space is small: a shortest path over
(configuration × covered set).

The configurations are mbt.analysis.explore's (the replay engine's own steps, every argument value enumerated);
when that graph is complete (every reachable configuration, no sampled argument), a run is a path in it from the
initial configuration, a reset starts the next run there, and a suite is a path over (configuration, last
transition for pairs, covered set). A* (its bound on the steps still needed never overestimates; see
exact_search) finds the fewest steps, then the fewest runs. What no edge of the complete graph takes is proven
impossible. Where the graph is larger than the limits there is no exact answer, and where the search stops early
only a proven lower bound; the caller says which.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from mbt.analysis.explore import Explorer
from mbt.elements import fsm as ids
from mbt.model.fsm import FsmModel

EXACT_CONFIGURATIONS = 5_000  # configurations of the model explored at most
EXACT_STATES = 100_000  # (configuration, last transition, covered set) states searched at most (1-5 s for pairs)


@dataclass
class ExactSuite:
    """The optimum: runs of (event, arguments, transition index), what each run covers first, and what no run of
    the model can cover (proven: every reachable configuration was explored)."""

    runs: list[list[tuple[str, dict[str, Any], int]]]
    covers: list[list[str]]
    impossible: list[str]
    configurations: int

    @property
    def steps(self) -> int:
        return sum(len(r) for r in self.runs)


@dataclass
class ExactResult:
    """What the exact search established: the optimum when it reached it, else a proven lower bound on the steps of
    any suite covering every coverable element; what no run can cover is proven either way."""

    suite: ExactSuite | None
    lower_bound: int  # no guard-respecting suite covering every coverable element takes fewer steps
    impossible: list[str]
    configurations: int
    searched: int  # search states (configuration, last transition, covered set) reached


def exact_suite(model: FsmModel, criterion: str, items: list[str]) -> ExactSuite | None:
    """The fewest-steps (then fewest-runs) suite covering every coverable element of `items`, runs starting from
    the model's initial configuration (as a golden without precondition does); None when the configuration space
    is too large, sampled, or the search passes EXACT_STATES."""
    found = exact_search(model, criterion, items)
    return found.suite if found is not None else None


def exact_search(model: FsmModel, criterion: str, items: list[str], known: tuple[int, set[str]] | None = None,
                 limit: int | None = None) -> ExactResult | None:
    """A* over (configuration, last transition for pairs, covered set), None when the configuration space is too
    large or sampled. `known`: the steps of a suite already found and what it covers; when it covers every
    coverable element, no state that cannot beat it is kept. `limit`: search states at most (EXACT_STATES).

    The bound on the steps still needed: for transitions, the uncovered count (a step covers at most one). For
    pairs, per transition t: a step taking t is the second of at most one uncovered pair and the first of at most
    one, so at least max(uncovered pairs ending in t, uncovered pairs starting with t) more steps take t (one fewer
    of the latter when the last step took t). Both never overestimate, and drop by at most one per step, so the
    first complete suite taken off the queue is the optimum; when the search stops early, the smallest estimate on
    the queue is a lower bound on the optimum."""
    limit = EXACT_STATES if limit is None else limit
    # Within the declared types, as the witness search's runs are (a counter no guard bounds has a window).
    graph = Explorer(model, within_types=True).explore(EXACT_CONFIGURATIONS, EXACT_CONFIGURATIONS)
    if not graph.complete:
        return None
    transitions = model.transitions
    index = {t.key: i for i, t in enumerate(transitions)}
    pairs = criterion == "transition-pair"
    wanted = set(items)
    found: set[str] = set()
    arriving: list[set[int]] = [set() for _ in graph.nodes]  # transitions that enter each configuration
    for edges in graph.edges:
        for e in edges or []:
            arriving[e.target].add(index[e.transition])
    for node, edges in enumerate(graph.edges):
        for e in edges or []:
            j = index[e.transition]
            if not pairs:
                found.add(ids.transition_id(transitions[j]))
            else:
                found.update(ids.pair_id(transitions[i], transitions[j]) for i in arriving[node])
    coverable = sorted(wanted & found)
    impossible = sorted(wanted - found)
    full = (1 << len(coverable)) - 1
    # The bit each step covers: by transition, or for pairs by (last transition, this one).
    position = {item: k for k, item in enumerate(coverable)}
    if pairs:
        ends = [(i, j) for i, a in enumerate(transitions) for j, b in enumerate(transitions) if a.target == b.source]
        bit_of = {(i, j): 1 << position[p] for i, j in ends if (p := ids.pair_id(transitions[i], transitions[j]))
                  in position}
        first = [0] * len(coverable)
        second = [0] * len(coverable)
        for (i, j), b in bit_of.items():
            first[b.bit_length() - 1], second[b.bit_length() - 1] = i, j
    else:
        bit_of = {(-1, j): 1 << position[p] for j, t in enumerate(transitions)
                  if (p := ids.transition_id(t)) in position}
    estimates: dict[tuple[int, int], int] = {}

    def estimate(last: int, mask: int) -> int:
        """Steps still needed at least (see the docstring)."""
        left = full & ~mask
        if not pairs:
            return left.bit_count()
        key = (last, mask)
        if key not in estimates:
            ending: dict[int, int] = {}
            starting: dict[int, int] = {}
            while left:
                low = left & -left
                k = low.bit_length() - 1
                ending[second[k]] = ending.get(second[k], 0) + 1
                starting[first[k]] = starting.get(first[k], 0) + 1
                left ^= low
            if starting.get(last):
                starting[last] -= 1
            estimates[key] = sum(max(ending.get(t, 0), starting.get(t, 0)) for t in ending.keys() | starting.keys())
        return estimates[key]

    ceiling = known[0] if known is not None and set(coverable) <= known[1] else None
    start = (0, -1, 0)  # configuration 0 is the initial one; no transition taken yet in this run; nothing covered
    best: dict[tuple[int, int, int], tuple[int, int]] = {start: (0, 1)}
    parent: dict[tuple[int, int, int], tuple[tuple[int, int, int], Any]] = {}
    # Queued by (steps + estimate, runs, -steps): the first complete suite off the queue has the fewest steps, then
    # the fewest runs (runs only grow along a path); among equals the deepest goes first, which reaches it sooner.
    heap = [(estimate(-1, 0), 1, 0, 0, start)]
    counter = 0
    goal = None
    while heap:
        bound, runs, deep, _, state = heapq.heappop(heap)
        steps = -deep
        if best.get(state) != (steps, runs):
            continue
        node, last, mask = state
        if mask == full:
            goal = state
            break
        if len(best) > limit:
            # Stopped early: the smallest estimate still queued never exceeds the optimum.
            return ExactResult(None, bound, impossible, len(graph.nodes), len(best))
        moves: list[tuple[tuple[int, int, int], int, int, Any]] = []
        for e in graph.edges[node] or []:
            j = index[e.transition]
            covered = bit_of.get((last, j) if pairs else (-1, j), 0)
            moves.append(((e.target, j if pairs else -1, mask | covered), 1, 0, e))
        if node != 0 or last != -1:
            moves.append(((0, -1, mask), 0, 1, None))  # a reset: the next run starts at the initial configuration
        for target, d_steps, d_runs, edge in moves:
            cost = (steps + d_steps, runs + d_runs)
            if cost < best.get(target, (1 << 60, 0)):
                f = cost[0] + estimate(target[1], target[2])
                if ceiling is not None and f > ceiling:
                    continue  # cannot beat (or meet) the suite already known
                best[target] = cost
                parent[target] = (state, edge)
                counter += 1
                heapq.heappush(heap, (f, cost[1], -cost[0], counter, target))
    if goal is None:
        # Only when every state was cut by the known suite's length, which a suite of the same graph meets.
        return ExactResult(None, ceiling or 0, impossible, len(graph.nodes), len(best))  # pragma: no cover
    path: list[Any] = []
    state = goal
    while state != start:
        state, edge = parent[state]
        path.append(edge)
    path.reverse()
    runs_out: list[list[tuple[str, dict[str, Any], int]]] = [[]]
    covers: list[list[str]] = [[]]
    seen = 0
    last = -1
    for edge in path:
        if edge is None:
            runs_out.append([])
            covers.append([])
            last = -1
            continue
        j = index[edge.transition]
        covered = bit_of.get((last, j) if pairs else (-1, j), 0)
        if covered and not seen & covered:
            seen |= covered
            covers[-1].append(coverable[covered.bit_length() - 1])
        runs_out[-1].append((edge.event, dict(edge.args), j))
        last = j
    kept = [(r, c) for r, c in zip(runs_out, covers) if r]
    suite = ExactSuite([r for r, _ in kept], [c for _, c in kept], impossible, len(graph.nodes))
    return ExactResult(suite, suite.steps, impossible, len(graph.nodes), len(best))
