"""The shipped example (models/): it checks clean and its coverage report shows the intended, honest mix."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from mbt.cli import cli
from mbt.parsing.loader import load_file
from tests.json_report import expanded

ROOT = Path(__file__).resolve().parents[1]
MODEL = "models/recovery.fsm"
GOLDENS = "models/goldens/"


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    # The README's demo commands run from the repository root; paths in reports are relative to it.
    monkeypatch.chdir(ROOT)


def run(*args: str) -> tuple[int, dict]:
    """Exit code and JSON report of one CLI call (the report goes to a file: stderr carries the human summary)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "report.json"
        result = CliRunner().invoke(cli, [*args, "--format", "json", "-o", str(out)])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return result.exit_code, expanded(json.loads(out.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def coverage() -> tuple[int, dict]:
    # Module-scoped: the replay is the same for every test below.
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        return run("coverage", "--model", MODEL, "--goldens", GOLDENS)


def elements_by_id(report: dict) -> dict[str, dict]:
    (model,) = report["models"]
    return {e["element"]["id"]: e for e in model["elements"]}


# ---------------------------------------------------------------- mbt check


def test_check_finds_nothing_wrong_with_the_example():
    code, report = run("check", "models/")
    assert code == 0
    # models/ holds the other kinds' examples too, whose findings are theirs to show (tests/test_policy_example.py).
    serious = [f for f in report["findings"] if f["severity"] in ("error", "warning") and f["model"] == "recovery"]
    assert serious == []  # spans match the documents, every state is reachable, no overlaps, no forbidden transition
    assert "recovery" in report["models"]


def test_every_element_cites_a_real_source_line_except_the_deliberately_inferred_ones():
    model = load_file(ROOT / MODEL).models[0]
    without_span = sorted(s.name for s in model.states.values() if s.span is None)
    assert without_span == ["idle"]
    assert all(t.span is not None for t in model.transitions)
    assert all(f.span is not None for f in model.forbids)
    unspecified = [t.key for t in model.transitions if t.status.value == "unspecified"]
    assert unspecified == ["suspended.resume->confirming_email"]


def test_some_policy_sentences_are_deliberately_not_modelled():
    model = load_file(ROOT / MODEL).models[0]
    cited: set[int] = set()
    for part in [*model.variables.values(), *model.states.values(), *model.events.values(), *model.bindings,
                 *model.transitions, *model.forbids]:
        span = part.span
        if span is not None and span.source == "policy":
            cited.update(range(span.line_start, span.line_end + 1))
    policy = (ROOT / "models/docs/account-recovery-v3.md").read_text(encoding="utf-8").splitlines()
    for phrase in ("09:00 to 18:00", "kept for 90 days", "expire after 30 minutes", "three sentences"):
        line = next(i for i, text in enumerate(policy, start=1) if phrase in text)
        assert line not in cited, phrase


# ---------------------------------------------------------------- mbt coverage


def test_default_gate_fails_on_the_one_uncovered_forbidden_element(coverage):
    """The default gate also fails on the example's contradiction and its broken golden line (issue 9)."""
    code, report = coverage
    assert code == 1
    failures = {f["rule"]: f for f in report["gate"]["failures"]}
    assert sorted(failures) == ["contradictions", "forbidden_uncovered", "invalid_cases"]
    assert failures["forbidden_uncovered"]["elements"] == ["forbidden:claim_reset_done"]


def test_uncovered_forbidden_element_is_reached_but_never_asserted(coverage):
    _, report = coverage
    claim = elements_by_id(report)["forbidden:claim_reset_done"]
    assert claim["verified_by"] == []
    # The tool-failure goldens reach it; ACC-REC-001 asserts "声称已经重置" but never reaches a tool failure.
    assert {"TOOL-FAIL-001", "TOOL-FAIL-004"} <= set(claim["exercised_by"])
    assert "ACC-REC-001" not in claim["exercised_by"]


def test_the_other_forbidden_elements_are_verified(coverage):
    _, report = coverage
    found = elements_by_id(report)
    assert "ACC-REC-001" in found["forbidden:ask_current_password"]["verified_by"]
    assert {"CTX-CORR-001", "ACC-REC-001"} <= set(found["forbidden:discarded_email_to_tool"]["verified_by"])
    assert found["forbidden:reset_without_email"]["verified_by"] == ["RST-CONFIRM-001"]


def test_exactly_one_contradiction(coverage):
    _, report = coverage
    (contradiction,) = report["contradictions"]
    assert contradiction["case"] == "TOOL-FAIL-003"
    assert contradiction["where"] == "models/goldens/tool-failures.jsonl:3"
    assert (contradiction["turn"], contradiction["path"]) == (2, "state")
    assert (contradiction["expected"], contradiction["actual"]) == ("handed_off", "reset_started")


def test_exactly_one_divergence(coverage):
    _, report = coverage
    (divergence,) = report["divergences"]
    assert divergence["case"] == "RST-WAIT-001"
    assert (divergence["turn"], divergence["state"], divergence["event"]) == (2, "reset_started", "off_topic")


def test_broken_line_is_reported_and_the_rest_replayed(coverage):
    _, report = coverage
    (invalid,) = report["invalid_cases"]
    assert (invalid["file"], invalid["line"]) == ("models/goldens/broken.jsonl", 2)
    assert "not valid JSON" in invalid["message"]
    summary = report["goldens"]
    assert (summary["valid"], summary["invalid"], summary["unbound"]) == (summary["read"] - 1, 1, 0)
    # The valid lines on either side of the broken one were replayed.
    found = elements_by_id(report)
    assert "NEG-001" in found["state:collecting_email"]["verified_by"]
    assert "NEG-003" in found["guard:confirming_email.correct_email:none"]["verified_by"]


def test_seed_goldens_agree_with_the_model(coverage):
    _, report = coverage
    seed_cases = {"INT-001", "INT-002", "INT-003", "INT-004", "CTX-CORR-001", "ACC-REC-001"}
    involved = {c["case"] for c in report["contradictions"] + report["divergences"] + report["unbound_turns"]}
    assert not involved & seed_cases
    correction = elements_by_id(report)["transition:confirming_email.correct_email->reset_started"]
    assert {"CTX-CORR-001", "ACC-REC-001"} <= set(correction["verified_by"])


def test_real_gaps_remain(coverage):
    _, report = coverage
    (model,) = report["models"]
    missed = sorted(e["element"]["id"] for e in model["elements"]
                    if e["element"]["criterion"] == "transition" and not e["verified_by"])
    assert missed == [
        "transition:confirming_email.reject_email->collecting_email",
        "transition:handoff_after_retry",
        "transition:suspended.resume->collecting_email",
    ]
    ratios = {c["criterion"]: c["verified"]["ratio"] for c in model["criteria"]}
    assert 0 < ratios["transition-pair"] < ratios["transition"] < 1


def test_release_gate_reports_the_contradiction_too():
    code, report = run("coverage", "--model", MODEL, "--goldens", GOLDENS, "--gate", "models/gates/release.yaml")
    assert code == 1
    # invalid_cases: the release gate does not allow broken golden lines, so the default limit of 0 holds.
    assert sorted(f["rule"] for f in report["gate"]["failures"]) == ["contradictions", "forbidden_uncovered",
                                                                      "invalid_cases"]
