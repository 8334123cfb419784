"""The exploration checked against brute force: on seeded random models, every event sequence up to the depth is
replayed on the replay engine and judged on its own; the verdict and the shortest counterexample must agree."""

from __future__ import annotations

import itertools
import random

import pytest

from mbt.analysis.explore import Explorer
from mbt.analysis.invariant_checks import search
from mbt.elements.fsm import enumerate_fsm
from mbt.engine.fsm import CompiledFsm, Snapshot, run_events
from mbt.engine.temporal import Monitor, judge
from mbt.goldens.cases import GoldenCase
from mbt.goldens.replay_invariant import positions_of
from mbt.goldens.results import CaseRun
from mbt.parsing.loader import parse_text

DEPTH = 4
TEMPLATES = [
    "always n <= {k}", "never state == s{j}", "eventually state == s{j}", "at most 1 on go",
    "on flip precedes state == s{j}", "on go leads to state == s{j}", "never n == {k} before on flip",
    "always flag -> n < {k} after on go", "eventually flag between on go and on flip",
    "never state == s{j} after on flip until on go", "every call note [args.v <= {k}]", "at most 2 call note",
]


def random_model(seed: int) -> str:
    rng = random.Random(seed)
    states = 3
    lines = ["fsm m {", "  var n: int[0..2] = 0", "  var flag: bool = false"]
    lines += [f"  state s{i}{' initial' if i == 0 else ''}{' final' if i == states - 1 and rng.random() < 0.5 else ''}"
              for i in range(states)]
    lines += ["  event go(up: bool)", "  event flip"]
    final = {f"s{states - 1}"} if "final" in lines[3 + states - 1] else set()
    for i in range(states):
        if f"s{i}" in final:
            continue
        lines.append(f"  s{i} -> s{rng.randrange(states)} on go(u) [u and n < 2] / n := n + 1, call note(v = n)")
        lines.append(f"  s{i} -> s{rng.randrange(states)} on go(u) [not u] / flag := not flag")
        if rng.random() < 0.7:
            lines.append(f"  s{i} -> s{rng.randrange(states)} on flip [flag] / n := 0")
    lines.append("}")
    lines.append("invariants for m {")
    for t, template in enumerate(TEMPLATES):
        lines.append(f"  i{t}: " + template.format(k=rng.randrange(3), j=rng.randrange(states)))
    lines.append("}")
    return "\n".join(lines) + "\n"


def brute_force(fsm, monitor: Monitor) -> int | None:
    """The fewest steps of a run (up to DEPTH) that breaks the invariant, found by replaying every sequence."""
    elements = enumerate_fsm(fsm)
    compiled = CompiledFsm(fsm, elements)
    state, variables = compiled.initial_config()
    start = Snapshot(state, {k: v for k, v in variables.items() if not k.startswith("discarded.")}, {}, None)
    moves = [("go", {"up": True}), ("go", {"up": False}), ("flip", {})]

    def accepted(seq) -> list | None:
        snaps = run_events(fsm, elements, list(seq)) if seq else []
        return snaps if all(s.transition is not None for s in snaps) else None

    best = None
    for length in range(DEPTH + 1):
        for seq in itertools.product(moves, repeat=length):
            snaps = accepted(seq)
            if snaps is None:
                continue  # a refused event is no step: the same run is enumerated without it
            last = snaps[-1].state if snaps else start.state
            complete = fsm.states[last].final or all(accepted(seq + (m,)) is None for m in moves)
            positions, _, _ = positions_of(compiled, CaseRun(GoldenCase(id="x"), snapshots=snaps, start=start))
            verdict = judge(monitor, positions, complete).verdict
            if verdict is not None and verdict.position == length:
                best = length if best is None else min(best, length)
        if best is not None:
            return best
    return best


@pytest.mark.parametrize("seed", range(12))
def test_exploration_agrees_with_brute_force(seed):
    fsm, invariants = parse_text(random_model(seed), "m.fsm").models
    graph = Explorer(fsm).explore(DEPTH)
    for inv in invariants.invariants:
        outcome = search(graph, Monitor(inv), DEPTH)
        expected = brute_force(fsm, Monitor(inv))
        got = len(outcome.path) if outcome.verdict is not None else None
        assert got == expected, (seed, inv.key, inv.text())
