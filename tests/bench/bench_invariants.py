"""Benchmark: invariant checking on a synthetic FSM (prints figures beside the target; never asserts).

    python tests/bench/bench_invariants.py                 # 200 states, 3 variables, depth 20 (issue 4's target)
    python tests/bench/bench_invariants.py --states 2000   # larger
    python tests/bench/bench_invariants.py --quick         # 50 states: a smoke run

Prints: configurations explored and explored per second, edges (accepted events), the search time of each pattern,
and the time of the whole `mbt check` of the model (parse, FSM checks, spans, invariants with counterexamples).
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout without installing

from mbt import api  # noqa: E402
from mbt.analysis.explore import Explorer  # noqa: E402
from mbt.analysis.invariant_checks import search  # noqa: E402
from mbt.engine.temporal import Monitor  # noqa: E402
from mbt.parsing.loader import load_paths  # noqa: E402

TARGET_SECONDS = 10.0  # issue 4: invariant checking on a 200-state FSM with 3 variables at depth 20

# (name, pattern) per Dwyer pattern and scope; each names things every synthetic model has.
INVARIANTS = [
    ("bounded", "always n <= 3"),
    ("absence", "never state == s{last} before on reset"),
    ("existence", "eventually state == s0 after on reset"),
    ("bounded_existence", "at most 50 call log"),
    ("precedence", "on go precedes call log [args.k == 3]"),
    ("response", "on reset leads to state == s0"),
    ("between_scope", "always mode != z between on flip and on reset"),
    ("after_until", "never n > 2 and flag after on reset until on go"),
    ("every_call", "every call log [args.k <= 3]"),
    ("violated", "never state == s{last}"),
]


def synthetic(states: int, seed: int = 4) -> str:
    """A seeded FSM: a ring of states with random guarded branches; n: int[0..3], flag: bool, mode: enum{x,y,z}."""
    rng = random.Random(seed)
    lines = ["fsm synth {", "  var n: int[0..3] = 0", "  var flag: bool = false", "  var mode: enum{x, y, z} = x"]
    lines += [f"  state s{i}{' initial' if i == 0 else ''}" for i in range(states)]
    lines += ["  event go(k: int[0..3])", "  event flip", "  event reset", "  event tick"]
    for i in range(states):
        ahead, jump = (i + 1) % states, rng.randrange(states)
        lines.append(f"  s{i} -> s{ahead} on go(k) [k < 2] / n := k, call log(k = k)")
        lines.append(f"  s{i} -> s{jump} on go(k) [k >= 2 and not flag] / n := 3, call log(k = k)")
        lines.append(f"  s{i} -> s{i} on flip [mode == x] / mode := y, flag := true")
        lines.append(f"  s{i} -> s{rng.randrange(states)} on flip [mode != x] / mode := {rng.choice('xyz')},"
                     f" flag := false")
        if i % 7 == 0:
            lines.append(f"  s{i} -> s0 on reset / n := 0")
        if i % 3 == 0:
            lines.append(f"  s{i} -> s{rng.randrange(states)} on tick [n > 0] / n := n - 1")
    lines.append("}")
    lines.append("invariants for synth {")
    lines += [f"  {name}: {text.format(last=states - 1)}" for name, text in INVARIANTS]
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--states", type=int, default=200)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="50 states, depth 10")
    args = parser.parse_args()
    states, depth = (50, 10) if args.quick else (args.states, args.depth)
    print(f"mbt invariant benchmark: python {platform.python_version()} on {platform.machine()}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "synth.fsm"
        path.write_text(synthetic(states), encoding="utf-8")
        (files,) = [load_paths([str(path)])]
        fsm, invariants = files[0].models
        start = time.perf_counter()
        explorer = Explorer(fsm, [e for inv in invariants.invariants for e in inv.props().values()])
        graph = explorer.explore(depth)
        explored = time.perf_counter() - start
        print(f"  model: {states} states, {len(fsm.transitions)} transitions, 3 variables, depth {depth}")
        print(f"  exploration: {len(graph.nodes):,} configurations, {graph.edge_count:,} steps in {explored:.2f} s "
              f"= {len(graph.nodes) / explored:,.0f} configurations/s, {graph.edge_count / explored:,.0f} steps/s"
              f" ({'every reachable configuration' if graph.exhausted else 'bounded by the depth'})")
        for inv in invariants.invariants:
            t0 = time.perf_counter()
            outcome = search(graph, Monitor(inv), depth)
            took = time.perf_counter() - t0
            verdict = "violated" if outcome.verdict else ("holds (every run)" if outcome.every_run else "holds")
            print(f"  {inv.key:<18} {inv.pattern:<18} {inv.scope.kind:<12} {took:6.2f} s  "
                  f"{outcome.explored:>9,} pairs  {verdict}"
                  + (f" in {len(outcome.path)} steps" if outcome.verdict else ""))
        t0 = time.perf_counter()
        report = api.check([str(path)], depth=depth)
        total = time.perf_counter() - t0
        errors = report.count("error")
        target = ""
        if (states, depth) == (200, 20):
            target = f" [target {TARGET_SECONDS:.0f} s: {'within' if total <= TARGET_SECONDS else 'OVER'}]"
        print(f"  mbt check (parse, fsm checks, invariants, counterexamples replayed): {total:.2f} s{target}, "
              f"{errors} error finding(s) (the `violated` ones are built in)")


if __name__ == "__main__":
    main()
