"""Generation for decision tables, policies and invariants: witness inputs, requests and trigger runs, each stub
verifying its element on replay, each test passing on the reference evaluator and failing on a mutant of it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from mbt import api
from mbt.generate.adapter import ReferenceAdapter
from mbt.generate.support import Driver
from mbt.goldens.loader import load_goldens
from mbt.parsing.loader import load_paths, parse_text

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"

SMALL_TABLE = """
table grade {
  hit unique
  input score: integer [0..100]
  input bonus: boolean
  output mark: string {"fail", "pass", "merit"}
  rule failed: < 50 | - -> "fail"
  rule passed: [50..79] | false -> "pass"
  rule merit: >= 80 | - -> "merit"
  rule lifted: [50..79] | true -> "merit"
}
"""


def load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"kinds_{path.stem}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def passes(test, model) -> bool:
    try:
        test(Driver(ReferenceAdapter(model)))
    except AssertionError:
        return False
    return True


@pytest.fixture(scope="module")
def small_table(tmp_path_factory):
    folder = tmp_path_factory.mktemp("table")
    (folder / "grade.dt").write_text(SMALL_TABLE, encoding="utf-8")
    report = api.generate([str(folder / "grade.dt")], [], str(folder / "out"))
    return folder, report


def test_every_table_element_gets_a_hand_checkable_witness(small_table):
    folder, report = small_table
    (result,) = report.models
    assert result.kind == "table" and not result.missing
    stubs = {c.model_extra["element"]: c for c in load_goldens([str(folder / "out" / "goldens" / "grade.gaps.jsonl")])
             .cases}
    # Boundaries sit on the cuts at the integer step: 49|50, 79|80.
    for element, score in (("boundary:score=49", 49), ("boundary:score=50", 50), ("boundary:score=79", 79),
                           ("boundary:score=80", 80)):
        assert stubs[element].decisions[0].inputs["score"] == score
    lifted = stubs["rule:lifted"].decisions[0]
    assert 50 <= lifted.inputs["score"] <= 79 and lifted.inputs["bonus"] is True and lifted.expect == {"mark": "merit"}
    # Every stub verifies its element when `mbt coverage` reads it: no gap is left.
    model = load_paths([str(folder / "grade.dt")])[0].models[0]
    coverage = api.measure([model], load_goldens([str(folder / "out" / "goldens" / "grade.gaps.jsonl")]))
    assert coverage.models[0].uncovered() == []


def test_table_tests_pass_on_the_evaluator_and_fail_when_a_rule_changes(small_table):
    folder, report = small_table
    model = load_paths([str(folder / "grade.dt")])[0].models[0]
    module = load_module(folder / "out" / "tests" / "test_grade_gaps.py")
    tests = {n: f for n, f in vars(module).items() if n.startswith("test_")}
    assert tests and all(passes(t, model) for t in tests.values())
    mutant = model.model_copy(deep=True)
    mutant.rules[3].outputs = ["pass"]  # `lifted` now says pass
    by_element = {t.name: t.elements[0] for t in report.models[0].tests}
    failing = {by_element[n] for n, t in tests.items() if not passes(t, mutant)}
    assert "rule:lifted" in failing


def test_policy_requests_verify_and_catch_a_flipped_rule(tmp_path: Path):
    out = tmp_path / "out"
    report = api.generate([str(MODELS / "refund.policy")], [], str(out))
    (result,) = report.models
    assert result.kind == "policy" and result.tests
    reasons = {m.reason for m in result.missing}
    assert reasons <= {"infeasible"}  # only what the analysis proves impossible is left out
    model = load_paths([str(MODELS / "refund.policy")])[0].models[0]
    module = load_module(out / "tests" / "test_refund_access_gaps.py")
    tests = {n: f for n, f in vars(module).items() if n.startswith("test_")}
    assert all(passes(t, model) for t in tests.values())
    by_element = {t.name: t.elements[0] for t in result.tests}
    for i, rule in enumerate(model.rules):
        mutant = model.model_copy(deep=True)
        mutant.rules[i].effect = "permit" if rule.effect == "deny" else "deny"
        mine = [n for n, e in by_element.items() if e == f"rule:{rule.name}:decisive"]
        if mine:
            assert not passes(tests[mine[0]], mutant), rule.name
    coverage = api.measure([model], load_goldens([str(out / "goldens" / "refund_access.gaps.jsonl")]))
    # Infeasible elements are out of the denominator; everything else is verified by the stubs.
    assert coverage.models[0].uncovered() == []


def test_invariant_triggers_get_runs_that_assert_them(tmp_path: Path):
    out = tmp_path / "out"
    paths = [str(MODELS / "orders.fsm"), str(MODELS / "orders.inv")]
    report = api.generate(paths, [], str(out), criteria=["trigger"])
    inv = next(m for m in report.models if m.kind == "invariant")
    made = {t.elements[0] for t in inv.tests}
    assert {"trigger:own_order_only", "trigger:one_state_change", "trigger:verify_after_cancel",
            "trigger:confirm_first"} <= made  # a stub's must_not_call asserts `never call cancel_order between ...`
    assert inv.missing == []
    files = load_paths(paths)
    models = [m for f in files for m in f.models]
    coverage = api.measure(models, load_goldens([str(out / "goldens" / "orders_invariants.gaps.jsonl")]))
    invariants = next(m for m in coverage.models if m.kind == "invariant")
    assert invariants.uncovered() == []
    fsm = next(m for m in models if m.kind == "fsm")
    module = load_module(out / "tests" / "test_orders_invariants_gaps.py")
    assert module.MODEL == "orders"  # the tests drive the invariants' FSM
    assert all(passes(t, fsm) for n, t in vars(module).items() if n.startswith("test_"))


def test_suites_are_for_state_machines(tmp_path: Path):
    report = api.generate([str(MODELS / "refund.dt")], [], str(tmp_path / "out"), suite="transition")
    assert "full suites are for fsm models" in report.models[0].note


def test_a_table_witness_search_says_why_when_nothing_fits():
    from mbt.generate.decisions import TableWitnesses
    from mbt.kind import support

    model = parse_text(SMALL_TABLE, "grade.dt").models[0]
    finder = TableWitnesses(model, support("table").enumerate(model))
    missing = finder.find("rule:nowhere")
    assert missing.reason == "unusable"
