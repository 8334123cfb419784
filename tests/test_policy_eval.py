"""The policy evaluator against hand-computed decisions (tests/cases/policy/*.yaml), and the z3 encoding of the
decision against the evaluator on random policies and requests (complete and missing attributes)."""

from __future__ import annotations

import random
import zlib
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
import z3

from mbt.analysis.policy_smt import PolicyEncoding
from mbt.analysis.smt import pin
from mbt.engine.policy import APPLIES, INDET, NA, PolicyEvaluator, evaluate
from mbt.model.policy import DECISIONS
from mbt.parsing.loader import parse_text

CASES = Path(__file__).parent / "cases" / "policy"
VALUE_OF = {"A": "yes", "N": "no"}  # I: the attribute is left out


def policy_text(algorithm: str, effects: list[str]) -> str:
    lines = ["policy p {", f"  combining {algorithm}"]
    lines += [f"  environment.r{i}: enum{{yes, no}}" for i in range(1, len(effects) + 1)]
    lines += [f"  {effect} r{i} when environment.r{i} == yes" for i, effect in enumerate(effects, start=1)]
    return "\n".join(lines + ["}"]) + "\n"


def combining_cases():
    for block in yaml.safe_load((CASES / "combining.yaml").read_text(encoding="utf-8")):
        for case in block["cases"]:
            label = f"{block['algorithm']} {'/'.join(block['rules'])} {''.join(case['values'])}"
            yield pytest.param(block["algorithm"], block["rules"], case, id=label)


@pytest.mark.parametrize("algorithm, effects, case", list(combining_cases()))
def test_combining_algorithm_gives_the_hand_computed_decision(algorithm, effects, case):
    model = parse_text(policy_text(algorithm, effects), "p.policy").models[0]
    request = {f"environment.r{i}": VALUE_OF[v] for i, v in enumerate(case["values"], start=1) if v != "I"}
    outcome = evaluate(model, request)
    assert outcome.decision == case["decision"]
    assert list(outcome.reasons) == case["reasons"]
    expected_values = {"A": APPLIES, "N": NA, "I": INDET}
    assert [outcome.value(f"r{i}") for i in range(1, len(effects) + 1)] == \
        [expected_values[v] for v in case["values"]]
    if outcome.decision.startswith("Indeterminate"):
        # The missing attributes an Indeterminate rule reads are named, for the report.
        missing = {f"environment.r{i}" for i, v in enumerate(case["values"], start=1) if v == "I"}
        assert set(outcome.missing) == missing


