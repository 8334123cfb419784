"""Decision-table elements (rule, partition, boundary, mcdc) and decision goldens: what replay exercises and
verifies, contradictions with both values, invalid inputs, decisions inside conversation cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbt.api import measure
from mbt.elements.table import enumerate_table
from mbt.goldens.loader import load_goldens
from mbt.parsing.loader import parse_text

TABLE = """table t {
  hit first
  mcdc
  input age: integer [0..120]
  input amount: number precision 0.01 [0..10000]
  input region: string {"EU", "US"}
  input vip: boolean?
  output o: string
  rule young: < 18 | - | - | - -> "no"
  rule big: - | > 100 | "EU" | - -> "review"
  rule masked: < 10 | - | - | - -> "never"
  rule rest: - | - | - | - -> "yes" severity high
}
"""


@pytest.fixture
def model():
    return parse_text(TABLE, "t.dt").models[0]


def ids(elements, criterion):
    return [e.id for e in elements if e.criterion == criterion]


def test_elements_per_criterion(model):
    elements = enumerate_table(model)
    assert ids(elements, "rule") == ["rule:young", "rule:big", "rule:masked", "rule:rest"]
    assert ids(elements, "partition") == [
        "partition:age:[0..9]", "partition:age:10", "partition:age:[11..17]", "partition:age:18",
        "partition:age:[19..120]",
        "partition:amount:[0..99.99]", "partition:amount:100", "partition:amount:[100.01..10000]",
        'partition:region:"EU"', 'partition:region:"US"',
        "partition:vip:true", "partition:vip:false", "partition:vip:none"]
    # two-value boundaries at the declared precision: `> 100` at 0.01 gives 100 and 100.01
    assert ids(elements, "boundary") == ["boundary:age=9", "boundary:age=10", "boundary:age=17", "boundary:age=18",
                                         "boundary:amount=100", "boundary:amount=100.01"]
    assert ids(elements, "mcdc") == ["mcdc:young", "mcdc:young:age=false", "mcdc:big", "mcdc:big:amount=false",
                                     "mcdc:big:region=false", "mcdc:masked", "mcdc:masked:age=false", "mcdc:rest"]
    infeasible = {e.id: e.reason for e in elements if not e.feasible}
    assert set(infeasible) == {"rule:masked"}
    assert "earlier rule first (young)" in infeasible["rule:masked"]
    rest = next(e for e in elements if e.id == "rule:rest")
    assert (rest.severity.value, rest.weight) == ("high", 3.0)


def test_integer_range_boundaries_are_the_four_classic_values():
    model = parse_text("table t {\n  input age: integer\n  output o: string\n  rule [18..65] -> \"x\"\n}\n",
                       "t.dt").models[0]
    assert ids(enumerate_table(model), "boundary") == ["boundary:age=17", "boundary:age=18", "boundary:age=65",
                                                       "boundary:age=66"]


def test_boundaries_outside_the_domain_are_not_elements_and_dates_step_by_day():
    model = parse_text('table t {\n  input age: integer [0..120]\n  input d: date\n  output o: string\n'
                       '  rule >= 0 | < date("2024-03-01") -> "x"\n}\n', "t.dt").models[0]
    assert ids(enumerate_table(model), "boundary") == ["boundary:age=0", 'boundary:d=date("2024-02-29")',
                                                       'boundary:d=date("2024-03-01")']


def test_ids_are_stable_across_unrelated_edits(model):
    before = [e.id for e in enumerate_table(model)]
    edited = TABLE.replace('  rule rest:', '  # a comment\n\n  rule rest:').replace('"yes"', '"ok"')
    after = [e.id for e in enumerate_table(parse_text(edited, "t.dt").models[0])]
    assert before == after


def write(tmp_path: Path, name: str, rows: list[dict]) -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def run(model, tmp_path, rows, name="cases.jsonl"):
    report = measure([model], load_goldens([write(tmp_path, name, rows)]))
    (m,) = report.models
    by_id = {ec.element.id: ec for ec in m.elements}
    return report, by_id


def case(cid, inputs, **extra):
    return {"id": cid, "table": "t", "inputs": inputs, **extra}


def test_replay_marks_what_the_decision_touches_and_verifies_it_when_the_expectation_agrees(model, tmp_path):
    inputs = {"age": 17, "amount": 50, "region": "EU", "vip": True}
    report, by_id = run(model, tmp_path, [case("D1", inputs, expect={"o": "no"})])
    verified = sorted(i for i, ec in by_id.items() if ec.verified_by == ["D1"])
    assert verified == sorted([
        "rule:young", "partition:age:[11..17]", "partition:amount:[0..99.99]", 'partition:region:"EU"',
        "partition:vip:true", "boundary:age=17",
        # mcdc: young and rest match; big fails on amount alone; masked fails on age alone
        "mcdc:young", "mcdc:rest", "mcdc:big:amount=false", "mcdc:masked:age=false"])
    # FIRST: rest also matches, but young gives the result, so only young counts for the rule criterion
    assert by_id["rule:rest"].exercised_by == []
    assert report.contradictions == []


def test_without_expect_the_elements_are_exercised_only(model, tmp_path):
    _, by_id = run(model, tmp_path, [case("D1", {"age": 40, "amount": 100.01, "region": "EU", "vip": None})])
    assert by_id["rule:big"].exercised_by == ["D1"] and by_id["rule:big"].verified_by == []
    assert by_id["boundary:amount=100.01"].exercised_by == ["D1"]
    assert by_id["partition:vip:none"].exercised_by == ["D1"]


def test_a_disagreeing_expectation_is_a_contradiction_with_both_values(model, tmp_path):
    report, by_id = run(model, tmp_path, [case("D1", {"age": 40, "amount": 500, "region": "EU", "vip": False},
                                               expect={"o": "yes"})])
    (c,) = report.contradictions
    assert (c.case, c.path, c.expected, c.actual, c.model) == ("D1", "outputs.o", "yes", "review", "t")
    assert "the table gives \"review\" (big)" in c.message
    assert by_id["rule:big"].exercised_by == ["D1"] and by_id["rule:big"].verified_by == []


def test_inputs_the_table_cannot_take_make_the_case_invalid(model, tmp_path):
    rows = [case("BAD-1", {"age": 200, "amount": 5, "region": "EU", "vip": True}),
            case("BAD-2", {"age": 20, "amount": 5.001, "region": "EU", "vip": True}),
            case("BAD-3", {"age": 20, "amount": 5, "region": "FR", "vip": True}),
            case("BAD-4", {"age": 20, "region": "EU", "vip": True}),
            case("OK", {"age": 20, "amount": 5, "region": "US", "vip": True, "colour": "red"}, expect="yes")]
    report, by_id = run(model, tmp_path, rows)
    messages = [i.message for i in report.invalid_cases]
    # BAD-4's missing amount is FEEL's null (issue 9: DMN's `-` matches null), not an invalid case: noted instead.
    assert len(messages) == 3
    assert "input `age` 200 is outside the declared domain integer [0..120]" in messages[0]
    assert "5.001 is finer than the declared precision 0.01" in messages[1]
    assert '"FR" is not one of "EU", "US"' in messages[2]
    assert [n.message for n in report.notes] == ["input `amount` is missing: evaluated as null (only `-` matches it)",
                                                 "`colour` is not an input of table `t` (ignored)"]
    assert by_id["rule:rest"].verified_by == ["OK"]


def test_expect_error_for_a_violated_unique_policy(tmp_path):
    model = parse_text('table u {\n  input a: integer\n  output o: string\n  rule x: < 5 -> "a"\n'
                       '  rule y: < 9 -> "b"\n}\n', "u.dt").models[0]
    rows = [{"id": "E1", "table": "u", "inputs": {"a": 1}, "expect_error": True},
            {"id": "E2", "table": "u", "inputs": {"a": 1}, "expect": "a"},
            {"id": "E3", "table": "u", "inputs": {"a": 7}, "expect_error": True}]
    report = measure([model], load_goldens([write(tmp_path, "u.jsonl", rows)]))
    paths = [(c.case, c.path) for c in report.contradictions]
    assert paths == [("E2", "outputs"), ("E3", "error")]
    assert "hit policy UNIQUE violated: rules x and y both match" in report.contradictions[0].actual


def test_multi_hit_expectations_are_lists(tmp_path):
    model = parse_text('table c {\n  hit collect\n  input a: integer\n  output o: integer\n'
                       '  rule x: < 5 -> 1\n  rule y: < 9 -> 2\n}\n', "c.dt").models[0]
    rows = [{"id": "L1", "table": "c", "inputs": {"a": 1}, "expect": [2, 1]},  # collect: any order
            {"id": "L2", "table": "c", "inputs": {"a": 7}, "expect": [{"o": 2}]},
            {"id": "L3", "table": "c", "inputs": {"a": 1}, "expect": [1]},
            {"id": "L4", "table": "c", "inputs": {"a": 1}, "expect": 1}]
    report = measure([model], load_goldens([write(tmp_path, "c.jsonl", rows)]))
    assert [(c.case, c.expected, c.actual) for c in report.contradictions] == [("L3", [{"o": 1}], [{"o": 1}, {"o": 2}])]
    assert [n.case for n in report.notes] == ["L4"]
    (m,) = report.models
    verified = {ec.element.id: ec.verified_by for ec in m.elements if ec.element.criterion == "rule"}
    assert verified == {"rule:x": ["L1"], "rule:y": ["L1", "L2"]}


def test_a_conversation_case_covers_table_rules_through_its_decisions(model, tmp_path):
    path = tmp_path / "conv.yaml"
    path.write_text("""\
