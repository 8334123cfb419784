"""Benchmark of `mbt runs` at scale (issue 37, items 2-4): every figure beside its baseline, measured in the same run,
alternately (A, B, A, B ...) and best of N, since the machine is shared. Never asserts.

    python tests/bench/bench_runs.py            # 2,000 states / 20,000 transitions / 1,000,000 steps (~127,000 runs)
    python tests/bench/bench_runs.py --quick    # 200 / 2,000 / 2,000 runs: a smoke run (split into pieces although
                                                # the files are below PARALLEL_MIN_BYTES, to run the pieces' code)

The runs are walks of synth.py's model computed with its own semantics (not mbt's), written as OTLP/JSON files of
1,000 traces each (200 with --quick): user texts bound by the model's `bind text` rules, tool results bound by
`bind tool` rules the script adds, and the tool calls the model makes, with its arguments. So every run is judged to
its end and none deviates; the runs whose walk says nothing while the model has `say` forbids or claims are not
judged there (the evidence contract of docs/runs.md): they pass no check they could not show. Nor do the others
pass: the walks' texts say none of the `say` forbid's phrases, and the embedded judge (the default answer judge,
whose time the judgement's figures include) does not decide whether they "leak an internal note", so they are not
judged either.

- the run judge: the judgement alone, and with each run's report row and counts (`RunTally.add`), in steps per CPU
  second of one core (the cyclic garbage collector paused, as in `mbt runs`); baseline: reading the same runs;
  target >= 100,000 steps/s per core;
- `mbt runs` end to end, wall seconds, the compiled-model cache warm, the gate off: `--jobs 1` (the baseline),
  `--jobs 2` (target >= 1.7x), `--engine dask` on a LocalCluster of 1 and of 2 workers (target >= 1.5x with 2);
  each report compared byte for byte with `--jobs 1`'s. Beside the wall time, the CPU seconds of mbt's process and of
  its workers (their processes are its children), and what they add up to on N free cores: the busiest process
  (mbt's, or the workers' average), or, when mbt's process and the workers together need more than the N cores,
  their total over N. On a machine other people share, the wall time also counts the waits for a core; the CPU
  figure is what the machine gives when it is free.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # synth.py sits beside this script
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

import synth  # noqa: E402

from mbt import api  # noqa: E402
from mbt.kind import support  # noqa: E402
from mbt.measure import parallel  # noqa: E402
from mbt.runs import parts  # noqa: E402
from mbt.runs.judge import RunJudge  # noqa: E402
from mbt.runs.measure import RunTally  # noqa: E402
from mbt.runs.reader import read_runs  # noqa: E402

FULL = (2000, 20000, 1_000_000)  # states, transitions, steps (runs are written until the steps are reached)
QUICK = (200, 2000, 16_000)
STEPS_PER_RUN = 16  # at most; a walk ends early in a state no user text applies to (~6 steps a run)
TRACES_PER_FILE = 1000  # --quick: 200, so that its runs still make parts of whole files
RESULT_TOOL = "audit"  # a tool the synthetic model calls: `bind tool` names it for every event with parameters


def _attr(key, value):
    if not isinstance(value, str):
        value = json.dumps(value, separators=(",", ":"))
    return {"key": key, "value": {"stringValue": value}}


class Walker:
    def __init__(self, model: synth.SynthModel, rnd: random.Random):
        self.model, self.rnd = model, rnd
        events = list(model.events.values())
        self.phrased = [e for e in events if e.phrase]
        self.text_event = next((e for e in events if e.params == ["text"]), None)
        self.bound = [e for e in events if e.params and e is not self.text_event]  # `bind tool` order
        self.handled: dict[int, list[str]] = {}
        for (state, event) in model.groups:
            self.handled.setdefault(state, []).append(event)

    def bindings(self) -> str:
        return "".join(f"  bind tool {RESULT_TOOL} ok({', '.join(e.params)}) -> {e.name}\n" for e in self.bound)

    def _text_event(self, text: str) -> str | None:
        """The `bind text` / `bind regex` rule that text binds to, in the model's declaration order."""
        folded = text.casefold()
        for e in self.phrased:
            if e.phrase.casefold() in folded:
                return e.name
        if self.text_event is not None and text.startswith("note: "):
            return self.text_event.name
        return None

    def _tool_event(self, state: int) -> str | None:
        handled = set(self.handled.get(state, ()))
        return next((e.name for e in self.bound if e.name in handled), self.bound[0].name if self.bound else None)

    def walk(self) -> list[tuple]:
        """Steps: ("user", text) | ("call", tool, args, result) | ("say", text). An event with parameters arrives
        as the result of the model's last `audit` call (as an agent's tool result does); the others as user text."""
        model, rnd = self.model, self.rnd
        env = synth._initial_env()
        state, steps = 0, []
        due: int | None = None  # the step index of the audit call whose result brings the next event
        while len(steps) < STEPS_PER_RUN or due is not None:
            if len(steps) > 3 * STEPS_PER_RUN:
                break
            options = [e for e in self.handled.get(state, ())  # without a tool result due, the user speaks
                       if due is not None or model.events[e].phrase or model.events[e] is self.text_event]
            if not options:
                break
            fired = None
            for _ in range(8):  # an event whose guard holds; give up on the run after a few refusals
                if due is not None:
                    event = self._tool_event(state)
                    if event is None:
                        break
                    args = {p: synth.PARAMS[p][1](rnd) for p in model.events[event].params}
                    text = None
                else:
                    chosen = model.events[rnd.choice(options)]
                    if chosen.phrase:
                        text, args = chosen.phrase, {}
                    elif chosen is self.text_event:
                        word = rnd.choice(["alpha", "beta", "gamma"])
                        text, args = f"note: {word}", {"text": word}
                    else:
                        continue  # an event with parameters only comes as a tool result
                    event = self._text_event(text)
                    if event is None:
                        continue
                trial = dict(env)
                trial.update(args)
                trial["_calls"] = []
                target, taken = model.step(state, event, trial)
                if taken is not None and sum(tool == RESULT_TOOL for tool, _ in trial["_calls"]) <= 1:
                    fired = (text, args, target, trial)
                    break
            if fired is None:
                break
            text, args, target, trial = fired
            if due is not None:
                steps[due] = steps[due][:3] + (args,)
                due = None
            else:
                steps.append(("user", text))
            calls = trial.pop("_calls")
            for tool, call_args in sorted(calls, key=lambda c: c[0] == RESULT_TOOL):  # the audit call last
                steps.append(("call", tool, call_args, {}))
                if tool == RESULT_TOOL:
                    due = len(steps) - 1
            for p in args:
                trial.pop(p, None)
            env, state = trial, target
            if due is None and rnd.random() < 0.3:
                steps.append(("say", "Done."))
        return steps


