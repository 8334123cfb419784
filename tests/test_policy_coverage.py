"""Policy elements (ids, boundary points at precision, feasibility), request-case replay, conversation tool calls
checked against an enforcing policy, and the whole path through the CLI (check, elements, coverage, gate)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from mbt import api
from mbt.cli import cli
from mbt.elements.policy import boundaries
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet, load_goldens
from mbt.kind import support
from mbt.parsing.loader import load_paths, parse_text
from tests.cli_runner import run_mbt
from tests.json_report import expanded

ROOT = Path(__file__).resolve().parents[1]
POLICY = "models/refund.policy"
CHAT = "models/refund-chat.fsm"

SMALL = """policy p {
  combining deny-overrides
  subject.id: string
  subject.role: enum{agent, admin}
  subject.limit: number precision 0.01 [0..1000]
  resource.owner: string
  resource.amount: number precision 0.01 [0..5000]
  resource.level: int[0..10]
  action.id: enum{read, approve}
  permit readers target action.id == read
  permit agents target action.id == approve and subject.role == agent when resource.amount <= subject.limit
  deny own target action.id == approve when subject.id == resource.owner
  deny big when resource.amount > 1000.00 and resource.level >= 3
}
"""


def small():
    return parse_text(SMALL, "p.policy").models[0]


def elements_of(model):
    return {e.id: e for e in support("policy").enumerate(model)}


# ---------------------------------------------------------------- elements

def test_element_ids_and_criteria():
    found = elements_of(small())
    by_criterion: dict[str, list[str]] = {}
    for e in found.values():
        by_criterion.setdefault(e.criterion, []).append(e.id)
    assert by_criterion["rule"] == [
        "rule:readers:applicable", "rule:readers:decisive", "rule:agents:applicable", "rule:agents:decisive",
        "rule:own:applicable", "rule:own:decisive", "rule:big:applicable", "rule:big:decisive"]
    # Pairs a request can make both apply: readers/own never meet (read vs approve), nor agents/big (an agent's
    # limit is at most 1000.00, so the amounts it approves never exceed 1000.00).
    assert by_criterion["conflict"] == ["conflict:readers|big", "conflict:agents|own"]  # by the first rule
    assert by_criterion["effect"] == ["effect:read:permit", "effect:read:deny", "effect:approve:permit",
                                      "effect:approve:deny"]
    assert by_criterion["boundary"] == [
        "boundary:agents:resource.amount-subject.limit=0.00", "boundary:agents:resource.amount-subject.limit=0.01",
        "boundary:big:resource.amount=1000.00", "boundary:big:resource.amount=1000.01",
        "boundary:big:resource.level=2", "boundary:big:resource.level=3"]
    assert all(e.feasible for e in found.values())
    assert found["conflict:agents|own"].label == "permit agents and deny own both apply: deny wins (deny-overrides)"


def test_infeasible_elements_say_why():
    model = parse_text("""policy p {
  combining deny-overrides
  resource.amount: number precision 0.01 [0..100]
  action.id: enum{read, write}
  deny everything_written target action.id == write
  permit writers target action.id == write
  permit readers target action.id == read when resource.amount >= 0
  permit huge target action.id == read when resource.amount > 100
}
""", "p.policy").models[0]
    found = elements_of(model)
    assert not found["rule:writers:decisive"].feasible and "POL003" in found["rule:writers:decisive"].reason
    # `writers` applies, but only beside `everything_written`, which decides Deny with or without it: no golden
    # can verify that it applies.
    assert not found["rule:writers:applicable"].feasible
    assert "no decision depends on the rule" in found["rule:writers:applicable"].reason
    assert not found["rule:huge:applicable"].feasible and not found["rule:huge:decisive"].feasible
    assert not found["effect:write:permit"].feasible and not found["effect:read:deny"].feasible
    assert found["effect:read:permit"].feasible and found["effect:write:deny"].feasible
    # amount >= 0 at precision 0.01: -0.01 lies outside [0..100]; amount > 100: 100.01 does too.
    assert not found["boundary:readers:resource.amount=-0.01"].feasible
    assert found["boundary:readers:resource.amount=0.00"].feasible
    assert not found["boundary:huge:resource.amount=100.01"].feasible


@pytest.mark.parametrize("condition, points", [
    ("x > 1000", [("1000.00", False), ("1000.01", True)]),
    ("x >= 1000", [("999.99", False), ("1000.00", True)]),
    ("x < 1000", [("999.99", True), ("1000.00", False)]),
    ("x <= 1000", [("1000.00", True), ("1000.01", False)]),
    ("1000 < x", [("1000.00", False), ("1000.01", True)]),
    ("x > 100.005", [("100.00", False), ("100.01", True)]),       # a constant between two steps
    ("x <= 100.005", [("100.00", True), ("100.01", False)]),
    ("n >= 18", [("17", False), ("18", True)]),                   # whole numbers step by one
    ("n < 18", [("17", True), ("18", False)]),
    ("x > y", [("0.00", False), ("0.01", True)]),                 # x - y on the finer precision
    ("n <= y", [("0.0", True), ("0.1", False)]),                 # int against precision 0.1
])
def test_boundary_points_at_the_declared_precision(condition, points):
    model = parse_text("policy p {\n  combining deny-overrides\n  subject.x: number precision 0.01\n"
                       "  subject.y: number precision 0.1\n  subject.n: int[0..99]\n"
                       f"  permit r when {condition.replace('x', 'subject.x').replace('y', 'subject.y').replace('n ', 'subject.n ')}\n"
                       "}\n", "p.policy").models[0]
    assert [(str(b.value), b.holds) for b in boundaries(model)] == points


# ---------------------------------------------------------------- request cases

def case(**fields):
    return parse_case({"id": "C", "policy": "p", **fields}, "g.yaml", 1)


def replay(model, golden):
    elements = support("policy").enumerate(model)
    run = support("policy").replayer(model, elements).replay(golden)
    ids = [e.id for e in elements]
    return run, {ids[i] for i in run.exercised}, {ids[i] for i in run.verified}


AGENT_APPROVES = {"subject": {"id": "a1", "role": "agent", "limit": 500},
                  "resource": {"owner": "c1", "amount": 500.00, "level": 1}, "action": "approve"}


def test_an_agreeing_request_case_verifies_what_it_exercises():
    run, exercised, verified = replay(small(), case(request=AGENT_APPROVES, expect="Permit", reason="agents"))
    assert not run.contradictions and not run.notes and run.invalid is None
    assert exercised == verified == {
        "rule:agents:applicable", "rule:agents:decisive", "effect:approve:permit",
        "boundary:agents:resource.amount-subject.limit=0.00"}


def test_a_disagreeing_request_case_is_a_contradiction_with_both_values():
    request = {**AGENT_APPROVES, "resource": {"owner": "a1", "amount": 120, "level": 1}}
    run, exercised, verified = replay(small(), case(request=request, expect="permit", reason=["agents", "nobody"]))
    assert verified == set() and "conflict:agents|own" in exercised and "rule:own:decisive" in exercised
    (decision, reason) = run.contradictions
    assert (decision.path, decision.expected, decision.actual) == ("decision", "Permit", "Deny")
    assert decision.message == "golden expects Permit, the policy decides Deny by own"
    assert (reason.path, reason.expected, reason.actual) == ("reason", "agents", ["own"])
    assert [n.message for n in run.notes] == ["reason `nobody` is not a rule of the policy (not checked)"]


def test_missing_attribute_makes_an_indeterminate_decision():
    request = {"subject": {"id": "a1", "role": "agent"}, "resource": {"owner": "c1", "amount": 50, "level": 1},
               "action": "approve"}
    run, _, verified = replay(small(), case(request=request, expect="Indeterminate"))
    assert not run.contradictions and verified == set()  # nothing applied: nothing to verify
    run, _, _ = replay(small(), case(request=request, expect="NotApplicable"))
    assert run.contradictions[0].actual == "Indeterminate{P}"
    assert "(missing subject.limit)" in run.contradictions[0].message


def test_request_values_are_checked_against_the_attribute_types():
    run, _, _ = replay(small(), case(request={"resource": {"amount": 10.005}}, expect="Deny"))
    assert run.invalid == "request `resource.amount: 10.005` is not a value of number precision 0.01 [0..5000]"
    run, _, _ = replay(small(), case(request={"subject": {"role": "boss"}}))
    assert run.invalid == "request `subject.role: 'boss'` is not a value of enum{agent, admin}"
    request = {"subject": {"dept": "x"}, "resource": {"amount": 1, "level": 0}, "action": "read"}
    run, _, _ = replay(small(), case(request=request, expect="Permit"))
    assert run.invalid is None and not run.contradictions
    assert [n.message for n in run.notes] == ["request attribute `subject.dept` is not declared by the policy (ignored)"]


@pytest.mark.parametrize("raw, message", [
    ({"id": "X", "request": {"action": "read"}}, "a request case names its `policy`"),
    ({"id": "X", "policy": "p", "request": ["read"]}, "`request` must map categories"),
    ({"id": "X", "policy": "p", "request": {"user": {"id": 1}}}, "request key `user` is not a category"),
    ({"id": "X", "policy": "p", "request": {}, "expect": "Allow"}, "`expect: Allow` is not a decision"),
    ({"id": "X", "policy": "p", "request": {}, "reason": 3}, "`reason` must be a rule name or a list"),
])
def test_malformed_request_cases_are_invalid(raw, message, tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(raw) + "\n", encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert not loaded.cases and message in loaded.invalid[0].message


def test_request_cases_apply_to_their_policy_only(tmp_path):
    other = SMALL.replace("policy p {", "policy q {")
    models = [parse_text(SMALL, "p.policy").models[0], parse_text(other, "q.policy").models[0],
              parse_text("fsm f {\n  state a initial\n}\n", "f.fsm").models[0]]
    goldens = GoldenSet(cases=[case(request={"action": "read"}, expect="Permit")])
    report = api.measure(models, goldens)
    assert [m.goldens_replayed for m in report.models] == [1, 0, 0]
    assert (report.goldens.bound, report.goldens.not_applicable) == (1, 0)


# ---------------------------------------------------------------- the shipped example through the CLI

def run(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture()
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_check_reports_the_example_policy(at_root):
    code, out = run("check", POLICY, CHAT, "--format", "json")
    assert code == 0
    report = json.loads(out)
    codes = [(f["code"], f["location"]["line"]) for f in report["findings"] if f["model"] == "refund_access"]
    assert ("POL003", 50) in codes  # the fraud exception (4.4) is always overridden by 4.3
    assert sorted(c for c, _ in codes if c == "POL006") == ["POL006"] * 3
    assert sum(1 for c, _ in codes if c == "POL008") == 4
    assert not any(c in ("POL001", "POL007", "POL010", "POL011") for c, _ in codes)


def test_the_policy_alone_says_its_fsm_is_not_loaded(at_root):
    code, out = run("check", POLICY)
    assert code == 0 and "[POL010 enforced-fsm-not-loaded]" in out


def test_elements_of_the_example_policy(at_root):
    code, out = run("elements", "--model", POLICY, "--format", "json")
    assert code == 0
    (model,) = json.loads(out)["models"]
    assert model["criteria"] == ["rule", "conflict", "effect", "boundary"]
    ids = [e["id"] for e in model["elements"]]
    assert "rule:no_self_approval:decisive" in ids and "conflict:paid_is_final|supervisor_revokes_fraud" in ids
    assert "boundary:agent_approves_within_limit:resource.amount-subject.approval_limit=0.01" in ids
    code, out = run("elements", "--model", POLICY, "--criterion", "effect")
    assert code == 0 and "effect:approve:deny" in out and "rule:" not in out


def test_coverage_of_the_example_with_a_policy_gate(at_root, tmp_path):
    gate = tmp_path / "gate.yaml"
    gate.write_text('thresholds:\n  policy.rule: ">= 1.0"\n  policy.effect: ">= 1.0"\n', encoding="utf-8")
    code, out = run("coverage", "--model", POLICY, "--model", CHAT, "--goldens", "models/goldens/refund-access",
                    "--goldens", "models/goldens/refund-chat", "--gate", str(gate), "--format", "json")
    assert code == 1
    report = json.loads(out)
    schema = json.loads((ROOT / "docs" / "schemas" / "coverage.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    report = expanded(report)
    policy = next(m for m in report["models"] if m["kind"] == "policy")
    criteria = {c["criterion"]: c for c in policy["criteria"]}
    assert criteria["effect"]["verified"]["ratio"] == 1.0
    assert criteria["rule"]["verified"]["covered"] < criteria["rule"]["verified"]["total"]
    # rule:supervisor_revokes_fraud:decisive and :applicable (it applies only where paid_is_final decides Deny)
    assert criteria["rule"]["infeasible"] == 2
    failures = report["gate"]["failures"]
    assert [f["rule"] for f in failures] == ["contradictions", "policy.rule"]  # the default limit of 0 holds
    contradictions = {(c["case"], c["model"], c["path"]) for c in report["contradictions"]}
    assert contradictions == {("RA-002", "refund_access", "decision"),
                              ("RC-002", "refund_access", "policy.issue_refund"),
                              ("RC-002", "refund_chat", "rejected")}
    elements = {e["element"]["id"]: e for e in policy["elements"]}
    # The conversation RC-001 asserts the call's arguments: the policy's rule is verified by it.
    assert "RC-001" in elements["rule:customer_submits_own:applicable"]["verified_by"]
    assert elements["rule:approve_only_pending:applicable"]["exercised_by"] == []


def test_policy_goldens_leave_the_fsm_demo_unchanged(at_root):
    """models/goldens/ holds the policy's request cases too: the recovery model's coverage is what it was."""
    models = load_paths(["models/recovery.fsm"])[0].models
    everything = api.measure(models, load_goldens(["models/goldens/"]))
    recovery_only = load_goldens(["models/goldens/"])
    recovery_only.cases = [c for c in recovery_only.cases if c.request is None and not c.file.startswith(
        ("models/goldens/refund-access", "models/goldens/refund-chat"))]
    alone = api.measure(models, recovery_only)
    assert everything.models[0].model_dump() == alone.models[0].model_dump()
    assert everything.contradictions == alone.contradictions


def test_bad_policy_is_exit_2_with_a_located_message(tmp_path):
    bad = tmp_path / "bad.policy"
    bad.write_text("policy p {\n  combining deny-overrides\n  permit r when subject.x == 1\n}\n", encoding="utf-8")
    result = run_mbt("check", bad)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"{bad}:3:17: error: unknown attribute `subject.x`")
    assert "Traceback" not in result.stderr


def test_number_values_are_json_numbers_in_every_format(at_root, tmp_path):
    code, out = run("check", POLICY, CHAT, "--format", "json")
    findings = json.loads(out)["findings"]
    amounts = [f["witness"]["resource.amount"] for f in findings if f["witness"] and "resource.amount" in f["witness"]]
    assert amounts and all(isinstance(a, (int, float)) and round(a, 2) == a for a in amounts)
    sarif = tmp_path / "check.sarif"
    code, _ = run("check", POLICY, CHAT, "--format", f"sarif:{sarif}")
    assert code == 0 and json.loads(sarif.read_text(encoding="utf-8"))["version"] == "2.1.0"
