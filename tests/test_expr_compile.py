"""compile_expr's generated functions against the FSM judge's tree-walking evaluator (tests/judge/fsm.py,
value_of): the same value, of the same type, on random expressions and environments; deep trees; strings that look
like code stay data."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from mbt.model.expr import And, Arith, Compare, Lit, Member, Not, Or, Ref, compile_expr
from tests.judge.fsm import value_of as evaluate
from tests.test_checks import SCOPE, condition, operand, random_value


def same(a, b) -> bool:
    return type(a) is type(b) and a == b


def test_generated_functions_agree_with_the_judge_on_random_expressions():
    rng = random.Random(16)
    compared = 0
    for _ in range(1500):
        expr = condition(rng) if rng.random() < 0.8 else operand(rng, rng.choice(["int", "enum", "string", "bool"]))
        fn = compile_expr(expr)
        for _ in range(6):
            env = {name: random_value(rng, vtype) for name, vtype in SCOPE.items() if rng.random() < 0.9}
            assert same(fn(env), evaluate(expr, env)), (expr.text(), env)
            compared += 1
    assert compared == 9000


def test_values_equal_in_python_stay_distinct():
    # 1 == True == Decimal("1.00") in Python: one generated function per expression must not serve the others.
    for value in (1, True, Decimal("1.00"), Decimal("1.0"), "1"):
        result = compile_expr(Lit(value))({})
        assert type(result) is type(value) and str(result) == str(value)
    assert compile_expr(Compare("==", Ref("x"), Lit(1)))({"x": 1}) is True


def test_unset_operands():
    assert compile_expr(Compare("<", Ref("n"), Lit(3)))({}) is False
    assert compile_expr(Compare(">=", Lit(3), Ref("n")))({"n": None}) is False
    assert compile_expr(Arith("+", Ref("n"), Lit(3)))({}) is None
    assert compile_expr(Arith("-", Lit(3), Ref("n")))({"n": 5}) == -2
    assert compile_expr(And(()))({}) is True and compile_expr(Or(()))({}) is False
    assert compile_expr(And((Ref("a"), Ref("b"))))({"a": 1, "b": "x"}) is True  # a bool, not the last operand


@pytest.mark.parametrize("depth", [1, 39, 41, 200, 400])
def test_deep_trees_compile_and_agree(depth):
    # Deeper than Python's parser nests parentheses (the DSL allows 100 levels of them, each a few nodes deep).
    negations = Ref("flag")
    total = Ref("n")
    for k in range(depth):
        negations = Not(negations)
        total = Arith("+" if k % 2 else "-", total, Lit(k))
    for flag in (True, False, None):
        assert compile_expr(negations)({"flag": flag}) is evaluate(negations, {"flag": flag})
    assert compile_expr(total)({"n": 7}) == evaluate(total, {"n": 7})
    assert compile_expr(total)({}) is None


def test_strings_that_look_like_code_are_data():
    tricky = ['"); import os; os._exit(3) #', "\\n    return 1\n", "'''", "_k0", "env", "{x}", "\x00"]
    for text in tricky:
        assert compile_expr(Lit(text))({}) == text
        assert compile_expr(Ref(text))({text: 5}) == 5
        assert compile_expr(Compare("==", Ref("s"), Lit(text)))({"s": text}) is True
        assert compile_expr(Member(Ref("s"), (Lit(text), Lit("other"))))({"s": text}) is True
