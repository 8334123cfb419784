"""The LLM judge's throughput and cost against a local chat-completions server (issue 37, item 5): prints each figure
beside its baseline. Never asserts.

    python tests/bench/bench_llm.py            # limits 4, 8, 16 and 32; a 10,000-case eval
    python tests/bench/bench_llm.py --quick    # limits 4 and 8; a 300-case eval (a smoke run)

The server (tests/chat_server.py, in a process of its own so that it does not share this one's interpreter) answers
every request after LATENCY seconds with a verdict and a `usage` of PROMPT_TOKENS + COMPLETION_TOKENS, over kept-alive
HTTP/1.1 connections. Nothing leaves the machine; no key is needed.

1. Throughput: verdicts per second with at most LIMIT requests in flight (`llm: concurrency`), against the ideal
   LIMIT / LATENCY; target >= 0.8 x the ideal.
2. A 10,000-case `mbt eval --judge openai:bench-model` (one criterion, one answer a case): wall time, requests, tokens
   and the cost at an example price; again unchanged (every verdict from the cache: hit rate, requests); and with
   `--max-requests` and `--max-cost` (the budget stops cleanly: the rest not judged).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LATENCY = 0.05
PROMPT_TOKENS, COMPLETION_TOKENS = 420, 24
PRICE = {"input_per_mtok": 0.15, "output_per_mtok": 0.6}  # an example price (dollars per million tokens)


def serve(ready, latency: float) -> None:
    from tests.chat_server import ChatServer, Reply, completion

    body = completion('{"verdict": "pass", "reason": "the answer agrees"}', PROMPT_TOKENS, COMPLETION_TOKENS).body
    with ChatServer(lambda n, request, headers: Reply(delay=latency, body=body), keep_alive=True) as server:
        ready.put(server.base_url)
        time.sleep(24 * 3600)


def throughput(base_url: str, limit: int, count: int) -> tuple[float, float]:
    """(verdicts per second, CPU seconds of this process) for `count` items with `limit` in flight."""
    from mbt.judges.criteria import Criterion
    from mbt.judges.llm import LLMJudge
    from mbt.judges.verdicts import JudgeInput

    items = [JudgeInput(Criterion("accuracy"), f"Refunds take {n} days.", ("Refunds take 5 days.",), "How long?")
             for n in range(count)]
    judge = LLMJudge("bench-model", base_url=base_url, api_key="no-key", concurrency=limit, use_cache=False)
    judge.judge_many(items[:limit])  # connections opened
    start, cpu = time.perf_counter(), time.process_time()
    verdicts = judge.judge_many(items)
    seconds = time.perf_counter() - start
    judge.close()
    assert all(v.verdict == "pass" for v in verdicts)
    return count / seconds, time.process_time() - cpu


def write_eval(folder: Path, cases: int) -> tuple[Path, Path]:
    goldens, runs = folder / "goldens.jsonl", folder / "runs.jsonl"
    with goldens.open("w", encoding="utf-8") as g, runs.open("w", encoding="utf-8") as r:
        for n in range(cases):
            g.write(json.dumps({"id": f"C{n}", "turns": [{"user": f"How long do refunds take for order {n}?",
                                                          "expected_answer": "Refunds take 5 business days."}]}) + "\n")
            r.write(json.dumps({"case_id": f"C{n}", "messages": [
                {"role": "user", "content": f"How long do refunds take for order {n}?"},
                {"role": "assistant", "content": f"Refunds take {5 + n % 2} business days."}]}) + "\n")
    return goldens, runs


def run_eval(folder: Path, base_url: str, limit: int, *extra: str) -> tuple[float, dict]:
    from tests.cli_runner import run_mbt

    env = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "no-key", "XDG_CACHE_HOME": str(folder / "cache")}
    start = time.perf_counter()
    done = run_mbt("eval", "--goldens", str(folder / "goldens.jsonl"), "--runs", str(folder / "runs.jsonl"),
                   "--judge", "openai:bench-model", "--llm", f"concurrency={limit}", "--format", "json", *extra,
                   cwd=folder, env=env)
    seconds = time.perf_counter() - start
    if not done.stdout.startswith("{"):
        raise SystemExit(f"mbt eval failed: {done.stderr}")
    return seconds, json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="limits 4 and 8; a 300-case eval")
    args = ap.parse_args(argv)
    limits = (4, 8) if args.quick else (4, 8, 16, 32)
    cases = 300 if args.quick else 10_000
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing of this one's state
    ready = context.Queue()
    server = context.Process(target=serve, args=(ready, LATENCY), daemon=True)
    server.start()
    try:
        base_url = ready.get(timeout=60)
        print(f"LLM judge against a local server: {LATENCY * 1000:.0f} ms a reply, {PROMPT_TOKENS} + "
              f"{COMPLETION_TOKENS} tokens; {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
        print("1. throughput with at most LIMIT requests in flight (ideal: LIMIT / latency; target >= 0.8 x ideal)")
        for limit in limits:
            rate, cpu = throughput(base_url, limit, limit * (15 if args.quick else 40))
            ideal = limit / LATENCY
            print(f"  limit {limit:3}: {rate:7.1f} verdicts/s   ideal {ideal:6.0f}/s   {rate / ideal:.2f} x ideal   "
                  f"(this process: {cpu / (limit * (15 if args.quick else 40)) * 1000:.2f} ms CPU a verdict)")
        with tempfile.TemporaryDirectory(prefix="mbt-bench-llm-") as tmp:
            folder = Path(tmp)
            (folder / "mbt.yaml").write_text(f"llm:\n  prices: {{bench-model: {json.dumps(PRICE)}}}\n",
                                             encoding="utf-8")
            write_eval(folder, cases)
            limit = limits[-1]
            print(f"2. mbt eval of {cases:,} cases, one criterion, --llm concurrency={limit}")
            each = (PROMPT_TOKENS * PRICE["input_per_mtok"] + COMPLETION_TOKENS * PRICE["output_per_mtok"]) / 1e6
            requests, dollars = cases // 3, round(each * cases / 2, 4)  # budgets that stop a third and half of the way
            for label, extra in (("first run", ()), ("unchanged re-run (the cache)", ()),
                                 (f"--max-requests {requests}, no cache",
                                  ("--llm", "cache=false", "--max-requests", str(requests))),
                                 (f"--max-cost {dollars:g}, no cache",
                                  ("--llm", "cache=false", "--max-cost", str(dollars)))):
                seconds, report = run_eval(folder, base_url, limit, *extra)
                [usage] = report["judge_usage"]
                cost = "n/a" if usage["cost"] is None else f"${usage['cost']:.4f}"
                hits = "n/a" if usage["cache_hit_rate"] is None else f"{usage['cache_hit_rate'] * 100:.0f}%"
                print(f"  {label:32} {seconds:7.1f} s wall  {usage['requests']:6,} requests "
                      f"({usage['requests'] / seconds:6.1f}/s, ideal {limit / LATENCY:.0f}/s)  "
                      f"{usage['prompt_tokens'] + usage['completion_tokens']:10,} tokens  {cost:>9}  "
                      f"cache hits {hits:>4}  not judged by the budget {usage['not_asked']:,}  "
                      f"({report['passed']:,} pass, {report['failed']:,} fail, {report['not_judged']:,} not judged)")
    finally:
        server.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
