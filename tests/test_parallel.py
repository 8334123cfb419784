"""A large coverage run replays the later parts of its goldens in worker processes (`--jobs N`): the report must be
the same as a run in one process whatever N, also when a worker fails, and repeated ids across the parts still count
once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mbt import api
from mbt.goldens.loader import GoldenStream
from mbt.measure import parallel
from mbt.measure import run as engine
from tests.cli_runner import run_mbt
from tests.json_report import expanded
from tests.split_goldens import write_split_goldens

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def goldens(tmp_path_factory):
    return write_split_goldens(tmp_path_factory.mktemp("goldens"))


def report_json(model: Path, folder: Path, monkeypatch, min_chars: int, jobs: int = 2) -> str:
    monkeypatch.setattr(engine, "PARALLEL_MIN_CHARS", min_chars)
    _, models = api.load_models([str(model)])
    return api.measure(models, GoldenStream([str(folder)]), jobs).model_dump_json()


@pytest.mark.parametrize("jobs", [2, 3, 5])
def test_workers_report_exactly_what_one_process_does(goldens, monkeypatch, started, jobs):
    model, folder = goldens
    alone = report_json(model, folder, monkeypatch, 10 ** 12, jobs)
    assert started == [0]  # below the size: no worker
    split = report_json(model, folder, monkeypatch, 0, jobs)
    assert started == [0, jobs - 1]
    assert split == alone
    assert '"duplicate case id `bench-000001`' in split and "not valid JSON" in split
    assert "not valid UTF-8 text (byte 0xE9" in split  # a later part keeps its file's undecodable lines


def test_one_job_means_no_worker(goldens, monkeypatch, started):
    model, folder = goldens
    report_json(model, folder, monkeypatch, 0, jobs=1)
    assert started == [0]


def test_a_failing_worker_changes_nothing(goldens, monkeypatch):
    model, folder = goldens
    alone = report_json(model, folder, monkeypatch, 10 ** 12)
    monkeypatch.setattr(parallel, "_run", lambda i: os._exit(3))
    assert report_json(model, folder, monkeypatch, 0, jobs=3) == alone


def test_the_cli_takes_jobs(goldens, monkeypatch):
    model, folder = goldens
    monkeypatch.setattr(engine, "PARALLEL_MIN_CHARS", 0)
    one = run_mbt("coverage", "--model", model, "--goldens", folder, "--no-gate", "--format", "json", "--jobs", "1")
    two = run_mbt("coverage", "--model", model, "--goldens", folder, "--no-gate", "--format", "json", "--jobs", "2")
    assert one.returncode == two.returncode == 0 and one.stdout == two.stdout
    bad = run_mbt("coverage", "--model", model, "--goldens", folder, "--jobs", "0")
    assert bad.returncode == 2 and "--jobs" in bad.stderr


def test_a_stream_splits_between_lines_and_keeps_line_numbers(tmp_path):
    lines = [f'{{"id": "c{i}", "turns": [{{"event": "e"}}]}}' for i in range(50)]
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = [(c.id, c.line) for c in GoldenStream([str(path)]).cases]
    first = GoldenStream([str(path)])
    later = first.split()
    assert later is not None
    early = [(c.id, c.line) for c in first.cases]
    assert early + [(c.id, c.line) for c in later.all_cases()] == whole and len(whole) == 50
    assert 20 <= len(early) <= 30  # cut near the middle


def test_a_covering_cap_keeps_the_first_ids_and_counts_the_rest(goldens, monkeypatch):
    """Capped lists (the CLI's default) change no figure: the same numbers, the first ids, the rest counted."""
    import json

    from mbt import cli

    model, folder = goldens
    monkeypatch.setattr(cli, "COVERING_CAP", 2)
    args = ("coverage", "--model", model, "--goldens", folder, "--no-gate", "--format", "json")
    capped, full = (expanded(json.loads(run_mbt(*a).stdout)) for a in (args, (*args, "--show-covering", "all")))
    assert capped["models"][0]["criteria"] == full["models"][0]["criteria"]
    more = 0
    for a, b in zip(capped["models"][0]["elements"], full["models"][0]["elements"]):
        for key in ("exercised", "verified"):
            kept, every = a[f"{key}_by"], b[f"{key}_by"]
            assert kept == every[:2]
            assert len(kept) + a[f"{key}_more"] == len(every)
            assert b[f"{key}_more"] == 0
            more += a[f"{key}_more"]
    assert more > 0, "the synthetic goldens cover some element more than twice"
    text = run_mbt("coverage", "--model", model, "--goldens", folder, "--no-gate", "--show-covering").stdout
    assert "more (--show-covering all)" in text


def test_results_come_back_through_files_read_only_once_every_worker_has_exited(monkeypatch):
    """A worker's result is pickled into a file, not the pool's pipe, and read back after the pool is shut down:
    a large tally is never held by a worker and this process at once (issue 14: peak memory)."""
    seen: list[tuple[int, bool]] = []
    real_load = parallel.pickle.load

    def load(handle):
        seen.append((os.getpid(), workers.pool is None))
        return real_load(handle)

    monkeypatch.setattr(parallel.pickle, "load", load)
    workers = parallel.Workers(lambda i: ("part", i, os.getpid(), "x" * 100_000), 3)
    results = workers.results()
    assert [r[:2] for r in results] == [("part", 1), ("part", 2)]
    assert all(r[2] != os.getpid() for r in results)  # done by workers, not here
    assert seen == [(os.getpid(), True), (os.getpid(), True)] and workers.files == []
