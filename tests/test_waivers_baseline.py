"""Gate waivers (reason, expiry; expired and stale ones fail) and the baseline ratchet (--baseline/--save-baseline)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from mbt import api
from mbt.errors import LocatedError
from mbt.measure.gate import evaluate_gate, load_gate
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "tests" / "data" / "reset.fsm")
TODAY = dt.date(2026, 6, 1)
# Verifies idle, collecting and the request_reset transition; the forbidden elements stay uncovered.
GOLDEN = '{"id": "G", "turns": [{"event": "request_reset", "assert_state": {"state": "collecting"}}]}\n'
FORBIDDEN = ["forbidden:any.*!say", "forbidden:confirming.confirm->started",
             "forbidden:any.confirm!call:start_password_reset"]


def mbt(*args, cwd=ROOT):
    result = run_mbt(*args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def run(tmp_path, gate_text: str, today=TODAY, baseline=None, goldens=GOLDEN):
    g = tmp_path / "g.jsonl"
    g.write_text(goldens, encoding="utf-8")
    gate = tmp_path / "gate.yaml"
    gate.write_text(gate_text, encoding="utf-8")
    return api.coverage_run([MODEL], [str(g)], gate_path=str(gate), baseline_path=baseline, today=today).report


def waivers(*entries) -> str:
    lines = ["waivers:"]
    for element, expires in entries:
        lines += [f"  - element: \"{element}\"", "    reason: accepted until the next release",
                  f"    expires: {expires}"]
    return "\n".join(lines) + "\n"


def test_active_waivers_keep_the_default_gate_green(tmp_path):
    report = run(tmp_path, waivers(*[(e, "2026-12-31") for e in FORBIDDEN]))
    assert report.gate.passed, report.gate.failures
    assert [w.status for w in report.gate.waivers] == ["active"] * 3
    report = run(tmp_path, waivers(*[(e, "2026-12-31") for e in FORBIDDEN[:2]]))
    (failure,) = report.gate.failures
    assert failure.rule == "forbidden_uncovered" and failure.elements == [FORBIDDEN[2]]


def test_an_expired_waiver_fails_and_stops_waiving(tmp_path):
    report = run(tmp_path, waivers(*[(e, "2026-05-31") for e in FORBIDDEN]))
    assert not report.gate.passed
    rules = [f.rule for f in report.gate.failures]
    assert rules.count("waivers") == 3 and "forbidden_uncovered" in rules
    assert "expired on 2026-05-31" in report.gate.failures[0].message
    # the expiry day itself is still valid
    assert run(tmp_path, waivers(*[(e, "2026-06-01") for e in FORBIDDEN])).gate.passed


def test_unknown_and_unused_waivers(tmp_path):
    report = run(tmp_path, waivers(("forbidden:renamed", "2026-12-31"), ("state:idle", "2026-12-31"),
                                   *[(e, "2026-12-31") for e in FORBIDDEN]))
    states = {w.element: w.status for w in report.gate.waivers}
    assert states["forbidden:renamed"] == "unknown" and states["state:idle"] == "unused"
    (failure,) = report.gate.failures
    assert failure.rule == "waivers" and "which no loaded model has" in failure.message


def test_waived_elements_leave_threshold_numerator_and_denominator(tmp_path):
    # 1 of 7 transitions verified: 14.3%; waiving 5 uncovered ones leaves 1 of 2 = 50%
    transitions = ["transition:collecting.provide_email->confirming", "transition:confirming.confirm->started",
                   "transition:started.tool_ok->sent", "transition:started.tool_failed->started",
                   "transition:started.tool_failed->handed_off"]
    gate = "forbidden_uncovered: 10\nfsm.transition: \">= 0.5\"\n"
    assert not run(tmp_path, gate).gate.passed
    report = run(tmp_path, gate + waivers(*[(t, "2026-12-31") for t in transitions]).replace("waivers:\n", "waivers:\n", 1))
    assert report.gate.passed, report.gate.failures
    report = run(tmp_path, gate + waivers(*[(t, "2026-12-31") for t in transitions[:4]]))
    assert not report.gate.passed and "33.3%" in report.gate.failures[0].message  # 1 of 3


@pytest.mark.parametrize("text, message", [
    ("waivers: {}\n", "must be a list"),
    ("waivers:\n  - element: x\n    reason: r\n", "needs `expires`"),
    ("waivers:\n  - element: x\n    reason: r\n    expires: soon\n", "must be a date YYYY-MM-DD"),
    ("waivers:\n  - element: x\n    reason: r\n    expires: 2026-01-01\n    until: x\n", "unknown waiver field"),
    ("exclude_units:\n  - source: policy\n    reason: r\n", "needs `lines`, `quote` or `key`"),
    ("exclude_units:\n  - source: policy\n    lines: 5-3\n    reason: r\n", "`lines` must be N or N-M"),
])
def test_malformed_waivers_and_exclusions_are_located(tmp_path, text, message):
    gate = tmp_path / "gate.yaml"
    gate.write_text(text, encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        load_gate(str(gate))
    assert message in str(err.value)
    assert str(err.value).startswith(f"{gate}:")


def test_baseline_ratchet(tmp_path):
    g = tmp_path / "g.jsonl"
    g.write_text(GOLDEN, encoding="utf-8")
    base = tmp_path / "baseline.json"
    # day one: the default gate fails (uncovered forbidden elements); saving a baseline records where we are
    first = mbt("coverage", "--model", MODEL, "--goldens", g, "--save-baseline", base)
    assert first.returncode == 1
    saved = json.loads(base.read_text(encoding="utf-8"))
    assert saved["models"]["pr"]["criteria"]["transition"] == {"covered": 1, "total": 7, "ratio": 0.1429,
                                                               "weighted_ratio": 0.1429}
    assert saved["models"]["pr"]["forbidden_uncovered"] == sorted(FORBIDDEN)
    # same coverage against the baseline: green
    assert mbt("coverage", "--model", MODEL, "--goldens", g, "--baseline", base).returncode == 0
    # better coverage: still green
    better = tmp_path / "better.jsonl"
    better.write_text(GOLDEN + '{"id": "H", "precondition": {"state": "collecting"}, "turns": [{"event": '
                      '"provide_email", "args": {"email": "a@b.c"}, "assert_state": {"state": "confirming"}}]}\n',
                      encoding="utf-8")
    assert mbt("coverage", "--model", MODEL, "--goldens", better, "--baseline", base).returncode == 0
    # worse: a state and a transition lost
    worse = tmp_path / "worse.jsonl"
    worse.write_text('{"id": "G", "turns": [{"event": "request_reset"}]}\n', encoding="utf-8")
    result = mbt("coverage", "--model", MODEL, "--goldens", worse, "--baseline", base)
    assert result.returncode == 1
    assert "pr: transition coverage fell from 14.3% to 0.0%" in result.stdout


def test_baseline_flags_new_uncovered_forbidden_elements(tmp_path):
    g = tmp_path / "g.jsonl"
    g.write_text(GOLDEN, encoding="utf-8")
    report = run(tmp_path, "forbidden_uncovered: 10\n")
    from mbt.measure.baseline import Baseline, baseline_of, ratchet

    base = baseline_of(report)
    base.models["pr"].forbidden_uncovered = FORBIDDEN[:2]  # pretend the third one was covered back then
    failures = ratchet(Baseline.model_validate(base.model_dump()), "b.json", report)
    assert [f.elements for f in failures] == [[FORBIDDEN[2]]]
    # an explicit forbidden rule in the gate file stays in force next to the ratchet
    gate = load_gate(str(tmp_path / "gate.yaml"))
    result = evaluate_gate(gate, report, TODAY, base, "b.json")
    assert [f.rule for f in result.failures] == ["baseline.forbidden_uncovered"]


def test_bad_baseline_file_is_unusable_input(tmp_path):
    g = tmp_path / "g.jsonl"
    g.write_text(GOLDEN, encoding="utf-8")
    bad = tmp_path / "b.json"
    bad.write_text('{"models": 3}', encoding="utf-8")
    result = mbt("coverage", "--model", MODEL, "--goldens", g, "--baseline", bad)
    assert result.returncode == 2 and "not an mbt baseline" in result.stderr
