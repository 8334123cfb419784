"""Plain `int` in a policy is any whole number (XACML's integer), from the model through z3 to golden requests."""

from __future__ import annotations

from mbt import api
from mbt.analysis.policy_checks import PolicyAnalysis, check_policy
from mbt.engine.policy import PolicyEvaluator
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.kind import support
from mbt.parsing.loader import parse_text

BIG = """policy p {
  combining deny-overrides
  subject.n: int
  resource.total: int
  permit big when subject.n > 3000000000
  deny sum when subject.n + resource.total == 10000000000
}
"""


def test_plain_int_is_any_whole_number():
    model = parse_text(BIG, "p.policy").models[0]
    vtype = model.attributes["subject.n"].type
    assert vtype.text() == "int" and vtype.default() == 0
    assert all(vtype.admits(v) for v in (5000000000, -5000000000, 10 ** 30, 0))
    assert not vtype.admits(True) and not vtype.admits("5")
    outcome = PolicyEvaluator(model).evaluate({"subject.n": 5000000000, "resource.total": 5000000000})
    assert (outcome.decision, outcome.reasons) == ("Deny", ("sum",))


def test_rules_on_large_whole_numbers_can_apply_and_have_boundaries():
    model = parse_text(BIG, "p.policy").models[0]
    codes = [f.code for f in check_policy(model)]
    assert "POL001" not in codes  # `subject.n > 3000000000` applies to some request
    elements = {e.id: e for e in support("policy").enumerate(model)}
    for point in ("boundary:big:subject.n=3000000000", "boundary:big:subject.n=3000000001"):
        assert elements[point].feasible
    assert elements["rule:big:applicable"].feasible and elements["rule:sum:decisive"].feasible


def test_a_golden_request_with_a_large_whole_number_is_read_and_verifies():
    model = parse_text(BIG, "p.policy").models[0]
    golden = parse_case({"id": "G", "policy": "p", "request": {"subject": {"n": 5000000000},
                                                              "resource": {"total": 1}},
                         "expect": "Permit", "reason": "big"}, "g.yaml", 1)
    report = api.measure([model], GoldenSet(cases=[golden]))
    assert report.goldens.invalid == 0 and not report.contradictions
    verified = {row.element.id for row in report.models[0].elements if row.verified_by}
    assert {"rule:big:applicable", "rule:big:decisive"} <= verified


def test_the_solver_answers_with_large_whole_numbers_and_they_replay():
    model = parse_text("""policy p {
  combining deny-overrides
  subject.n: int
  resource.total: int
  permit far when subject.n + resource.total == 10000000001 and subject.n > resource.total + 9999999990
  assert never permit when subject.n > 2147483647
}
""", "p.policy").models[0]
    analysis = PolicyAnalysis(model)
    witness = analysis.applicable[0]
    assert witness.sat and witness.request["subject.n"] > 2 ** 32
    assert PolicyEvaluator(model).evaluate(witness.request).applying == ["far"]
    (refuted,) = [f for f in check_policy(model) if f.code == "POL007"]
    assert refuted.witness["subject.n"] > 2147483647


def test_an_enforced_call_may_give_a_plain_int_attribute_a_large_literal(tmp_path):
    path = tmp_path / "m.model"
    path.write_text("""fsm shop {
  state a initial
  state b final
  event go
  a -> b on go / call pay(amount = 1)
}
policy p {
  combining deny-unless-permit
  resource.cap: int
  permit under when resource.cap > 4000000000
  enforce call pay in shop { resource.cap = 5000000000 }
}
""", encoding="utf-8")
    _, models = api.load_models([str(path)])  # the mapping's literal is type-checked against plain `int`
    golden = parse_case({"id": "C", "model": "shop", "turns": [{"event": "go", "tool_arguments": {"pay": {}}}]},
                        "g.yaml", 1)
    report = api.measure([m for m in models if m.kind == "policy"], GoldenSet(cases=[golden]))
    assert not report.contradictions and report.goldens.invalid == 0
    verified = {row.element.id for row in report.models[0].elements if row.verified_by}
    assert "rule:under:applicable" in verified


def test_fsm_whole_numbers_were_never_32_bit_and_stay_so(tmp_path):
    """The shared cause (the type of plain `int` and of `+`) touched FSMs only through `+`: ranges beyond 32 bits
    keep working there, in guards, sums and golden values."""
    path = tmp_path / "big.fsm"
    path.write_text("""fsm big {
  var total: int[0..10000000000] = 0
  state a initial
  state b
  event pay(x: int[0..10000000000])
  a -> b on pay(x) [x > 3000000000] / total := x + total
  a -> a on pay(x) [x <= 3000000000]
}
""", encoding="utf-8")
    (model,) = api.load_models([str(path)])[1]
    golden = parse_case({"id": "F", "turns": [{"event": "pay", "args": {"x": 5000000000},
                                               "assert_state": {"state": "b", "total": 5000000000}}]}, "g.yaml", 1)
    report = api.measure([model], GoldenSet(cases=[golden]))
    assert report.goldens.invalid == 0 and not report.contradictions
    verified = {row.element.id for row in report.models[0].elements if row.verified_by}
    assert "transition:a.pay->b" in verified
