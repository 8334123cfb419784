"""Every command's --help ends with examples, the exit codes and the environment variables; colour follows pytest's rules."""

from __future__ import annotations

import io

import pytest

from mbt.report.style import wants_color
from tests.cli_runner import run_mbt

COMMANDS = [["check"], ["elements"], ["coverage"], ["render"], ["generate"], ["probes"], ["import"], ["import", "dmn"],
            ["import", "graphwalker"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_ends_with_examples_exit_codes_and_environment(command):
    result = run_mbt(*command, "--help")
    assert result.returncode == 0
    text = result.stdout
    examples = text[text.index("Examples:"):text.index("Exit codes:")].splitlines()[1:]
    examples = [e.strip() for e in examples if e.strip()]
    assert 1 <= len(examples) <= 3 and all(e.startswith("mbt " + " ".join(command[:1])) for e in examples), examples
    assert "2 unusable input" in text and "3 an internal error" in text
    for name in ("MBT_CONFIG", "MBT_DEBUG", "NO_COLOR", "FORCE_COLOR", "GITHUB_WORKSPACE"):
        assert name in text


class Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("option, env, tty, expected", [
    ("auto", {}, True, True), ("auto", {}, False, False),
    ("auto", {"TERM": "dumb"}, True, False),
    ("auto", {"NO_COLOR": "1"}, True, False), ("auto", {"NO_COLOR": ""}, True, True),  # empty: not set
    ("auto", {"FORCE_COLOR": "1"}, False, True), ("auto", {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),
    ("auto", {"PY_COLORS": "1", "NO_COLOR": "1"}, False, True), ("auto", {"PY_COLORS": "0", "FORCE_COLOR": "1"}, True, False),
    ("yes", {"NO_COLOR": "1", "PY_COLORS": "0"}, False, True), ("no", {"FORCE_COLOR": "1"}, True, False),
])
def test_colour_is_decided_as_pytest_decides(monkeypatch, option, env, tty, expected):
    for name in ("NO_COLOR", "FORCE_COLOR", "PY_COLORS", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert wants_color(Stream(tty), option) is expected


def test_force_color_and_the_color_option_reach_the_report():
    plain = run_mbt("coverage", "models/recovery.fsm", env={"NO_COLOR": "", "FORCE_COLOR": ""})
    forced = run_mbt("coverage", "models/recovery.fsm", env={"FORCE_COLOR": "1"})
    off = run_mbt("--color", "no", "coverage", "models/recovery.fsm", env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in plain.stdout and "\x1b[1m" in forced.stdout and "\x1b[" not in off.stdout
    json_out = run_mbt("coverage", "models/recovery.fsm", "--format", "json", env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in json_out.stdout  # machine output never
