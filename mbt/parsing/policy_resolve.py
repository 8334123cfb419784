"""Resolves a written policy: attribute types, unknown and duplicate names, expression types, the combining algorithm."""

from __future__ import annotations

import difflib
from dataclasses import replace
from decimal import Decimal

from mbt.errors import Problem
from mbt.model.common import Location
from mbt.model.expr import Arith, Compare, Expr, Lit, Member, Ref
from mbt.model.policy import ALGORITHMS, CATEGORIES, PolicyModel
from mbt.model.typecheck import INT_ANY, Checker, TypeProblem
from mbt.model.types import BOOL, ValueType
from mbt.parsing.common import annotation_fields
from mbt.parsing.policy_rules import RawNumber, RawPolicy

NUMERIC = ("int", "number")


def decimal_scale(value: Decimal | int) -> int:
    """The number of decimal places a literal is written with (1.50 -> 2, 7 -> 0)."""
    if isinstance(value, int):
        return 0
    exponent = value.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0  # a letter for NaN and infinity: never written


class PolicyChecker(Checker):
    """The shared type checker, plus decimal numbers: a number compares and adds with numbers and whole numbers."""

    def typed(self, expr: Expr) -> tuple[Expr, ValueType]:
        if isinstance(expr, Lit) and isinstance(expr.value, Decimal):
            return expr, ValueType("number", scale=decimal_scale(expr.value))
        if isinstance(expr, Arith):
            left, lt = self.typed(expr.left)
            right, rt = self.typed(expr.right)
            for node, t in ((left, lt), (right, rt)):
                if t.kind not in NUMERIC:
                    raise TypeProblem(node, f"`{node.text()}` is {t.text()}; only numbers can be added or subtracted")
            if lt.optional or rt.optional:
                raise TypeProblem(expr, f"`{expr.text()}` adds a value that may be none")
            if "number" in (lt.kind, rt.kind):
                return replace(expr, left=left, right=right), ValueType("number", scale=max(lt.scale, rt.scale))
            return replace(expr, left=left, right=right), INT_ANY
        if isinstance(expr, Member):
            operand, otype = self.typed(expr.operand)
            if otype.kind in NUMERIC:
                for item in expr.items:
                    if not (isinstance(item, Lit) and isinstance(item.value, (int, Decimal))
                            and not isinstance(item.value, bool)):
                        raise TypeProblem(item, f"{item.text()} cannot be a value of {otype.text()}")
                return replace(expr, operand=operand), BOOL
        return super().typed(expr)

    def _compare(self, expr: Compare) -> Compare:
        if isinstance(expr.left, Ref) and expr.left.name not in self.scope \
                or isinstance(expr.right, Ref) and expr.right.name not in self.scope:
            return super()._compare(expr)  # a bare enum value: the shared rules resolve it
        left, lt = self.typed(expr.left)
        right, rt = self.typed(expr.right)
        if lt.kind in NUMERIC and rt.kind in NUMERIC and "number" in (lt.kind, rt.kind):
            return replace(expr, left=left, right=right)
        if expr.op not in ("==", "!=") and "none" not in (lt.kind, rt.kind) \
                and (lt.kind not in NUMERIC or rt.kind not in NUMERIC):
            wrong = lt if lt.kind not in NUMERIC else rt
            raise TypeProblem(expr, f"`{expr.op}` needs numbers, not {wrong.text()}")
        return super()._compare(expr)

    def value(self, expr: Expr, expected: ValueType) -> Expr:
        if expected.kind == "number":
            expr, vtype = self.typed(expr)
            if vtype.kind == "none":
                if not expected.optional:
                    raise TypeProblem(expr, f"`none` is not a value of {expected.text()}", "add ? to the type")
                return expr
            if vtype.kind not in NUMERIC:
                raise TypeProblem(expr, f"`{expr.text()}` is {vtype.text()}, expected {expected.text()}")
            if vtype.optional and not expected.optional:
                raise TypeProblem(expr, f"`{expr.text()}` may be none but {expected.text()} does not allow none")
            return expr
        return super().value(expr, expected)


