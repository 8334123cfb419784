"""The pre-commit hook: a valid manifest (pre-commit's own schema) whose file pattern and command work."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mbt.kind import model_suffixes
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"


def hook() -> dict:
    from pre_commit.clientlib import load_manifest

    (found,) = [h for h in load_manifest(str(MANIFEST)) if h["id"] == "mbt-check"]
    return found


def test_the_manifest_is_valid_and_matches_every_model_suffix():
    h = hook()
    pattern = re.compile(h["files"])
    assert all(pattern.search(f"models/x{suffix}") for suffix in model_suffixes())
    assert not pattern.search("goldens/x.jsonl") and not pattern.search("README.md")
    assert h["entry"] == "mbt check" and h["language"] == "python"


def test_the_hook_command_passes_good_models_and_fails_bad_ones(tmp_path):
    """What pre-commit runs: the entry with the staged files that match `files` appended."""
    entry = hook()["entry"].split()[1:]  # `mbt` itself is the installed console script
    good = run_mbt(*entry, *sorted(str(p) for p in (ROOT / "models").glob("*.fsm")), cwd=ROOT)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = tmp_path / "bad.fsm"
    bad.write_text("fsm bad {\n  state a initial\n  a -> nowhere on go\n}\n", encoding="utf-8")
    failed = run_mbt(*entry, bad, cwd=tmp_path)
    assert failed.returncode in (1, 2) and "bad.fsm:" in failed.stdout + failed.stderr


@pytest.mark.slow
def test_pre_commit_try_repo_runs_the_hook(tmp_path):
    """pre-commit itself installs this checkout as the hook's environment and runs it on a staged model."""
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
    assert pre_commit, "pre-commit is a dev dependency (pip install -e '.[dev]')"
    repo = tmp_path / "user"
    repo.mkdir()
    shutil.copy(ROOT / "models" / "orders.fsm", repo / "orders.fsm")
    (repo / "bad.fsm").write_text("fsm bad {\n  state a initial\n  a -> nowhere on go\n}\n", encoding="utf-8")
    for cmd in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(cmd, cwd=repo, check=True, capture_output=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "cache"),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org"}
    snapshot = tmp_path / "hook-repo"
    shutil.copytree(ROOT, snapshot, ignore=shutil.ignore_patterns(".venv", "build", "__pycache__", ".git",
                                                                  "tests", "generated", ".mypy_cache", ".ruff_cache"))
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "snapshot"]):
        subprocess.run(cmd, cwd=snapshot, check=True, capture_output=True, env={**env, "GIT_COMMITTER_NAME": "t",
                                                                                  "GIT_COMMITTER_EMAIL": "t@x.org"})
    result = subprocess.run([pre_commit, "try-repo", str(snapshot), "mbt-check", "--files", "bad.fsm", "orders.fsm"],
                            cwd=repo, capture_output=True, text=True, env=env, timeout=1800)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "mbt check" in result.stdout and "Failed" in result.stdout and "bad.fsm:3" in result.stdout
