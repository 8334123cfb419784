"""Benchmark: prints parse+check, enumeration, coverage-run and replay figures beside their targets (never asserts).

Beside them, the floor of reading: every golden line only decoded (json, msgspec) and a bare replay loop over the
same turns (a dict lookup per state and event, the compiled guards and actions, no bookkeeping), and the ratios of
`mbt coverage` (cold and warm cache) to decode + bare loop.

    python tests/bench/run_bench.py            # 2,000 states / 20,000 transitions / 100,000 goldens
    python tests/bench/run_bench.py --quick    # 200 / 2,000 / 2,000: a smoke run for CI, a few seconds

With `--quick` the goldens are below the size from which `--jobs` forks workers (one process does them all), while
`--engine dask` always splits: its rows then show mostly the cost of starting a local cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # synth.py sits beside this script
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

import synth  # noqa: E402
from procmem import tree_rss  # noqa: E402

from mbt import api  # noqa: E402
from mbt.engine.fsm import CompiledFsm  # noqa: E402
from mbt.goldens.loader import load_goldens  # noqa: E402
from mbt.goldens.replay_fsm import FsmReplayer  # noqa: E402
from mbt.kind import support  # noqa: E402
from mbt.reference import ReferenceMachine  # noqa: E402

FULL = (2000, 20000, 100_000)
QUICK = (200, 2000, 2000)
GB = 1024 ** 3
REPEATS = 3


def timed(func, *args):
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def parse_and_check(model: Path) -> tuple[float, str]:
    """Wall seconds for `mbt.api.check` (parse + static checks), the fastest of a few fresh processes (each builds
    its parser from lark's cache, as a command does); parse only while the checks do not exist yet."""
    try:
        from mbt.analysis.check import run_checks  # noqa: F401
    except ImportError:
        _, seconds = timed(api.load_models, [str(model)])
        return seconds, "parse only: mbt.analysis.check.run_checks does not exist yet"
    # One run's figure moved by a third between runs on a shared machine: the fastest of a few, as for the rest.
    # The modules are imported before the clock starts, as in this process (the import above), the parser is not.
    script = ("import json, sys, time\nfrom mbt import api\nimport mbt.analysis.check\nstart = time.perf_counter()\n"
              "report = api.check([sys.argv[1]])\n"
              "print(json.dumps([time.perf_counter() - start, len(report.findings)]))")
    runs = [json.loads(subprocess.run([sys.executable, "-c", script, str(model)], capture_output=True, text=True,
                                      check=True, cwd=HERE.parent.parent).stdout) for _ in range(REPEATS)]
    seconds, findings = min(runs)
    return seconds, f"{findings} findings, best of {REPEATS} fresh processes"


def coverage_runs(model: Path, goldens: Path, out: Path, cache: Path | None = None) -> tuple[float, int, str]:
    """The fastest of a few runs of the real command line (wall seconds, with its CPU seconds in the note), and the
    largest peak memory (bytes) of any of them. Without `cache` the runs pass --no-cache (cold: the models are parsed
    and enumerated each time); with it, they use the compiled-model cache in that folder, filled by a first run."""
    if cache is not None:
        coverage_run(model, goldens, out, cache)
    runs = [coverage_run(model, goldens, out, cache) for _ in range(REPEATS)]
    seconds, _, note = min(runs)
    return seconds, max(peak for _, peak, _ in runs), note + f", best of {REPEATS}"


def coverage_run(model: Path, goldens: Path, out: Path, cache: Path | None = None,
                 extra: tuple[str, ...] = ()) -> tuple[float, int, str]:
    """Wall seconds and peak memory (bytes) of the real command line, run as a child process.

    The memory is the largest sum, sampled every 20 ms, of the resident sizes of the command and the second
    process it forks for large runs (pages they share are counted twice, so the figure errs high); the
    single-process maximum the kernel records (ru_maxrss) is never smaller than a sample of one process.
    """
    command = [sys.executable, "-m", "mbt", "coverage", "--model", str(model), "--goldens", str(goldens),
               "--format", "json", "-o", str(out), *(["--no-cache"] if cache is None else []), *extra]
    env = dict(os.environ, **({"XDG_CACHE_HOME": str(cache)} if cache is not None else {}))
    env.pop("MBT_NO_CACHE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, cwd=HERE.parent.parent, env=env)
        peak = 0
        while child.poll() is None:
            peak = max(peak, tree_rss(child.pid))
            time.sleep(0.02)
        seconds = time.perf_counter() - start
        errors.seek(0)
        stderr = errors.read().decode("utf-8", "replace")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # of this script's children, and theirs
    peak = max(peak, usage.ru_maxrss * 1024)  # kilobytes on Linux; the largest single process so far
    if child.returncode not in (0, 1):  # 1: the gate failed, which the synthetic goldens are built to show
        raise SystemExit(f"mbt coverage failed (exit {child.returncode}):\n{stderr}")
    # CPU seconds beside the wall time: on a busy machine the wall time also counts waiting for a core.
    cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
    return seconds, peak, f"exit {child.returncode}, {cpu:.1f} s CPU, report {out.stat().st_size / 1e6:.0f} MB"


SCALE = (("--jobs 1", ("--jobs", "1")), ("--jobs 2", ("--jobs", "2")),
         ("--engine dask --jobs 2", ("--engine", "dask", "--jobs", "2")))


def scale_rows(model: Path, goldens: Path, folder: Path, count: int) -> list[tuple[str, str, str, str, str]]:
    """Warm-cache wall time of one process, two forked workers and a local Dask cluster of two workers (its start
    and stop included), each report compared byte for byte with the first."""
    rows, first, base = [], b"", 0.0
    for name, extra in SCALE:
        out = folder / f"scale-{len(rows)}.json"
        wall, _, note = coverage_run(model, goldens, out, folder / "cache", extra)
        report = out.read_bytes()
        first, base = (report, wall) if not rows else (first, base)
        same = "the same report" if report == first else "A DIFFERENT REPORT"
        rows.append((f"mbt coverage {name}", f"{count / wall:,.0f} goldens/s", "", "",
                     f"{wall:.2f} s, {base / wall:.2f}x of --jobs 1, {same}; {note}"))
    return rows


def decode_figures(goldens_path: Path) -> tuple[float, float | None]:
    """CPU seconds to only decode every golden line: with json.loads, and with msgspec (None where it is missing)."""
    lines = goldens_path.read_bytes().splitlines()

    def with_json() -> None:
        for line in lines:
            if line.strip():
                json.loads(line)

    try:
        import msgspec
    except ImportError:
        return best_of(with_json), None
    decode = msgspec.json.Decoder().decode

    def with_msgspec() -> None:
        for line in lines:
            if line.strip():
                decode(line)

    return best_of(with_json), best_of(with_msgspec)


def bare_loop(compiled: CompiledFsm, sequences: list) -> Callable[[], None]:
    """The floor of replay, to be timed: per turn a dict lookup by (state, event), the first transition whose
    compiled guard holds, its compiled actions; no element, assertion or finding is recorded."""
    table: dict[tuple[str, str], list] = {}
    for ct in compiled.transitions:
        table.setdefault((ct.t.source, ct.t.event), []).append((ct.guard, ct.actions, ct.t.target, ct.param_names))
    params = compiled.params
    start = compiled.initial_config()[1]

    def run() -> None:
        for state, pre, events in sequences:
            variables = dict(start)
            variables.update(pre)
            state = state or compiled.model.initial_state
            for event, args in events:
                for guard, actions, target, names in table.get((state, event), ()):
                    env = variables
                    if args:
                        env = dict(variables)
                        env.update(zip(names, (args.get(p) for p in params[event])))
                    if guard is None or guard(env):
                        made: list = []
                        for action in actions:
                            action(env, variables, made)
                        state = target
                        break

    return run


def replay_figures(model_path: Path, goldens_path: Path) -> tuple[int, float, float, float, list[float], str]:
    """Turns replayed, seconds for mbt's replay engine, for the `transitions` reference machine and for the bare loop
    on the same event sequences (configurations reset per case, as a golden's precondition does), and the ratio of
    replay to reference in each round. The three run in turn, round after round, so each round compares them at
    one moment: this machine's speed drifts by a third over minutes, which moved a ratio of best-of runs taken
    one after the other by 2x between runs."""
    _, models = api.load_models([str(model_path)])
    model = models[0]
    elements = support(model.kind).enumerate(model)
    compiled = CompiledFsm(model, elements)
    cases = api.collector_paused(load_goldens)([str(goldens_path)]).cases
    replayer = FsmReplayer(compiled)
    binder = replayer.binder
    # The same event sequences for the reference machine: bound as replay binds them, up to an unbound turn.
    sequences = []
    turns = 0
    for case in cases:
        pre = dict(case.precondition)
        state = pre.pop("state", None)
        events = []
        for number, turn in enumerate(case.turns, start=1):
            bound = binder.bind(turn, case.final.intent if number == 1 else None)
            if isinstance(bound, str):
                break
            events.append((bound.event, bound.args))
        sequences.append((state, pre, events))
        turns += len(events)
    machine = ReferenceMachine(model)

    def replay_all() -> None:
        for case in cases:
            replayer.replay(case)

    def reference_all() -> None:
        for state, variables, events in sequences:
            machine.reset(state, variables)
            for event, args in events:
                machine.send(event, args)

    timings = in_rounds(replay_all, reference_all, bare_loop(compiled, sequences))
    replay, reference, bare = (min(t[k] for t in timings) for k in range(3))
    return (turns, replay, reference, bare, [t[1] / t[0] for t in timings],
            f"{len(cases):,} cases, best of {REPEATS} rounds")


def typed_decode_figures(goldens_path: Path) -> tuple[float, float, int]:
    """CPU seconds to only decode every golden line with msgspec (issue 16): into the typed structs of
    mbt.goldens.decode alone, and on into GoldenCases (decode_case); and the number of lines."""
    from mbt.goldens.decode import _DECODER, decode_case

    lines = goldens_path.read_bytes().split(b"\n")
    lines = [line for line in lines if line.strip()]
    texts = [line.decode("utf-8") for line in lines]
    raw = best_of(lambda: [_DECODER.decode(line) for line in lines])
    typed = best_of(lambda: [decode_case(text, "g", 1) for text in texts])
    return raw, typed, len(lines)


def best_of(func) -> float:
    """CPU seconds of the fastest of a few runs: both sides are single-threaded, so CPU time compares them
    fairly even while other work on the machine makes wall times jump."""
    return min(times[0] for times in in_rounds(func))


@api.collector_paused  # timed as a coverage run replays: with the cyclic collector paused
def in_rounds(*funcs) -> list[list[float]]:
    """CPU seconds of each function in each of a few rounds, the functions run one after another in every round."""
    rounds = []
    for _ in range(REPEATS):
        times = []
        for func in funcs:
            start = time.process_time()
            func()
            times.append(time.process_time() - start)
        rounds.append(times)
    return rounds


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes for a CI smoke run")
    ap.add_argument("--out", help="keep the generated model and goldens in this folder (default: a temp folder)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    states, transitions, goldens = QUICK if args.quick else FULL
    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="mbt-bench-"))
    try:
        print(f"mbt benchmark: {states:,} states, {transitions:,} transitions, {goldens:,} goldens "
              f"(python {platform.python_version()}, {os.cpu_count()} cores)", flush=True)
        (model, golden_file, stats), gen_seconds = timed(synth.write_bench, folder, states, transitions, goldens,
                                                         args.seed)
        print(f"generated in {gen_seconds:.1f} s: {stats.turns:,} turns, {stats.asserted:,} with assert_state, "
              f"{stats.wrong:,} deliberately wrong, {stats.refused:,} refused, {stats.text_only:,} text only; "
              f"{folder}", flush=True)
        rows = []
        check_seconds, check_note = parse_and_check(model)
        rows.append(("parse + check (api.check)", f"{check_seconds:.2f} s", "< 5 s", verdict(check_seconds < 5),
                     check_note))
        report, elements_seconds = timed(api.elements, [str(model)])
        count = sum(len(m.elements) for m in report.models)
        _, models = api.load_models([str(model)])
        # As in a run: the cyclic collector is paused while the elements are built (mbt.api.collector_paused).
        _, enumerate_seconds = timed(api.collector_paused(support("fsm").enumerate), models[0])
        rows.append(("elements (api.elements)", f"{elements_seconds:.2f} s", "", "", "parse + enumerate"))
        rows.append(("  enumeration alone", f"{enumerate_seconds:.2f} s", "", "", f"{count:,} elements"))
        wall, peak, note = coverage_runs(model, golden_file, folder / "coverage.json")
        rows.append(("mbt coverage: wall time", f"{wall:.2f} s", "< 15 s", verdict(wall < 15), "cold (--no-cache), " + note))
        warm, warm_peak, warm_note = coverage_runs(model, golden_file, folder / "coverage.json", folder / "cache")
        peak = max(peak, warm_peak)
        rows.append(("mbt coverage: warm cache", f"{warm:.2f} s", "", "", "compiled models from the cache, " + warm_note))
        rows.append(("mbt coverage: peak memory", f"{peak / GB:.2f} GB", "< 1 GB", verdict(peak < 1 * GB),
                     "resident, all its processes"))
        size = (folder / "coverage.json").stat().st_size
        rows.append(("mbt coverage: report size", f"{size / 1e6:.0f} MB", "<= 40 MB", verdict(size <= 40e6),
                     "--format json -o FILE, default options (compact, first 25 golden ids per element)"))
        rows += scale_rows(model, golden_file, folder, goldens)
        turns, replay_seconds, reference_seconds, bare_seconds, ratios, note = replay_figures(model, golden_file)
        json_seconds, msgspec_seconds = decode_figures(golden_file)
        decode_seconds = msgspec_seconds if msgspec_seconds is not None else json_seconds
        rows.append(("decode every golden line: json", f"{json_seconds:.2f} s", "", "", "json.loads per line, CPU time"))
        if msgspec_seconds is not None:
            rows.append(("decode every golden line: msgspec", f"{msgspec_seconds:.2f} s", "", "",
                         "msgspec.json.Decoder per line, CPU time"))
        raw, typed, count = typed_decode_figures(golden_file)
        rows.append(("decode into mbt's structs (msgspec)", f"{raw:.2f} s", "", "", f"{count:,} lines into typed "
                     f"structs, CPU time, best of {REPEATS}; {typed:.2f} s on into GoldenCases (mbt.goldens.decode)"))
        rows.append(("bare replay loop", f"{bare_seconds:.2f} s", "", "",
                     f"{turns / bare_seconds:,.0f} turns/s: dict lookup per state and event, guards, actions"))
        floor = decode_seconds + bare_seconds
        rows.append(("decode + bare loop", f"{floor:.2f} s", "", "", "the floor of reading and stepping"))
        rows.append(("cold coverage / (decode + bare)", f"{wall / floor:.1f}x", "<= 4x", verdict(wall <= 4 * floor),
                     "wall time of the command (both cores) over the single-threaded floor"))
        rows.append(("warm coverage / (decode + bare)", f"{warm / floor:.1f}x", "<= 2x", verdict(warm <= 2 * floor),
                     ""))
        replay_rate, reference_rate = turns / replay_seconds, turns / reference_seconds
        ratio = statistics.median(ratios)  # of the rounds: each compares the two at one moment
        rows.append(("replay (FsmReplayer)", f"{replay_rate:,.0f} turns/s", "", "",
                     f"{turns:,} turns, {note}, CPU time"))
        rows.append(("reference machine (transitions)", f"{reference_rate:,.0f} turns/s", "", "",
                     "same event sequences"))
        rows.append(("replay / reference", f"{ratio:.1f}x", ">= 5x", verdict(ratio >= 5),
                     "median of the rounds' ratios (" + ", ".join(f"{r:.2f}x" for r in ratios) + ")"))
        rows.append(("replay / bare loop", f"{replay_seconds / bare_seconds:.1f}x", "", "",
                     "what the bookkeeping costs over the bare loop"))
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        print()
        print(f"{'figure':<{widths[0]}}  {'value':>{widths[1]}}  {'target':<{widths[2]}}  {'':<{widths[3]}}  note")
        for name, value, target, ok, note in rows:
            print(f"{name:<{widths[0]}}  {value:>{widths[1]}}  {target:<{widths[2]}}  {ok:<{widths[3]}}  {note}")
        if args.quick:
            print("\n(--quick: small sizes; the targets are set for the full run)")
    finally:
        if not args.out:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
