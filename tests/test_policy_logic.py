"""Policy expressions in XACML's three-valued logic, operator by operator (tests/cases/policy/operators.yaml), in the
evaluator and in the z3 encoding; the two agree on random nested expressions and requests missing attributes."""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
import z3

from mbt.analysis.policy_smt import PolicyEncoding
from mbt.analysis.smt import pin
from mbt.engine.policy import PolicyEvaluator, compile_tri
from mbt.model.policy import DECISIONS
from mbt.parsing.loader import parse_text

OPERATORS = yaml.safe_load((Path(__file__).parent / "cases" / "policy" / "operators.yaml").read_text(encoding="utf-8"))
VALUE = {True: True, False: False, "indeterminate": None}
DECISION = {True: "Permit", False: "NotApplicable", None: "Indeterminate{P}"}


def operator_policy(expr: str):
    text = "policy p {\n  combining first-applicable\n" + OPERATORS["attributes"] + f"  permit r when {expr}\n}}\n"
    return parse_text(text, "p.policy").models[0]


def typed_request(model, given: dict) -> dict:
    request = {}
    for name, value in given.items():
        kind = model.attributes[name].type.kind
        request[name] = Decimal(value) if kind == "number" and isinstance(value, str) else value
    for name, attribute in model.attributes.items():
        if attribute.type.optional:
            request.setdefault(name, None)  # an optional attribute left out is none
    return request


def pinned(encoding: PolicyEncoding, request: dict) -> list:
    fixed = pin(encoding.symbols, request)
    return fixed + [flag if name in request else z3.Not(flag) for name, flag in encoding.given.items()]


def z3_value(encoding: PolicyEncoding, expr, request: dict) -> bool | None:
    """The encoding's three-valued value of `expr` for exactly this request (it must be one of the three)."""
    holds, fails = encoding.tri(expr)
    fixed = pinned(encoding, request)
    can_hold, can_fail = encoding.check(*fixed, holds).sat, encoding.check(*fixed, fails).sat
    assert not (can_hold and can_fail)
    return True if can_hold else (False if can_fail else None)


@pytest.mark.parametrize("case", OPERATORS["cases"], ids=lambda c: f"{c['expr']} {c['request']}")
def test_each_operator_gives_the_xacml_value(case):
    model = operator_policy(case["expr"])
    request = typed_request(model, case["request"])
    expected = VALUE[case["value"]]
    condition = model.rules[0].condition
    required = frozenset(n for n, a in model.attributes.items() if not a.type.optional)
    assert compile_tri(condition, required)(request) is expected
    assert PolicyEvaluator(model).evaluate(request).decision == DECISION[expected]
    assert z3_value(PolicyEncoding(model, complete=False), condition, request) is expected


# ---------------------------------------------------------------- random nested expressions: z3 == evaluator

NESTED_ATTRS = """  subject.a: int
  subject.b: int
  subject.x: number precision 0.01 [0..100]
  subject.flag: bool
  subject.opt: bool?
  subject.role: enum{agent, admin}
  subject.tag: string?
  action.id: enum{read, write}
"""
POOL = {"subject.a": [0, 5, -3, 3000000000, 5000000000], "subject.b": [1, 5, 2147483648],
        "subject.x": [Decimal("0.00"), Decimal("5.00"), Decimal("5.01")], "subject.flag": [True, False],
        "subject.opt": [None, True, False], "subject.role": ["agent", "admin"], "subject.tag": [None, "x"],
        "action.id": ["read", "write"]}


def int_term(rng: random.Random, depth: int) -> str:
    roll = rng.random()
    if depth > 0 and roll < 0.25:
        return f"{int_term(rng, depth - 1)} {rng.choice(['+', '-'])} {rng.choice(['subject.a', 'subject.b', '1'])}"
    return rng.choice(["subject.a", "subject.b", "5", "3000000000", "-3"])


