"""Benchmark of the result store: 100,000 case results written into a set, listed and filtered, two sets of 100,000
compared, one exported (JSON and Excel); on SQLite, and on PostgreSQL when a server is given.

    python tests/bench/bench_store.py                       # 100,000 cases per set, SQLite
    python tests/bench/bench_store.py --quick               # 2,000 cases: a smoke run (make test)
    python tests/bench/bench_store.py --postgres URL        # ... and on that PostgreSQL database (its tables are
                                                            # made there; use a database of its own)
    python tests/bench/bench_store.py --start-postgres      # ... and on a throwaway server (tests/pg_server.py)

The cases are synthetic eval cases shaped as `mbt eval` records them (a quarter multi-turn, three criteria, a
session per case, the report's case document): written through mbt.store.write.SetWriter exactly as `--save` writes
them, one transaction per batch of 2,000. Then, through mbt.store's own functions, the calls `mbt results` makes:
the list of sets; the overview with the first page of 100 cases (what a viewer shows first); the filters (failed
cases, multi-turn cases, a search in questions and answers, a page deep in the set); one case's detail; the
comparison of two sets of that size (the second with 5% of the cases flipped); the JSON and Excel exports. Wall
times in this process, the best of three for the reads; never asserts (figures for a person, as the other benches).
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

from mbt.store.compare import compare  # noqa: E402
from mbt.store.db import Store  # noqa: E402
from mbt.store.query import CaseFilters, SetFilters, case_detail, export, list_sets, show  # noqa: E402
from mbt.store.records import CaseRecord, NewSet  # noqa: E402
from mbt.store.url import parse  # noqa: E402
from mbt.store.write import SetWriter  # noqa: E402

FULL, QUICK = 100_000, 2_000
CRITERIA = ("accuracy", "safety", "fluency")
WORDS = ("refund", "card", "transfer", "limit", "unlock", "order", "cancel", "address", "fee", "balance", "khóa",
         "thẻ", "chuyển", "khoản", "退款", "订单")
INSTANT_MS = 100  # a list or filter a person does not wait for


def _text(rnd: random.Random, words: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(words)).capitalize() + "?"


def records(count: int, seed: int, flip_share: float = 0.0):
    """`count` eval-shaped records; with `flip_share`, that share of the verdicts changed (another release)."""
    rnd = random.Random(seed)
    flips = random.Random(seed + 1)
    for n in range(count):
        turns = 3 if n % 4 == 0 else 1
        questions = [_text(rnd, 8) for _ in range(turns)]
        answers = [_text(rnd, 12) for _ in range(turns)]
        verdicts = {c: rnd.choices(("pass", "fail", "not_judged", "error"), (80, 15, 3, 2))[0] for c in CRITERIA}
        if flip_share and flips.random() < flip_share:
            verdicts["accuracy"] = "fail" if verdicts["accuracy"] == "pass" else "pass"
        overall = ("error" if "error" in verdicts.values() else "pass" if verdicts["accuracy"] == "pass"
                   else "not_judged" if verdicts["accuracy"] == "not_judged" else "fail")
        doc = {"id": str(n + 1), "where": f"suite.xlsx[QNA]:{n + 2}",
               "turns": [{"question": q, "expected": [_text(rnd, 10)], "actual": a, "judged": True}
                         for q, a in zip(questions, answers)],
               "overall": {"verdict": overall, "reason": "passed weight compared with the threshold"},
               "transcript": [{"prompt": q, "answer": a, "calls": [], "matched_tools": None, "commands": None,
                               "stop_reason": "completed", "tokens": None} for q, a in zip(questions, answers)]}
        yield CaseRecord(
            case_key=f"suite[QNA]/{n + 1}", case_id=str(n + 1), location=f"suite.xlsx[QNA]:{n + 2}", turns=turns,
            question=questions[0], answer=answers[0], overall=overall,
            search="\n".join(questions + answers).casefold(), doc=doc,
            verdicts=[(c, v, f"{c}: the judge's reason for {v}", "embedded") for c, v in verdicts.items()],
            agent_version="1.5" if flip_share else "1.4", wall_ms=rnd.uniform(200, 4000),
            error="safety: the judge timed out" if overall == "error" else None)


def best(fn, repeat: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def run(url: str, label: str, count: int) -> None:
    print(f"\n== {label}: {count:,} cases per set")
    with Store(parse(url, "--store")) as store:
        for name, seed, flips in (("bench-A", 1, 0.0), ("bench-B", 1, 0.05)):
            start = time.perf_counter()
            with SetWriter(store, NewSet(name, "suite", "eval", "user:bench", {"criteria": dict.fromkeys(CRITERIA, "1")},
                                         {})) as writer:
                writer.add(records(count, seed, flips))
                writer.finish({})
            seconds = time.perf_counter() - start
            print(f"write {name}: {seconds:7.2f} s  ({count / seconds:,.0f} cases/s, one transaction per 2,000)")

        def ms(seconds: float) -> str:
            flag = "" if seconds * 1000 <= INSTANT_MS else f"   (over {INSTANT_MS} ms)"
            return f"{seconds * 1000:8.1f} ms{flag}"

        seconds, _ = best(lambda: list_sets(store, SetFilters()))
        print(f"list the sets:                           {ms(seconds)}")
        seconds, found = best(lambda: show(store, "bench-A", CaseFilters(limit=100)))
        print(f"overview + first 100 cases:              {ms(seconds)}")
        for what, filters in (("failed cases, first 100", CaseFilters(results=("fail",), limit=100)),
                              ("multi-turn cases, first 100", CaseFilters(turns="multi", limit=100)),
                              ("search 'refund card', first 100", CaseFilters(search="refund card", limit=100)),
                              ("search with no hit", CaseFilters(search="no such words", limit=100)),
                              ("failed + search, first 100", CaseFilters(results=("fail",), search="退款", limit=100)),
                              ("a page deep in the set (offset 90%)", CaseFilters(offset=count * 9 // 10, limit=100))):
            seconds, view = best(lambda f=filters: show(store, "bench-A", f))
            print(f"{what + ':':41}{ms(seconds)}  {view.matching:,} matching")  # type: ignore[attr-defined]
        seconds, _ = best(lambda: case_detail(store, "bench-A", f"suite[QNA]/{count // 2}"))
        print(f"one case in detail:                      {ms(seconds)}")
        start = time.perf_counter()
        compared = compare(store, "bench-A", "bench-B")
        print(f"compare two sets:                        {time.perf_counter() - start:8.2f} s   "
              f"{len(compared.flips):,} flips, {len(compared.metrics)} deltas")
        from mbt.report.results_json import results_json
        from mbt.report.xlsx_results import results_xlsx

        with export(store, "bench-A") as found_set:
            start = time.perf_counter()
            size = sum(len(part) for part in results_json(found_set.info, found_set.overview, found_set.summary,
                                                          found_set.cases()))
            print(f"export JSON:                             {time.perf_counter() - start:8.2f} s   "
                  f"{size / 1e6:,.1f} MB")
        with export(store, "bench-A") as found_set:
            start = time.perf_counter()
            book = results_xlsx(found_set.info, found_set.overview, found_set.cases())
            print(f"export Excel:                            {time.perf_counter() - start:8.2f} s   "
                  f"{len(book) / 1e6:,.1f} MB")
        io.BytesIO(book)
    if url.endswith(".db"):
        print(f"database file: {os.path.getsize(url) / 1e6:,.1f} MB")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"{QUICK:,} cases per set instead of {FULL:,}")
    ap.add_argument("--cases", type=int, default=None, help="cases per set")
    ap.add_argument("--postgres", metavar="URL", help="also on this PostgreSQL database")
    ap.add_argument("--start-postgres", action="store_true", help="also on a throwaway server (tests/pg_server.py)")
    args = ap.parse_args(argv)
    count = args.cases or (QUICK if args.quick else FULL)
    with tempfile.TemporaryDirectory(prefix="mbt-bench-store-") as folder:
        run(str(Path(folder) / "results.db"), "SQLite", count)
    if args.postgres:
        run(args.postgres, "PostgreSQL", count)
    if args.start_postgres:
        from tests.pg_server import PgServer

        server = PgServer().start()
        try:
            run(server.url(server.new_database()), "PostgreSQL (throwaway server)", count)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
