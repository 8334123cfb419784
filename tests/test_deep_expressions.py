"""Issue 14: a guard, policy condition or invariant with about a thousand chained `or` / `and` / `not` / `+` is read
(the grammar keeps chains flat, the transformer builds balanced or n-ary nodes), means what it says (checked against
Python evaluating the same text), and parentheses nested beyond the limit are one located error, exit 2."""

from __future__ import annotations

import itertools
import random

import pytest

from mbt.model.expr import compile_expr
from mbt.parsing.loader import parse_text
from tests.cli_runner import run_mbt

N = 1000

FSM = """fsm deep {{
  var b: bool = false
  var x: int[0..3] = 0
  state a initial
  state z final
  event go
  a -> z on go [{guard}]
}}
"""


def guard_of(text: str):
    (model,) = parse_text(FSM.format(guard=text), "deep.fsm").models
    (transition,) = model.transitions
    return transition.guard


@pytest.mark.parametrize("guard", [
    " or ".join(["b"] * N), " and ".join(["b"] * N), "not " * N + "b", "not " * (N + 1) + "b",
    " + ".join(["x"] * N) + " > 3", " - ".join(["x"] * N) + " < 1",
])
def test_a_thousand_chained_operators_parse_and_check(tmp_path, guard):
    path = tmp_path / "deep.fsm"
    path.write_text(FSM.format(guard=guard), encoding="utf-8")
    result = run_mbt("check", str(path))
    assert result.returncode in (0, 1) and "error" not in result.stderr.replace("0 errors", ""), result.stderr


def python_meaning(text: str, env: dict) -> object:
    return eval(text, {}, dict(env))  # noqa: S307 - the test's own text: `and`/`or`/`not`/`+`/`-` mean the same


def test_long_mixed_chains_mean_what_python_means():
    rng = random.Random(14)
    for length in (3, 17, 40, 301):
        signs = [rng.choice("+-") for _ in range(length - 1)]
        text = "x" + "".join(f" {s} {rng.choice(['x', '1', '2'])}" for s in signs)
        expr = guard_of(f"{text} > 0").left  # the sum itself
        run = compile_expr(expr)
        for x in range(4):
            assert run({"x": x}) == python_meaning(text, {"x": x}), (length, x)
        if length <= 16:
            assert expr.text() == text  # short chains read (and print) as written
    for length in (5, 120):
        words = [rng.choice(["b", "not b", "c"]) for _ in range(length)]
        ops = [rng.choice(["and", "or"]) for _ in range(length - 1)]
        text = words[0] + "".join(f" {o} {w}" for o, w in zip(ops, words[1:]))
        fsm = FSM.replace("var b: bool = false", "var b: bool = false\n  var c: bool = false")
        (model,) = parse_text(fsm.format(guard=text), "deep.fsm").models
        run = compile_expr(model.transitions[0].guard)
        for b, c in itertools.product([False, True], repeat=2):
            assert run({"b": b, "c": c}) == python_meaning(text, {"b": b, "c": c})


def test_parentheses_nested_too_deep_are_one_located_error(tmp_path):
    path = tmp_path / "deep.fsm"
    path.write_text(FSM.format(guard="(" * 300 + "b" + " or b)" * 300), encoding="utf-8")
    result = run_mbt("check", str(path))
    assert result.returncode == 2 and f"{path}:7:" in result.stderr and "nested more than" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_deep_policy_condition_and_invariant(tmp_path):
    policy = tmp_path / "p.policy"
    policy.write_text("policy p {\n  combining deny-overrides\n  subject.a: bool\n"
                      "  subject.n: number precision 1 [0..5]\n  action.id: enum{go}\n"
                      "  permit r when " + " or ".join(["subject.a"] * N) + " and " + "not " * 3 + "subject.a\n"
                      "  deny s when " + " + ".join(["subject.n"] * N) + " > 2\n}\n", encoding="utf-8")
    inv = tmp_path / "d.inv"
    inv.write_text(FSM.format(guard="b") + "invariants for deep {\n  i1: always " + " or ".join(["b"] * N)
                   + " or " + "not " * 5 + "b\n  i2: always " + " + ".join(["x"] * N) + " >= 0\n}\n", encoding="utf-8")
    for path in (policy, inv):
        result = run_mbt("check", str(path))
        assert result.returncode in (0, 1) and "internal error" not in result.stderr, result.stderr
        assert "error:" not in result.stderr, result.stderr
