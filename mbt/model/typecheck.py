"""Type checking of expressions against a scope of typed names; bare names become enum values where they fit."""

from __future__ import annotations

import difflib
from dataclasses import replace
from decimal import Decimal

from mbt.model.expr import And, Arith, Compare, EnumLit, Expr, Lit, Member, Not, Or, Ref
from mbt.model.types import BOOL, NONE_TYPE, STRING, ValueType

INT_ANY = ValueType("int")  # any whole number: plain `int`, and what `+` / `-` give


class TypeProblem(Exception):
    def __init__(self, node: Expr, message: str, hint: str | None = None):
        super().__init__(message)
        self.node, self.message, self.hint = node, message, hint


def lit_type(value: object) -> ValueType:
    if value is None:
        return NONE_TYPE
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return ValueType("int", lo=value, hi=value)
    if isinstance(value, Decimal):
        return ValueType("decimal")
    return STRING


class Checker:
    """Resolves and types expressions in one scope (name -> ValueType); raises TypeProblem at the first fault."""

    def __init__(self, scope: dict[str, ValueType], where: str = ""):
        self.scope = scope
        self.where = where

    def condition(self, expr: Expr) -> Expr:
        expr, vtype = self.typed(expr)
        if vtype.kind != "bool":
            raise TypeProblem(expr, f"a condition must be true/false, but `{expr.text()}` is {vtype.text()}")
        return expr

    def value(self, expr: Expr, expected: ValueType) -> Expr:
        """Check `expr` can be assigned to something of type `expected`; bare names may be enum values."""
        if (isinstance(expr, EnumLit) or isinstance(expr, Ref) and expr.name not in self.scope) \
                and expected.kind == "enum":
            return self._enum_value(expr, expected)
        expr, vtype = self.typed(expr)
        if vtype.kind == "none":
            if not expected.optional:
                raise TypeProblem(expr, f"`none` is not a value of {expected.text()}", "add ? to the type to allow none")
            return expr
        if not _assignable(vtype, expected):
            raise TypeProblem(expr, f"`{expr.text()}` is {vtype.text()}, expected {expected.text()}")
        if vtype.optional and not expected.optional:
            raise TypeProblem(expr, f"`{expr.text()}` may be none but {expected.text()} does not allow none")
        if expected.kind == "int" and isinstance(expr, Lit) and not expected.within(expr.value):
            raise TypeProblem(expr, f"{expr.value} is outside {expected.text()}")
        return expr

    def _enum_value(self, ref: Ref | EnumLit, expected: ValueType) -> EnumLit:
        name = ref.name if isinstance(ref, Ref) else ref.value
        if "." in name or name not in expected.values:
            raise TypeProblem(ref, f"unknown name `{name}`",
                              f"not a variable here, nor one of {', '.join(expected.values)}")
        return EnumLit(name, line=ref.line, column=ref.column)

    def typed(self, expr: Expr) -> tuple[Expr, ValueType]:
        if isinstance(expr, Lit):
            vtype = lit_type(expr.value)
            if vtype.kind == "decimal":
                raise TypeProblem(expr, "decimal numbers are not allowed here; use whole numbers")
            return expr, vtype
        if isinstance(expr, EnumLit):
            raise TypeProblem(expr, f"`{expr.value}` only makes sense compared with an enum value")
        if isinstance(expr, Ref):
            if expr.name not in self.scope:
                raise TypeProblem(expr, f"unknown name `{expr.name}`", self._hint(expr.name))
            return expr, self.scope[expr.name]
        if isinstance(expr, Not):
            return replace(expr, operand=self.condition(expr.operand)), BOOL
        if isinstance(expr, (And, Or)):
            return replace(expr, items=tuple(self.condition(i) for i in expr.items)), BOOL
        if isinstance(expr, Arith):
            left, lt = self.typed(expr.left)
            right, rt = self.typed(expr.right)
            for node, t in ((left, lt), (right, rt)):
                if t.kind != "int":
                    raise TypeProblem(node, f"`{node.text()}` is {t.text()}; only whole numbers can be added or subtracted")
            return replace(expr, left=left, right=right), INT_ANY
        if isinstance(expr, Compare):
            return self._compare(expr), BOOL
        if isinstance(expr, Member):
            return self._member(expr), BOOL
        raise TypeProblem(expr, f"unsupported expression {expr.text()}")

    def _member(self, expr: Member) -> Member:
        """`x in {a, b}`: each item a value of x's type (a bare name one of its enum values)."""
        operand, otype = self.typed(expr.operand)
        items: list[Expr] = []
        for item in expr.items:
            if isinstance(item, EnumLit):
                if otype.kind != "enum":
                    raise TypeProblem(item, f"`{item.value}` is not a value of {otype.text()}")
                items.append(self._enum_value(item, otype))
            else:
                assert isinstance(item, Lit)  # a set item is a literal or a bare name (the grammar's `set_item`)
                itype = lit_type(item.value)
                if not _comparable(otype, itype):
                    raise TypeProblem(item, f"{item.text()} cannot be a value of {otype.text()}")
                items.append(item)
        return replace(expr, operand=operand, items=tuple(items))

    def _compare(self, expr: Compare) -> Compare:
        left, right = expr.left, expr.right
        # A bare name that is not in scope may be an enum value of the other side's type.
        if isinstance(right, Ref) and right.name not in self.scope:
            left, lt = self.typed(left)
            if lt.kind != "enum":
                raise TypeProblem(right, f"unknown name `{right.name}`", self._hint(right.name))
            right, rt = self._enum_value(right, lt), lt
        elif isinstance(left, Ref) and left.name not in self.scope:
            right, rt = self.typed(right)
            if rt.kind != "enum":
                raise TypeProblem(left, f"unknown name `{left.name}`", self._hint(left.name))
            left, lt = self._enum_value(left, rt), rt
        else:
            left, lt = self.typed(left)
            right, rt = self.typed(right)
        if lt.kind == "none" or rt.kind == "none":
            other, ot = (right, rt) if lt.kind == "none" else (left, lt)
            if expr.op not in ("==", "!="):
                raise TypeProblem(expr, "`none` can only be compared with == or !=")
            if not ot.optional and ot.kind != "none":
                raise TypeProblem(expr, f"`{other.text()}` is {ot.text()} and can never be none",
                                  "add ? to its type to allow none")
        elif not _comparable(lt, rt):
            raise TypeProblem(expr, f"cannot compare {lt.text()} with {rt.text()} in `{expr.text()}`")
        elif expr.op not in ("==", "!=") and lt.kind != "int":
            raise TypeProblem(expr, f"`{expr.op}` needs whole numbers, not {lt.text()}")
        return replace(expr, left=left, right=right)

    def _hint(self, name: str) -> str | None:
        close = difflib.get_close_matches(name, list(self.scope), n=1)
        return f"did you mean `{close[0]}`?" if close else None


def _comparable(a: ValueType, b: ValueType) -> bool:
    if a.kind == "int" and b.kind == "int":
        return True
    if a.kind == "enum" and b.kind == "enum":
        return bool(set(a.values) & set(b.values))
    return a.kind == b.kind


def _assignable(source: ValueType, target: ValueType) -> bool:
    if source.kind == "enum" and target.kind == "enum":
        return set(source.values) <= set(target.values)
    if source.kind == "int" and target.kind == "int":
        return True  # ranges are checked on replay: an out-of-range value is reported there
    return source.kind == target.kind
