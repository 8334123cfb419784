"""The policy evaluator (XACML 3.0): rule values in three-valued logic, the six combining algorithms, the reason.

A request is a flat dict from qualified attribute names (`subject.role`) to plain values (str, bool, int, Decimal,
None). A required attribute (declared without `?`) that the request lacks is Indeterminate, and so is every
comparison, sum, difference, `in` and `not` with an Indeterminate operand; an optional one that it lacks is `none`.
`and` is False when any part is False, else Indeterminate when any part is, else True (`or` dually): Kleene's logic,
at any depth (`(a or b) == true` is True when `a` is), so the result never depends on the order of the parts.

A rule's value (XACML 3.0, 7.11): its target NoMatch -> NotApplicable; target Indeterminate -> Indeterminate{P} for
a permit rule, {D} for a deny rule, whatever its condition; target Match -> its effect if the condition is True,
NotApplicable if False, Indeterminate{P|D} if Indeterminate. The combining algorithms follow XACML 3.0 Appendix C
with the extended Indeterminate values; only-one-applicable (defined by XACML for policies, by their targets) is
applied to rules by their values: a rule counts when its value is not NotApplicable.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mbt.model.expr import And, Arith, Compare, EnumLit, Expr, Lit, Member, Not, Or, Ref, compile_expr
from mbt.model.policy import (
    DENY,
    INDETERMINATE_D,
    INDETERMINATE_DP,
    INDETERMINATE_P,
    NOT_APPLICABLE,
    PERMIT,
    PolicyModel,
)

# A rule's value: "applies" (its effect), "na" (NotApplicable), "indeterminate" (Indeterminate{P} or {D}).
APPLIES, NA, INDET = "applies", "na", "indeterminate"

Tri = Callable[[dict], "bool | None"]  # True, False, or None for Indeterminate


@dataclass(frozen=True)
class Outcome:
    """The policy's decision for one request, the rules that decided it, and every rule's value."""

    decision: str  # Permit, Deny, NotApplicable, Indeterminate{D}, Indeterminate{P}, Indeterminate{DP}
    reasons: tuple[str, ...]  # the deciding rules (see `reasons` below), in declaration order
    values: dict[str, str]  # rule name -> APPLIES or INDET, for the rules that are not NotApplicable
    missing: tuple[str, ...] = ()  # required attributes the request lacks that an Indeterminate rule reads

    def value(self, rule: str) -> str:
        return self.values.get(rule, NA)

    @property
    def decisive(self) -> tuple[str, ...]:
        """The rules whose effect is the decision (none for NotApplicable, Indeterminate or a default)."""
        return self.reasons if self.decision in (PERMIT, DENY) else ()

    @property
    def applying(self) -> list[str]:
        return [name for name, value in self.values.items() if value == APPLIES]

    @property
    def indeterminate(self) -> bool:
        return self.decision.startswith("Indeterminate")


def ref_names(expr: Expr) -> set[str]:
    return {node.name for node in expr.walk() if isinstance(node, Ref)}


def compile_tri(expr: Expr, required: frozenset[str]) -> Tri:
    """Three-valued closure: True, False, or None for Indeterminate (see the module docstring)."""
    if isinstance(expr, (And, Or)):
        parts = [compile_tri(item, required) for item in expr.items]
        stop, other = (False, True) if isinstance(expr, And) else (True, False)

        def junction(env: dict) -> bool | None:
            unknown = False
            for part in parts:
                value = part(env)
                if value is stop:
                    return stop
                if value is None:
                    unknown = True
            return None if unknown else other

        return junction
    if isinstance(expr, Not):
        inner = compile_tri(expr.operand, required)

        def negation(env: dict) -> bool | None:
            value = inner(env)
            return None if value is None else not value

        return negation
    # An atom: with every required attribute it reads present nothing in it is Indeterminate, and the two-valued
    # closure is exact (and fast); otherwise its value is worked out in three-valued logic.
    atom = compile_expr(expr)
    needed = tuple(sorted(ref_names(expr) & required))
    if not needed:
        return lambda env: bool(atom(env))
    slow = compile_value(expr, required)

    def three_valued(env: dict) -> bool | None:
        value = slow(env)
        return None if value is UNKNOWN else bool(value)

    if len(needed) == 1:
        (only,) = needed
        return lambda env: bool(atom(env)) if only in env else three_valued(env)

    def several(env: dict) -> bool | None:
        for name in needed:
            if name not in env:
                return three_valued(env)
        return bool(atom(env))

    return several


UNKNOWN = object()  # an Indeterminate value inside an expression
_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def compile_value(expr: Expr, required: frozenset[str]) -> Callable[[dict], Any]:
    """Any expression's value in three-valued logic: UNKNOWN where XACML gives Indeterminate, else what compile_expr
    gives (an unset optional is None: equal only to `none`, never ordered, false as a condition)."""
    if isinstance(expr, (Lit, EnumLit)):
        constant = expr.value
        return lambda env: constant
    if isinstance(expr, Ref):
        name = expr.name
        if name in required:
            return lambda env: env[name] if name in env else UNKNOWN
        return lambda env: env.get(name)
    if isinstance(expr, (And, Or)):
        parts = [compile_value(item, required) for item in expr.items]
        stop = isinstance(expr, Or)  # the truth value that decides the junction: True for `or`, False for `and`

        def junction(env: dict):
            unknown = False
            for part in parts:
                value = part(env)
                if value is UNKNOWN:
                    unknown = True
                elif bool(value) is stop:
                    return stop
            return UNKNOWN if unknown else not stop

        return junction
    if isinstance(expr, Not):
        inner = compile_value(expr.operand, required)
        return lambda env: (lambda v: UNKNOWN if v is UNKNOWN else not v)(inner(env))
    if isinstance(expr, Member):
        operand = compile_value(expr.operand, required)
        values = frozenset(_literal(item) for item in expr.items)
        negated = expr.negated
        return lambda env: (lambda v: UNKNOWN if v is UNKNOWN else (v in values) != negated)(operand(env))
    if isinstance(expr, (Compare, Arith)):
        left, right = compile_value(expr.left, required), compile_value(expr.right, required)
        op = expr.op

        def strict(env: dict):
            a, b = left(env), right(env)
            if a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            if op == "==":
                return a == b
            if op == "!=":
                return a != b
            if a is None or b is None:  # an unset optional: never ordered, and `+`/`-` of it is none
                return False if op in _ORDER else None
            if op in _ORDER:
                return _ORDER[op](a, b)
            return a + b if op == "+" else a - b

        return strict
    raise TypeError(f"cannot compile {type(expr).__name__}")


def rule_value(target: Tri | None, condition: Tri | None) -> Callable[[dict], str]:
    """A rule's value as one closure (XACML 3.0, 7.11): target first, then condition."""
    if target is None and condition is None:
        return lambda env: APPLIES
    if target is None or condition is None:
        only = target if target is not None else condition
        assert only is not None
        def single(env: dict) -> str:
            holds = only(env)
            return APPLIES if holds else (NA if holds is False else INDET)

        return single

    def both(env: dict) -> str:
        matched = target(env)
        if matched is None:
            return INDET
        if not matched:
            return NA
        holds = condition(env)
        return APPLIES if holds else (NA if holds is False else INDET)

    return both


