"""Z3 encoding of mbt expressions over typed symbols, valuations back to Python, and a reusable cached solver."""

from __future__ import annotations

import ctypes
import itertools
import random
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import z3

from mbt.model.expr import And, Arith, Compare, EnumLit, Expr, Lit, Member, Not, Or, Ref
from mbt.model.types import ValueType

TRUE = z3.BoolVal(True)
FALSE = z3.BoolVal(False)


@dataclass(frozen=True)
class Term:
    """An encoded value: `is_set` is false for `none`; `leaves` are the symbols it depends on (for their domains)."""

    is_set: z3.BoolRef
    value: z3.ExprRef | None  # None only for the `none` literal
    kind: str  # "bool" | "int" | "string" | "enum" | "number" | "none"
    leaves: frozenset[str] = frozenset()


NONE = Term(FALSE, None, "none")


# ---------------------------------------------------------------- strings

def string_val(text: str) -> z3.SeqRef:
    """A z3 string literal with exactly these characters (z3 would otherwise read `\\u{..}` in the text as an escape)."""
    return z3.StringVal("".join(c if 32 <= ord(c) < 127 and c != "\\" else f"\\u{{{ord(c):x}}}" for c in text))


def string_of(value: z3.ExprRef) -> str:
    """The characters of a z3 string value (as_string() escapes non-ASCII and is ambiguous with backslashes)."""
    ctx, ast = value.ctx_ref(), value.as_ast()
    size = z3.Z3_get_string_length(ctx, ast)
    buffer = (ctypes.c_uint * size)()
    z3.Z3_get_string_contents(ctx, ast, size, buffer)
    return "".join(chr(code) for code in buffer)


# ---------------------------------------------------------------- symbols

class EnumCodes:
    """Every enum value name gets one integer, shared by all enum types, so values of different enums compare."""

    def __init__(self, types: Iterable[ValueType] = ()):
        self.codes: dict[str, int] = {}
        self.names: list[str] = []
        for vtype in types:
            for value in vtype.values:
                self.code(value)

    def code(self, name: str) -> int:
        if name not in self.codes:
            self.codes[name] = len(self.names)
            self.names.append(name)
        return self.codes[name]


def _sort(vtype: ValueType):
    if vtype.kind == "bool":
        return z3.BoolSort()
    if vtype.kind == "string":
        return z3.StringSort()
    return z3.IntSort()  # int, enum, and a number's count of precision steps


class Symbols(Mapping[str, Term]):
    """The z3 constants of a scope (name -> ValueType), created on first use, with their domain constraints.

    Names may be anything (`discarded.x`, `event:param`); z3 constants of equal name and sort are one constant,
    so two Symbols over the same scope can be mixed in one query.
    """

    def __init__(self, scope: Mapping[str, ValueType]):
        self.scope = dict(scope)
        self.enums = EnumCodes([self.scope[n] for n in sorted(self.scope) if self.scope[n].kind == "enum"])
        self._terms: dict[str, Term] = {}
        self._domains: dict[str, list[z3.BoolRef]] = {}

    def __getitem__(self, name: str) -> Term:
        term = self._terms.get(name)
        if term is None:
            term = self._terms[name] = self._make(name, self.scope[name])
        return term

    def __iter__(self) -> Iterator[str]:
        return iter(self.scope)

    def __len__(self) -> int:
        return len(self.scope)

    def __contains__(self, name: object) -> bool:
        return name in self.scope

    def _make(self, name: str, vtype: ValueType) -> Term:
        value = z3.Const(name, _sort(vtype))
        domain = []
        if vtype.kind == "number":
            # A number at precision 10**-scale is a whole count of steps: exact, and boundaries fall on the grid.
            steps = value
            value = z3.ToReal(steps) / (10 ** vtype.scale) if vtype.scale else z3.ToReal(steps)
            if vtype.lo is not None:
                domain.append(steps >= _ceil(Fraction(vtype.lo) * 10 ** vtype.scale))
            if vtype.hi is not None:
                domain.append(steps <= _floor(Fraction(vtype.hi) * 10 ** vtype.scale))
        elif vtype.kind == "int":
            domain += [value >= vtype.lo] if vtype.lo is not None else []
            domain += [value <= vtype.hi] if vtype.hi is not None else []
        elif vtype.kind == "enum":
            domain.append(z3.Or([value == self.enums.code(v) for v in vtype.values]))
        is_set = z3.Bool(f"{name}?set") if vtype.optional else TRUE
        self._domains[name] = domain
        kind = vtype.kind
        return Term(is_set, value, kind, frozenset([name]))

    def domain(self, leaves: frozenset[str] | set[str]) -> list[z3.BoolRef]:
        """Domain constraints of the given symbols (int bounds, enum membership), in a stable order."""
        out: list[z3.BoolRef] = []
        for name in sorted(leaves):
            self[name]
            out.extend(self._domains[name])
        return out

    def view(self, renames: Mapping[str, str] | None = None, values: Mapping[str, Term] | None = None) -> View:
        """This scope seen under other names (`renames`: local name -> symbol name) or with some names bound to terms."""
        return View(self, dict(renames or {}), dict(values or {}))

    @property
    def symbols(self) -> Symbols:
        return self


