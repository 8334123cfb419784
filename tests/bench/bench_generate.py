"""Benchmark of `mbt generate`: optimal tours / path covers against a greedy walk, and witness generation.

    python tests/bench/bench_generate.py            # 5,000 states / 50,000 transitions, 1,000 witnesses
    python tests/bench/bench_generate.py --quick    # 200 / 2,000 / 100: a smoke run (`make test` adds --no-guards)

Two synthetic models from synth.py: its usual one (a spanning tree from the initial state plus random edges, final
states as leaves: not strongly connected, so the suite is a path cover with resets) and a strongly connected variant
(no final states, and every state gets an edge back to an earlier one: a Chinese-postman tour). For each it prints the
min-cost-flow optimum (seconds, total steps, tests) beside the lower bound (one step per transition) and a greedy
"walk to the nearest uncovered transition, reset when stuck" baseline; then the suite that respects the guards (the
optimum ignores variable values). Last, witnesses for 1,000 elements that synthetic goldens leave uncovered.
Targets: the optimum in under 30 s; 1,000 witnesses in under 30 s. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from collections import Counter, deque
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # synth.py sits beside this script
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

import synth  # noqa: E402

from mbt import api  # noqa: E402
from mbt.generate.suites import SuiteBuilder, required_transitions, transition_tour  # noqa: E402
from mbt.generate.witnesses import NoWitness, WitnessFinder  # noqa: E402
from mbt.goldens.cases import parse_case  # noqa: E402
from mbt.goldens.loader import GoldenSet  # noqa: E402
from mbt.parsing.loader import parse_text  # noqa: E402

FULL = (5000, 50_000, 1000)
QUICK = (200, 2000, 100)


def timed(func, *args):
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def strongly_connected(model: synth.SynthModel, seed: int) -> synth.SynthModel:
    """The same model without final states, plus one unguarded edge from every state back to an earlier one (so
    every state reaches the initial state, which reaches every state)."""
    rnd = random.Random(seed)
    used: dict[int, set[str]] = {}
    for t in model.transitions:
        used.setdefault(t.source, set()).add(t.event)
    model.finals = set()
    for state in range(1, model.states):
        free = [e for e in model.events if e not in used.get(state, set())]
        if free:
            event = rnd.choice(free)
            model.transitions.append(synth.Transition(state, rnd.randrange(state), event, None, []))
    model.transitions.sort(key=lambda t: t.source)
    return model


def greedy_walk(engine, required: list[int], start: str, budget: float) -> tuple[int, int, bool]:
    """Steps and tests of the greedy baseline: from where the walk is, go (by a shortest path over any transitions)
    to the nearest uncovered transition and take it; when none is reachable, reset to the initial state. Stops after
    `budget` seconds (the third value says whether it finished)."""
    transitions = engine.transitions
    out: dict[str, list[int]] = {}
    for i in required:
        out.setdefault(transitions[i].source, []).append(i)
    uncovered = set(required)
    steps = tests = 0
    deadline = time.perf_counter() + budget
    while uncovered:
        tests += 1
        state, progressed = start, False
        while True:
            if time.perf_counter() > deadline:
                return steps, tests, False
            path = _nearest(state, out, uncovered, transitions)
            if path is None:
                break
            for i in path:
                uncovered.discard(i)
                state = transitions[i].target
            steps += len(path)
            progressed = True
        if not progressed:
            break  # nothing left that the initial state reaches
    return steps, tests, True


def _nearest(state: str, out: dict, uncovered: set[int], transitions) -> list[int] | None:
    """The shortest transition path from `state` ending with an uncovered transition (None if there is none)."""
    for i in out.get(state, ()):
        if i in uncovered:
            return [i]
    parent: dict[str, tuple[str, int] | None] = {state: None}
    queue = deque([state])
    while queue:
        current = queue.popleft()
        for i in out.get(current, ()):
            nxt = transitions[i].target
            if i in uncovered:
                path = [i]
                node = current
                while parent[node] is not None:
                    node, via = parent[node]
                    path.append(via)
                return path[::-1]
            if nxt not in parent:
                parent[nxt] = (current, i)
                queue.append(nxt)
    return None


def tours(label: str, model, concrete: bool) -> None:
    finder, seconds = timed(WitnessFinder, model)
    engine = finder.engine
    required, reach = required_transitions(engine, finder.edge_ok, model.initial_state)
    print(f"\n{label}: {len(model.states):,} states, {len(model.transitions):,} transitions "
          f"({len(required):,} coverable; witness finder set up in {seconds:.1f} s)")
    start = time.perf_counter()
    tour = transition_tour(engine, required, reach, model.initial_state)
    flow_seconds = time.perf_counter() - start
    runs, euler_seconds = timed(tour.runs)
    assert sum(len(r) for r in runs) == tour.steps and len(runs) == tour.tests  # the circuit realises the flow
    print(f"  {'method':<44} {'seconds':>8} {'steps':>9} {'tests':>7}")
    print(f"  {'lower bound (one step per transition)':<44} {'':>8} {len(required):>9,} {'':>7}")
    print(f"  {'optimum: ' + tour.method + ' (min-cost flow + Euler)':<44} {flow_seconds + euler_seconds:>8.1f} "
          f"{tour.steps:>9,} {tour.tests:>7,}   (flow {flow_seconds:.1f} s)")
    (steps, tests, finished), seconds = timed(greedy_walk, engine, required, model.initial_state, 600.0)
    note = "" if finished else "   (stopped after 600 s, unfinished)"
    print(f"  {'greedy nearest-uncovered-transition walk':<44} {seconds:>8.1f} {steps:>9,} {tests:>7,}{note}")
    if concrete:
        # As `mbt generate` runs it: with the cyclic garbage collector paused (mbt.api.collector_paused).
        cpu = time.process_time()
        suite, seconds = timed(api.collector_paused(SuiteBuilder(finder).build), "transition")
        cpu = time.process_time() - cpu
        reasons = Counter(m.reason for m in suite.missing)
        print(f"  {'suite respecting guards (z3, witnesses)':<44} {seconds:>8.1f} {suite.steps:>9,} "
              f"{len(suite.runs):>7,}   ({cpu:.1f} s CPU; {len(suite.missing)} transitions without a run: "
              f"{dict(reasons)}; digest {suite_digest(suite)})")


def suite_digest(suite) -> str:
    """A digest of every run (start, steps, arguments, elements covered) and every missing element with its reason
    and message: equal digests before and after a change mean the same suite."""
    h = hashlib.sha256()
    h.update(repr((suite.criterion, suite.method, suite.items, suite.lower_bound, suite.optimum_steps,
                   suite.optimum_tests, suite.strongly_connected, suite.exact, suite.guarded_lower_bound,
                   suite.searched, suite.no_exact)).encode())
    for r in suite.runs:
        h.update(repr((sorted(r.start.precondition.items()), r.start.state, sorted(r.start.store.items(), key=str),
                       [(s.event, s.outcome) for s in r.plan], [sorted(a.items()) for a in r.args],
                       r.covers)).encode())
    for m in suite.missing:
        h.update(repr((m.element, m.reason, m.message)).encode())
    return h.hexdigest()[:16]


def witnesses(model, text_goldens: list[dict], count: int) -> None:
    goldens = GoldenSet(cases=[parse_case(raw, "synthetic", n) for n, raw in enumerate(text_goldens, start=1)])
    report, seconds = timed(api.measure, [model], goldens)
    rows = [row for row in report.models[0].elements if not row.verified and row.element.feasible]
    by_criterion: dict[str, list[str]] = {}
    for row in rows:
        by_criterion.setdefault(row.element.criterion, []).append(row.element.id)
    # An even share of each criterion's uncovered elements, spread over the model.
    chosen: list[str] = []
    share = max(1, count // max(1, len(by_criterion)))
    for ids in by_criterion.values():
        step = max(1, len(ids) // share)
        chosen += ids[::step][:share]
    leftovers = [r.element.id for r in rows if r.element.id not in set(chosen)]
    chosen = (chosen + leftovers)[:count]
    print(f"\nwitnesses: {len(goldens.cases):,} synthetic goldens leave {len(rows):,} feasible elements uncovered "
          f"(coverage {seconds:.1f} s); {len(chosen):,} of them, by criterion "
          f"{dict(Counter(c.split(':', 1)[0] for c in chosen))}")
    start = time.perf_counter()
    finder = WitnessFinder(model)
    finder.atlas  # noqa: B018 - built on first use; timed here with the set-up
    setup = time.perf_counter() - start
    found, seconds = timed(lambda: [finder.find(e) for e in chosen])
    reasons = Counter(r.reason if isinstance(r, NoWitness) else "witness" for r in found)
    lengths = [len(r.plan) for r in found if not isinstance(r, NoWitness)]
    mean = sum(lengths) / len(lengths) if lengths else 0
    print(f"  set-up (guards, atlas) {setup:.1f} s; {len(chosen):,} elements in {seconds:.1f} s "
          f"(total {setup + seconds:.1f} s, target < 30 s): {dict(reasons)}; mean run {mean:.1f} steps, "
          f"{finder.engine.queries:,} z3 queries")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small models: a smoke run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-guards", action="store_true", help="skip the guard-respecting suites (the slow part)")
    args = ap.parse_args(argv)
    states, transitions, count = QUICK if args.quick else FULL
    print(f"mbt generate benchmark: {states:,} states / {transitions:,} transitions, {count:,} witnesses")
    base = synth.generate_model(states, transitions, args.seed)
    model, seconds = timed(lambda: parse_text(base.text(), "bench.fsm").models[0])
    print(f"(parsing the synthetic model: {seconds:.1f} s, not counted below)")
    tours("path cover (final states: not strongly connected)", model, not args.no_guards)
    loop = strongly_connected(synth.generate_model(states, transitions - states + 1, args.seed), args.seed)
    loop_model = parse_text(loop.text(), "bench-loop.fsm").models[0]
    tours("Chinese postman (strongly connected)", loop_model, not args.no_guards)
    goldens = list(synth.generate_goldens(base, count * 2, args.seed + 1))
    witnesses(model, goldens, count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