@dataclass
class CompiledRule:
    index: int
    name: str
    effect: str  # permit | deny
    target_expr: Expr | None
    condition_expr: Expr | None
    required: frozenset[str]
    reads: frozenset[str]  # required attributes it reads (for `missing`)

    def __post_init__(self) -> None:
        self._without: dict[frozenset[str], Callable[[dict], str]] = {}
        self._flipped: dict[tuple[str, int, bool], Callable[[dict], str]] = {}
        self.value = self.value_without(frozenset())

    def value_without(self, known: frozenset[str]) -> Callable[[dict], str]:
        """The value function with the `==` / `in` conjuncts on `known` attributes left out of the gate (the
        target, or the condition when there is no target): the index has already found them true."""
        cached = self._without.get(known)
        if cached is not None:
            return cached
        target, condition = self.target_expr, self.condition_expr
        if known:
            if target is not None:
                target = _drop_gates(target, known)
            elif condition is not None:
                condition = _drop_gates(condition, known)
        fn = rule_value(compile_tri(target, self.required) if target is not None else None,
                        compile_tri(condition, self.required) if condition is not None else None)
        if known:
            self._without[known] = fn
        return fn

    def value_flipped(self, part: str, k: int, truth: bool) -> Callable[[dict], str]:
        """The value function with atom `k` (in `atoms` order) of the target or the condition (`part`) replaced by
        the constant `truth`: what the rule would be were that one comparison the other way."""
        key = (part, k, truth)
        flipped = self._flipped
        if key not in flipped:
            target, condition = self.target_expr, self.condition_expr
            if part == "target" and target is not None:
                target = replace_atom(target, k, truth)
            elif part != "target" and condition is not None:
                condition = replace_atom(condition, k, truth)
            flipped[key] = rule_value(compile_tri(target, self.required) if target is not None else None,
                                      compile_tri(condition, self.required) if condition is not None else None)
        return flipped[key]