class View(Mapping[str, Term]):
    """A scope over a Symbols: local renames and overriding terms (e.g. variables after an assignment)."""

    def __init__(self, base: Symbols, renames: dict[str, str], terms: dict[str, Term]):
        self.base, self.renames, self.terms = base, renames, terms
        self.enums = base.enums

    @property
    def symbols(self) -> Symbols:
        return self.base

    def __getitem__(self, name: str) -> Term:
        if name in self.terms:
            return self.terms[name]
        return self.base[self.renames.get(name, name)]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):  # every name of a scope is a str
            return False
        return name in self.terms or self.renames.get(name, name) in self.base

    def __iter__(self) -> Iterator[str]:
        seen = set(self.terms) | set(self.renames)
        yield from seen
        yield from (n for n in self.base if n not in seen)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def view(self, renames: Mapping[str, str] | None = None, values: Mapping[str, Term] | None = None) -> View:
        merged = dict(self.terms)
        merged.update(values or {})
        names = dict(self.renames)
        names.update(renames or {})
        return View(self.base, names, merged)


Scope = Symbols | View


# ---------------------------------------------------------------- encoding

def encode(expr: Expr, symbols: Scope) -> z3.BoolRef:
    """The z3 formula that holds exactly when `compile_expr(expr)` is truthy (domain constraints not included)."""
    return truth(encode_term(expr, symbols))


def encode_term(expr: Expr, symbols: Scope) -> Term:
    """Encode any expression as a Term; a name the scope lacks is `none`, as compile_expr's `env.get` makes it."""
    if isinstance(expr, Lit):
        return literal(expr.value)
    if isinstance(expr, EnumLit):
        return Term(TRUE, z3.IntVal(symbols.enums.code(expr.value)), "enum")
    if isinstance(expr, Ref):
        return symbols[expr.name] if expr.name in symbols else NONE
    if isinstance(expr, Not):
        inner = encode_term(expr.operand, symbols)
        return boolean(z3.Not(truth(inner)), inner.leaves)
    if isinstance(expr, (And, Or)):
        parts = [encode_term(i, symbols) for i in expr.items]
        join = z3.And if isinstance(expr, And) else z3.Or
        return boolean(join([truth(p) for p in parts]), frozenset().union(*(p.leaves for p in parts)))
    if isinstance(expr, Compare):
        left, right = encode_term(expr.left, symbols), encode_term(expr.right, symbols)
        leaves = left.leaves | right.leaves
        if expr.op in ("==", "!="):
            same = equal(left, right)
            return boolean(same if expr.op == "==" else z3.Not(same), leaves)
        if left.kind == "none" or right.kind == "none":
            return boolean(FALSE, leaves)
        # An unset optional never satisfies an ordering comparison (compile_expr's rule).
        ordered = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
                   ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[expr.op](left.value, right.value)
        return boolean(both_set(left, right, ordered), leaves)
    if isinstance(expr, Member):
        operand = encode_term(expr.operand, symbols)
        hit = z3.Or([equal(operand, encode_term(i, symbols)) for i in expr.items])
        return boolean(z3.Not(hit) if expr.negated else hit, operand.leaves)
    if isinstance(expr, Arith):
        left, right = encode_term(expr.left, symbols), encode_term(expr.right, symbols)
        leaves = left.leaves | right.leaves
        a, b = left.value, right.value
        if a is None or b is None:  # a `none` operand (NONE is the one term without a value)
            return Term(FALSE, z3.IntVal(0), "int", leaves)
        value = a + b if expr.op == "+" else a - b
        kind = "number" if "number" in (left.kind, right.kind) else "int"
        return Term(_and(left.is_set, right.is_set), value, kind, leaves)
    raise TypeError(f"cannot encode {type(expr).__name__}")


