"""Judges observed runs in parts: their files split between this process and Dask workers (`mbt runs --engine dask`).

Runs are independent and their results add up: a worker reads its files, judges each run on models it loads itself
from their paths (checked against this run's), and returns the results, per-element counts, tool errors and the
deviating verdicts; this process takes them in file order, so the report is the one a single process makes. A part
the cluster cannot do is judged here instead.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

from mbt.goldens.loader import GoldenSet
from mbt.measure.coverage import CoverageReport
from mbt.measure.run import measure
from mbt.model.common import ModelBase
from mbt.runs.judge import Verdict
from mbt.runs.measure import RunTally
from mbt.runs.reader import read_files, run_files
from mbt.runs.results import RunResult
from mbt.runs.steps import InvalidRun, RunSet


@dataclass
class Judged:
    """What judging one part's files gave, in the form that crosses processes."""

    files: list[str]
    invalid: list[InvalidRun]
    results: list[RunResult]
    through: dict[str, list[int]]
    tool_errors: int
    verdicts: list[Verdict] = field(default_factory=list)


def fingerprint(tally: RunTally) -> str:
    """What a worker's models must match: the judged models' names and element ids in order (counts are by index)."""
    items = [(name, [ec.element.id for ec in tally.coverage[name].elements]) for name in sorted(tally.judges)]
    return hashlib.sha256(repr(items).encode()).hexdigest()


def judge_files(tally: RunTally, files: list[tuple[str, str]]) -> Judged:
    """Read and judge the runs of these files with `tally` (fresh: its counts become the part's)."""
    runset = read_files(files)
    for run in runset.runs:
        tally.add(run)
    return Judged(runset.files, runset.invalid, tally.results, tally.through, tally.tool_errors, tally.verdicts)


def judge_part(model_paths: list[str], expected: str, files: list[tuple[str, str]]) -> Judged:
    """On a Dask worker: load the models from their paths, check they are this run's, judge the part's files."""
    from mbt.parsing.loader import load_paths  # the worker parses the models itself

    models = [m for f in load_paths(model_paths) for m in f.models]
    tally = fresh_tally(models)
    found = fingerprint(tally)
    if found != expected:  # other files at those paths on this worker: its counts would not be this run's
        raise RuntimeError(f"the worker's models differ from this run's ({found[:12]} != {expected[:12]})")
    return judge_files(tally, files)


def fresh_tally(models: list[ModelBase], coverage: CoverageReport | None = None) -> RunTally:
    """A RunTally with no run yet (the elements from `coverage`, else enumerated afresh)."""
    return RunTally(models, coverage if coverage is not None else measure(models, GoldenSet()))


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


def merge(tally: RunTally, judged: Judged) -> tuple[list[str], list[InvalidRun]]:
    """Add a part's results to `tally` (after the earlier parts'); its files and unreadable runs, for the report."""
    tally.results.extend(judged.results)
    for name, counts in judged.through.items():
        mine = tally.through[name]
        for i, count in enumerate(counts):
            mine[i] += count
    tally.tool_errors += judged.tool_errors
    tally.verdicts.extend(judged.verdicts)
    return judged.files, judged.invalid


def judge_in_parts(engine: Any, models: list[ModelBase], model_paths: list[str], run_paths: list[str],
                   coverage: CoverageReport) -> tuple[RunSet, RunTally]:
    """The runs' files in `engine.workers + 1` parts: the first judged here, each later one on a worker of `engine`
    (a mbt.measure.distributed.DaskEngine); the RunSet holds the files and unreadable runs, not the runs."""
    files = run_files(run_paths)
    tally = fresh_tally(models, coverage)
    groups = split_files(files, engine.workers + 1)
    later = groups[1:]
    expected = fingerprint(tally)
    submitted = engine.submit_all(judge_part, [(model_paths, expected, group) for group in later],
                                  lambda i: judge_files(fresh_tally(models, coverage), later[i]))
    runset = RunSet()
    if groups:
        first = judge_files(tally, groups[0])
        runset.files.extend(first.files)
        runset.invalid.extend(first.invalid)
    for judged in submitted.results():
        part_files, invalid = merge(tally, judged)
        runset.files.extend(part_files)
        runset.invalid.extend(invalid)
    return runset, tally
