"""The differential campaign: every kind's judge (tests/judge/) against `mbt coverage` on many random cases.

    .venv/bin/python tests/bench/judge_campaign.py              # 5,000 goldens per kind
    .venv/bin/python tests/bench/judge_campaign.py --cases 500 --seed 7

Prints, per kind, the goldens judged, the element statuses compared, the disagreements (the first few in full) and
the time taken. `make test` runs a bounded campaign per kind (tests/test_judge_*.py); this is the long one.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

KINDS = ("fsm", "invariant", "table", "policy")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kind", action="append", choices=KINDS)
    args = parser.parse_args()
    failed = False
    for kind in args.kind or KINDS:
        try:
            module = importlib.import_module(f"tests.judge.{kind}")
        except ModuleNotFoundError:
            print(f"{kind}: no judge")
            continue
        started = time.perf_counter()
        result = module.campaign(args.cases, args.seed)
        print(f"{result.line()}  ({time.perf_counter() - started:.1f} s, seed {args.seed})")
        for line in result.disagreements[:5]:
            print(f"    {line}")
        failed |= bool(result.disagreements)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