RULES = yaml.safe_load((CASES / "rules.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", RULES["cases"], ids=lambda c: c["name"])
def test_rule_value_in_three_valued_logic(case):
    text = "policy p {\n  combining first-applicable\n" + RULES["attributes"] + "  " + case["rule"] + "\n}\n"
    model = parse_text(text, "p.policy").models[0]
    request = {}
    for name, value in case["request"].items():
        kind = model.attributes[name].type.kind
        request[name] = Decimal(value) if kind == "number" and value is not None else value
    for name, attribute in model.attributes.items():
        if attribute.type.optional:
            request.setdefault(name, None)
    assert evaluate(model, request).decision == case["decision"]


def test_the_index_never_changes_a_decision():
    """Rules the index skips are NotApplicable: the decisions equal those of evaluating every rule."""
    rng = random.Random(3)
    for _ in range(20):
        model = random_policy(rng, rng.choice(ALGORITHMS))
        indexed = PolicyEvaluator(model)
        plain = PolicyEvaluator(model)
        plain.index_attributes = ()
        for request in (random_request(rng, model) for _ in range(40)):
            a, b = indexed.evaluate(request), plain.evaluate(request)
            assert (a.decision, a.reasons, a.values) == (b.decision, b.reasons, b.values)


# ---------------------------------------------------------------- the z3 encoding agrees with the evaluator

ALGORITHMS = ["deny-overrides", "permit-overrides", "first-applicable", "only-one-applicable",
              "deny-unless-permit", "permit-unless-deny"]
ATOMS = ["subject.role == agent", "subject.role in {agent, admin}", "resource.amount > 100.50",
         "resource.amount <= subject.limit", "subject.id == resource.owner", "resource.level >= 2",
         "environment.flag", "not environment.flag", "resource.tag == none", "resource.tag == \"vip\"",
         "resource.level + 1 < 3", "action.id == read", "action.id != write"]
ATTRS = """  subject.id: string
  subject.role: enum{user, agent, admin}
  subject.limit: number precision 0.01 [0..1000]
  resource.owner: string
  resource.amount: number precision 0.01 [0..1000]
  resource.level: int[0..4]
  resource.tag: string?
  action.id: enum{read, write}
  environment.flag: bool
"""


def condition(rng: random.Random) -> str:
    parts = [rng.choice(ATOMS) for _ in range(rng.randrange(1, 3))]
    joined = f" {rng.choice(['and', 'or'])} ".join(parts)
    return f"not ({joined})" if rng.random() < 0.15 else joined


def random_policy(rng: random.Random, algorithm: str):
    lines = ["policy p {", f"  combining {algorithm}", ATTRS]
    for i in range(rng.randrange(1, 6)):
        rule = f"  {rng.choice(['permit', 'deny'])} r{i}"
        if rng.random() < 0.7:
            rule += f" target {condition(rng)}"
        if rng.random() < 0.7:
            rule += f" when {condition(rng)}"
        lines.append(rule)
    return parse_text("\n".join(lines + ["}"]) + "\n", "p.policy").models[0]


POOLS = {"subject.id": ["u1", "u2"], "resource.owner": ["u1", "u2"], "subject.role": ["user", "agent", "admin"],
         "subject.limit": [Decimal("0.00"), Decimal("100.50"), Decimal("100.51")],
         "resource.amount": [Decimal("100.50"), Decimal("100.51"), Decimal("999.99")],
         "resource.level": [0, 1, 2, 4], "resource.tag": [None, "vip", "x"], "action.id": ["read", "write"],
         "environment.flag": [True, False]}


def random_request(rng: random.Random, model, complete: bool = True) -> dict:
    request = {}
    for name, attribute in model.attributes.items():
        if not complete and not attribute.type.optional and rng.random() < 0.25:
            continue  # missing
        request[name] = rng.choice(POOLS[name])
    return request


def decided(encoding: PolicyEncoding, request: dict) -> set[str]:
    """The decisions the encoding allows for exactly this request."""
    fixed = pin(encoding.symbols, request)
    for name, flag in encoding.given.items():
        fixed.append(flag if name in request else z3.Not(flag))
    return {d for d in DECISIONS if encoding.check(*fixed, encoding.decision(d)).sat}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("complete", [True, False], ids=["complete", "missing-attributes"])
def test_z3_decision_formulas_agree_with_the_evaluator(algorithm, complete):
    rng = random.Random(zlib.crc32(f"{algorithm}:{complete}".encode()))  # not hash(): it changes with PYTHONHASHSEED
    compared = 0
    for _ in range(12):
        model = random_policy(rng, algorithm)
        encoding = PolicyEncoding(model, complete=complete)
        evaluator = PolicyEvaluator(model)
        for _ in range(8):
            request = random_request(rng, model, complete)
            outcome = evaluator.evaluate(request)
            assert decided(encoding, request) == {outcome.decision}, (model.rules, request)
            fixed = pin(encoding.symbols, request) + [flag if n in request else z3.Not(flag)
                                                      for n, flag in encoding.given.items()]
            for i, rule in enumerate(model.rules):
                decisive = encoding.check(*fixed, encoding.decisive(i)).sat
                assert decisive == (rule.name in outcome.decisive)
            compared += 1
    assert compared == 96
