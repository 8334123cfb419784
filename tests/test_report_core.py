"""The Reporter protocol: reporters only format; mbt.report.core alone writes stdout, files and folders."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mbt.errors import MbtError
from mbt.report.core import MARKER, Output, write_report, write_reports

REPORT = Path(__file__).resolve().parents[1] / "mbt" / "report"
# Calls that print or touch the file system; only core.py (the one writer) may make them.
WRITERS = {"open", "print", "write_file", "write_text", "write_bytes", "mkdir", "replace_folder", "fill_folder",
           "echo", "secho"}


def test_no_reporter_prints_or_opens_a_file():
    offenders = []
    for path in sorted(REPORT.rglob("*.py")):
        if path.name == "core.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in WRITERS:
                    offenders.append(f"{path.relative_to(REPORT)}:{node.lineno} {name}()")
            if isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr") and \
                    isinstance(node.value, ast.Name) and node.value.id == "sys" and path.name != "style.py":
                offenders.append(f"{path.relative_to(REPORT)}:{node.lineno} sys.{node.attr}")
    assert offenders == []


def test_a_failing_reporter_leaves_nothing_written(tmp_path, capsys):
    def broken():
        raise RuntimeError("reporter bug")

    first = tmp_path / "first.txt"
    with pytest.raises(RuntimeError):
        write_reports([Output(lambda: "text\n", str(first)), Output(lambda: "out\n", None), Output(broken, None)])
    assert not first.exists()
    assert capsys.readouterr().out == ""


def test_text_bytes_and_folders_go_where_they_are_named(tmp_path, capsys):
    write_reports([Output(lambda: "één\n", None), Output(lambda: b"\x89PNG", str(tmp_path / "d.png")),
                   Output(lambda: {"index.html": b"<p>", "a/b.txt": b"x"}, str(tmp_path / "site"))])
    assert capsys.readouterr().out == "één\n"
    assert (tmp_path / "d.png").read_bytes() == b"\x89PNG"
    assert (tmp_path / "site" / "a" / "b.txt").read_bytes() == b"x"
    assert (tmp_path / "site" / MARKER).exists()


def test_bytes_to_stdout_are_written_raw(capfdbinary):
    write_report(b"\x00\xff", "-")
    assert capfdbinary.readouterr().out == b"\x00\xff"


def test_bad_targets_are_bad_input(tmp_path):
    with pytest.raises(MbtError, match="is a folder"):
        write_report("x", str(tmp_path))
    with pytest.raises(MbtError, match="does not exist"):
        write_report("x", str(tmp_path / "missing" / "x.txt"))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "keep.txt").write_text("user's")
    with pytest.raises(MbtError, match="did not write"):
        write_report({"index.html": b""}, str(tmp_path / "mine"))
    assert (tmp_path / "mine" / "keep.txt").read_text() == "user's"
    with pytest.raises(MbtError, match="cannot go to stdout"):
        write_report({"index.html": b""}, None)
