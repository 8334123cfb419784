"""The gate: default forbidden rule, thresholds per kind/model/criterion (plain and weighted), count limits."""

from __future__ import annotations

import pytest

from mbt.elements.base import Element
from mbt.errors import LocatedError
from mbt.kind import Criterion
from mbt.measure.coverage import CoverageReport, ElementCoverage, GoldenSummary, ModelCoverage, criterion_table
from mbt.measure.gate import DEFAULT_GATE, evaluate_gate, load_gate
from mbt.model.common import Location, Severity


def element(id_, criterion, severity=Severity.medium, weight=2.0):
    return Element(id=id_, model="m", kind="fsm", criterion=criterion, label=id_, severity=severity, weight=weight,
                   location=Location(file="m.fsm", line=1, column=1))


def report(verified: set[str], contradictions: int = 0) -> CoverageReport:
    elements = [element("state:a", "state"), element("state:b", "state", Severity.critical, 5.0),
                element("transition:a.e->b", "transition"), element("forbidden:x", "forbidden", Severity.high, 3.0)]
    rows = [ElementCoverage(element=e, verified_by=["G"] if e.id in verified else [],
                            exercised_by=["G"] if e.id in verified else []) for e in elements]
    model = ModelCoverage(model="m", kind="fsm", file="m.fsm", goldens_replayed=1,
                          criteria=criterion_table((Criterion("state"), Criterion("transition"),
                                                     Criterion("forbidden", alarm=True, findings=True)), rows), elements=rows)
    from mbt.goldens.results import Contradiction

    found = [Contradiction(case="G", where="g:1", model="m", turn=1, path="state", expected="a", actual="b",
                           message="x")] * contradictions
    return CoverageReport(models=[model], goldens=GoldenSummary(files=[], read=1, valid=1, invalid=0, bound=1,
                                                                unbound=0, not_applicable=0),
                          contradictions=found)


def gate_file(tmp_path, text):
    path = tmp_path / "gate.yaml"
    path.write_text(text)
    return load_gate(str(path))


def test_default_gate_fails_only_on_uncovered_forbidden():
    assert not evaluate_gate(DEFAULT_GATE, report({"state:a"})).passed
    result = evaluate_gate(DEFAULT_GATE, report({"forbidden:x"}))
    assert result.passed and result.failures == []
    failure = evaluate_gate(DEFAULT_GATE, report(set())).failures[0]
    assert failure.elements == ["forbidden:x"] and failure.actual == 1


def test_plain_and_weighted_thresholds(tmp_path):
    # state:b (weight 5) verified, state:a (weight 2) not: plain 50%, weighted 5/7 = 71.4%.
    gate = gate_file(tmp_path, 'fsm.state: ">= 0.6"\nfsm.state.weighted: ">= 0.7"\n')
    result = evaluate_gate(gate, report({"state:b", "forbidden:x"}))
    assert [f.rule for f in result.failures] == ["fsm.state"]
    assert result.failures[0].actual == 0.5


def test_model_scoped_rule_and_percent(tmp_path):
    gate = gate_file(tmp_path, "gate:\n  thresholds:\n    m.transition: '>= 100%'\n")
    assert evaluate_gate(gate, report({"transition:a.e->b", "forbidden:x"})).passed
    assert not evaluate_gate(gate, report({"forbidden:x"})).passed


def test_count_limits_and_forbidden_override(tmp_path):
    gate = gate_file(tmp_path, "contradictions: 0\nforbidden_uncovered: 1\n")
    assert evaluate_gate(gate, report(set())).passed
    result = evaluate_gate(gate, report(set(), contradictions=2))
    assert [(f.rule, f.actual) for f in result.failures] == [("contradictions", 2)]


def test_rule_matching_no_model_fails_loudly(tmp_path):
    gate = gate_file(tmp_path, "table.rule: '>= 1.0'\n")
    result = evaluate_gate(gate, report({"forbidden:x"}))
    assert "matches no loaded model" in result.failures[0].message


def test_seed_release_gate_keys_are_accepted(tmp_path):
    gate = gate_file(tmp_path, "release_gate:\n  critical_failures_allowed: 0\n  required_suites: [a]\n"
                               "  report_separately: [fallback_rate]\n"
                               "  thresholds:\n    fsm.state: '>= 0.5'\n    intent_accuracy: '>= 0.95'\n")
    # The default limits come first (a gate file keeps them unless it names the key), then the file's rules.
    assert [r.key for r in gate.rules] == ["forbidden_uncovered", "forbidden_expected", "contradictions",
                                           "invalid_cases", "critical_failures", "fsm.state", "intent_accuracy"]
    assert [r.key for r in gate.run_rules()] == ["critical_failures", "intent_accuracy"]
    assert (gate.required_suites, gate.report_separately) == (["a"], ["fallback_rate"])


def test_run_rules_fail_a_coverage_gate(tmp_path):
    # `mbt coverage` has no observed runs: a run metric in the gate file is not met (it used to be ignored: green).
    gate = gate_file(tmp_path, "release_gate:\n  critical_failures_allowed: 0\n")
    result = evaluate_gate(gate, report(set()))
    failure = next(f for f in result.failures if f.rule == "critical_failures")
    assert "mbt runs" in failure.message


@pytest.mark.parametrize("text,line,fragment", [
    ("fsm.state: 'lots'\n", 1, "cannot read condition"),
    ("fsm.state: 2\n", 1, "is a ratio between 0 and 1"),
    ("coverage: 1\n", 1, "unknown gate key"),
    ("thresholds:\n  fsm.state: [1]\n", 2, "needs a condition"),
    ("a: [\n", 2, "not valid YAML"),
])
def test_bad_gate_files_are_located(tmp_path, text, line, fragment):
    with pytest.raises(LocatedError) as err:
        gate_file(tmp_path, text)
    problem = err.value.problems[0]
    assert problem.line == line and fragment in problem.message
