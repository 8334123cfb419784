"""Judges observed runs in parts: their files split between this process and forked workers of the standard executor
(`mbt runs --jobs N`, mbt.measure.parallel) or Dask workers (`--engine dask`).

Runs are independent and their results add up: a worker reads its files, judges each run, and returns the results,
per-element counts, tool errors and the deviating verdicts; this process takes them in file order, so the report is
the one a single process makes. A forked worker inherits the models and their judges; a Dask worker loads the models
itself from their paths (checked against this run's). A part a worker cannot do is judged here instead.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

from mbt.measure import parallel
from mbt.measure.coverage import CoverageReport
from mbt.model.common import ModelBase
from mbt.runs.judge import Verdict
from mbt.runs.loop import LoopRules
from mbt.runs.measure import RunTally
from mbt.runs.reader import read_files, run_files
from mbt.runs.results import RunResult
from mbt.runs.steps import InvalidRun, RunSet

# Below this many bytes of run files, `--jobs` judges everything here: forking and sending the results back would
# cost more than the part saves (reading and decoding is most of the work, roughly linear in the bytes).
PARALLEL_MIN_BYTES = 4_000_000


@dataclass
class Judged:
    """What judging one part's files gave, in the form that crosses processes."""

    files: list[str]
    invalid: list[InvalidRun]
    results: list[RunResult]
    unread: list[str]
    through: dict[str, list[int]]
    tool_errors: int
    verdicts: list[Verdict] = field(default_factory=list)


def fingerprint(tally: RunTally) -> str:
    """What a worker's models must match: the judged models' names and element ids in order (counts are by index)."""
    items = [(name, [e.id for e in tally.elements[name]]) for name in sorted(tally.judges)]
    return hashlib.sha256(repr(items).encode()).hexdigest()


def judge_files(tally: RunTally, files: list[tuple[str, str]]) -> Judged:
    """Read and judge the runs of these files with `tally` (fresh: its counts become the part's), a file at a time
    (its runs are judged before the next file is read)."""
    out = Judged([], [], tally.results, [], tally.through, 0, tally.verdicts)
    for item in files:
        runset = read_files([item])
        out.files.extend(runset.files)
        out.invalid.extend(runset.invalid)
        out.unread.extend(runset.unread)
        for run in runset.runs:
            tally.add(run)
    out.tool_errors = tally.tool_errors
    return out


def judge_part(model_paths: list[str], use_cache: bool, expected: str, files: list[tuple[str, str]],
               loop: LoopRules | None = None, answers: Any = None) -> Judged:
    """On a Dask worker: load the models from their paths (or the compiled-model cache, as this process wrote it),
    check they are this run's, judge the part's files (`answers`: the answer judge, sent with the part)."""
    from mbt.cache import load_compiled  # the worker loads the models itself

    tally = RunTally(load_compiled(model_paths, use_cache).models, None, loop=loop, answers=answers)
    found = fingerprint(tally)
    if found != expected:  # other files at those paths on this worker: its counts would not be this run's
        raise RuntimeError(f"the worker's models differ from this run's ({found[:12]} != {expected[:12]})")
    return judge_files(tally, files)


def split_files(files: list[tuple[str, str]], parts: int) -> list[list[tuple[str, str]]]:
    """Consecutive groups of whole files, of about equal size, at most `parts` of them (none empty)."""
    sizes = [os.path.getsize(path) if os.path.exists(path) else 0 for path, _ in files]
    total, done = sum(sizes), 0
    groups: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    for item, size in zip(files, sizes):
        current.append(item)
        done += size
        if len(groups) < parts - 1 and done >= total * (len(groups) + 1) / parts:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def merge(tally: RunTally, judged: Judged) -> tuple[list[str], list[InvalidRun], list[str]]:
    """Add a part's results to `tally` (after the earlier parts'); its files and unreadable runs, for the report."""
    tally.results.extend(judged.results)
    for name, counts in judged.through.items():
        mine = tally.through[name]
        for i, count in enumerate(counts):
            mine[i] += count
    tally.tool_errors += judged.tool_errors
    tally.verdicts.extend(judged.verdicts)
    return judged.files, judged.invalid, judged.unread


def judge_in_parts(engine: Any, models: list[ModelBase], model_paths: list[str], run_paths: list[str],
                   coverage: CoverageReport, jobs: int | None = None, loop: LoopRules | None = None,
                   answers: Any = None) -> tuple[RunSet, RunTally]:
    """Judge the runs' files in parts: with `engine` (a mbt.measure.distributed.DaskEngine) `engine.workers + 1` of
    them, the first here and each later one on a Dask worker; else, when the files hold PARALLEL_MIN_BYTES or more,
    `jobs` parts (default: the machine's cores), the first here and the others in forked
    workers. The RunSet holds the files and unreadable runs, not the runs. `answers`: the answer judge (RunTally)."""
    files = run_files(run_paths)
    tally = RunTally(models, coverage, loop=loop, answers=answers)
    started: Any
    if engine is not None:
        groups = split_files(files, engine.workers + 1)
        later = groups[1:]
        expected = fingerprint(tally)
        calls = [(model_paths, engine.use_cache, expected, group, tally.loop, answers) for group in later]
        started = engine.submit_all(judge_part, calls, lambda i: judge_files(tally.fresh(), later[i]))
    else:
        count = (parallel.default_jobs() if jobs is None else jobs) if parallel.available() else 1
        size = sum(os.path.getsize(path) for path, _ in files if os.path.exists(path))
        groups = split_files(files, count) if count > 1 and size >= PARALLEL_MIN_BYTES else [files]
        later = groups[1:]
        started = parallel.Workers(lambda i: judge_files(tally.fresh(), later[i - 1]), len(groups))
    runset = RunSet()
    if groups:
        first = judge_files(tally, groups[0])
        runset.files.extend(first.files)
        runset.invalid.extend(first.invalid)
        runset.unread.extend(first.unread)
    for judged in started.results():
        part_files, invalid, unread = merge(tally, judged)
        runset.files.extend(part_files)
        runset.invalid.extend(invalid)
        runset.unread.extend(unread)
    return runset, tally
