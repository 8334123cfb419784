"""Policy analysis: exact against brute force on small domains, and the witnesses and messages of each finding.
(Which finding, where, is tested as data in tests/cases/checks/policy.yaml.)"""

from __future__ import annotations

import itertools
import random

import pytest

from mbt.analysis.policy_checks import PolicyAnalysis, PolicyChecker
from mbt.engine.policy import APPLIES, PolicyEvaluator, compile_tri
from mbt.parsing.loader import parse_text

ALGORITHMS = ["deny-overrides", "permit-overrides", "first-applicable", "only-one-applicable",
              "deny-unless-permit", "permit-unless-deny"]
ATTRS = """  subject.id: string
  subject.role: enum{user, agent, admin}
  resource.owner: string
  resource.level: int[0..4]
  resource.tag: string?
  action.id: enum{read, write}
  environment.flag: bool
"""
ATOMS = ["subject.role == agent", "subject.role in {agent, admin}", "subject.role != user",
         "subject.id == resource.owner", "subject.id != resource.owner", "resource.level >= 2",
         "resource.level < 1", "resource.level + 1 == 3", "environment.flag", "not environment.flag",
         "resource.tag == none", "resource.tag == \"vip\"", "action.id == read", "action.id == write"]
# Every value that matters: strings are only compared with each other and with "vip", so three names do.
DOMAINS = {"subject.id": ["u1", "u2", "u3"], "resource.owner": ["u1", "u2", "u3"],
           "subject.role": ["user", "agent", "admin"], "resource.level": [0, 1, 2, 3, 4],
           "resource.tag": [None, "vip", "x"], "action.id": ["read", "write"], "environment.flag": [True, False]}


def parse(text: str):
    return parse_text(text, "p.policy").models[0]


def random_policy(rng: random.Random, algorithm: str):
    lines = ["policy p {", f"  combining {algorithm}", ATTRS]
    for i in range(rng.randrange(2, 7)):
        rule = f"  {rng.choice(['permit', 'deny'])} r{i}"
        if rng.random() < 0.6:
            rule += f" target action.id == {rng.choice(['read', 'write'])}"
        if rng.random() < 0.8:
            parts = [rng.choice(ATOMS) for _ in range(rng.randrange(1, 3))]
            rule += " when " + f" {rng.choice(['and', 'or'])} ".join(parts)
        lines.append(rule)
    if rng.random() < 0.5:
        lines.append(f"  assert never {rng.choice(['permit', 'deny'])} when {rng.choice(ATOMS)}")
    if rng.random() < 0.5:
        lines.append(f"  assert always {rng.choice(['permit', 'deny'])} when {rng.choice(ATOMS)}")
    return parse("\n".join(lines + ["}"]) + "\n")


def every_request():
    names = sorted(DOMAINS)
    for values in itertools.product(*(DOMAINS[n] for n in names)):
        yield dict(zip(names, values))


def brute_force(model):
    evaluator = PolicyEvaluator(model)
    names = [r.name for r in model.rules]
    only_one = model.algorithm == "only-one-applicable"
    facts = {"applies": set(), "decides": set(), "always": set(names), "conflicts": set(), "gaps": set()}
    for request in every_request():
        outcome = evaluator.evaluate(request)
        applying = [i for i, n in enumerate(names) if outcome.value(n) == APPLIES]
        facts["applies"] |= set(applying)
        facts["decides"] |= {names.index(n) for n in outcome.decisive}
        facts["always"] &= {names[i] for i in applying}
        for x, i in enumerate(applying):
            for j in applying[x + 1:]:
                if only_one or model.rules[i].effect != model.rules[j].effect:
                    facts["conflicts"].add((i, j))
        if outcome.decision == "NotApplicable":
            facts["gaps"].add(request["action.id"])
    return facts


def property_holds(model, assertion) -> bool:
    """Over complete requests only (the brute force has no missing attributes)."""
    evaluator = PolicyEvaluator(model)
    when = compile_tri(assertion.when, frozenset(model.attributes)) if assertion.when is not None else None
    for request in every_request():
        if when is not None and when(request) is not True:
            continue
        named = evaluator.evaluate(request).decision == assertion.decision
        if named == (assertion.quantifier == "never"):
            return False
    return True