def bool_expr(rng: random.Random, depth: int) -> str:
    choices = ["int", "number", "enum", "flag", "tag"]
    if depth > 0:
        choices += ["junction", "junction", "not", "compare-bool", "in-bool"]
    kind = rng.choice(choices)
    if kind == "int":
        op = rng.choice(["==", "!=", "<", "<=", ">", ">="])
        return f"{int_term(rng, 1)} {op} {int_term(rng, 1)}" if rng.random() < 0.8 \
            else f"subject.a {rng.choice(['in', 'not in'])} {{5, 3000000000}}"
    if kind == "number":
        return f"subject.x {rng.choice(['>', '<=', '=='])} {rng.choice(['5.00', 'subject.a', '5'])}"
    if kind == "enum":
        return rng.choice(["subject.role == agent", "subject.role != admin", "action.id in {read}",
                           "action.id not in {write}"])
    if kind == "flag":
        return rng.choice(["subject.flag", "subject.opt", "subject.opt == true", "subject.opt != false"])
    if kind == "tag":
        return rng.choice(["subject.tag == none", "subject.tag == \"x\"", "subject.tag in {\"x\"}"])
    if kind == "not":
        return f"not ({bool_expr(rng, depth - 1)})"
    if kind == "junction":
        parts = [f"({bool_expr(rng, depth - 1)})" for _ in range(rng.randrange(2, 4))]
        return f" {rng.choice(['and', 'or'])} ".join(parts)
    if kind == "compare-bool":
        other = rng.choice(["true", "false", "subject.flag", "subject.opt", f"({bool_expr(rng, depth - 1)})"])
        return f"({bool_expr(rng, depth - 1)}) {rng.choice(['==', '!='])} {other}"
    return f"({bool_expr(rng, depth - 1)}) {rng.choice(['in', 'not in'])} {{{rng.choice(['true', 'false'])}}}"


def nested_policy(rng: random.Random, algorithm: str):
    lines = ["policy p {", f"  combining {algorithm}", NESTED_ATTRS]
    for i in range(rng.randrange(1, 5)):
        rule = f"  {rng.choice(['permit', 'deny'])} r{i}"
        if rng.random() < 0.6:
            rule += f" target {bool_expr(rng, 2)}"
        if rng.random() < 0.8:
            rule += f" when {bool_expr(rng, 3)}"
        lines.append(rule)
    return parse_text("\n".join(lines + ["}"]) + "\n", "p.policy").models[0]


def nested_request(rng: random.Random, model) -> dict:
    request = {}
    for name, attribute in model.attributes.items():
        if not attribute.type.optional and rng.random() < 0.3:
            continue  # missing: rules reading it may be Indeterminate
        request[name] = rng.choice(POOL[name])
    return request


ALGORITHMS = ["deny-overrides", "permit-overrides", "first-applicable", "only-one-applicable",
              "deny-unless-permit", "permit-unless-deny"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_z3_agrees_with_the_evaluator_on_nested_expressions_and_missing_attributes(algorithm):
    rng = random.Random(ALGORITHMS.index(algorithm) + 11)
    compared = indeterminate = 0
    for _ in range(8):
        model = nested_policy(rng, algorithm)
        required = frozenset(n for n, a in model.attributes.items() if not a.type.optional)
        encoding = PolicyEncoding(model, complete=False)
        evaluator = PolicyEvaluator(model)
        parts = [p for r in model.rules for p in (r.target, r.condition) if p is not None]
        for _ in range(6):
            request = nested_request(rng, model)
            for part in parts:
                value = compile_tri(part, required)(request)
                assert z3_value(encoding, part, request) is value, (part.text(), request)
                indeterminate += value is None
            outcome = evaluator.evaluate(request)
            fixed = pinned(encoding, request)
            assert {d for d in DECISIONS if encoding.check(*fixed, encoding.decision(d)).sat} == {outcome.decision}
            compared += 1
    assert compared == 48 and indeterminate > 0  # the missing-attribute paths were taken
