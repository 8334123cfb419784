"""`--engine dask`: the golden stream split into parts replayed on the workers of a Dask cluster (a LocalCluster
here) must give byte for byte the report of one process, also when the workers cannot do their parts; a missing
extra or an unreachable scheduler is one clear line with exit 2; without the engine, dask is never imported."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mbt import api
from mbt.goldens.loader import GoldenStream
from mbt.measure import distributed
from mbt.measure.run import ModelTally
from mbt.runs import parts
from tests.cli_runner import run_mbt
from tests.split_goldens import write_split_goldens

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def goldens(tmp_path_factory):
    return write_split_goldens(tmp_path_factory.mktemp("goldens"))


@pytest.fixture(scope="module")
def scheduler():
    """The address of a LocalCluster of two worker processes, shared by the tests of this module."""
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0",
                           silence_logs=logging.CRITICAL)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@pytest.fixture
def submitted(monkeypatch):
    """What each DaskEngine.start handed to the cluster."""
    seen: list[distributed.Submitted] = []
    real = distributed.DaskEngine.start

    def spy(self, tallies, parts):
        out = real(self, tallies, parts)
        seen.append(out)
        return out

    monkeypatch.setattr(distributed.DaskEngine, "start", spy)
    return seen


def one_process(model: Path, folder: Path) -> str:
    _, models = api.load_models([str(model)])
    return api.measure(models, GoldenStream([str(folder)]), 1).model_dump_json()


def on_cluster(model: Path, folder: Path, address: str, model_paths: list[str]) -> str:
    _, models = api.load_models([str(model)])
    with distributed.DaskEngine(model_paths, address) as engine:
        assert engine.workers == 2
        return api.measure(models, GoldenStream([str(folder)]), None, engine=engine).model_dump_json()


def test_the_cluster_reports_exactly_what_one_process_does(goldens, scheduler, submitted):
    model, folder = goldens
    alone = one_process(model, folder)
    split = on_cluster(model, folder, scheduler, [str(model)])
    [started] = submitted
    assert len(started.futures) == 2 and started.redone == []  # both later parts were replayed by Dask workers
    assert split == alone
    assert '"duplicate case id `bench-000001`' in split and "not valid JSON" in split
    assert "not valid UTF-8 text (byte 0xE9" in split  # a later part keeps its file's undecodable lines


def test_parts_the_workers_cannot_do_are_done_here(goldens, scheduler, submitted, tmp_path):
    model, folder = goldens
    alone = one_process(model, folder)
    # At the path the workers get lies another model: they refuse (fingerprint), this process replays their parts.
    other = tmp_path / "other.fsm"
    shutil.copy(ROOT / "models" / "recovery.fsm", other)
    assert on_cluster(model, folder, scheduler, [str(other)]) == alone
    assert submitted[0].redone == [0, 1]


def test_a_worker_loads_the_models_itself(goldens):
    model, folder = goldens
    _, models = api.load_models([str(model)])
    tallies = [ModelTally(m) for m in models]
    stream = GoldenStream([str(folder)])
    later = stream.split(0.5)
    assert later is not None
    expected = distributed.fingerprint(tallies)
    broken, replayed = distributed.replay_part([str(model)], False, expected, distributed.Part(later.pieces))
    assert replayed and [r[0] for r in replayed] == [c.id for c in GoldenStream.of_pieces(later.pieces).all_cases()]
    with pytest.raises(RuntimeError, match="differ"):
        distributed.replay_part([str(model)], False, "0" * 64, distributed.Part(later.pieces))


def test_the_cli_reports_the_same_through_a_scheduler_and_a_local_cluster(goldens, scheduler):
    model, folder = goldens
    args = ("coverage", "--model", model, "--goldens", folder, "--no-gate", "--format", "json")
    one = run_mbt(*args, "--jobs", "1")
    remote = run_mbt(*args, "--engine", "dask", "--scheduler", scheduler)
    local = run_mbt(*args, "--engine", "dask", "--jobs", "2")
    assert one.returncode == remote.returncode == local.returncode == 0
    assert remote.stderr == local.stderr == ""
    assert one.stdout == remote.stdout == local.stdout


def test_an_unreachable_scheduler_is_one_line(goldens, monkeypatch):
    model, folder = goldens
    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT", 1.0)
    out = run_mbt("coverage", "--model", model, "--goldens", folder, "--engine", "dask",
                  "--scheduler", "tcp://127.0.0.1:9")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_a_missing_extra_is_one_line(goldens, monkeypatch):
    model, folder = goldens
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now raises ImportError
    out = run_mbt("coverage", "--model", model, "--goldens", folder, "--engine", "dask")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "error: " + distributed.EXTRA_MISSING + "\n"


def test_a_scheduler_needs_the_dask_engine(goldens):
    model, folder = goldens
    out = run_mbt("coverage", "--model", model, "--goldens", folder, "--scheduler", "tcp://127.0.0.1:9")
    assert out.returncode == 2 and "--engine dask" in out.stderr and out.stdout == ""


def test_the_local_engine_never_imports_dask(goldens):
    model, folder = goldens
    code = ("import sys\nfrom mbt import cli\n"
            "try:\n    cli.main(['coverage', '--model', sys.argv[1], '--goldens', sys.argv[2], '--no-gate',"
            " '-o', sys.argv[3]])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    done = subprocess.run([sys.executable, "-c", code, str(model), str(folder), str(folder.parent / "out.txt")],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


@pytest.fixture
def runs_submitted(monkeypatch):
    """What each DaskEngine.submit_each handed to the cluster."""
    seen: list[distributed.Submitted] = []
    real = distributed.DaskEngine.submit_each

    def spy(self, func, calls, redo):
        out = real(self, func, calls, redo)
        seen.append(out)
        return out

    monkeypatch.setattr(distributed.DaskEngine, "submit_each", spy)
    return seen


RUNS = dict(model_paths=[str(ROOT / "models" / "orders.fsm")], run_paths=[str(ROOT / "models" / "runs")],
            golden_paths=[str(ROOT / "models" / "goldens" / "orders")],
            gate_path=str(ROOT / "models" / "gates" / "seed-000-release.yaml"),
            judge="rules")  # the say forbid by its phrases alone (so some runs pass); the judge goes to the workers


def test_runs_judged_on_the_cluster_report_what_one_process_does(scheduler, runs_submitted):
    alone = api.runs(**RUNS).model_dump_json()
    split = api.runs(**RUNS, engine="dask", scheduler=scheduler).model_dump_json()
    [started] = runs_submitted
    files = len(parts.pieces_of(RUNS["run_paths"]))
    assert len(started.futures) == files and started.redone == []  # each file a piece, judged by a worker
    assert split == alone
    assert '"verdict":"deviation"' in split and '"verdict":"pass"' in split  # the example's runs are not all alike


def test_runs_parts_the_workers_cannot_do_are_judged_here(scheduler, runs_submitted, tmp_path):
    alone = api.runs(**RUNS).model_dump_json()
    other = tmp_path / "orders.fsm"
    shutil.copy(ROOT / "models" / "recovery.fsm", other)  # what the workers load is another model: they refuse
    _, models = api.load_models(RUNS["model_paths"])
    from mbt.judges import RuleJudge
    from mbt.runs import parts

    coverage = api.measure(models, api.GoldenStream(RUNS["golden_paths"]))
    with distributed.DaskEngine([str(other)], scheduler) as engine:
        runset, tally = parts.judge_in_parts(engine, models, [str(other)], RUNS["run_paths"], coverage,
                                             answers=RuleJudge())  # as RUNS' judge="rules"
    assert runs_submitted[0].redone == list(range(len(parts.pieces_of(RUNS["run_paths"]))))
    local = api.runs(**RUNS)
    assert [r.model_dump() for r in tally.results] == [r.model_dump() for r in local.runs]
    assert alone == local.model_dump_json()


def test_pieces_are_the_files_in_order_each_a_whole_byte_range(tmp_path):
    files = []
    for i, size in enumerate([10, 500, 20, 0, 300, 5]):
        path = tmp_path / f"f{i}.json"
        path.write_text("x" * size)
        files.append((str(path), size))
    pieces = parts.pieces_of([str(tmp_path)])
    assert [(p.path, p.start, p.end) for p in pieces] == [(path, 0, size) for path, size in files]


def test_runs_take_a_scheduler_only_with_the_dask_engine():
    # (--jobs without it is forked workers: tests/test_runs_parallel.py)
    args = ("runs", "--model", RUNS["model_paths"][0], "--runs", RUNS["run_paths"][0])
    out = run_mbt(*args, "--scheduler", "tcp://127.0.0.1:9")
    assert out.returncode == 2 and out.stdout == "" and "--engine dask" in out.stderr
    assert out.stderr.count("\n") == 1
