"""Expressions shared by every kind: the typed AST, its canonical text, and compilation to fast Python closures."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from mbt.model.types import ValueType


@dataclass(frozen=True)
class Expr:
    """Base of every expression node; `line`/`column` locate it in the model file."""

    line: int = field(default=0, compare=False, kw_only=True)
    column: int = field(default=0, compare=False, kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return ()

    def text(self) -> str:
        """The expression as the DSL writes it."""
        raise NotImplementedError(type(self).__name__)

    def walk(self) -> Iterator[Expr]:
        yield self
        for child in self.children():
            yield from child.walk()


@dataclass(frozen=True)
class Lit(Expr):
    """A literal; `value` is bool, int, Decimal, str or None (`none`)."""

    value: Any

    def text(self) -> str:
        if self.value is None:
            return "none"
        if isinstance(self.value, bool):
            return "true" if self.value else "false"
        if isinstance(self.value, str):
            return '"' + self.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return str(self.value)


@dataclass(frozen=True)
class EnumLit(Expr):
    """A bare enum value such as `TIMEOUT`, resolved against the type it is compared with."""

    value: str

    def text(self) -> str:
        return self.value


@dataclass(frozen=True)
class Ref(Expr):
    """A name: a variable, an event parameter, `discarded.VAR` or `args.NAME` (a tool-call argument)."""

    name: str

    def text(self) -> str:
        return self.name


@dataclass(frozen=True)
class Not(Expr):
    operand: Expr

    def children(self):
        return (self.operand,)

    def text(self) -> str:
        inner = self.operand.text()
        return f"not {inner}" if isinstance(self.operand, (Ref, Lit)) else f"not ({inner})"


@dataclass(frozen=True)
class And(Expr):
    items: tuple[Expr, ...]

    def children(self):
        return self.items

    def text(self) -> str:
        return " and ".join(f"({i.text()})" if isinstance(i, Or) else i.text() for i in self.items)


@dataclass(frozen=True)
class Or(Expr):
    items: tuple[Expr, ...]

    def children(self):
        return self.items

    def text(self) -> str:
        return " or ".join(i.text() for i in self.items)


@dataclass(frozen=True)
class Compare(Expr):
    op: str  # == != < <= > >=
    left: Expr
    right: Expr

    def children(self):
        return (self.left, self.right)

    def text(self) -> str:
        return f"{self.left.text()} {self.op} {self.right.text()}"


@dataclass(frozen=True)
class Member(Expr):
    """`x in {a, b}` (or `not in` when negated)."""

    operand: Expr
    items: tuple[Expr, ...]
    negated: bool = False

    def children(self):
        return (self.operand, *self.items)

    def text(self) -> str:
        kw = "not in" if self.negated else "in"
        return f"{self.operand.text()} {kw} {{{', '.join(i.text() for i in self.items)}}}"


@dataclass(frozen=True)
class Arith(Expr):
    op: str  # + -
    left: Expr
    right: Expr

    def children(self):
        return (self.left, self.right)

    def text(self) -> str:
        right = self.right.text()
        return f"{self.left.text()} {self.op} {f'({right})' if isinstance(self.right, Arith) else right}"


def atoms(expr: Expr) -> list[Expr]:
    """The atomic conditions of a boolean expression (comparisons, memberships, boolean refs/literals), in order."""
    if isinstance(expr, (And, Or)):
        return [a for item in expr.items for a in atoms(item)]
    if isinstance(expr, Not):
        return atoms(expr.operand)
    return [expr]


def refs(expr: Expr) -> set[str]:
    return {node.name for node in expr.walk() if isinstance(node, Ref)}


# ---------------------------------------------------------------- evaluation

Env = dict[str, Any]
_CMP = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def compile_expr(expr: Expr) -> Callable[[Env], Any]:
    """Turn an expression into a closure over an environment dict; built once, called on every replayed turn."""
    if isinstance(expr, Lit):
        value = expr.value
        return lambda env: value
    if isinstance(expr, EnumLit):
        value = expr.value
        return lambda env: value
    if isinstance(expr, Ref):
        name = expr.name
        return lambda env: env.get(name)
    if isinstance(expr, Not):
        inner = compile_expr(expr.operand)
        return lambda env: not inner(env)
    if isinstance(expr, And):
        parts = [compile_expr(i) for i in expr.items]
        return lambda env: all(p(env) for p in parts)
    if isinstance(expr, Or):
        parts = [compile_expr(i) for i in expr.items]
        return lambda env: any(p(env) for p in parts)
    if isinstance(expr, Compare):
        left, right, op = compile_expr(expr.left), compile_expr(expr.right), _CMP[expr.op]
        if expr.op in ("==", "!="):
            return lambda env: op(left(env), right(env))

        def ordered(env: Env) -> bool:
            a, b = left(env), right(env)
            # An unset optional never satisfies an ordering comparison.
            return a is not None and b is not None and op(a, b)

        return ordered
    if isinstance(expr, Member):
        operand = compile_expr(expr.operand)
        values = frozenset(compile_expr(i)({}) for i in expr.items)
        if expr.negated:
            return lambda env: operand(env) not in values
        return lambda env: operand(env) in values
    if isinstance(expr, Arith):
        left, right = compile_expr(expr.left), compile_expr(expr.right)
        op = operator.add if expr.op == "+" else operator.sub

        def arith(env: Env):
            a, b = left(env), right(env)
            return None if a is None or b is None else op(a, b)

        return arith
    raise TypeError(f"cannot compile {type(expr).__name__}")


def literal_type(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, Decimal):
        return "decimal"
    return "string"


__all__ = [
    "Expr", "Lit", "EnumLit", "Ref", "Not", "And", "Or", "Compare", "Member", "Arith",
    "atoms", "refs", "compile_expr", "literal_type", "ValueType",
]