def replace_atom(expr: Expr, k: int, truth: bool) -> Expr:
    """`expr` with its atom number k (in `atoms` order: through and/or/not, left to right) replaced by a literal."""
    counter = [0]

    def walk(node: Expr) -> Expr:
        if isinstance(node, (And, Or)):
            return type(node)(tuple(walk(item) for item in node.items))
        if isinstance(node, Not):
            return Not(walk(node.operand))
        index, counter[0] = counter[0], counter[0] + 1
        return Lit(truth) if index == k else node

    return walk(expr)


class PolicyEvaluator:
    """A policy compiled for fast evaluation: closures per rule, and an index that skips rules which cannot apply."""

    def __init__(self, model: PolicyModel):
        self.model = model
        self.algorithm = model.algorithm
        required = frozenset(name for name, a in model.attributes.items() if not a.type.optional)
        self.required = required
        self.rules = []
        for i, rule in enumerate(model.rules):
            reads = set()
            for part in (rule.target, rule.condition):
                if part is not None:
                    reads |= ref_names(part)
            self.rules.append(CompiledRule(i, rule.name, rule.effect, rule.target, rule.condition, required,
                                           frozenset(reads & required)))
        self.by_name = {r.name: r for r in self.rules}
        self._combine = COMBINERS[self.algorithm]
        self._build_index(model)

    # ---- index
    def _build_index(self, model: PolicyModel) -> None:
        """Rules keyed by values some attributes must have for them to apply (from `==` / `in` conjuncts of the
        target, or of the condition when there is no target): a request with other values skips them, since a
        False conjunct makes the whole conjunction False, so they are NotApplicable for it. Up to three attributes,
        the most gated first; the rule list of each combination of their values is built on first use."""
        self.gates: list[dict[str, frozenset]] = []
        counts: dict[str, int] = {}
        for rule in model.rules:
            gate = rule.target if rule.target is not None else rule.condition
            found = value_gates(gate, self.required) if gate is not None else {}
            self.gates.append(found)
            for name in found:
                counts[name] = counts.get(name, 0) + 1
        ranked = sorted(counts, key=lambda n: (-counts[n], n))
        self.index_attributes = tuple(n for n in ranked[:3] if counts[n] >= 2)
        self.index_attribute = self.index_attributes[0] if self.index_attributes else None
        self._by_key: dict[tuple, list[tuple[CompiledRule, Callable]]] = {}
        self._all = [(r, r.value) for r in self.rules]

    def candidates(self, request: dict) -> list[tuple[CompiledRule, Callable]]:
        """The rules that may apply to the request, each with the value function to use for it."""
        names = self.index_attributes
        if not names:
            return self._all
        key = tuple(request.get(n, _ABSENT) for n in names)
        try:
            found = self._by_key.get(key)
        except TypeError:  # an unhashable value (a malformed request): no shortcut
            return self._all
        if found is None:
            if len(self._by_key) > 100_000:  # values outside every domain, request after request: stop caching
                self._by_key.clear()
            present = frozenset(n for n, v in zip(names, key) if v is not _ABSENT)
            found = []
            for r in self.rules:
                gates = self.gates[r.index]
                if all(v is _ABSENT or n not in gates or member(v, gates[n]) for n, v in zip(names, key)):
                    known = present.intersection(gates)
                    found.append((r, r.value_without(known) if known else r.value))
            self._by_key[key] = found
        return found

    # ---- evaluation
    def evaluate(self, request: dict[str, Any]) -> Outcome:
        values = {}
        evaluated = []
        for rule, value_of in self.candidates(request):
            value = value_of(request)
            if value != NA:
                values[rule.name] = value
                evaluated.append((rule, value))
        decision, reasons = self._combine(evaluated)
        missing: tuple[str, ...] = ()
        if any(value == INDET for _, value in evaluated):
            absent = set()
            for rule, value in evaluated:
                if value == INDET:
                    absent |= {name for name in rule.reads if name not in request}
            missing = tuple(sorted(absent))
        return Outcome(decision, tuple(r.name for r in reasons), values, missing)

    def combine(self, values: dict[str, str]) -> tuple[str, tuple[str, ...]]:
        """The decision and deciding rules for given rule values (name -> APPLIES or INDET; absent: NotApplicable),
        e.g. an outcome's values with one rule changed: what the decision would have been."""
        evaluated = [(self.by_name[n], v) for n, v in values.items() if v != NA]
        if any(a[0].index > b[0].index for a, b in zip(evaluated, evaluated[1:])):
            evaluated.sort(key=lambda rv: rv[0].index)  # first-applicable reads the rules in declaration order
        decision, reasons = self._combine(evaluated)
        return decision, tuple(r.name for r in reasons)


