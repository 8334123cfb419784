"""What a policy golden verifies (docs/coverage-rules/policy.md): only what its checks pin down — a rule whose
applying the decision does not depend on, a boundary of a rule the request never reaches, a call the golden does not
check, or anything of a golden that contradicts a model it is replayed on, stays exercised."""

from __future__ import annotations

from mbt.goldens.cases import parse_case
from mbt.kind import support
from mbt.parsing.loader import parse_text


def policy(algorithm: str, rules: str):
    text = f"""policy p {{
  combining {algorithm}
  subject.role: enum{{agent, admin}}
  resource.amount: int
  action.id: enum{{read, approve}}
{rules}}}
"""
    return parse_text(text, "p.policy").models[0]


def replay(model, **fields):
    golden = parse_case({"id": "C", "policy": "p", **fields}, "g.yaml", 1)
    elements = support("policy").enumerate(model)
    run = support("policy").replayer(model, elements).replay(golden)
    ids = [e.id for e in elements]
    return run, {ids[i] for i in run.exercised}, {ids[i] for i in run.verified}


APPROVE = {"subject": {"role": "agent"}, "resource": {"amount": 500}, "action": "approve"}


def test_an_overridden_rule_is_exercised_not_verified():
    model = policy("deny-overrides", "  permit agents target subject.role == agent\n"
                                     "  deny approvals target action.id == approve\n")
    run, exercised, verified = replay(model, request=APPROVE, expect="Deny")
    assert not run.contradictions
    assert {"rule:agents:applicable", "conflict:agents|approvals"} <= exercised
    # Deny whether or not `agents` applies: the golden cannot tell; without `approvals` it would be Permit.
    assert verified == {"rule:approvals:applicable", "rule:approvals:decisive", "conflict:agents|approvals",
                        "effect:approve:deny"}


def test_two_rules_deciding_alike_are_verified_only_when_named():
    model = policy("deny-overrides", "  permit agents target subject.role == agent\n"
                                     "  permit approvals target action.id == approve\n")
    _, exercised, verified = replay(model, request=APPROVE, expect="Permit")
    assert {"rule:agents:decisive", "rule:approvals:decisive"} <= exercised
    assert verified == {"effect:approve:permit"}  # either rule alone gives Permit
    _, _, verified = replay(model, request=APPROVE, expect="Permit", reason="agents")
    assert verified == {"effect:approve:permit", "rule:agents:applicable", "rule:agents:decisive"}


def test_a_deny_equal_to_the_default_is_verified_only_when_named():
    model = policy("deny-unless-permit", "  deny approvals target action.id == approve\n"
                                         "  permit readers target action.id == read\n")
    _, exercised, verified = replay(model, request=APPROVE, expect="Deny")
    assert "rule:approvals:decisive" in exercised and verified == {"effect:approve:deny"}
    _, _, verified = replay(model, request=APPROVE, expect="Deny", reason=["approvals"])
    assert {"rule:approvals:applicable", "rule:approvals:decisive"} <= verified


def test_a_boundary_counts_where_the_comparison_decides():
    model = policy("first-applicable", "  permit small target action.id == approve when resource.amount <= 500\n"
                                       "  deny rest\n")
    _, exercised, verified = replay(model, request=APPROVE, expect="Permit")
    assert "boundary:small:resource.amount=500" in verified  # at 500 with `< 500` it would be Deny
    read = {**APPROVE, "action": "read"}
    _, exercised, verified = replay(model, request=read, expect="Deny")
    assert "boundary:small:resource.amount=500" in exercised  # on the point, but the target already fails
    assert "boundary:small:resource.amount=500" not in verified


