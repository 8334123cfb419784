"""Reading observed runs at the speed of decoding (issue 37, item 1): prints each figure beside its baseline, measured
in the same run, alternately (A, B, A, B ...) and best of N, since the machine is shared. Never asserts.

    python tests/bench/bench_decode.py            # 28,000 runs of the order example; histories of 10 to 1,000 messages
    python tests/bench/bench_decode.py --quick    # 1,400 runs; histories of 10 to 300 messages (a smoke run)

1. `mbt runs` end to end against `json.load` of the same files, in CPU seconds: the order example's 14 traces
   (models/runs/orders-traces.json) repeated under fresh trace ids, 1,000 traces an OTLP/JSON file, as the issue
   measured them. `mbt runs` in this process (the compiled-model cache warm, the JSON report written) and as a
   command (`python -m mbt runs ... --format json`, user + system CPU of the child). Target: within 2x. Two
   baselines, both printed: `json.load` as a default interpreter runs it (the cyclic garbage collector on, which
   rescans the decoded objects as they pile up: the issue's 3.5 s for 127 MB is this one), and `json.load` with the
   collector paused (decoding alone: the floor). `mbt runs` pauses the collector itself, so its figure is the same
   either way.
2. Time per input megabyte when chat spans repeat a growing history (the current conventions'
   `gen_ai.input.messages`, 10 to 1,000 messages): reading the runs (mbt.runs.reader) and `json.load`, each per MB.
   Target: flat (the same per MB whatever the history's length).
3. Memory: the largest anonymous resident memory of `mbt runs` on one OTLP file of many traces, sampled from /proc,
   beside `json.load` of that file in a fresh interpreter, the file's size and its largest trace's. Target: bounded by
   the largest run, not the file.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mbt import api  # noqa: E402
from mbt.runs.reader import FileRuns, run_files  # noqa: E402

ORDERS = ROOT / "models" / "orders.fsm"
EXAMPLE = ROOT / "models" / "runs" / "orders-traces.json"
TRACES_PER_FILE = 1000


def order_traces(folder: Path, copies: int) -> list[Path]:
    """The example's traces, `copies` times under fresh ids, in compact OTLP/JSON files of TRACES_PER_FILE traces."""
    source = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    resource = source["resourceSpans"][0]["resource"]
    spans = [s for rs in source["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    by_trace: dict[str, list[dict]] = {}
    for span in spans:
        by_trace.setdefault(span["traceId"], []).append(span)
    files, batch, count = [], [], 0

    def flush() -> None:
        doc = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "bench"}, "spans": batch}]}]}
        path = folder / f"orders-{len(files):04d}.json"
        path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
        files.append(path)

    for copy in range(copies):
        for trace_id, trace in sorted(by_trace.items()):
            fresh = f"{copy:016x}{int(trace_id, 16):016x}"
            batch.extend(dict(span, traceId=fresh) for span in trace)
            count += 1
            if count % TRACES_PER_FILE == 0:
                flush()
                batch = []
    if batch:
        flush()
    return files


def history_trace(number: int, messages: int) -> list[dict]:
    """One trace whose chat spans each repeat the whole conversation so far (user and assistant turns alternating),
    up to `messages` messages, as the current conventions' instrumentations record a chat."""
    trace = f"{number:032x}"
    history: list[dict] = []
    spans = []
    for turn in range(0, messages, 2):
        history.append({"role": "user", "parts": [{"type": "text", "content": f"Where is my order SO-{turn:05d}?"}]})
        reply = [{"role": "assistant", "parts": [{"type": "text", "content": f"Order SO-{turn:05d} is on its way."}]}]
        attributes = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                      {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(history)}},
                      {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(reply)}}]
        spans.append({"traceId": trace, "spanId": f"{turn + 1:016x}", "name": "chat",
                      "startTimeUnixNano": str(1000 * turn + 1), "endTimeUnixNano": str(1000 * turn + 2),
                      "attributes": attributes})
        history.extend(reply)
    return spans


def history_file(folder: Path, messages: int, megabytes: float) -> tuple[Path, int]:
    """An OTLP/JSON file of traces with `messages`-message histories, about `megabytes` big (at least one trace)."""
    spans: list[dict] = []
    size, number = 0, 0
    while size < megabytes * 1e6 or not spans:
        trace = history_trace(number, messages)
        spans.extend(trace)
        size += len(json.dumps(trace))
        number += 1
    path = folder / f"history-{messages}.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}, separators=(",", ":")),
                    encoding="utf-8")
    return path, number


def cpu(work, collector: bool = False) -> float:
    """CPU seconds of `work()`, the cyclic garbage collector paused (unless `collector`)."""
    gc.collect()
    if not collector:
        gc.disable()
    try:
        start = time.process_time()
        work()
        return time.process_time() - start
    finally:
        gc.enable()


def json_load(files: list[Path]) -> None:
    for path in files:
        with open(path, "rb") as handle:
            json.load(handle)


def read_runs(files: list[Path]) -> None:
    for path, shown in run_files([str(p) for p in files]):
        for _ in FileRuns(path, shown):
            pass


