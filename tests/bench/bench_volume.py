"""Benchmark: `mbt coverage` at volume (issue 14): peak memory and wall time for large golden files (never asserts).

    python tests/bench/bench_volume.py                  # 190 MB and 1 GB of goldens on the 2,000-state model
    python tests/bench/bench_volume.py --size 50 --size 100   # other sizes (MB)
    python tests/bench/bench_volume.py --quick          # 20 MB and 40 MB on a 200-state model: a smoke run

The goldens are run_bench.py's (synth.py's random walks with their true states), written as one JSON Lines file of
the size asked for into a temporary folder (deleted afterwards; `--out DIR` keeps them): a pool of distinct walks,
repeated under fresh ids until the size is reached, so generating a gigabyte takes seconds, not the hour 2.4 million
fresh walks would. Per size it prints the wall time of the real command line (a child process, the models from a
warm compiled-model cache), its CPU seconds, its peak memory (the largest sum over the command and its worker
processes of their proportional set sizes, sampled every 50 ms: shared pages split between the processes that
share them; and the largest resident size of any one of them), the time per MB (flat when time is linear in the
size), and the time to only decode every line with msgspec. Targets: peak memory under 1 GB whatever the size,
time linear in the size. First, `mbt import dmn` on a DMN with a 2 MB attribute: its peak memory against the same
file without it (issue 14: it was some 200 times the attribute's size).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

import synth  # noqa: E402
from procmem import pss_tree  # noqa: E402

MB = 1024 * 1024
GB = 1024 * MB
POOL = 50_000  # distinct walks; the file repeats them under fresh ids
PLACEHOLDER = "@@ID@@"


def write_goldens(model: synth.SynthModel, path: Path, size_mb: int, seed: int = 1) -> int:
    """Write at least `size_mb` MB of goldens to `path`; returns how many cases."""
    pool = []
    for case in synth.generate_goldens(model, POOL, seed):
        case["id"] = PLACEHOLDER
        pool.append(json.dumps(case, ensure_ascii=False, separators=(",", ":")) + "\n")
    target, written, count = size_mb * MB, 0, 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            line = pool[count % len(pool)].replace(PLACEHOLDER, f"vol-{count:09d}", 1)
            out.write(line)
            written += len(line)
            count += 1
    return count


def coverage(model: Path, goldens: Path, out: Path, cache: Path, extra: list[str]) -> dict:
    """One run of the real command line: wall and CPU seconds, peak memory, exit code."""
    command = [sys.executable, "-m", "mbt", "coverage", "--model", str(model), "--goldens", str(goldens),
               "--format", "json", "-o", str(out), *extra]
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    env.pop("MBT_NO_CACHE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, cwd=HERE.parent.parent, env=env)
        pss = rss = 0
        while child.poll() is None:
            now_pss, now_rss = pss_tree(child.pid)
            pss, rss = max(pss, now_pss), max(rss, now_rss)
            time.sleep(0.05)
        wall = time.perf_counter() - start
        errors.seek(0)
        stderr = errors.read().decode("utf-8", "replace")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode not in (0, 1):  # 1: the gate failed, which the synthetic goldens are built to show
        raise SystemExit(f"mbt coverage failed (exit {child.returncode}): {' '.join(command)}\n{stderr}")
    cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
    return {"wall": wall, "cpu": cpu, "pss": pss, "rss": max(rss, usage.ru_maxrss * 1024), "code": child.returncode,
            "report": out.stat().st_size}


def decode_only(goldens: Path) -> tuple[float, float]:
    """CPU seconds to decode every line with msgspec: into its typed raw structs alone, and into GoldenCases."""
    from mbt.goldens.decode import _DECODER, decode_case

    start = time.process_time()
    with goldens.open("rb") as handle:
        for line in handle:
            _DECODER.decode(line)
    raw = time.process_time() - start
    start = time.process_time()
    with goldens.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            decode_case(line.decode("utf-8"), "g", number)
    return raw, time.process_time() - start


def dmn_import(folder: Path, attribute_mb: int = 2) -> list[tuple[str, int, float]]:
    """Peak resident memory of `mbt import dmn` (a child process) on tests/data/dmn/dish.dmn as shipped, and with
    a decision name and a rule description `attribute_mb` MB long: (which, bytes, seconds)."""
    dish = (HERE.parent / "data" / "dmn" / "dish.dmn").read_text(encoding="utf-8")
    long = "x" * (attribute_mb * MB)
    variants = {"as shipped": dish, f"{attribute_mb} MB name": dish.replace('name="Dish"', f'name="Dish{long}"', 1),
                f"{attribute_mb} MB description": dish.replace("<description>Default in fall</description>",
                                                               f"<description>{long}</description>", 1)}
    out = []
    for which, text in variants.items():
        path = folder / "dish.dmn"
        path.write_text(text, encoding="utf-8")
        command = [sys.executable, "-c", "import resource, sys; from mbt.cli import main\ntry:\n    main(sys.argv[1:])\n"
                   "finally:\n    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)",
                   "import", "dmn", str(path), "-o", str(folder / "dish.dt")]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=HERE.parent.parent)
        seconds = time.perf_counter() - start
        out.append((which, int(done.stderr.strip().split("\n")[-1]) * 1024, seconds))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, action="append", help="MB of goldens (repeatable; default 190 and 1024)")
    ap.add_argument("--quick", action="store_true", help="20 and 40 MB on a 200-state model")
    ap.add_argument("--out", help="keep the model and goldens in this folder (default: a temp folder)")
    ap.add_argument("--jobs", help="passed to mbt coverage (default: mbt's, the machine's cores)")
    ap.add_argument("--dmn-only", action="store_true", help="only the DMN import rows")
    args = ap.parse_args(argv)
    states, transitions = (200, 2000) if args.quick else (2000, 20000)
    sizes = args.size or ([20, 40] if args.quick else [190, 1024])
    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="mbt-volume-"))
    extra = ["--jobs", args.jobs] if args.jobs else []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        rows_dmn = dmn_import(folder)
        base = rows_dmn[0][1]
        print("mbt import dmn, peak resident memory (a long attribute's cost over the file as shipped):")
        for which, peak, seconds in rows_dmn:
            note = "" if peak == base else f", {(peak - base) / (2 * MB):.0f}x the attribute's size (2 MB)"
            print(f"  {which}: {peak / MB:.0f} MB{note}, {seconds:.1f} s")
        if args.dmn_only:
            return 0
        model = synth.generate_model(states, transitions, 0)
        model_path = folder / "bench.fsm"
        model_path.write_text(model.text(), encoding="utf-8")
        cache = folder / "cache"
        print(f"mbt volume benchmark: {states:,} states, {transitions:,} transitions; sizes {sizes} MB; "
              f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}", flush=True)
        small = folder / "warm.jsonl"
        write_goldens(model, small, 1)
        coverage(model_path, small, folder / "warm.json", cache, extra)  # fills the compiled-model cache
        rows = []
        for size in sizes:
            goldens = folder / f"goldens-{size}.jsonl"
            start = time.perf_counter()
            cases = write_goldens(model, goldens, size)
            made = time.perf_counter() - start
            actual = goldens.stat().st_size / MB
            run = coverage(model_path, goldens, folder / f"coverage-{size}.json", cache, extra)
            raw, typed = decode_only(goldens)
            rows.append((size, actual, cases, run, raw, typed))
            print(f"  {actual:,.0f} MB ({cases:,} cases, written in {made:.0f} s): {run['wall']:.1f} s wall, "
                  f"{run['cpu']:.1f} s CPU, peak {run['pss'] / GB:.2f} GB (largest process {run['rss'] / GB:.2f} GB), "
                  f"exit {run['code']}", flush=True)
            goldens.unlink()  # a gigabyte is not kept longer than its run
        print()
        print(f"{'goldens':>9}  {'cases':>10}  {'wall':>8}  {'CPU':>8}  {'s/MB':>6}  {'peak (PSS)':>10}  "
              f"{'largest':>8}  {'decode':>7}  {'typed':>7}  {'report':>7}")
        for _, actual, cases, run, raw, typed in rows:
            print(f"{actual:>6.0f} MB  {cases:>10,}  {run['wall']:>6.1f} s  {run['cpu']:>6.1f} s  "
                  f"{run['wall'] / actual:>6.3f}  {run['pss'] / GB:>7.2f} GB  {run['rss'] / GB:>5.2f} GB  "
                  f"{raw:>5.1f} s  {typed:>5.1f} s  {run['report'] / MB:>4.0f} MB")
        peak = max(run["pss"] for *_, run, _, _ in rows)
        print(f"\npeak memory {peak / GB:.2f} GB (target < 1 GB: {'ok' if peak < GB else 'MISSED'}); time per MB "
              + ", ".join(f"{run['wall'] / actual:.3f} s" for _, actual, _, run, _, _ in rows)
              + " (linear when flat); decode: msgspec into its typed structs alone / into GoldenCases, CPU time")
    finally:
        if not args.out:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