def test_a_contradicting_golden_verifies_nothing_and_reason_needs_expect():
    model = policy("deny-overrides", "  permit agents target subject.role == agent\n")
    run, exercised, verified = replay(model, request=APPROVE, expect="Deny")
    assert run.contradictions and exercised and verified == set()
    run, _, verified = replay(model, request=APPROVE, expect="Permit", reason="nobody")
    assert not run.contradictions and "rule:agents:decisive" in verified  # an unknown name is noted, not checked
    run, exercised, verified = replay(model, request=APPROVE, reason="agents")
    assert verified == set() and "rule:agents:decisive" in exercised
    assert [n.message for n in run.notes] == ["`reason` is checked only beside `expect` (not checked)"]


# ---------------------------------------------------------------- conversations: each checked call a request

SHOP = """fsm shop {
  state idle initial
  state paid
  event pay(amount: int[0..1000])
  idle -> paid on pay(amount) / call refund(amount = amount)
  paid -> paid on pay(amount) / call refund(amount = amount)
}
policy p {
  combining deny-unless-permit
  resource.amount: int
  permit small when resource.amount <= 100
  enforce call refund in shop { resource.amount = args.amount }
}
"""


def shop_replay(tmp_path, turns: list[dict], **fields):
    from mbt import api

    path = tmp_path / "shop.model"
    path.write_text(SHOP, encoding="utf-8")
    _, models = api.load_models([str(path)])
    model = next(m for m in models if m.kind == "policy")
    golden = parse_case({"id": "C", "model": "shop", "turns": turns, **fields}, "g.yaml", 1)
    elements = support("policy").enumerate(model)
    run = support("policy").replayer(model, elements).replay(golden)
    ids = [e.id for e in elements]
    return run, {ids[i] for i in run.exercised}, {ids[i] for i in run.verified}


def test_a_final_check_reads_the_latest_call_only(tmp_path):
    turns = [{"event": "pay", "args": {"amount": 100}}, {"event": "pay", "args": {"amount": 50}}]
    run, exercised, verified = shop_replay(tmp_path, turns, assertions={"tool_arguments": {"refund": {"amount": 50}}})
    assert not run.contradictions
    assert "boundary:small:resource.amount=100" in exercised  # the first call, which no check reads
    assert verified == {"rule:small:applicable", "rule:small:decisive", "effect:permit"}


def test_one_refused_call_or_a_contradicted_fsm_verifies_nothing(tmp_path):
    turns = [{"event": "pay", "args": {"amount": 50}, "tool_arguments": {"refund": {"amount": 50}}},
             {"event": "pay", "args": {"amount": 500}}]
    run, exercised, verified = shop_replay(tmp_path, turns)
    assert [c.path for c in run.contradictions] == ["policy.refund"] and verified == set()
    assert "rule:small:decisive" in exercised
    turns = [{"event": "pay", "args": {"amount": 50}, "tool_arguments": {"refund": {"amount": 50}},
              "assert_state": {"state": "idle"}}]
    run, exercised, verified = shop_replay(tmp_path, turns)
    assert not run.contradictions and verified == set() and "rule:small:decisive" in exercised
    assert any("contradicts fsm `shop`" in n.message for n in run.notes)


def test_a_never_deciding_rule_stays_feasible_where_a_decision_depends_on_it():
    # Complete requests: wherever `p` applies `d` does and decides Deny. Without resource.amount, `d` is
    # Indeterminate{D} and `p` makes it Indeterminate{DP}: a golden can show that `p` applies.
    model = policy("deny-overrides",
                   "  deny d when subject.role == agent and (resource.amount >= 0 or resource.amount < 0)\n"
                   "  permit p when subject.role == agent\n")
    found = {e.id: e for e in support("policy").enumerate(model)}
    assert not found["rule:p:decisive"].feasible and found["rule:p:applicable"].feasible
    request = {"subject": {"role": "agent"}, "action": "read"}
    run, _, verified = replay(model, request=request, expect="Indeterminate{DP}")
    assert not run.contradictions and "rule:p:applicable" in verified
    _, _, verified = replay(model, request=request, expect="Indeterminate")  # {D} would pass as well
    assert "rule:p:applicable" not in verified
