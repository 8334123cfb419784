"""An expression evaluated by walking its tree, as docs/dsl-reference.md defines the operators: the judge of the
Python functions mbt.model.expr.compile_expr generates."""

from __future__ import annotations

from typing import Any

from mbt.model.expr import And, Arith, Compare, EnumLit, Expr, Lit, Member, Not, Or, Ref

ORDER = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def evaluate(expr: Expr, env: dict[str, Any]) -> Any:
    """The value of the expression: an unset name is None; `and`/`or`/`not` give booleans by their operands'
    truth; an ordering with an unset side is false; arithmetic with an unset side is unset."""
    if isinstance(expr, (Lit, EnumLit)):
        return expr.value
    if isinstance(expr, Ref):
        return env.get(expr.name)
    if isinstance(expr, Not):
        return not evaluate(expr.operand, env)
    if isinstance(expr, And):
        for item in expr.items:
            if not evaluate(item, env):
                return False
        return True
    if isinstance(expr, Or):
        for item in expr.items:
            if evaluate(item, env):
                return True
        return False
    if isinstance(expr, Compare):
        left, right = evaluate(expr.left, env), evaluate(expr.right, env)
        if expr.op == "==":
            return left == right
        if expr.op == "!=":
            return left != right
        return left is not None and right is not None and ORDER[expr.op](left, right)
    if isinstance(expr, Member):
        found = evaluate(expr.operand, env) in {evaluate(item, {}) for item in expr.items}
        return not found if expr.negated else found
    if isinstance(expr, Arith):
        left, right = evaluate(expr.left, env), evaluate(expr.right, env)
        if left is None or right is None:
            return None
        return left + right if expr.op == "+" else left - right
    raise TypeError(f"no rule for {type(expr).__name__}")
