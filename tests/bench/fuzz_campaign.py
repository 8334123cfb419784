"""A longer fuzz campaign than tests/test_fuzz.py: N inputs per family (tests/fuzz_inputs.py), and per family how many
were tried, how each run ended (exit 0/1/2/3) and how many broke issue 14's contract, with the first few broken.

    .venv/bin/python tests/bench/fuzz_campaign.py                 # 300 inputs per family
    .venv/bin/python tests/bench/fuzz_campaign.py --per-family 50 --family dsl --family goldens-yaml
    .venv/bin/python tests/bench/fuzz_campaign.py --seed 7        # another set of inputs (default seed 14)

It prints figures and never asserts (a person reads them); the inputs are reproducible from the seed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz_inputs import FAMILIES, judge  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-family", type=int, default=300)
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES))
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--show", type=int, default=3, help="broken inputs shown per family")
    options = parser.parse_args()
    families = options.family or list(FAMILIES)
    print(f"fuzz campaign: {options.per_family} inputs per family, seed {options.seed}")
    print(f"{'family':<15} {'tried':>6} {'exit 0':>7} {'exit 1':>7} {'exit 2':>7} {'exit 3':>7} {'other':>6} "
          f"{'broken':>7} {'seconds':>8}   golden cases valid / invalid")
    total = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for family in families:
            make = FAMILIES[family]
            codes: Counter = Counter()
            cases: Counter = Counter()
            broken = []
            start = time.perf_counter()
            for n in range(options.per_family):
                seed = options.seed * 1_000_003 + n
                outcome = judge(make(seed), Path(tmp) / "run")
                codes[outcome.code if outcome.code in (0, 1, 2, 3) else "other"] += 1
                cases.update({"valid": outcome.valid, "invalid": outcome.invalid})
                if outcome.problems:
                    broken.append((seed, outcome.problems))
            seconds = time.perf_counter() - start
            print(f"{family:<15} {options.per_family:>6} {codes[0]:>7} {codes[1]:>7} {codes[2]:>7} {codes[3]:>7} "
                  f"{codes['other']:>6} {len(broken):>7} {seconds:>8.1f}"
                  + (f"   {cases['valid']:,} / {cases['invalid']:,}" if cases["valid"] + cases["invalid"] else ""))
            for seed, problems in broken[:options.show]:
                print(f"    seed {seed}: {'; '.join(problems)[:400]}")
            total.update({"tried": options.per_family, "broken": len(broken)})
    print(f"{'all':<15} {total['tried']:>6} inputs, {total['broken']} broke the contract")


if __name__ == "__main__":
    main()
