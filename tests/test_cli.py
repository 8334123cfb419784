"""The command line end to end: exit codes, clear messages for bad input (no traceback), outputs, the gate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "tests" / "data" / "reset.fsm"


def mbt(*args, cwd=None):
    result = run_mbt(*args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = "\n".join(json.dumps(c) for c in [
    {"id": "G-1", "turns": [{"event": "request_reset", "assert_state": {"state": "collecting"}}]},
    {"id": "G-2", "precondition": {"state": "confirming"},
     "turns": [{"event": "confirm", "assert_state": {"state": "confirming"}}]},
]) + "\n"


def test_coverage_fails_the_default_gate_on_uncovered_forbidden_elements(tmp_path):
    goldens = write(tmp_path, "g.jsonl", GOOD)
    result = mbt("coverage", "--model", MODEL, "--goldens", goldens)
    assert result.returncode == 1
    assert "Uncovered forbidden elements" in result.stdout
    assert "forbidden:any.*!say" in result.stdout
    assert "Gate (default gate: no uncovered forbidden element): FAILED" in result.stdout


def test_no_gate_only_reports(tmp_path):
    goldens = write(tmp_path, "g.jsonl", GOOD)
    result = mbt("coverage", "--model", MODEL, "--goldens", goldens, "--no-gate")
    assert result.returncode == 0
    assert "Gate" not in result.stdout


def test_gate_file_thresholds_pass_and_fail(tmp_path):
    goldens = write(tmp_path, "g.jsonl", GOOD)
    lenient = write(tmp_path, "lenient.yaml", "forbidden_uncovered: 10\nthresholds:\n  fsm.state: \">= 0.1\"\n")
    assert mbt("coverage", "--model", MODEL, "--goldens", goldens, "--gate", lenient).returncode == 0
    strict = write(tmp_path, "strict.yaml", "forbidden_uncovered: 10\nfsm.transition: \">= 0.9\"\ncontradictions: 0\n")
    result = mbt("coverage", "--model", MODEL, "--goldens", goldens, "--gate", strict)
    assert result.returncode == 1
    assert "transition coverage is 14.3%, the gate requires >= 90.0%" in result.stdout


def test_bad_gate_file_is_unusable_input_with_location(tmp_path):
    goldens = write(tmp_path, "g.jsonl", GOOD)
    gate = write(tmp_path, "gate.yaml", "fsm.transition: \"at least most\"\nwhatever: 1\n")
    result = mbt("coverage", "--model", MODEL, "--goldens", goldens, "--gate", gate)
    assert result.returncode == 2
    assert f"{gate}:1:17: error: cannot read condition" in result.stderr
    assert f"{gate}:2:1: error: unknown gate key `whatever`" in result.stderr


def test_json_coverage_validates_against_the_published_schema(tmp_path):
    goldens = write(tmp_path, "g.jsonl", GOOD)
    out = tmp_path / "cov.json"
    result = mbt("coverage", "--model", MODEL, "--goldens", goldens, "--format", "json", "-o", out)
    assert result.returncode == 1 and result.stdout == ""
    data = json.loads(out.read_text())
    schema = json.loads((ROOT / "docs" / "schemas" / "coverage.schema.json").read_text())
    jsonschema.validate(data, schema)
    fsm = data["models"][0]
    states = next(c for c in fsm["criteria"] if c["criterion"] == "state")
    # G-1 verifies idle (its event's state) and collecting; G-2 verifies confirming (refusal asserted).
    assert states["verified"]["covered"] == 3 and states["verified"]["total"] == 6
    assert data["gate"]["passed"] is False


def test_broken_golden_line_is_reported_and_the_rest_processed(tmp_path):
    goldens = write(tmp_path, "g.jsonl", GOOD + "{not json\n")
    result = mbt("coverage", "--model", MODEL, "--goldens", goldens, "--no-gate")
    assert result.returncode == 0
    assert f"{goldens}:3: not valid JSON" in result.stdout
    assert "3 golden cases read (2 valid, 1 invalid)" in result.stdout


@pytest.mark.parametrize("text,location,fragment", [
    ("fsm m {\n  state a initial\n  a -> b on e\n}\n", "3:3", "unknown target state `b`"),
    ("fsm m {\n  state a initial\n", "2:18", "syntax error"),
    ("", "1:1", "no model in this file"),
])
def test_bad_model_gives_one_clear_located_message_and_exit_2(tmp_path, text, location, fragment):
    model = write(tmp_path, "m.fsm", text)
    goldens = write(tmp_path, "g.jsonl", GOOD)
    for args in (("check", model), ("coverage", "--model", model, "--goldens", goldens), ("elements", "--model", model)):
        result = mbt(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert f"{model}:{location}: error:" in result.stderr and fragment in result.stderr
        assert result.stdout == ""


def test_binary_and_missing_files_are_unusable_input(tmp_path):
    binary = tmp_path / "b.fsm"
    binary.write_bytes(b"\x00\x01fsm")
    result = mbt("elements", "--model", binary)
    assert result.returncode == 2 and "binary file" in result.stderr
    result = mbt("coverage", "--model", MODEL, "--goldens", tmp_path / "missing.jsonl")
    assert result.returncode == 2 and "missing.jsonl:1:1: error: no such file" in result.stderr


def test_failed_run_writes_no_partial_output_file(tmp_path):
    out = tmp_path / "report.json"
    result = mbt("coverage", "--model", tmp_path / "nope.fsm", "--goldens", tmp_path, "--format", "json", "-o", out)
    assert result.returncode == 2 and not out.exists()


def test_bad_option_exits_2():
    # No model at all (no goldens is fine: the 0% baseline, tests/test_invocations.py).
    result = mbt("coverage", "--goldens", MODEL.parent)
    assert result.returncode == 2 and "--model" in result.stderr


def test_elements_json_lists_every_criterion(tmp_path):
    result = mbt("elements", "--model", MODEL, "--format", "json")
    assert result.returncode == 0
    data = json.loads(result.stdout)
    jsonschema.validate(data, json.loads((ROOT / "docs" / "schemas" / "elements.schema.json").read_text()))
    criteria = {e["criterion"] for e in data["models"][0]["elements"]}
    assert criteria == {"state", "transition", "guard", "forbidden", "transition-pair"}


def test_show_covering_names_the_goldens(tmp_path):
    goldens = write(tmp_path, "g.jsonl", GOOD)
    result = mbt("coverage", "--model", MODEL, "--goldens", goldens, "--no-gate", "--show-covering")
    assert "verified by:  G-1" in result.stdout


def test_check_exits_1_on_error_findings_and_json_follows_the_schema(tmp_path):
    model = write(tmp_path, "m.fsm", "fsm m {\n  var n: int[0..2]\n  state a initial\n  state b final\n"
                                     "  event go\n  a -> b on go [n > 5]\n}\n")
    result = mbt("check", model)
    assert result.returncode == 1
    assert f"{model}:6:17: error:" in result.stdout and "can never hold" in result.stdout
    assert "1 error" in result.stdout
    result = mbt("check", model, "--format", "json")
    data = json.loads(result.stdout)
    jsonschema.validate(data, json.loads((ROOT / "docs" / "schemas" / "check.schema.json").read_text()))
    assert [f["severity"] for f in data["findings"]].count("error") == 1


def test_check_of_the_shipped_examples_has_no_errors():
    result = mbt("check", ROOT / "models")
    assert result.returncode == 0 and "0 errors" in result.stdout


def test_json_files_are_compact_and_equal_to_what_a_terminal_sees_indented(tmp_path):
    from mbt.cli import _pretty

    goldens = write(tmp_path, "g.jsonl", GOOD)
    out = tmp_path / "cov.json"
    mbt("coverage", "--model", MODEL, "--goldens", goldens, "--format", "json", "-o", out)
    text = out.read_text()
    assert text.count("\n") == 1 and json.loads(text)["schema_version"]
    assert _pretty(str(out)) is False  # a file never gets the indented form; stdout does only on a terminal


def test_the_real_entry_point_in_a_process_of_its_own(tmp_path):
    """Most CLI tests run `mbt.cli.main` in-process (tests/cli_runner.py); this one starts `python -m mbt` itself."""
    version = subprocess.run([sys.executable, "-m", "mbt", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("mbt, version ")
    goldens = write(tmp_path, "g.jsonl", GOOD)
    result = subprocess.run([sys.executable, "-m", "mbt", "coverage", "--model", str(MODEL), "--goldens", str(goldens)],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "Uncovered forbidden elements" in result.stdout
    assert "Traceback" not in result.stderr


def test_an_internal_error_is_one_line_and_exit_3(monkeypatch, capsys):
    """A bug in mbt must never exit 1 (a failing gate) nor print a traceback unless asked."""
    from mbt import api, cli

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(api, "elements", broken)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["elements", "--model", str(MODEL)])
    err = capsys.readouterr().err
    assert exit_.value.code == 3
    assert "internal error" in err and "ZeroDivisionError: boom" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):
        cli.main(["elements", "--model", str(MODEL), "--debug"])
    assert "Traceback" in capsys.readouterr().err


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys):
    from mbt import api, cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "elements", interrupted)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["elements", "--model", str(MODEL)])
    assert exit_.value.code == 130 and capsys.readouterr().err.strip() == "mbt: interrupted"


def test_ctrl_c_while_mbt_starts_is_one_line_and_exit_130():
    """Issue 14: a Ctrl-C during start-up (importing click) printed a KeyboardInterrupt traceback."""
    probe = ("import builtins\nreal = builtins.__import__\n"
             "def interrupted(name, *args, **kwargs):\n"
             "    if name == 'click':\n        raise KeyboardInterrupt\n"
             "    return real(name, *args, **kwargs)\n"
             "builtins.__import__ = interrupted\nimport mbt.cli\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (130, "mbt: interrupted\n")