def trace_spans(number: int, steps: list[tuple]) -> list[dict]:
    trace = f"{number:032x}"
    spans, history, clock = [], [], 1_000_000
    root = {"traceId": trace, "spanId": f"{number:08x}00000000", "name": "invoke_agent bench",
            "startTimeUnixNano": str(clock), "endTimeUnixNano": str(clock + 10 ** 9),
            "attributes": [_attr("gen_ai.operation.name", "invoke_agent"), _attr("mbt.model", synth.MODEL_NAME),
                           _attr("mbt.run.suite", "bench")]}
    spans.append(root)
    for i, step in enumerate(steps, start=1):
        clock += 1000
        span = {"traceId": trace, "spanId": f"{number:08x}{i:08x}", "parentSpanId": root["spanId"],
                "startTimeUnixNano": str(clock), "endTimeUnixNano": str(clock + 500)}
        if step[0] == "user":
            history.append({"role": "user", "parts": [{"type": "text", "content": step[1]}]})
            span.update(name="chat", attributes=[_attr("gen_ai.operation.name", "chat"),
                                                 _attr("gen_ai.input.messages", history)])
        elif step[0] == "say":
            span.update(name="chat", attributes=[
                _attr("gen_ai.operation.name", "chat"), _attr("gen_ai.input.messages", history),
                _attr("gen_ai.output.messages", [{"role": "assistant", "parts": [{"type": "text",
                                                                                  "content": step[1]}]}])])
        else:
            tool, args, result = step[1], step[2], step[3]
            span.update(name=f"execute_tool {tool}", attributes=[
                _attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", tool),
                _attr("gen_ai.tool.call.arguments", args), _attr("gen_ai.tool.call.result", result)])
        spans.append(span)
    return spans