id: CONV-1
contract: shop-v1
turns:
  - user: "refund please"
  - user: "I am 15"
    decision: {table: t, inputs: {age: 15, amount: 20, region: US, vip: false}, expect: {o: "no"}}
decisions:
  - table: t
    inputs: {age: 30, amount: 20, region: US, vip: false}
    expect: {o: "no"}
""", encoding="utf-8")
    goldens = load_goldens([str(path)])
    (conv,) = goldens.cases
    assert [d.turn for d in conv.decisions] == [None, 2] and len(conv.turns) == 2
    report = measure([model], goldens)
    (c,) = report.contradictions
    assert (c.case, c.turn, c.path, c.expected, c.actual) == ("CONV-1", None, "outputs.o", "no", "yes")
    (m,) = report.models
    by_id = {ec.element.id: ec for ec in m.elements}
    # The turn's decision agreed, but the golden contradicts the table elsewhere: it verifies nothing of it.
    assert by_id["rule:young"].verified_by == [] and by_id["rule:young"].exercised_by == ["CONV-1"]
    assert by_id["rule:rest"].verified_by == [] and by_id["rule:rest"].exercised_by == ["CONV-1"]


def test_decision_case_shapes_that_are_reported_and_skipped(tmp_path):
    rows = [{"id": "X1", "table": "t", "inputs": [1, 2]},
            {"id": "X2", "table": "t", "inputs": {}, "expect_error": "yes"},
            {"id": "X3", "table": "t", "inputs": {}, "expected": {"o": 1}}]
    goldens = load_goldens([write(tmp_path, "x.jsonl", rows)])
    assert [i.line for i in goldens.invalid] == [1, 2, 3]
    assert "`inputs` must map input names to values" in goldens.invalid[0].message
    assert "unknown key `expected` in a decision case" in goldens.invalid[2].message


def test_gate_keys_work_for_tables(model, tmp_path):
    from mbt.measure.gate import evaluate_gate, load_gate

    report, _ = run(model, tmp_path, [case("D1", {"age": 17, "amount": 50, "region": "EU", "vip": True},
                                           expect={"o": "no"})])
    gate_path = tmp_path / "gate.yaml"
    gate_path.write_text('table.rule: ">= 1.0"\nt.partition: ">= 0.1"\n', encoding="utf-8")
    result = evaluate_gate(load_gate(str(gate_path)), report)
    assert [f.rule for f in result.failures] == ["table.rule"]
    assert "coverage is 33.3%" in result.failures[0].message