def command_cpu(args: list[str]) -> float:
    """User + system CPU seconds of `python -m mbt ARGS` (its children included)."""
    before = os.times()
    subprocess.run([sys.executable, "-m", "mbt", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def peak_anonymous(args: list[str]) -> int:
    """The largest anonymous resident memory (bytes) of a child process, sampled every 5 ms from /proc."""
    child = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while child.poll() is None:
        try:
            for line in Path(f"/proc/{child.pid}/status").read_text().splitlines():
                if line.startswith("RssAnon:"):
                    peak = max(peak, int(line.split()[1]) * 1024)
        except OSError:
            pass
        time.sleep(0.005)
    return peak


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,400 runs, histories of 10 to 300 messages")
    ap.add_argument("--rounds", type=int, default=None, help="alternations, best of them (default 3; --quick 1)")
    args = ap.parse_args(argv)
    import mbt.runs

    # Which mbt/runs is measured: the compiled build (mbt/native_build.py) or the .py modules, and why.
    print(f"mbt/runs: the {mbt.runs.BUILD} build ({mbt.runs.BUILD_REASON})")
    rounds = args.rounds or (1 if args.quick else 3)
    copies = 100 if args.quick else 2000
    history_sizes = (10, 100, 300) if args.quick else (10, 100, 1000)
    megabytes = 3 if args.quick else 30
    with tempfile.TemporaryDirectory(prefix="mbt-bench-decode-") as tmp:
        folder = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(folder / "cache")  # the compiled-model cache, deleted afterwards
        os.environ.pop("MBT_NO_CACHE", None)
        runs = folder / "orders"
        runs.mkdir()
        files = order_traces(runs, copies)
        size = sum(p.stat().st_size for p in files)
        api.load_compiled([str(ORDERS)])  # the cache entry every run below reads
        command = ["runs", "--model", str(ORDERS), "--runs", str(runs), "--no-gate", "--jobs", "1", "--format",
                   "json", "-o", str(folder / "report.json")]

        def in_process() -> None:
            api.runs([str(ORDERS)], [str(runs)], use_gate=False, jobs=1).model_dump_json()

        default, paused = "json.load, default interpreter", "json.load, collector paused"
        best = {default: float("inf"), paused: float("inf"), "mbt runs (in process, JSON report)": float("inf"),
                "mbt runs (command, JSON report)": float("inf")}
        for _ in range(rounds):  # alternately: the machine is shared, a slow moment hits each in turn
            best[default] = min(best[default], cpu(lambda: json_load(files), collector=True))
            best[paused] = min(best[paused], cpu(lambda: json_load(files)))
            best["mbt runs (in process, JSON report)"] = min(best["mbt runs (in process, JSON report)"],
                                                           cpu(in_process))
            best["mbt runs (command, JSON report)"] = min(best["mbt runs (command, JSON report)"],
                                                        command_cpu(command))
        print(f"1. the order example's traces under fresh ids: {copies * 14:,} runs, {len(files)} files, "
              f"{size / 1e6:.0f} MB; CPU seconds, best of {rounds} alternated; {os.cpu_count()} cores, load "
              f"{os.getloadavg()[0]:.2f}")
        for label, seconds in best.items():
            ratio = "baseline" if label in (default, paused) else \
                f"{seconds / best[default]:.2f}x the first, {seconds / best[paused]:.2f}x the second   target <= 2x"
            print(f"  {label:40} {seconds:8.2f} s  {size / 1e6 / seconds:7.1f} MB/s   {ratio}")

        print(f"2. chat spans repeating a growing history: CPU seconds per input MB, best of {rounds}")
        for messages in history_sizes:
            path, traces = history_file(folder, messages, megabytes)
            mb = path.stat().st_size / 1e6
            load = read = float("inf")
            for _ in range(rounds):
                load = min(load, cpu(lambda p=path: json_load([p])))
                read = min(read, cpu(lambda p=path: read_runs([p])))
            print(f"  {messages:5} messages ({traces:5} traces, {mb:5.1f} MB): json.load {load / mb * 1000:7.1f} ms/MB, "
                  f"mbt reading {read / mb * 1000:7.1f} ms/MB ({read / load:.2f}x)   target: flat per MB")
            path.unlink()

        print("3. memory: the largest anonymous resident memory of one process")
        spans = []
        for path in files:
            doc = json.loads(path.read_text(encoding="utf-8"))
            spans += [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
        resource = json.loads(files[0].read_text(encoding="utf-8"))["resourceSpans"][0]["resource"]
        one = folder / "all.json"
        one.write_text(json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]},
                                  separators=(",", ":")), encoding="utf-8")
        largest = max(len(json.dumps([s for s in spans if s["traceId"] == t]))
                      for t in {s["traceId"] for s in spans[:200]})
        del spans
        idle = peak_anonymous([sys.executable, "-c", "import json, mbt.api"])
        loaded = peak_anonymous([sys.executable, "-c", f"import json; json.load(open({str(one)!r}, 'rb'))"])
        streamed = peak_anonymous([sys.executable, "-c", "import sys; from mbt.runs.reader import FileRuns\n"
                                   f"for run in FileRuns({str(one)!r}, 'all.json'): pass"])
        judged = peak_anonymous([sys.executable, "-m", "mbt", "runs", "--model", str(ORDERS), "--runs", str(one),
                                 "--no-gate", "--jobs", "1", "--format", "json", "-o", str(folder / "one.json")])
        mib = 1024 * 1024
        print(f"  one OTLP/JSON file of {one.stat().st_size / mib:.0f} MiB, {copies * 14:,} traces (the largest "
              f"{largest / 1024:.0f} KiB); an interpreter with mbt imported: {idle / mib:.0f} MiB")
        print(f"  json.load of the file:            {loaded / mib:8.0f} MiB   (baseline: the file held decoded)")
        print(f"  its runs read one at a time:      {streamed / mib:8.0f} MiB   (+{(streamed - idle) / mib:.0f} MiB "
              "over the interpreter: the spans' index and one trace; the file's pages are mapped, not copied)")
        print(f"  mbt runs on the file (JSON report): {judged / mib:6.0f} MiB   (+{(judged - idle) / mib:.0f} MiB: "
              "besides, every run's row of the report, which lists them all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
