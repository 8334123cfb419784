"""Issue 14, outputs: several reports of one `coverage` run and the files of one `generate` run appear together or not
at all. An OS error (a full disk, a name over 255 bytes) is one `error: PATH: ...` line with exit 2, and a Ctrl-C
while staging leaves nothing; a Ctrl-C while the finished set is moved into place waits until it is all there."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from mbt import files
from tests.cli_runner import run_mbt

MODEL, GOLDEN = "models/recovery.fsm", "models/goldens/golden.jsonl"


def leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_failing_report_leaves_no_other_report_of_the_set(tmp_path):
    result = run_mbt("coverage", "--model", MODEL, "--goldens", GOLDEN, "--no-gate",
                     "--format", f"json:{tmp_path / 'a.json'}", "--format", f"html:{tmp_path / 'site'}",
                     "--format", "markdown:/dev/full")
    assert result.returncode == 2 and result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""
    assert leftovers(tmp_path) == []


def test_a_name_over_255_bytes_is_one_line_and_nothing_is_written(tmp_path):
    long_name = "é" * 130  # 260 bytes in UTF-8
    result = run_mbt("coverage", "--model", MODEL, "--goldens", GOLDEN, "--no-gate",
                     "--format", f"json:{tmp_path / 'a.json'}", "--format", f"markdown:{tmp_path / long_name}.md")
    assert result.returncode == 2 and "255 bytes" in result.stderr and "Traceback" not in result.stderr
    assert leftovers(tmp_path) == []


def test_generate_with_a_model_name_too_long_for_a_file_name_writes_nothing(tmp_path):
    name = "m" + "x" * 250
    model = tmp_path / "long.fsm"
    model.write_text(f"fsm {name} {{\n  state a initial\n  state b final\n  event go\n  a -> b on go\n}}\n",
                     encoding="utf-8")
    out = tmp_path / "out"
    result = run_mbt("generate", "--model", model, "--out", out)
    assert result.returncode == 2 and "255 bytes" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists() and leftovers(tmp_path) == ["long.fsm"]


@pytest.fixture
def ctrl_c_raises():
    """SIGINT handled as on a terminal (Python's KeyboardInterrupt). A pytest started in the background (`pytest &`
    in a script) inherits SIGINT ignored, and the signal these tests send would be dropped, not raised."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def interrupt_on(monkeypatch, module, name: str, call: int) -> list:
    """Deliver a real SIGINT from inside the `call`-th call of module.name (as a Ctrl-C at that moment would);
    the list returned counts the calls."""
    real, calls = getattr(module, name), []

    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) == call:
            signal.raise_signal(signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)
    return calls


@pytest.mark.parametrize("command", ["coverage", "generate"])
def test_ctrl_c_while_staging_leaves_nothing(tmp_path, monkeypatch, ctrl_c_raises, command):
    calls = interrupt_on(monkeypatch, files.os, "fsync", 2)
    out = tmp_path / "out"
    args = (["coverage", "--model", MODEL, "--goldens", GOLDEN, "--no-gate", "--format", f"json:{out}.json",
             "--format", f"markdown:{out}.md", "--format", f"sarif:{out}.sarif"] if command == "coverage" else
            ["generate", "--model", MODEL, "--goldens", GOLDEN, "--out", out])
    result = run_mbt(*args)
    assert result.returncode == 130 and result.stderr.strip() == "mbt: interrupted", (len(calls), result)
    assert leftovers(tmp_path) == []


def test_ctrl_c_while_moving_the_set_into_place_waits_for_the_whole_set(tmp_path, monkeypatch, ctrl_c_raises):
    interrupt_on(monkeypatch, files.os, "replace", 1)
    out = tmp_path / "out"
    result = run_mbt("generate", "--model", MODEL, "--goldens", GOLDEN, "--out", out)
    assert result.returncode == 130
    monkeypatch.undo()
    again = tmp_path / "again"
    run_mbt("generate", "--model", MODEL, "--goldens", GOLDEN, "--out", again)
    assert leftovers(out) == leftovers(again) and not [p for p in leftovers(out) if p.endswith(".tmp")]


def test_generate_into_an_existing_folder_keeps_it_whole_on_error(tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert run_mbt("generate", "--model", MODEL, "--out", out).returncode == 0
    before = {p: (out / p).read_bytes() for p in leftovers(out) if (out / p).is_file()}
    real, calls = files.os.fsync, []

    def full_disk(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(out / "x"))
        return real(fd)

    monkeypatch.setattr(files.os, "fsync", full_disk)
    result = run_mbt("generate", "--model", MODEL, "--goldens", GOLDEN, "--out", out)
    assert result.returncode == 2 and "No space left on device" in result.stderr
    assert {p: (out / p).read_bytes() for p in leftovers(out) if (out / p).is_file()} == before


def test_input_names_over_255_bytes_are_located_errors(tmp_path):
    long_name = "a" * 300
    model = tmp_path / "src.fsm"
    model.write_text(f'source policy "{long_name}.md"\nfsm m {{\n  state a initial\n  state b final @policy:1\n'
                     "  event go\n  a -> b on go\n}\n", encoding="utf-8")
    checked = run_mbt("check", model)
    assert checked.returncode == 1 and f"{model}:1:1: error: source `policy`" in checked.stdout
    for args in (["check", tmp_path / f"{long_name}.fsm"],
                 ["coverage", "--model", MODEL, "--goldens", tmp_path / f"{long_name}.jsonl"]):
        result = run_mbt(*args)
        assert result.returncode == 2 and "File name too long" in result.stderr and "Traceback" not in result.stderr
        assert f"{long_name}.{str(args[-1]).rsplit('.', 1)[1]}:1:1: error: cannot read file" in result.stderr
