"""Benchmark of mutation adequacy: mutants generated, equivalents detected, mutant x golden replays per second, the
whole mutation run, and the smallest equivalent set, on the synthetic FSM of run_bench.py (never asserts).

    python tests/bench/bench_mutation.py           # 2,000 states / 20,000 transitions / 10,000 goldens, 500 mutants
    python tests/bench/bench_mutation.py --quick   # 200 / 2,000 / 1,000, 100 mutants

The operators make far more mutants than 500 on this model (every transition, guard comparison, action and every
refused (state, event) slot); `--mutants N` judges a seeded uniform sample of N of them (mbt mutate --sample N), so
each operator is represented in proportion to how many mutants it makes.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # synth.py sits beside this script
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

import synth  # noqa: E402

from mbt import api  # noqa: E402
from mbt.goldens.loader import load_goldens  # noqa: E402
from mbt.mutate.engine import mutation_run  # noqa: E402
from mbt.mutate.redundancy import redundancy  # noqa: E402

FULL = (2000, 20000, 10_000, 500)
QUICK = (200, 2000, 1000, 100)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    ap.add_argument("--mutants", type=int, default=None, help="mutants judged (a seeded sample)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    states, transitions, goldens, mutants = QUICK if args.quick else FULL
    mutants = args.mutants or mutants
    folder = Path(tempfile.mkdtemp(prefix="mbt-bench-mutation-"))
    try:
        print(f"mbt mutation benchmark: {states:,} states, {transitions:,} transitions, {goldens:,} goldens, "
              f"{mutants:,} sampled mutants (python {platform.python_version()}, {os.cpu_count()} cores)", flush=True)
        model_path, golden_path, _ = synth.write_bench(folder, states, transitions, goldens, args.seed)
        _, models = api.load_models([str(model_path)])
        cases = api.collector_paused(load_goldens)([str(golden_path)])
        clock: dict[str, float] = {}
        start = time.perf_counter()
        run = api.collector_paused(mutation_run)(models, cases, sample=mutants, seed=args.seed, clock=clock)
        total = time.perf_counter() - start
        (m,) = run.report.models
        start = time.perf_counter()
        red = redundancy(list(run.profiles.values()))
        minimise = time.perf_counter() - start
        kill = clock.get("kill replays", 0.0)
        rows = [
            ("mutants generated", f"{m.candidates:,}", "", f"{clock.get('mutant generation', 0):.2f} s; "
                                                        f"{m.sampled or 'all judged'}"),
            ("mutants judged", f"{m.mutants:,}", "", f"{m.killed} killed, {m.survived} surviving, score "
                                                   f"{(m.score or 0):.1%}"),
            ("equivalents detected", f"{m.equivalent:,}", "", f"{clock.get('equivalence and witnesses', 0):.2f} s "
                                                          "for the distinguishing search of the unkilled"),
            ("original replays", f"{m.goldens:,}", "", f"{clock.get('original replays', 0):.2f} s (footprints)"),
            ("mutant x golden pairs", f"{m.mutants * m.clean_goldens:,}", "",
             f"{m.replays:,} replayed: the others never step through the mutant's slot"),
            ("kill phase", f"{kill:.2f} s", "", f"each mutant's engine built and its {m.replays:,} replays run"),
            ("mutant x golden replays per second", f"{m.replays / kill:,.0f}" if kill else "-", "",
             "replays run / kill phase (engine building included)"),
            ("pairs decided per second", f"{m.mutants * m.clean_goldens / total:,.0f}", "", "over the whole run"),
            ("whole mutation run", f"{total:.1f} s", "< 60 s", "ok" if total < 60 else "MISSED"),
            ("smallest equivalent set", f"{minimise:.2f} s", "", f"{red.method}: kept {len(red.kept):,}, dropped "
                                                              f"{len(red.dropped):,}, lower bound {red.lower_bound:,}"),
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        print()
        for name, value, target, note in rows:
            print(f"{name:<{widths[0]}}  {value:>{widths[1]}}  {target:<{widths[2]}}  {note}")
        if args.quick:
            print("\n(--quick: small sizes; the target is set for the full run)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