_ABSENT = object()  # an indexed attribute the request lacks: every rule stays a candidate


def member(value: Any, allowed: frozenset) -> bool:
    # `True in {1}` holds in Python; a bool is never an int value here, and the evaluator must not shortcut it.
    if isinstance(value, bool):
        return any(a is value for a in allowed)
    return value in allowed


def _literal(expr: Expr) -> Any:
    """The value of a literal (a set member in a policy is always one: the resolver checks it)."""
    assert isinstance(expr, (Lit, EnumLit)), expr
    return expr.value


def _gate_of(part: Expr) -> tuple[str | None, frozenset | None]:
    """(attribute, allowed values) when the conjunct is `attribute == literal` or `attribute in {literals}`."""
    if isinstance(part, Compare) and part.op == "==":
        for ref, value in ((part.left, part.right), (part.right, part.left)):
            if isinstance(ref, Ref) and isinstance(value, (Lit, EnumLit)):
                return ref.name, frozenset([_literal(value)])
    elif isinstance(part, Member) and not part.negated and isinstance(part.operand, Ref):
        if all(isinstance(i, (Lit, EnumLit)) for i in part.items):
            return part.operand.name, frozenset(_literal(i) for i in part.items)
    return None, None


def _drop_gates(expr: Expr, known: frozenset[str]) -> Expr | None:
    """`expr` without its top-level gate conjuncts on `known` attributes (None when nothing is left)."""
    parts = expr.items if isinstance(expr, And) else (expr,)
    kept = tuple(p for p in parts if _gate_of(p)[0] not in known)
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else And(kept)