def write_runs(folder: Path, model: synth.SynthModel, count: int | None, seed: int,
               per_file: int = TRACES_PER_FILE, steps: int | None = None) -> tuple[list[str], int]:
    """`count` runs, or as many as make `steps` steps (whole files of `per_file` traces)."""
    walker = Walker(model, random.Random(seed))
    files, steps_written, batch = [], 0, []

    def flush():
        path = folder / f"traces-{len(files):04d}.json"
        doc = {"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "bench")]},
                                  "scopeSpans": [{"scope": {"name": "bench"}, "spans": batch}]}]}
        path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
        files.append(str(path))

    n = 0
    while (count is not None and n < count) or (steps is not None and (steps_written < steps or n % per_file)):
        walk = walker.walk()
        steps_written += len(walk)
        batch.extend(trace_spans(n, walk))
        n += 1
        if n % per_file == 0:
            flush()
            batch = []
    if batch:
        flush()
    return files, steps_written


class PartsSeen:
    """How many processes the last `mbt runs` judged in (forked workers + 1), from the Workers it made (the
    goldens' coverage may make some of its own: the most is the runs')."""

    def __init__(self):
        self.count = 1
        real = parallel.Workers.__init__

        def spy(workers, work, count):
            self.count = max(self.count, count)
            real(workers, work, count)

        parallel.Workers.__init__ = spy  # type: ignore[method-assign]  # this script's own process only