class PolicyResolver:
    def __init__(self, raw: RawPolicy, path: str, text: str, sources: dict):
        self.raw, self.path, self.text = raw, path, text
        self.problems: list[Problem] = []
        self.model = PolicyModel(name=raw.name, file=path, loc=raw.loc, sources=sources, **annotation_fields(raw.notes))

    # ---- reporting
    def problem(self, loc: Location | Expr, message: str, hint: str | None = None) -> None:
        lines = self.text.splitlines()
        line, column = loc.line, loc.column
        source_line = lines[line - 1] if 1 <= line <= len(lines) else None
        self.problems.append(Problem(self.path, line, column, message, source_line, hint))

    def type_problem(self, err: TypeProblem, fallback: Location) -> None:
        where = err.node if getattr(err.node, "line", 0) else fallback
        self.problem(where, err.message, err.hint)

    @staticmethod
    def hint_for(name: str, known) -> str | None:
        close = difflib.get_close_matches(name, list(known), n=1)
        return f"did you mean `{close[0]}`?" if close else None

    # ---- resolution
    def resolve(self) -> PolicyModel:
        m, items = self.model, self.raw.items
        m.title = (items.get("title") or [None])[-1]
        m.contracts = items.get("contract", [])
        self.check_combining()
        self.declare_attributes()
        self.check_rules()
        self.check_assertions()
        self.check_enforcements()
        return m

    def check_combining(self) -> None:
        found = self.raw.items.get("combining", [])
        if not found:
            self.problem(self.model.loc, f"policy `{self.model.name}` declares no combining algorithm",
                         "add a line such as `combining deny-overrides` (one of " + ", ".join(ALGORITHMS) + ")")
        for extra in found[1:]:
            self.problem(extra.loc, f"a second combining algorithm (the first is `{found[0].algorithm}` at line "
                                    f"{found[0].loc.line})")
        self.model.combining = found[:1]

    def declare_attributes(self) -> None:
        table = self.model.attributes
        for attribute, raw_type in self.raw.items.get("attribute", []):
            if attribute.qualified in table:
                first = table[attribute.qualified].loc.line
                self.problem(attribute.loc, f"attribute `{attribute.qualified}` is declared twice (first at line {first})")
                continue
            vtype = self.attribute_type(raw_type)
            if vtype is None:
                continue
            table[attribute.qualified] = attribute.model_copy(update={"type": vtype})

    def attribute_type(self, raw: ValueType | RawNumber) -> ValueType | None:
        if not isinstance(raw, RawNumber):
            return raw
        precision = Decimal(raw.precision)
        scale = decimal_scale(raw.precision)
        if precision <= 0 or precision.normalize() != Decimal(1).scaleb(-scale).normalize() or precision > 1:
            self.problem(raw.loc, f"precision {raw.precision} is not 1, 0.1, 0.01, ... (a power of ten up to 1)",
                         "numbers are decimals at a fixed number of places, e.g. `number precision 0.01` for cents")
            return None
        vtype = ValueType("number", optional=raw.optional, scale=scale,
                          lo=Decimal(raw.lo) if raw.lo is not None else None,
                          hi=Decimal(raw.hi) if raw.hi is not None else None)
        for bound in (raw.lo, raw.hi):
            if bound is not None and decimal_scale(bound) > scale and Decimal(bound) % vtype.step:
                self.problem(raw.loc, f"bound {bound} is not a multiple of the precision {vtype.step}")
                return None
        if vtype.lo is not None and vtype.hi is not None and vtype.lo > vtype.hi:
            self.problem(raw.loc, f"the range [{vtype.lo}..{vtype.hi}] is empty")
            return None
        return vtype

    def checker(self) -> PolicyChecker:
        return PolicyChecker(self.model.scope())

    def condition(self, expr: Expr, fallback: Location) -> Expr | None:
        """The typed condition, or None after reporting its first problem; unknown attributes get a hint."""
        for node in expr.walk():
            if isinstance(node, Ref) and "." in node.name and node.name not in self.model.attributes:
                category = node.name.split(".", 1)[0]
                if category not in CATEGORIES:
                    hint = "attributes are written CATEGORY.NAME with a category of " + ", ".join(CATEGORIES)
                else:
                    hint = self.hint_for(node.name, self.model.attributes) or \
                        f"declare it: {node.name}: TYPE"
                self.problem(node if node.line else fallback, f"unknown attribute `{node.name}`", hint)
                return None
        try:
            return self.checker().condition(expr)
        except TypeProblem as err:
            self.type_problem(err, fallback)
            return None

    def check_rules(self) -> None:
        names: dict[str, Location] = {}
        resolved = []
        for rule in self.raw.items.get("rule", []):
            if rule.name in names:
                self.problem(rule.loc, f"rule `{rule.name}` is declared twice (first at line {names[rule.name].line})")
                continue
            names[rule.name] = rule.loc
            ok = True
            for part in ("target", "condition"):
                expr = getattr(rule, part)
                if expr is not None:
                    typed = self.condition(expr, rule.loc)
                    ok = ok and typed is not None
                    setattr(rule, part, typed)
            if ok:
                resolved.append(rule)
        if not self.raw.items.get("rule"):
            self.problem(self.model.loc, f"policy `{self.model.name}` has no rules",
                         "add e.g. `permit NAME target action.id == read`")
        self.model.rules = resolved

    def check_assertions(self) -> None:
        resolved = []
        for assertion in self.raw.items.get("assert", []):
            if assertion.when is not None:
                assertion.when = self.condition(assertion.when, assertion.loc)
                if assertion.when is None:
                    continue
            resolved.append(assertion)
        self.model.assertions = resolved

    def check_enforcements(self) -> None:
        """Attribute names only: the values read the FSM, so they are typed when the models are linked."""
        seen: dict[str, Location] = {}
        for enforcement in self.raw.items.get("enforce", []):
            key = f"{enforcement.fsm}.{enforcement.tool}"
            if key in seen:
                self.problem(enforcement.loc, f"calls of `{enforcement.tool}` in `{enforcement.fsm}` are already "
                                              f"enforced at line {seen[key].line}")
                continue
            seen[key] = enforcement.loc
            given: dict[str, Location] = {}
            for mapping in enforcement.mappings:
                if mapping.attribute not in self.model.attributes:
                    self.problem(mapping.loc, f"unknown attribute `{mapping.attribute}`",
                                 self.hint_for(mapping.attribute, self.model.attributes))
                elif mapping.attribute in given:
                    self.problem(mapping.loc, f"attribute `{mapping.attribute}` is given twice "
                                              f"(first at line {given[mapping.attribute].line})")
                given.setdefault(mapping.attribute, mapping.loc)
            self.model.enforcements.append(enforcement)


def resolve_policy(raw: RawPolicy, path: str, text: str, sources: dict) -> tuple[PolicyModel, list[Problem]]:
    resolver = PolicyResolver(raw, path, text, sources)
    model = resolver.resolve()
    return model, resolver.problems

