"""The exact guard-respecting optimum of a full suite where the configuration space is small: a shortest path over
(configuration × covered set).

The configurations are mbt.analysis.explore's (the replay engine's own steps, every argument value enumerated);
when that graph is complete (every reachable configuration, no sampled argument), a run is a path in it from the
initial configuration, a reset starts the next run there, and a suite is a path over (configuration, last
transition for pairs, covered set). A* (each step covers at most one new element, so the uncovered count is an
admissible bound) finds the fewest steps, then the fewest runs. What no edge of the complete graph takes is proven
impossible. Where the graph is larger than the limits, there is no exact answer and the caller says so.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from mbt.analysis.explore import Explorer
from mbt.elements import fsm as ids
from mbt.model.fsm import FsmModel

EXACT_CONFIGURATIONS = 5_000  # configurations of the model explored at most
EXACT_STATES = 100_000  # (configuration, last transition, covered set) states searched at most (about a second)


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


def exact_suite(model: FsmModel, criterion: str, items: list[str]) -> ExactSuite | None:
    """The fewest-steps (then fewest-runs) suite covering every coverable element of `items`, runs starting from
    the model's initial configuration (as a golden without precondition does); None when the configuration space
    is too large, sampled, or the search passes EXACT_STATES."""
    graph = Explorer(model).explore(EXACT_CONFIGURATIONS, EXACT_CONFIGURATIONS)
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
    bit = {item: 1 << k for k, item in enumerate(coverable)}
    full = (1 << len(coverable)) - 1

    def item_of(last: int, j: int) -> str | None:
        if not pairs:
            return ids.transition_id(transitions[j])
        return ids.pair_id(transitions[last], transitions[j]) if last >= 0 else None

    start = (0, -1, 0)  # configuration 0 is the initial one; no transition taken yet in this run; nothing covered
    best: dict[tuple[int, int, int], tuple[int, int]] = {start: (0, 1)}
    parent: dict[tuple[int, int, int], tuple[tuple[int, int, int], Any]] = {}
    heap = [(len(coverable), 1, 0, 0, start)]
    counter = 0
    goal = None
    while heap:
        _, runs, steps, _, state = heapq.heappop(heap)
        if best.get(state) != (steps, runs):
            continue
        node, last, mask = state
        if mask == full:
            goal = state
            break
        if len(best) > EXACT_STATES:
            return None
        moves: list[tuple[tuple[int, int, int], int, int, Any]] = []
        for e in graph.edges[node] or []:
            j = index[e.transition]
            item = item_of(last, j)
            moves.append(((e.target, j if pairs else -1, mask | bit.get(item, 0) if item else mask), 1, 0, e))
        if node != 0 or last != -1:
            moves.append(((0, -1, mask), 0, 1, None))  # a reset: the next run starts at the initial configuration
        for target, d_steps, d_runs, edge in moves:
            cost = (steps + d_steps, runs + d_runs)
            if cost < best.get(target, (1 << 60, 0)):
                best[target] = cost
                parent[target] = (state, edge)
                counter += 1
                remaining = len(coverable) - bin(target[2]).count("1")
                heapq.heappush(heap, (cost[0] + remaining, cost[1], cost[0], counter, target))
    if goal is None:
        return None  # pragma: no cover - every coverable element is on some edge of a complete graph
    path: list[Any] = []
    state = goal
    while state != start:
        state, edge = parent[state]
        path.append(edge)
    path.reverse()
    runs_out: list[list[tuple[str, dict[str, Any], int]]] = [[]]
    covers: list[list[str]] = [[]]
    seen: set[str] = set()
    last = -1
    for edge in path:
        if edge is None:
            runs_out.append([])
            covers.append([])
            last = -1
            continue
        j = index[edge.transition]
        item = item_of(last, j)
        if item in bit and item not in seen:
            seen.add(item)
            covers[-1].append(item)
        runs_out[-1].append((edge.event, dict(edge.args), j))
        last = j
    kept = [(r, c) for r, c in zip(runs_out, covers) if r]
    return ExactSuite([r for r, _ in kept], [c for _, c in kept], sorted(wanted - found), len(graph.nodes))
