"""The shipped decision-table example (models/refund.dt): its findings, its coverage and gaps, and that it leaves
the FSM example's demo untouched."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from mbt.cli import cli
from mbt.goldens.loader import load_goldens
from mbt.parsing.loader import load_file
from tests.json_report import expanded

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def run(*args: str) -> tuple[int, dict]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "report.json"
        result = CliRunner().invoke(cli, [*args, "--format", "json", "-o", str(out)])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return result.exit_code, expanded(json.loads(out.read_text(encoding="utf-8")))


def test_check_reports_the_policy_gap_and_the_masked_goodwill_rule():
    code, report = run("check", "models/refund.dt")
    assert code == 0
    found = [(f["code"], f["location"]["line"]) for f in report["findings"]]
    assert found == [("TBL001", 6), ("TBL004", 29)]
    gap, masked = report["findings"]
    assert 'region: "APAC", account_type: "business", risk_score: [0..49], amount: [0.01..1000]' in gap["message"]
    assert gap["witness"] == {"region": "APAC", "account_type": "business", "risk_score": 0, "days_since_payment": 0,
                              "amount": 0.01}
    assert "eu_premium_goodwill can never give the result" in masked["message"]


def test_every_rule_cites_the_policy_except_the_assumed_one():
    model = load_file(ROOT / "models/refund.dt").models[0]
    assert [r.name for r in model.rules if r.span is None] == ["eu_premium_goodwill"]
    assert model.rules[5].status.value == "unspecified"
    cited = {n for r in model.rules if r.span for n in range(r.span.line_start, r.span.line_end + 1)}
    policy = (ROOT / "models/docs/refund-policy.md").read_text(encoding="utf-8").splitlines()
    for phrase in ("within 5 business days", "by e-mail on the same day"):  # section 8 is not modelled
        assert next(i for i, t in enumerate(policy, start=1) if phrase in t) not in cited


@pytest.fixture(scope="module")
def coverage():
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        return run("coverage", "--model", "models/refund.dt", "--goldens", "models/goldens/refund/")


def test_coverage_leaves_real_gaps(coverage):
    code, report = coverage
    assert code == 1  # the default gate fails on the example's one contradiction (nothing here is forbidden)
    assert [f["rule"] for f in report["gate"]["failures"]] == ["contradictions"]
    (model,) = report["models"]
    missed = sorted(e["element"]["id"] for e in model["elements"]
                    if e["element"]["criterion"] == "rule" and e["element"]["feasible"] and not e["verified_by"])
    assert missed == ["rule:us_premium_late", "rule:us_standard_late"]
    infeasible = [e["element"]["id"] for e in model["elements"] if not e["element"]["feasible"]]
    assert infeasible == ["rule:eu_premium_goodwill"]
    ratios = {c["criterion"]: c["verified"]["ratio"] for c in model["criteria"]}
    assert 0 < ratios["boundary"] < ratios["partition"] < ratios["rule"] < 1


def test_the_disagreeing_golden_is_a_contradiction_with_both_values(coverage):
    _, report = coverage
    (c,) = report["contradictions"]
    assert (c["case"], c["path"], c["expected"], c["actual"]) == ("RF-010", "outputs.decision", "manual_review",
                                                                  "reject")


def test_the_conversation_golden_covers_a_table_rule(coverage):
    _, report = coverage
    (model,) = report["models"]
    apac_later = next(e for e in model["elements"] if e["element"]["id"] == "rule:apac_later")
    assert apac_later["verified_by"] == ["REFUND-CONV-001"]


def test_the_release_gate_fails_on_rules_boundaries_and_the_contradiction():
    code, report = run("coverage", "--model", "models/refund.dt", "--goldens", "models/goldens/refund/",
                       "--gate", "models/gates/refund-release.yaml")
    assert code == 1
    assert sorted(f["rule"] for f in report["gate"]["failures"]) == ["contradictions", "refund.boundary",
                                                                    "refund.rule"]


def test_the_refund_goldens_do_not_touch_the_fsm_example():
    """They sit in their own subfolder and name their table, so the recovery model never replays them."""
    cases = load_goldens(["models/goldens/refund/"]).cases
    assert {c.model for c in cases} == {"refund"}
    _, report = run("coverage", "--model", "models/recovery.fsm", "--goldens", "models/goldens/refund/")
    assert report["goldens"]["not_applicable"] == len(cases) and report["models"][0]["goldens_replayed"] == 0