def literal(value: Any) -> Term:
    if value is None:
        return NONE
    if isinstance(value, bool):
        return Term(TRUE, z3.BoolVal(value), "bool")
    if isinstance(value, int):
        return Term(TRUE, z3.IntVal(value), "int")
    if isinstance(value, str):
        return Term(TRUE, string_val(value), "string")
    if isinstance(value, Decimal):
        return Term(TRUE, z3.RealVal(str(value)), "number")
    raise TypeError(f"cannot encode the literal {value!r}")


def boolean(formula: z3.BoolRef, leaves: frozenset[str]) -> Term:
    return Term(TRUE, formula, "bool", leaves)


def truth(term: Term) -> z3.BoolRef:
    """A term used as a condition: `none` (an unset `bool?`) is falsy, like in Python."""
    if term.kind == "none":
        return FALSE
    if term.kind != "bool":
        raise TypeError(f"a {term.kind} value is not a condition")
    return _and(term.is_set, term.value)


def equal(a: Term, b: Term) -> z3.BoolRef:
    """Python equality of two possibly-unset values: two unsets are equal; unset never equals a value."""
    if a.kind == "none" and b.kind == "none":
        return TRUE
    if a.kind == "none":
        return z3.Not(b.is_set)
    if b.kind == "none":
        return z3.Not(a.is_set)
    same = a.value == b.value
    if a.is_set is TRUE and b.is_set is TRUE:
        return same
    return z3.If(a.is_set, z3.And(b.is_set, same), z3.Not(b.is_set))


def both_set(a: Term, b: Term, formula: z3.BoolRef) -> z3.BoolRef:
    return _and(_and(a.is_set, b.is_set), formula)


