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
    """Turn an expression into one Python function of an environment dict; built once, called on every replayed
    turn (one call per guard instead of one closure call per node: a turn's guards are most of its step).

    The function's source is generated from the tree's shape only: names and values reach it as constants of its
    namespace (`_k0`, `_k1`, ...), never as source text, so no string in a model can change what the code does."""
    constants: list[Any] = []
    body = _ExprSource(constants).source(expr, 0)
    # The same source over the same constants is the same function: models repeat their guards (and a mutant run
    # compiles its model's expressions again), so each is generated once. Constants are told apart by type and
    # repr: 1, True and Decimal("1.00") are equal in Python but not the same value for a golden to compare.
    key = (body, tuple((type(value), repr(value)) for value in constants))
    found = _COMPILED.get(key)
    if found is None:
        namespace: dict[str, Any] = {f"_k{i}": value for i, value in enumerate(constants)}
        exec(compile(f"def _expr(env):\n    return {body}\n", "<mbt expression>", "exec"), namespace)
        found = namespace["_expr"]
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()  # a bound, not a policy: a model rarely has this many distinct expressions
        _COMPILED[key] = found
    return found


_COMPILED: dict[tuple, Callable[[Env], Any]] = {}
_COMPILED_MAX = 100_000
# Python's parser nests at most 200 parentheses: a deeper subtree becomes a function of its own, called by name.
_NEST = 40


class _ExprSource:
    """The Python source of an expression; what compile_expr's closures did, node by node, as text."""

    def __init__(self, constants: list[Any]):
        self.constants = constants
        self.temporaries = 0

    def constant(self, value: Any) -> str:
        self.constants.append(value)
        return f"_k{len(self.constants) - 1}"

    def temporary(self) -> str:
        self.temporaries += 1
        return f"_t{self.temporaries}"

    def source(self, expr: Expr, depth: int) -> str:
        if depth > _NEST:
            return f"{self.constant(compile_expr(expr))}(env)"
        depth += 1
        if isinstance(expr, (Lit, EnumLit)):
            return self.constant(expr.value)
        if isinstance(expr, Ref):
            return f"env.get({self.constant(expr.name)})"
        if isinstance(expr, Not):
            return f"(not {self.source(expr.operand, depth)})"
        if isinstance(expr, (And, Or)):
            if not expr.items:
                return "True" if isinstance(expr, And) else "False"  # all(()) and any(())
            joined = (" and " if isinstance(expr, And) else " or ").join(self.source(i, depth) for i in expr.items)
            return f"(True if ({joined}) else False)"  # all() and any(): a bool, by each item's truth in order
        if isinstance(expr, Compare):
            left, right = self.source(expr.left, depth), self.source(expr.right, depth)
            if expr.op in ("==", "!="):
                return f"({left} {expr.op} {right})"
            if expr.op not in _CMP:
                raise TypeError(f"cannot compile comparison {expr.op!r}")
            a, b = self.temporary(), self.temporary()
            # Both sides are evaluated first, as the closures did; an unset optional never satisfies an ordering.
            return (f"(({a} is not None and {b} is not None and {a} {expr.op} {b}) "
                    f"if (({a} := {left}), ({b} := {right})) else False)")
        if isinstance(expr, Member):
            values = frozenset(i.value if isinstance(i, (Lit, EnumLit)) else compile_expr(i)({}) for i in expr.items)
            return f"({self.source(expr.operand, depth)} {'not in' if expr.negated else 'in'} {self.constant(values)})"
        if isinstance(expr, Arith):
            if expr.op not in ("+", "-"):
                raise TypeError(f"cannot compile arithmetic {expr.op!r}")
            left, right = self.source(expr.left, depth), self.source(expr.right, depth)
            a, b = self.temporary(), self.temporary()
            return (f"((None if {a} is None or {b} is None else {a} {expr.op} {b}) "
                    f"if (({a} := {left}), ({b} := {right})) else None)")
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
