"""The optional compiled build of mbt/runs (issue 37, mbt/native_build.py): used only when built from exactly the
sources on disk, pure Python otherwise or under MBT_PURE_PYTHON=1, and — whichever is in use — the pieces `--jobs`
and `--engine dask` give workers are judged there, not silently redone in this process (what crosses processes must
pickle: mypyc's native classes do not)."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import mbt.runs
from mbt import api
from mbt.runs import parts
from tests.test_runs_parallel import RUNS

ROOT = Path(__file__).resolve().parent.parent
NATIVE = ROOT / "mbt" / "runs" / "_native"
PROBE = ("import mbt.runs, mbt.runs.genai, mbt.runs.measure; "
         "print(mbt.runs.BUILD, mbt.runs.genai.__file__.endswith('.py'), mbt.runs.measure.__file__.endswith('.py'))")


def build_in_use(package_parent: Path, **env: str) -> list[str]:
    """What a fresh interpreter importing mbt from `package_parent` uses: the build and whether genai, measure are .py."""
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=package_parent, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(package_parent), "MBT_PURE_PYTHON": "", **env},
                          check=True)
    return done.stdout.split()


def manifest_is_current() -> bool:
    """Whether the build in this tree matches its sources (the same check mbt.runs makes, done here independently)."""
    from mbt import native_build

    return native_build.up_to_date()


def test_this_process_uses_the_build_exactly_when_it_is_current():
    current = (NATIVE / "manifest.json").is_file() and manifest_is_current()
    forced = os.environ.get("MBT_PURE_PYTHON", "") not in ("", "0")
    expected = "compiled" if current and not forced else "pure"
    assert mbt.runs.BUILD == expected, mbt.runs.BUILD_REASON
    from mbt.runs import genai, measure, otlp

    for module in (genai, measure, otlp):
        assert module.__file__ is not None and module.__file__.endswith(".py") == (expected == "pure")
    assert parts.__file__ is not None and parts.__file__.endswith(".py")  # never compiled: its objects cross processes


def test_a_stale_or_forced_build_falls_back_to_the_python_modules(tmp_path):
    # A copy of the package with its build (when there is one): used as is, then not once a source is edited.
    shutil.copytree(ROOT / "mbt", tmp_path / "mbt", ignore=shutil.ignore_patterns("__pycache__"))
    built = (tmp_path / "mbt" / "runs" / "_native" / "manifest.json").is_file() and manifest_is_current()
    assert build_in_use(tmp_path) == (["compiled", "False", "False"] if built else ["pure", "True", "True"])
    assert build_in_use(tmp_path, MBT_PURE_PYTHON="1") == ["pure", "True", "True"]
    if not built:  # no compiler here: give the copy a build of .py stand-ins, so that the checks below still bite
        native = tmp_path / "mbt" / "runs" / "_native"
        native.mkdir(parents=True, exist_ok=True)
        for name in ("genai", "measure", "stand_in_library"):
            (native / f"{name}.py").write_text(
                "from mbt.runs import decoding, steps, grounding, marks\n" if name == "stand_in_library" else
                (tmp_path / "mbt" / "runs" / f"{name}.py").read_text(encoding="utf-8"), encoding="utf-8")
        import importlib.machinery

        from mbt import native_build

        (native / "manifest.json").write_text(json.dumps({
            "interpreter": importlib.machinery.EXTENSION_SUFFIXES[0],
            "shims": {"mbt.runs.genai": "genai.py", "mbt.runs.measure": "measure.py"},
            "library": {"name": "stand_in_library", "file": "stand_in_library.py"},
            "sources": native_build.source_hashes(tmp_path / "mbt")}), encoding="utf-8")
        assert build_in_use(tmp_path)[0] == "compiled"
    genai = tmp_path / "mbt" / "runs" / "judge.py"  # not a module under test: any source the build saw counts
    genai.write_text(genai.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert build_in_use(tmp_path) == ["pure", "True", "True"]
    genai.write_text(genai.read_text(encoding="utf-8").removesuffix("# edited\n"), encoding="utf-8")
    (tmp_path / "mbt" / "new_module.py").write_text('"""A module the build never saw."""\n', encoding="utf-8")
    assert build_in_use(tmp_path) == ["pure", "True", "True"]


def judged_here(monkeypatch, **options) -> tuple[str, int, int]:
    """The report of a run whose files all go to the workers (PARALLEL_MIN_BYTES lowered below them), how many pieces
    this process judged, and how many there were. This process waits before its first piece until a worker has
    judged one, so a worker always gets the chance; a piece the worker judged and could not send back (it did not
    pickle) is judged here again and counted."""
    here, real = os.getpid(), parts.judge_piece
    worker_judged = multiprocessing.get_context("fork").Event()
    judged_in_this_process: list[str] = []

    def judge_piece(tally, piece):
        if os.getpid() == here:
            if not judged_in_this_process:
                worker_judged.wait(timeout=30)
            judged_in_this_process.append(piece.shown)
            return real(tally, piece)
        judged = real(tally, piece)
        worker_judged.set()
        return judged

    monkeypatch.setattr(parts, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(parts, "judge_piece", judge_piece)
    report = api.runs(**RUNS, **options).model_dump_json()
    monkeypatch.undo()
    return report, len(judged_in_this_process), len(parts.pieces_of(RUNS["run_paths"]))


def test_a_worker_of_jobs_2_judges_pieces_that_stay_judged(monkeypatch):
    alone = api.runs(**RUNS, jobs=1).model_dump_json()
    sizes = sum(piece.end for piece in parts.pieces_of(RUNS["run_paths"]))
    assert sizes > 1  # the files are above the lowered PARALLEL_MIN_BYTES
    report, here, pieces = judged_here(monkeypatch, jobs=2)
    assert report == alone
    assert pieces >= 2 and here < pieces, f"{mbt.runs.BUILD} build: every piece was judged here"


def test_the_local_dask_cluster_judges_pieces_on_its_workers(monkeypatch):
    alone = api.runs(**RUNS, jobs=1).model_dump_json()
    report, here, pieces = judged_here(monkeypatch, engine="dask", jobs=2)
    assert report == alone
    assert here == 0, f"{mbt.runs.BUILD} build: {here} of {pieces} pieces were judged here, not on the cluster"