def value_gates(expr: Expr, required: frozenset[str]) -> dict[str, frozenset]:
    """attribute -> the values it must have for `expr` to hold, from its top-level `==` / `in` conjuncts."""
    parts = expr.items if isinstance(expr, And) else (expr,)
    out: dict[str, frozenset] = {}
    for part in parts:
        name, allowed = _gate_of(part)
        if name is not None and allowed is not None and name in required:
            out[name] = out[name] & allowed if name in out else allowed
    return out


# ---------------------------------------------------------------- combining algorithms
# Each takes the rules whose value is not NotApplicable, in declaration order, as (rule, value) pairs, and returns
# the decision and the deciding rules. The deciding rules are those that hold the decision: every applying rule of
# the winning effect for the overrides algorithms (as Cedar reports its determining policies), the first for
# first-applicable, the one for only-one-applicable, the Indeterminate rules for an Indeterminate decision; none
# when the decision is NotApplicable or a default (deny-unless-permit with no rule applying).

Evaluated = list[tuple[CompiledRule, str]]


def _split(evaluated: Evaluated):
    permits = [r for r, v in evaluated if v == APPLIES and r.effect == "permit"]
    denies = [r for r, v in evaluated if v == APPLIES and r.effect == "deny"]
    ind_p = [r for r, v in evaluated if v == INDET and r.effect == "permit"]
    ind_d = [r for r, v in evaluated if v == INDET and r.effect == "deny"]
    return permits, denies, ind_p, ind_d


def deny_overrides(evaluated: Evaluated):
    permits, denies, ind_p, ind_d = _split(evaluated)
    if denies:
        return DENY, denies
    if ind_d and (ind_p or permits):
        return INDETERMINATE_DP, _in_order(ind_d + ind_p)
    if ind_d:
        return INDETERMINATE_D, ind_d
    if permits:
        return PERMIT, permits
    if ind_p:
        return INDETERMINATE_P, ind_p
    return NOT_APPLICABLE, []


def permit_overrides(evaluated: Evaluated):
    permits, denies, ind_p, ind_d = _split(evaluated)
    if permits:
        return PERMIT, permits
    if ind_p and (ind_d or denies):
        return INDETERMINATE_DP, _in_order(ind_p + ind_d)
    if ind_p:
        return INDETERMINATE_P, ind_p
    if denies:
        return DENY, denies
    if ind_d:
        return INDETERMINATE_D, ind_d
    return NOT_APPLICABLE, []


def first_applicable(evaluated: Evaluated):
    if not evaluated:
        return NOT_APPLICABLE, []
    rule, value = evaluated[0]
    if value == APPLIES:
        return (PERMIT if rule.effect == "permit" else DENY), [rule]
    return (INDETERMINATE_P if rule.effect == "permit" else INDETERMINATE_D), [rule]


def only_one_applicable(evaluated: Evaluated):
    if not evaluated:
        return NOT_APPLICABLE, []
    if len(evaluated) > 1:
        return INDETERMINATE_DP, [r for r, _ in evaluated]
    return first_applicable(evaluated)


def deny_unless_permit(evaluated: Evaluated):
    permits, denies, _, _ = _split(evaluated)
    if permits:
        return PERMIT, permits
    return DENY, denies


def permit_unless_deny(evaluated: Evaluated):
    permits, denies, _, _ = _split(evaluated)
    if denies:
        return DENY, denies
    return PERMIT, permits


def _in_order(rules: list[CompiledRule]) -> list[CompiledRule]:
    return sorted(rules, key=lambda r: r.index)


COMBINERS = {
    "deny-overrides": deny_overrides,
    "permit-overrides": permit_overrides,
    "first-applicable": first_applicable,
    "only-one-applicable": only_one_applicable,
    "deny-unless-permit": deny_unless_permit,
    "permit-unless-deny": permit_unless_deny,
}


def evaluate(model: PolicyModel, request: dict[str, Any]) -> Outcome:
    """Evaluate one request (compiles the policy each time: use PolicyEvaluator for many requests)."""
    return PolicyEvaluator(model).evaluate(request)