MODES = {"mbt runs --jobs 1": {"jobs": 1}, "mbt runs --jobs 2": {"jobs": 2},
         "mbt runs --engine dask, LocalCluster of 1 worker": {"jobs": 1, "engine": "dask"},
         "mbt runs --engine dask, LocalCluster of 2 workers": {"jobs": 2, "engine": "dask"}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="200 states, 16,000 steps")
    ap.add_argument("--rounds", type=int, default=None, help="alternations, best of them (default 2; --quick 1)")
    args = ap.parse_args(argv)
    import mbt.runs

    # Which mbt/runs is measured: the compiled build (mbt/native_build.py) or the .py modules, and why.
    print(f"mbt/runs: the {mbt.runs.BUILD} build ({mbt.runs.BUILD_REASON})")
    states, transitions, wanted = QUICK if args.quick else FULL
    rounds = args.rounds or (1 if args.quick else 2)
    if args.quick:
        parts.PARALLEL_MIN_BYTES = 0
    with tempfile.TemporaryDirectory(prefix="mbt-bench-runs-") as tmp:
        folder = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(folder / "cache")  # the compiled-model cache, deleted afterwards
        os.environ.pop("MBT_NO_CACHE", None)
        model = synth.generate_model(states, transitions, seed=0)
        walker = Walker(model, random.Random(0))
        text = model.text()
        text = text[: text.rindex("}")] + walker.bindings() + "}\n"
        model_path = folder / "bench.fsm"
        model_path.write_text(text, encoding="utf-8")
        runs_dir = folder / "runs"
        runs_dir.mkdir()
        t0 = time.perf_counter()
        files, _ = write_runs(runs_dir, model, None, seed=1, per_file=200 if args.quick else TRACES_PER_FILE,
                              steps=wanted)
        made = time.perf_counter() - t0
        size = sum(os.path.getsize(f) for f in files)
        loaded = api.load_compiled([str(model_path)])  # writes the cache entry every `mbt runs` below reads
        fsm = loaded.models[0]
        judge = RunJudge(fsm, support("fsm").enumerate(fsm))
        tally = RunTally(loaded.models, api.measure(loaded.models, api.GoldenSet()))

        gc.disable()  # as `mbt runs` does (api.collector_paused): the cyclic collector would rescan every run held
        c0 = time.process_time()
        runset = read_runs([str(runs_dir)])
        decode = time.process_time() - c0
        steps = sum(len(r.steps) for r in runset.runs)
        judging = adding = float("inf")
        for _ in range(rounds):
            c0 = time.process_time()
            verdicts = [judge.judge(r) for r in runset.runs]
            judging = min(judging, time.process_time() - c0)
            c0 = time.process_time()
            for r in runset.runs:
                tally.add(r)
            adding = min(adding, time.process_time() - c0)
            tally = tally.fresh()
        # A worker's rows crossing to mbt's process (pickled there, read here): as parts.Judged sends them (plain
        # values, mbt.runs.rows), and as pydantic objects (the baseline).
        rows = tally.fresh()
        piece = parts.judge_piece(rows, parts.pieces_of([str(runs_dir)])[0])
        crossing = as_objects = float("inf")
        for _ in range(rounds + 2):
            c0 = time.process_time()
            pickle.loads(pickle.dumps(piece, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: S301 - our own
            crossing = min(crossing, time.process_time() - c0)
            c0 = time.process_time()
            pickle.loads(pickle.dumps(piece.results, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: S301 - our own
            as_objects = min(as_objects, time.process_time() - c0)
        crossed = len(piece.results)
        gc.enable()
        passed = sum(v.passed for v in verdicts)
        not_judged = sum(v.not_judged for v in verdicts)
        runs = len(runset.runs)
        del runset, verdicts

        seen = PartsSeen()
        best: dict[str, float] = {}
        free: dict[str, float] = {}  # the wall time N free cores would give, from the processes' CPU seconds
        reports: dict[str, str] = {}
        pieces: dict[str, int] = {}
        cores = parallel.default_jobs()
        for n in range(rounds):  # alternately: the machine is shared, a slow moment hits each mode in turn
            for label, options in (MODES.items() if n % 2 == 0 else reversed(MODES.items())):
                gc.collect()
                children = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0, c0 = time.perf_counter(), time.process_time()
                report = api.runs([str(model_path)], [str(runs_dir)], use_gate=False, **options)
                wall, here = time.perf_counter() - t0, time.process_time() - c0
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                theirs = after.ru_utime - children.ru_utime + after.ru_stime - children.ru_stime
                workers = options["jobs"] if "engine" in options else options["jobs"] - 1
                busiest = max(here, theirs / workers) if workers else here
                best[label] = min(best.get(label, float("inf")), wall)
                free[label] = min(free.get(label, float("inf")), max(busiest, (here + theirs) / cores))
                reports.setdefault(label, report.model_dump_json())
                pieces[label] = seen.count
                seen.count = 1
                del report
        reference = reports["mbt runs --jobs 1"]

    print(f"mbt runs benchmark: {states} states, {transitions} transitions, {runs:,} runs, {steps:,} steps in "
          f"{len(files)} OTLP/JSON files, {size / 1e6:,.0f} MB (written in {made:.1f} s); {passed:,} runs pass, "
          f"{not_judged:,} not judged; {parallel.default_jobs()} cores, load {os.getloadavg()[0]:.2f}; best of "
          f"{rounds} alternated")
    print(f"  {'read + decode (the baseline of the judge)':52} {decode:8.2f} s CPU {steps / decode:12,.0f} steps/s")
    print(f"  {'judge alone (observable-only, first deviation)':52} {judging:8.2f} s CPU {steps / judging:12,.0f} "
          f"steps/s   target >= 100,000 steps/s per core")
    print(f"  {'judge + report row + counts (RunTally.add)':52} {adding:8.2f} s CPU {steps / adding:12,.0f} "
          f"steps/s   target >= 100,000 steps/s per core")
    print(f"  {'a row crossing processes (pickled, read back)':52} {crossing / crossed * 1e6:8.1f} us CPU   (as pydantic "
          f"objects: {as_objects / crossed * 1e6:.1f} us, {as_objects / crossing:.2f}x)")
    one, one_free = best["mbt runs --jobs 1"], free["mbt runs --jobs 1"]
    for label, seconds in best.items():
        target = {"mbt runs --jobs 2": "   target >= 1.7x", "mbt runs --engine dask, LocalCluster of 2 workers":
                  "   target >= 1.5x"}.get(label, "")
        same = "the same report" if reports[label] == reference else "A DIFFERENT REPORT"
        how = f"{pieces[label]} processes" if "dask" not in label and pieces[label] > 1 else \
            "one process" if "dask" not in label else "pieces on the cluster"
        note = "baseline" if label == "mbt runs --jobs 1" else \
            f"{one / seconds:.2f}x of --jobs 1; on {cores} free cores {one_free / free[label]:.2f}x"
        print(f"  {label:52} {seconds:8.2f} s wall ({free[label]:6.2f} s on {cores} free cores) "
              f"{steps / seconds:10,.0f} steps/s   ({how}, {note}, {same}){target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
