"""Issue "Verdicts you can trust": forbidden behaviour, `must_not_call`, one invalid count, the default gate.

Each test here failed on the code before the fix (f9daabe) and states the rule of docs/coverage-rules/fsm.md it
pins down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbt.api import coverage, load_models, measure
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.measure.gate import DEFAULT_GATE, evaluate_gate

DATA = Path(__file__).parent / "data" / "verdicts"
CALL_FORBID = "forbidden:asked.stop!call:send"
EVENT_FORBID = "forbidden:asked.jump"
TARGET_FORBID = "forbidden:idle.go->done"


@pytest.fixture(scope="module")
def shop():
    return load_models([str(DATA / "shop.fsm")])[1]


def run(models, *raw_cases):
    cases = [parse_case(raw, "g.jsonl", n) for n, raw in enumerate(raw_cases, start=1)]
    report = measure(models, GoldenSet(cases=cases))
    report.gate = evaluate_gate(DEFAULT_GATE, report)
    return report


def element(report, element_id):
    rows = [row for m in report.models for row in m.elements if row.element.id == element_id]
    assert rows, f"no element {element_id}: {[r.element.id for m in report.models for r in m.elements]}"
    return rows[0]


ASK_THEN_STOP = [{"event": "ask", "args": {"e": "a@b.c"}}]


def test_element_ids_of_the_forbids(shop):
    ids = {row.element.id for row in run(shop).models[0].elements}
    assert {CALL_FORBID, EVENT_FORBID, TARGET_FORBID} <= ids


def test_golden_expecting_the_forbidden_call_never_verifies_it(shop):
    report = run(shop, {"id": "G1", "turns": ASK_THEN_STOP + [
        {"event": "stop", "tool_arguments": {"send": {"to": "a@b.c"}}}]})
    row = element(report, CALL_FORBID)
    assert "G1" in row.exercised_by and row.verified_by == []
    assert [f.case for f in report.forbidden_expected] == ["G1"]
    finding = report.forbidden_expected[0]
    assert finding.element == CALL_FORBID and finding.severity == "high" and finding.turn == 2
    assert finding.where == "g.jsonl:1" and finding.forbid_at.startswith(str(DATA / "shop.fsm") + ":")
    assert "golden expects forbidden behaviour" in finding.message
    assert not report.gate.passed
    assert "forbidden_expected" in {f.rule for f in report.gate.failures}


def test_must_not_call_is_the_canonical_check_of_a_forbidden_call(shop):
    report = run(shop, {"id": "G2", "turns": ASK_THEN_STOP + [{"event": "stop", "must_not_call": ["send"]}]})
    assert element(report, CALL_FORBID).verified_by == ["G2"]
    assert not report.contradictions and not report.forbidden_expected


def test_final_must_not_call_speaks_of_the_whole_case(shop):
    ok = run(shop, {"id": "G3", "turns": ASK_THEN_STOP + [{"event": "stop"}], "assertions": {"must_not_call": ["send"]}})
    assert element(ok, CALL_FORBID).verified_by == ["G3"]
    # The model does call `send` after `go`: asserting it never happens anywhere is a contradiction.
    bad = run(shop, {"id": "G4", "turns": ASK_THEN_STOP + [{"event": "go"}], "assertions": {"must_not_call": ["send"]}})
    assert [c.path for c in bad.contradictions] == ["must_not_call.send"]
    assert bad.contradictions[0].expected != bad.contradictions[0].actual


def test_tool_arguments_null_is_refused_with_a_hint(shop):
    report = run(shop, {"id": "G5", "turns": ASK_THEN_STOP + [{"event": "stop", "tool_arguments": {"send": None}}]})
    assert element(report, CALL_FORBID).verified_by == []
    assert not report.contradictions
    assert report.goldens.invalid == 1 and report.goldens.valid == 0
    assert "must_not_call" in report.invalid_cases[0].message


def test_tool_arguments_empty_mapping_asserts_that_the_call_happens(shop):
    made = run(shop, {"id": "G6", "turns": ASK_THEN_STOP + [{"event": "go", "tool_arguments": {"send": {}}}]})
    assert not made.contradictions and element(made, "transition:asked.go->done").verified_by == ["G6"]
    missing = run(shop, {"id": "G7", "turns": ASK_THEN_STOP + [{"event": "stop", "tool_arguments": {"send": {}}}]})
    assert [c.path for c in missing.contradictions] == ["tool_arguments.send"]
    assert [f.case for f in missing.forbidden_expected] == ["G7"]
    assert element(missing, CALL_FORBID).verified_by == []


def test_a_contradicting_golden_verifies_nothing(shop):
    report = run(shop, {"id": "G8", "turns": [{"event": "ask", "args": {"e": "a@b.c"}, "assert_state": {"state": "asked"}},
                                             {"event": "go", "assert_state": {"state": "idle"}}]})
    assert report.contradictions
    assert all(row.verified_by == [] for row in report.models[0].elements)
    assert element(report, "state:asked").exercised_by == ["G8"]


def test_forbidden_event_is_verified_by_the_refusal_not_by_any_state(shop):
    moved = run(shop, {"id": "G9", "turns": ASK_THEN_STOP + [{"event": "jump", "assert_state": {"state": "done"}}]})
    assert element(moved, EVENT_FORBID).verified_by == []
    assert [f.element for f in moved.forbidden_expected] == [EVENT_FORBID]
    refused = run(shop, {"id": "G10", "turns": ASK_THEN_STOP + [{"event": "jump", "rejected": True}]})
    assert element(refused, EVENT_FORBID).verified_by == ["G10"]


def test_forbidden_target_asserted_is_expecting_forbidden_behaviour(shop):
    report = run(shop, {"id": "G11", "turns": [{"event": "go", "assert_state": {"state": "done"}}]})
    assert element(report, TARGET_FORBID).verified_by == []
    assert [f.element for f in report.forbidden_expected] == [TARGET_FORBID]
    ok = run(shop, {"id": "G12", "turns": [{"event": "go", "rejected": True, "assert_state": {"state": "idle"}}]})
    assert element(ok, TARGET_FORBID).verified_by == ["G12"]


def test_must_have_of_a_forbidden_phrase_is_expecting_forbidden_behaviour(shop):
    report = run(shop, {"id": "G13", "turns": [{"event": "ask", "args": {"e": "x"}, "must_have": ["your password"]}]})
    assert [f.element for f in report.forbidden_expected] == ["forbidden:any.*!say"]
    assert element(report, "forbidden:any.*!say").verified_by == []


def test_one_invalid_count_everywhere(shop):
    """A case that fails at replay (a list where a scalar is expected) is invalid once: header, JSON and gate agree."""
    report = run(shop, {"id": "OK", "turns": ASK_THEN_STOP},
                 {"id": "BAD", "precondition": {"email": ["a", "b"]}, "turns": ASK_THEN_STOP},
                 {"id": "PRE", "precondition": {"email": 5}, "turns": ASK_THEN_STOP})
    g = report.goldens
    assert (g.read, g.valid, g.invalid) == (3, 1, 2)
    assert len(report.invalid_cases) == g.invalid
    assert {c.message.split("`")[1] for c in report.invalid_cases} == {"BAD", "PRE"}
    assert "invalid_cases" in {f.rule for f in report.gate.failures}


def test_default_gate_fails_on_contradictions(shop):
    report = run(shop, {"id": "C", "turns": [{"event": "ask", "args": {"e": "a"}, "assert_state": {"state": "done"}}],
                        "assertions": {"must_not_call": ["send"], "must_not": ["password"]}})
    assert report.contradictions
    assert "contradictions" in {f.rule for f in report.gate.failures}


def test_gate_file_relaxes_each_default(shop, tmp_path):
    gate = tmp_path / "gate.yaml"
    gate.write_text("contradictions: 5\ninvalid_cases: 5\nforbidden_expected: 5\nforbidden_uncovered: 9\n")
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps({"id": "C", "turns": [{"event": "go", "assert_state": {"state": "done"}}]}) + "\n"
                      + "{broken\n")
    report = coverage([str(DATA / "shop.fsm")], [str(golden)], str(gate))
    assert report.contradictions and report.forbidden_expected and report.goldens.invalid == 1
    assert report.gate.passed, report.gate.failures
    default = coverage([str(DATA / "shop.fsm")], [str(golden)])
    assert {f.rule for f in default.gate.failures} == {"forbidden_uncovered", "contradictions", "invalid_cases",
                                                       "forbidden_expected"}


def test_unknown_model_and_event_get_did_you_mean(shop):
    report = run(shop, {"id": "M", "model": "shpo", "turns": ASK_THEN_STOP},
                 {"id": "E", "turns": [{"event": "ask", "args": {"e": "x"}}, {"event": "stpo"}]})
    notes = [n.message for n in report.notes]
    assert any("`shpo`" in n and "did you mean `shop`" in n for n in notes), notes
    assert "did you mean `stop`" in report.unbound_turns[0].reason


RESET = Path(__file__).parent / "data" / "reset.fsm"
DISCARDED_TO_TOOL = "forbidden:any.confirm!call:start_password_reset"
TO_CONFIRM = [{"event": "request_reset"}, {"event": "provide_email", "args": {"email": "li@x.cn"}},
              {"event": "correct_email", "args": {"email": "lin@x.cn"}}]


@pytest.fixture(scope="module")
def reset():
    return load_models([str(RESET)])[1]


def test_conditional_call_forbid_is_verified_by_pinning_the_call_to_allowed_arguments(reset):
    report = run(reset, {"id": "P", "turns": TO_CONFIRM + [
        {"event": "confirm", "tool_arguments": {"start_password_reset": {"recovery_email": "lin@x.cn"}}}]})
    assert element(report, DISCARDED_TO_TOOL).verified_by == ["P"]
    # Checking another argument, or none, pins nothing the condition reads.
    loose = run(reset, {"id": "L", "turns": TO_CONFIRM + [{"event": "confirm", "tool_arguments": {"start_password_reset": {}}}]})
    assert element(loose, DISCARDED_TO_TOOL).verified_by == [] and not loose.forbidden_expected


def test_expecting_the_discarded_address_sent_is_expecting_forbidden_behaviour(reset):
    report = run(reset, {"id": "X", "turns": TO_CONFIRM + [
        {"event": "confirm", "tool_arguments": {"start_password_reset": {"recovery_email": "li@x.cn"}}}]})
    assert [f.element for f in report.forbidden_expected] == [DISCARDED_TO_TOOL]
    assert report.contradictions  # the model sends lin@x.cn
    assert element(report, DISCARDED_TO_TOOL).verified_by == []


def test_every_kind_and_every_model_citing_a_document_counts_in_source_coverage(tmp_path):
    from mbt.api import coverage_run

    (tmp_path / "doc.md").write_text("# Policy\n\nThe first rule.\n\nThe invariant rule.\n\nThe other model's rule.\n",
                                     encoding="utf-8")
    (tmp_path / "a.fsm").write_text('source doc "doc.md"\nfsm a {\n  state s initial @doc:3 "first rule"\n'
                                    "  state t\n  event go\n  s -> t on go\n}\n", encoding="utf-8")
    (tmp_path / "a.inv").write_text('source doc "doc.md"\ninvariants for a {\n  stays: always state == t -> state == t\n'
                                    '    @doc:5 "invariant rule"\n}\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.fsm").write_text('source policy "../doc.md"\nfsm b {\n  state s initial @policy:7 "other"\n'
                                            "  state t\n  event go\n  s -> t on go\n}\n", encoding="utf-8")
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "x", "model": "a", "turns": [{"event": "go"}]}\n', encoding="utf-8")
    result = coverage_run([str(tmp_path / n) for n in ("a.fsm", "a.inv", "sub/b.fsm")], [str(golden)], review=True)
    (doc,) = result.report.sources.documents
    status = {u.line_start: u.status for u in doc.units}
    assert status[5] != "not-modelled" and status[7] != "not-modelled", status
    assert doc.modelled.covered == doc.modelled.total == 4


def test_a_must_not_phrase_verifies_forbids_only(shop):
    """What is said is not computed by an FSM: a `must_not` phrase cannot verify a state or transition."""
    report = run(shop, {"id": "S", "turns": [{"event": "ask", "args": {"e": "x"}, "must_not": ["your password"]}]})
    assert element(report, "forbidden:any.*!say").verified_by == ["S"]
    assert element(report, "transition:idle.ask->asked").verified_by == []
    assert element(report, "transition:idle.ask->asked").exercised_by == ["S"]


def test_a_final_must_have_of_a_forbidden_phrase_is_found_too(shop):
    """Found by the judge campaign: final assertions holding only `must_have` were skipped."""
    report = run(shop, {"id": "F", "turns": [{"event": "ask", "args": {"e": "x"}}],
                        "assertions": {"must_have": ["the password is"]}})
    assert [(f.turn, f.element) for f in report.forbidden_expected] == [(1, "forbidden:any.*!say")]


ORDERS = Path(__file__).resolve().parents[1] / "models"


def orders_case(cancel_turn_checks: dict) -> dict:
    return {"id": "O", "model": "orders", "precondition": {"customer_id": "C-1001"}, "turns": [
        {"user": "I want to cancel my order", "intent": "CANCEL_ORDER"},
        {"user": "It is SO-10042"},
        {"event": "order_found", "args": {"owner": "C-1001", "status": "paid"}},
        {"user": "yes please", **cancel_turn_checks}]}


@pytest.fixture(scope="module")
def orders():
    return load_models([str(ORDERS / "orders.fsm"), str(ORDERS / "orders.inv")])[1]


def test_every_call_trigger_needs_every_variable_its_condition_reads(orders):
    """Issue 9: checking only the call's order_id verified `every call cancel_order [order_owner == customer_id
    and customer_id != none]`, whose condition reads neither."""
    weak = run(orders, orders_case({"tool_arguments": {"cancel_order": {"order_id": "SO-10042"}}}))
    assert element(weak, "trigger:own_order_only").verified_by == []
    assert element(weak, "trigger:own_order_only").exercised_by == ["O"]
    strong = run(orders, orders_case({"tool_arguments": {"cancel_order": {"order_id": "SO-10042"}},
                                      "assert_state": {"order_owner": "C-1001", "customer_id": "C-1001"}}))
    assert element(strong, "trigger:own_order_only").verified_by == ["O"]
    # looked_up_number reads args.order_id, order_id and order_status: one of the three is not enough.
    assert element(strong, "trigger:looked_up_number").verified_by == []
