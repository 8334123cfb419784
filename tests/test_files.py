"""The one writer (mbt/files.py): whole or nothing, the user's umask, existing modes kept, devices never replaced."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mbt.files import write_file
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_umask_mode(tmp_path, umask):
    target = tmp_path / "r.json"
    write_file(target, "{}")
    assert mode(target) == 0o666 & ~umask and target.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def test_an_existing_file_keeps_its_mode(tmp_path):
    target = tmp_path / "r.txt"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_file(target, "new")
    assert mode(target) == 0o640 and target.read_text() == "new"


def test_a_symbolic_link_is_followed_and_stays_a_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_file(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_fifo_is_written_in_place_never_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_file(fifo, "through the pipe")
        assert os.read(reader, 100) == b"through the pipe"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_dev_null_is_never_replaced():
    before = os.lstat("/dev/null")
    write_file("/dev/null", "nothing")
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (before.st_ino, before.st_rdev) == (after.st_ino, after.st_rdev)


def test_reports_and_generated_files_follow_the_umask(tmp_path, umask):
    model, goldens = ROOT / "models" / "recovery.fsm", ROOT / "models" / "goldens" / "golden.jsonl"
    result = run_mbt("coverage", "--model", model, "--goldens", goldens, "--no-gate", "-o", tmp_path / "c.json",
                     "--format", f"html:{tmp_path / 'html'}", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert mode(tmp_path / "c.json") == 0o666 & ~umask
    assert mode(tmp_path / "html") == 0o777 & ~umask
    assert {mode(p) for p in (tmp_path / "html").rglob("*") if p.is_file()} == {0o666 & ~umask}
    generated = run_mbt("generate", "--model", model, "--out", tmp_path / "gen")
    assert generated.returncode in (0, 1), generated.stderr
    files = [p for p in (tmp_path / "gen").rglob("*") if p.is_file()]
    assert files and {mode(p) for p in files} == {0o666 & ~umask}
    assert {mode(p) for p in (tmp_path / "gen").rglob("*") if p.is_dir()} == {0o777 & ~umask}
