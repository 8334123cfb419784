"""`mbt runs --jobs N`: the run files judged in parts by forked workers of the standard executor (mbt.measure.parallel)
give exactly the report and the regression goldens of one process, also when a worker fails."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mbt import api
from mbt.measure import parallel
from mbt.runs import parts
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parent.parent
RUNS = dict(model_paths=[str(ROOT / "models" / "orders.fsm")], run_paths=[str(ROOT / "models" / "runs")],
            golden_paths=[str(ROOT / "models" / "goldens" / "orders")],
            gate_path=str(ROOT / "models" / "gates" / "seed-000-release.yaml"), judge="rules")


def judged(tmp_path: Path, jobs: int) -> tuple[str, dict[str, bytes]]:
    """The report as JSON and the regression goldens' files (written to the same folder each time)."""
    out = tmp_path / "regressions"
    shutil.rmtree(out, ignore_errors=True)
    report = api.runs(**RUNS, regressions=str(out), jobs=jobs)
    return report.model_dump_json(), {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("jobs", [2, 3, 6])
def test_workers_judge_exactly_what_one_process_does(tmp_path, monkeypatch, started, jobs):
    alone, regressions = judged(tmp_path, 1)
    assert max(started, default=0) == 0
    monkeypatch.setattr(parts, "PARALLEL_MIN_BYTES", 0)
    started.clear()
    split, regressions_split = judged(tmp_path, jobs)
    files = len(parts.run_files(RUNS["run_paths"]))
    # the files were split between processes (whole files); the goldens' coverage may fork workers of its own
    assert 1 <= started[0] <= min(jobs, files) - 1
    assert split == alone and regressions_split == regressions
    assert '"verdict":"deviation"' in split and '"verdict":"pass"' in split and regressions


def test_small_run_sets_are_judged_here(tmp_path, started):
    judged(tmp_path, 4)  # the example's runs are far below PARALLEL_MIN_BYTES: forking would cost more
    assert max(started, default=0) == 0


def test_a_failing_worker_changes_nothing(tmp_path, monkeypatch):
    alone, regressions = judged(tmp_path, 1)
    monkeypatch.setattr(parts, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "_run", lambda i: os._exit(3))
    assert judged(tmp_path, 3) == (alone, regressions)


def test_the_cli_takes_jobs(monkeypatch):
    monkeypatch.setattr(parts, "PARALLEL_MIN_BYTES", 0)
    args = ("runs", "--model", RUNS["model_paths"][0], "--runs", RUNS["run_paths"][0], "--no-gate",
            "--format", "json")
    one, two = run_mbt(*args, "--jobs", "1"), run_mbt(*args, "--jobs", "2")
    assert one.returncode == two.returncode == 0 and one.stdout == two.stdout and one.stderr == two.stderr == ""
    bad = run_mbt(*args, "--jobs", "0")
    assert bad.returncode == 2 and bad.stdout == "" and "--jobs" in bad.stderr


def test_a_worker_killed_after_taking_pieces_leaves_them_to_this_process(tmp_path, monkeypatch):
    # A worker takes pieces from the shared counter: this process waits until the worker has judged one piece and
    # died on its second, then the pieces the worker took and never gave back are judged here: the same report.
    import multiprocessing

    alone, regressions = judged(tmp_path, 1)
    monkeypatch.setattr(parts, "PARALLEL_MIN_BYTES", 0)
    here, real = os.getpid(), parts.judge_piece
    died = multiprocessing.get_context("fork").Event()
    taken: list[int] = []

    def dies_on_its_second_piece(tally, piece):
        if os.getpid() == here:
            died.wait(timeout=60)
        else:
            taken.append(1)
            if len(taken) == 2:
                died.set()
                os._exit(3)
        return real(tally, piece)

    monkeypatch.setattr(parts, "judge_piece", dies_on_its_second_piece)
    assert judged(tmp_path, 2) == (alone, regressions)
    assert died.is_set()


def test_the_local_dask_cluster_judges_what_one_process_does():
    alone = api.runs(**RUNS, jobs=1).model_dump_json()
    assert api.runs(**RUNS, engine="dask", jobs=2).model_dump_json() == alone
