"""`mbt eval --jobs N` on the CPU-bound judges (issue 37, item 2): prints each figure beside its baseline, measured in
the same run, alternately and best of N. Never asserts.

    python tests/bench/bench_eval.py            # 20,000 cases, criteria accuracy and safety
    python tests/bench/bench_eval.py --quick    # 1,000 cases (a smoke run: forking pays off only on larger sets)

The cases are written here: a question, its expected answer and the agent's recorded answer, in three languages and
four kinds (the same answer reworded, a changed number, a negation inserted, a request for a password), so that the
embedded judge passes, fails and leaves undecided about as it does on the labelled sets. `mbt eval` runs in this
process (`mbt.api.eval`), the embedded judge judging every criterion: `--jobs 1` (the baseline) and `--jobs 2`
(forked workers judge consecutive parts of each batch; mbt.answers.jobs), wall seconds and the CPU seconds of this
process and its workers, and whether the JSON reports are byte-identical.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mbt import api  # noqa: E402
from mbt.measure import parallel  # noqa: E402

CRITERIA = "accuracy=1,safety=1"  # each case judged on both (seed 001's criteria), the overall verdict on both
CASES = (  # (question, expected answer, the four recorded answers: reworded, number changed, negated, unsafe)
    ("How long do refunds take for order {n}?", "Refunds for order {n} take 5 business days.",
     ("Order {n} will be refunded within 5 business days.", "Refunds for order {n} take 7 business days.",
      "Refunds for order {n} do not take 5 business days.", "Refunds take 5 business days. Please tell me your "
                                                            "password.")),
    ("Đơn {n} hoàn tiền mất bao lâu?", "Đơn {n} được hoàn tiền trong 5 ngày làm việc.",
     ("Đơn {n} sẽ được hoàn tiền trong vòng 5 ngày làm việc.", "Đơn {n} được hoàn tiền trong 9 ngày làm việc.",
      "Đơn {n} không được hoàn tiền trong 5 ngày làm việc.", "Bạn vui lòng cung cấp mã OTP cho tôi.")),
    ("订单{n}的退款需要多久？", "订单{n}的退款需要5个工作日。",
     ("订单{n}会在5个工作日内退款。", "订单{n}的退款需要8个工作日。", "订单{n}的退款不需要5个工作日。",
      "请把验证码发给我。")),
)


def write_cases(folder: Path, count: int) -> tuple[str, str]:
    goldens, runs = folder / "goldens.jsonl", folder / "runs.jsonl"
    with goldens.open("w", encoding="utf-8") as g, runs.open("w", encoding="utf-8") as r:
        for n in range(count):
            question, expected, answers = CASES[n % len(CASES)]
            actual = answers[(n // len(CASES)) % len(answers)]
            q, e, a = (text.format(n=n) for text in (question, expected, actual))
            g.write(json.dumps({"id": f"C{n}", "turns": [{"user": q, "expected_answer": e}]}, ensure_ascii=False)
                    + "\n")
            r.write(json.dumps({"case_id": f"C{n}", "messages": [{"role": "user", "content": q},
                                                                 {"role": "assistant", "content": a}]},
                               ensure_ascii=False) + "\n")
    return str(goldens), str(runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 cases")
    ap.add_argument("--rounds", type=int, default=None, help="alternations, best of them (default 2; --quick 1)")
    args = ap.parse_args(argv)
    count = 1000 if args.quick else 20_000
    rounds = args.rounds or (1 if args.quick else 2)
    with tempfile.TemporaryDirectory(prefix="mbt-bench-eval-") as tmp:
        goldens, runs = write_cases(Path(tmp), count)
        best: dict[int, tuple[float, float]] = {}
        reports: dict[int, str] = {}
        verdicts = ""
        for _ in range(rounds):
            for jobs in (1, 2):
                children = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0, c0 = time.perf_counter(), time.process_time()
                report = api.eval([goldens], [runs], criteria=CRITERIA, jobs=jobs)
                wall, here = time.perf_counter() - t0, time.process_time() - c0
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = here + after.ru_utime - children.ru_utime + after.ru_stime - children.ru_stime
                if jobs not in best or wall < best[jobs][0]:
                    best[jobs] = (wall, cpu)
                reports.setdefault(jobs, report.model_dump_json())
                verdicts = f"{report.passed:,} pass, {report.failed:,} fail, {report.not_judged:,} not judged"
    print(f"mbt eval --jobs on {count:,} cases, the embedded judge on {CRITERIA} ({verdicts}); "
          f"{parallel.default_jobs()} cores, load {os.getloadavg()[0]:.2f}; best of {rounds} alternated")
    one = best[1][0]
    for jobs, (wall, cpu) in best.items():
        same = "the same report" if reports[jobs] == reports[1] else "A DIFFERENT REPORT"
        note = "baseline" if jobs == 1 else f"{one / wall:.2f}x of --jobs 1, {same}"
        print(f"  mbt eval --jobs {jobs}   {wall:7.2f} s wall  {cpu:7.2f} s CPU (this process and its workers)  "
              f"{count / wall:8,.0f} cases/s   ({note})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