def _and(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    # Identity, not z3.is_true: cheap, and every always-set value carries the TRUE constant itself.
    if a is TRUE:
        return b
    if b is TRUE:
        return a
    return z3.And(a, b)


def pin(symbols: Scope, valuation: Mapping[str, Any]) -> list[z3.BoolRef]:
    """Constraints fixing names to plain Python values (None for unset, enum names as str)."""
    out = []
    for name, value in sorted(valuation.items()):
        term = symbols[name]
        if value is None:
            out.append(z3.Not(term.is_set))
            continue
        given = Term(TRUE, z3.IntVal(symbols.enums.code(value)), "enum") if term.kind == "enum" else literal(value)
        out.append(_and(term.is_set, term.value == given.value))
    return out


# ---------------------------------------------------------------- back to Python

def python_value(term: Term, model: z3.ModelRef, enums: EnumCodes, vtype: ValueType | None = None) -> Any:
    """The plain Python value of a term in a z3 model: None when unset, an enum's name as str."""
    encoded = term.value
    if term.kind == "none" or encoded is None or not z3.is_true(model.eval(term.is_set, model_completion=True)):
        return None
    if vtype is not None and _is_symbol(encoded) and model.get_interp(encoded.decl()) is None:
        # The query did not constrain this symbol: any value will do, so give one inside its domain.
        return ValueType(vtype.kind, vtype.lo, vtype.hi, vtype.values).default()
    value = model.eval(encoded, model_completion=True)
    if term.kind == "bool":
        return z3.is_true(value)
    if term.kind == "string":
        return string_of(value)
    if term.kind == "number":
        exact = value.as_fraction() if z3.is_rational_value(value) else Fraction(value.as_long())
        number = Decimal(exact.numerator) / Decimal(exact.denominator)
        if vtype is not None and vtype.kind == "number":
            number = number.quantize(vtype.step)
            if not vtype.admits(number):  # a symbol the query left free: any value of its domain will do
                return ValueType(vtype.kind, vtype.lo, vtype.hi, scale=vtype.scale).default()
        return number
    number = value.as_long()
    if term.kind == "enum":
        if 0 <= number < len(enums.names):
            return enums.names[number]
        return vtype.values[0] if vtype is not None else None  # unreachable when the domain was asserted
    return number


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def _floor(value: Fraction) -> int:
    return value.numerator // value.denominator


def _is_symbol(value: z3.ExprRef) -> bool:
    return z3.is_const(value) and value.decl().kind() == z3.Z3_OP_UNINTERPRETED


def model_to_valuation(model: z3.ModelRef, symbols: Scope, names: Iterable[str] | None = None) -> dict[str, Any]:
    """Plain Python values for the given names (default: every name of the scope) in a z3 model."""
    base = symbols.symbols
    chosen = sorted(names) if names is not None else sorted(symbols)
    out = {}
    for name in chosen:
        term = symbols[name] if name in symbols else NONE
        leaf = next(iter(term.leaves), None) if len(term.leaves) == 1 else None
        out[name] = python_value(term, model, base.enums, base.scope.get(leaf) if leaf is not None else None)
    return out


# ---------------------------------------------------------------- concrete search (before the solver)

def constants_of(exprs: Iterable[Expr]) -> list[Any]:
    """The literal values written in the expressions (enum values are all tried anyway), in order of appearance, without repeats."""
    seen: dict[Any, None] = {}
    for expr in exprs:
        for node in expr.walk():
            if isinstance(node, Lit) and node.value is not None:
                seen.setdefault((type(node.value), node.value), None)
    return [value for _, value in seen]


def candidates(vtype: ValueType, constants: list[Any]) -> list[Any]:
    """A few values of the type worth trying: its bounds, and each written constant with its neighbours."""
    if vtype.kind == "bool":
        found: list[Any] = [True, False]
    elif vtype.kind == "int":
        numbers = {b for b in (vtype.lo, vtype.hi) if b is not None} | {0}
        for c in constants:
            if isinstance(c, int) and not isinstance(c, bool):
                numbers.update((c - 1, c, c + 1))
        found = sorted(n for n in numbers if vtype.within(n))
    elif vtype.kind == "number":
        step = vtype.step
        points = {vtype.default()}
        points.update(b for b in (vtype.lo, vtype.hi) if b is not None)
        for c in constants:
            if isinstance(c, (int, Decimal)) and not isinstance(c, bool):
                on_grid = Decimal(c).quantize(step)
                points.update((on_grid - step, on_grid, on_grid + step))
        found = sorted(Decimal(p).quantize(step) for p in points if vtype.admits(Decimal(p).quantize(step)))
    elif vtype.kind == "enum":
        found = list(vtype.values)
    else:
        texts = [c for c in constants if isinstance(c, str)]
        fresh = "x"
        while fresh in texts:
            fresh += "x"
        found = list(dict.fromkeys(["", *texts, fresh]))
    return found + [None] if vtype.optional else found


def search(types: Mapping[str, ValueType], constants: list[Any], predicate: Callable[[dict[str, Any]], bool],
           limit: int = 64) -> dict[str, Any] | None:
    """A valuation of `types` that makes `predicate` true, found by trying candidate values; None if none was found.

    Cheap and sound (the predicate is mbt's own evaluator), but incomplete: None means "ask the solver".
    """
    names = sorted(types)
    pools = [candidates(types[n], constants) for n in names]
    total = 1
    for pool in pools:
        total *= len(pool)
    if total <= limit:
        tries: Iterable[tuple] = itertools.product(*pools)
    else:
        rng = random.Random(0)  # fixed seed: the same model always gives the same witness
        tries = (tuple(rng.choice(pool) for pool in pools) for _ in range(limit))
    for values in tries:
        valuation = dict(zip(names, values))
        if predicate(valuation):
            return valuation
    return None


# ---------------------------------------------------------------- solver

@dataclass
class Outcome:
    """The answer to one query: "sat" (with a model), "unsat", or "unknown" (timeout or an undecided theory)."""

    status: str
    model: z3.ModelRef | None = None

    @property
    def sat(self) -> bool:
        return self.status == "sat"

    @property
    def unsat(self) -> bool:
        return self.status == "unsat"


class Solver:
    """One z3 solver reused for many queries (push/pop), with answers cached under a caller-chosen key."""

    def __init__(self, timeout_ms: int = 5000):
        self._solver = z3.Solver()
        self._solver.set("timeout", timeout_ms)
        self._cache: dict[Hashable, Outcome] = {}
        self.queries = 0  # solver calls actually made (cache misses); for benchmarks and tests

    def check(self, conditions: list[Term], symbols: Scope, key: Hashable | None = None,
              want_model: bool = False) -> Outcome:
        """Are the conditions satisfiable together, within the domains of the symbols they use?

        Asking for the model costs time, so it is fetched only when wanted; a cached answer may lack one.
        """
        if key is not None and key in self._cache:
            cached = self._cache[key]
            if not (want_model and cached.sat and cached.model is None):
                return cached
        leaves: set[str] = set()
        for c in conditions:
            leaves |= c.leaves
        outcome = self.check_formulas([truth(c) for c in conditions] + symbols.symbols.domain(leaves), want_model)
        if key is not None:
            self._cache[key] = outcome
        return outcome

    def check_formulas(self, formulas: list[z3.BoolRef], want_model: bool = True) -> Outcome:
        self.queries += 1
        s = self._solver
        s.push()
        try:
            s.add(*formulas)
            result = s.check()
            if result == z3.sat:
                return Outcome("sat", s.model() if want_model else None)
            return Outcome("unsat" if result == z3.unsat else "unknown")
        finally:
            s.pop()
