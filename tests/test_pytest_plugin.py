"""The pytest plugin (entry point pytest11): a pytester run records goldens, sees the coverage table, fails on the gate.

The inner runs are subprocesses: in-process, pytester restores sys.modules between runs and mbt's classes would be
imported twice."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.cli_runner import run_mbt

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "recovery.fsm"
GOLDENS = ROOT / "models" / "goldens" / "golden.jsonl"
# The inner sessions use no hypothesis; its plugin alone imports hypothesis in every session (about 1 s of CPU).
INNER = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def inner(pytester, *args):
    """A pytest session of its own (a subprocess), with the plugin loaded as a user's pytest loads it."""
    return pytester.runpytest_subprocess(*args, *INNER)

TESTS = f'''
import json

def test_records_a_golden(mbt_record):
    for line in open({str(GOLDENS)!r}, encoding="utf-8"):
        mbt_record(json.loads(line))
'''


def test_the_plugin_is_registered_by_entry_point():
    (ep,) = [e for e in entry_points(group="pytest11") if e.name == "mbt"]
    assert ep.value == "mbt.pytest_plugin"


def test_a_session_prints_the_coverage_table_and_fails_on_the_gate(pytester):
    pytester.makepyfile(test_agent=TESTS)
    result = inner(pytester, "--mbt-model", str(MODEL))
    cli = run_mbt("coverage", MODEL, GOLDENS, cwd=ROOT)  # the same cases, measured by the CLI
    assert cli.returncode == 1  # the example fails the default gate (an uncovered forbidden element)
    out = result.stdout.str()
    assert "1 passed" in out and "mbt coverage" in out and "mbt: FAIL: the gate failed" in out
    table = [line for line in cli.stdout.splitlines() if "%" in line and line.startswith("  ")]
    assert table and all(line in out.splitlines() for line in table)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.slow  # two more subprocess pytest runs
def test_a_passing_gate_and_reports_written(pytester, tmp_path):
    pytester.makepyfile(test_agent=TESTS)
    gate = pytester.makefile(".yaml", gate="forbidden_uncovered: 5\ncontradictions: 5\n")
    sarif = tmp_path / "mbt.sarif"
    result = inner(pytester, "--mbt-model", str(MODEL), "--mbt-gate", str(gate), "--mbt-report",
                   f"sarif:{sarif}")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert "Gate (" in result.stdout.str() and "passed" in result.stdout.str()
    assert json.loads(sarif.read_text(encoding="utf-8"))["version"] == "2.1.0"
    low = inner(pytester, "--mbt-model", str(MODEL), "--mbt-gate", str(gate), "--mbt-fail-under", "99")
    assert low.ret == pytest.ExitCode.TESTS_FAILED and "--fail-under requires" in low.stdout.str()


@pytest.mark.slow  # two more subprocess pytest runs
def test_goldens_files_the_run_writes_and_bad_input(pytester):
    written = pytester.path / "out"
    pytester.makepyfile(test_writer=f'''
import shutil
def test_writes():
    import os
    os.makedirs({str(written)!r}, exist_ok=True)
    shutil.copy({str(GOLDENS)!r}, {str(written / "g.jsonl")!r})
''')
    result = inner(pytester, "--mbt-model", str(MODEL), "--mbt-goldens", str(written))
    assert "1 golden case read (1 valid" in result.stdout.str()  # the file the test wrote, measured after it
    missing = inner(pytester, "--mbt-model", str(pytester.path / "none.fsm"))
    assert missing.ret == pytest.ExitCode.TESTS_FAILED and "none.fsm" in missing.stdout.str()
    assert "Traceback" not in missing.stdout.str()


def test_without_the_option_the_plugin_does_nothing(pytester):
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    result = inner(pytester)
    assert result.ret == pytest.ExitCode.OK and "mbt coverage" not in result.stdout.str()