@pytest.mark.parametrize("samples", [PolicyAnalysis.SAMPLES, 0], ids=["samples-then-z3", "z3-only"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_analysis_is_exact_on_small_domains(algorithm, samples):
    rng = random.Random(sum(map(ord, algorithm)))
    for _ in range(6):
        model = random_policy(rng, algorithm)
        facts = brute_force(model)
        analysis = PolicyAnalysis(model)
        analysis.SAMPLES = samples  # 0: every answer comes from z3
        assert {i for i, a in analysis.applicable.items() if a.sat} == facts["applies"]
        assert {i for i, a in analysis.decisive.items() if a.sat} == facts["decides"]
        assert {(c.first, c.second) for c in analysis.conflicts} == facts["conflicts"]
        for c in analysis.conflicts:  # every witness replays: both rules apply to it
            outcome = analysis.evaluator.evaluate(c.request)
            assert outcome.value(model.rules[c.first].name) == outcome.value(model.rules[c.second].name) == APPLIES
        findings = PolicyChecker(model, analysis).run()
        gaps = {f.witness["action.id"] for f in findings if f.code == "POL006"}
        if algorithm not in ("deny-unless-permit", "permit-unless-deny"):
            assert gaps == facts["gaps"]
        always = {r.name for r in model.rules if r.target is not None or r.condition is not None} & facts["always"]
        assert {f.message.split("`")[1] for f in findings if f.code == "POL002"} == always
        for assertion in model.assertions:
            codes = [f.code for f in findings if f.location == assertion.loc]
            if assertion.quantifier == "always":
                assert codes == (["POL008"] if property_holds(model, assertion) else ["POL007"])
            elif not property_holds(model, assertion):
                assert codes == ["POL007"]


# ---------------------------------------------------------------- witnesses and messages

def findings_of(text: str):
    return PolicyChecker(parse(text)).run()


def test_conflict_witness_makes_both_rules_apply_and_names_the_winner():
    findings = findings_of("""policy p {
  combining deny-overrides
  subject.id: string
  resource.owner: string
  action.id: enum{approve}
  permit approvers target action.id == approve
  deny own target action.id == approve when subject.id == resource.owner
}
""")
    (conflict,) = [f for f in findings if f.code == "POL004"]
    assert conflict.witness["subject.id"] == conflict.witness["resource.owner"]
    assert "deny wins (deny-overrides)" in conflict.message
    assert "the decision is Deny by `own`" in conflict.message
    assert conflict.related[0].line == 6


def test_never_decisive_names_the_rules_that_decide_instead():
    findings = findings_of("""policy p {
  combining deny-overrides
  resource.status: enum{pending, paid}
  resource.fraud: bool
  deny paid_is_final when resource.status == paid
  permit fraud_exception when resource.status == paid and resource.fraud
}
""")
    (finding,) = [f for f in findings if f.code == "POL003"]
    assert finding.location.line == 6
    assert "the decision is Deny by `paid_is_final`" in finding.message
    assert finding.witness == {"resource.fraud": True, "resource.status": "paid"}
    assert [r.line for r in finding.related] == [5]


def test_a_property_refuted_only_with_a_missing_attribute_says_which():
    findings = findings_of("""policy p {
  combining permit-unless-deny
  subject.level: int[0..5]
  action.id: enum{read, write}
  deny writes target action.id == write when subject.level < 9
  assert never permit when action.id == write
}
""")
    (finding,) = [f for f in findings if f.code == "POL007"]
    assert "the counterexample request (it lacks `subject.level`) is decided Permit" in finding.message
    assert finding.witness == {"action.id": "write"}


def test_an_always_property_counterexample_is_a_complete_request():
    findings = findings_of("""policy p {
  combining first-applicable
  subject.role: enum{agent, admin}
  resource.amount: number precision 0.01 [0..1000]
  permit small when resource.amount <= 100.00
  deny rest
  assert always permit when subject.role == admin
}
""")
    (finding,) = [f for f in findings if f.code == "POL007"]
    assert finding.witness["subject.role"] == "admin"
    assert finding.witness["resource.amount"] > 100
    assert "is decided Deny by `rest`" in finding.message


def test_gap_witness_per_action_is_not_applicable_on_the_evaluator():
    text = """policy p {
  combining deny-overrides
  subject.role: enum{agent, admin}
  action.id: enum{read, write, delete}
  permit readers target action.id == read
  permit writers target action.id == write and subject.role == admin
  deny deleters target action.id == delete
}
"""
    model = parse(text)
    gaps = [f for f in PolicyChecker(model).run() if f.code == "POL006"]
    assert [g.witness["action.id"] for g in gaps] == ["write"]
    assert gaps[0].witness["subject.role"] == "agent"
    assert PolicyEvaluator(model).evaluate(gaps[0].witness).decision == "NotApplicable"


def test_made_up_strings_in_witnesses_are_readable():
    findings = findings_of("""policy p {
  combining deny-overrides
  subject.id: string
  resource.owner: string
  resource.requested_by: string
  permit a when subject.id != resource.owner
  deny b when subject.id == resource.requested_by
}
""")
    (conflict,) = [f for f in findings if f.code == "POL004"]
    values = conflict.witness
    assert values["subject.id"] == values["resource.requested_by"] != values["resource.owner"]
    assert all(v.startswith("v") and v[1:].isdigit() for v in values.values())


def test_findings_are_the_same_on_every_run():
    text = (__import__("pathlib").Path(__file__).parents[1] / "models" / "refund.policy").read_text(encoding="utf-8")
    first = [f.render() for f in PolicyChecker(parse_text(text, "r.policy").models[0]).run()]
    second = [f.render() for f in PolicyChecker(parse_text(text, "r.policy").models[0]).run()]
    assert first == second
