"""Policy elements per criterion: rule (applicable, decisive), conflict, effect per action, boundary at precision."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from mbt.elements.base import Element, built, element_from
from mbt.model.common import SEVERITY_WEIGHT, Severity
from mbt.model.expr import Compare, Expr, Lit, Ref, atoms
from mbt.model.policy import DENY, PERMIT, PolicyModel, Rule
from mbt.model.types import ValueType

CRITERIA = ("rule", "conflict", "effect", "boundary")
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def applicable_id(rule: Rule) -> str:
    return f"rule:{rule.name}:applicable"


def decisive_id(rule: Rule) -> str:
    return f"rule:{rule.name}:decisive"


def conflict_id(first: Rule, second: Rule) -> str:
    return f"conflict:{first.name}|{second.name}"


def effect_id(action: str | None, decision: str) -> str:
    word = decision.lower()
    return f"effect:{action}:{word}" if action is not None else f"effect:{word}"


@dataclass(frozen=True)
class Boundary:
    """One point of a two-value boundary: `left - right` (right None: `left`) equals `value`, where the comparison
    of the rule is `holds` (True on the side where it holds). Values sit on the precision's grid."""

    rule: str
    left: str
    right: str | None
    value: Decimal | int
    holds: bool
    atom: str  # the comparison, as written
    # Every comparison of the rule that gives this point: ("target" | "condition", its index in `atoms` order).
    occurrences: tuple[tuple[str, int], ...] = ()

    @property
    def id(self) -> str:
        what = self.left if self.right is None else f"{self.left}-{self.right}"
        return f"boundary:{self.rule}:{what}={self.value}"


def boundaries(model: PolicyModel) -> list[Boundary]:
    """Two points per ordering comparison of a numeric attribute with a constant or with another numeric
    attribute, in rules' targets and conditions: the closest values on either side of the edge at the declared
    precision (`amount > 1000` at 0.01: 1000.00 is false, 1000.01 true; `n >= 18` for a whole number: 17, 18)."""
    found: dict[str, Boundary] = {}
    types = model.scope()
    for rule in model.rules:
        for where, part in (("target", rule.target), ("condition", rule.condition)):
            if part is None:
                continue
            for k, atom in enumerate(atoms(part)):
                for point in _points(rule, atom, types):
                    first = found.setdefault(point.id, point)
                    found[point.id] = replace(first, occurrences=first.occurrences + ((where, k),))
    return list(found.values())


def _points(rule: Rule, atom: Expr, types: dict[str, ValueType]) -> list[Boundary]:
    if not isinstance(atom, Compare) or atom.op not in FLIP:
        return []
    left, op, right = atom.left, atom.op, atom.right
    if isinstance(left, Lit) and isinstance(right, Ref):
        left, op, right = right, FLIP[op], left
    if not isinstance(left, Ref) or types.get(left.name) is None or types[left.name].kind not in ("int", "number"):
        return []
    if isinstance(right, Lit) and isinstance(right.value, (int, Decimal)) and not isinstance(right.value, bool):
        edge, other, scale = Decimal(right.value), None, types[left.name].scale
    elif isinstance(right, Ref) and types.get(right.name) is not None and types[right.name].kind in ("int", "number"):
        edge, other, scale = Decimal(0), right.name, max(types[left.name].scale, types[right.name].scale)
    else:
        return []
    step = Decimal(1).scaleb(-scale)
    below = (edge / step).to_integral_value(ROUND_FLOOR) * step  # largest grid value <= edge
    above = (edge / step).to_integral_value(ROUND_CEILING) * step  # smallest grid value >= edge
    if op == ">":
        pairs = [(below, False), (below + step, True)]
    elif op == ">=":
        pairs = [(above - step, False), (above, True)]
    elif op == "<":
        pairs = [(above - step, True), (above, False)]
    else:  # <=
        pairs = [(below, True), (below + step, False)]
    text = atom.text()
    return [Boundary(rule.name, left.name, other, _shown(v, scale), holds, text) for v, holds in pairs]


def _shown(value: Decimal, scale: int) -> Decimal | int:
    return int(value) if scale == 0 else value.quantize(Decimal(1).scaleb(-scale))


def enumerate_policy(model: PolicyModel, analysis=None) -> list[Element]:
    """Every element of the policy in a stable order; with an analysis (mbt/analysis/policy_checks.py), conflict
    elements for the pairs that can apply together and the reason why no request covers an infeasible element."""
    name, out = model.name, []
    never_applies: set[str] = set()
    never_decisive: set[str] = set()
    never_matters: set[str] = set()  # applies, but no decision depends on it: no golden can verify that it applies
    if analysis is not None:
        for i, rule in enumerate(model.rules):
            if analysis.applicable[i].unsat:
                never_applies.add(rule.name)
            elif i in analysis.decisive and analysis.decisive[i].unsat:
                never_decisive.add(rule.name)
                if analysis.applicable_matters[i].unsat:
                    never_matters.add(rule.name)
    for rule in model.rules:
        applicable = element_from(name, "policy", "rule", applicable_id(rule),
                                  f"{rule.effect} {rule.name} applies", rule)
        decisive = element_from(name, "policy", "rule", decisive_id(rule),
                                f"{rule.effect} {rule.name} decides the request ({model.algorithm})", rule)
        if rule.name in never_applies:
            for e in (applicable, decisive):
                e.feasible, e.reason = False, "no request makes the rule apply (mbt check: POL001)"
        elif rule.name in never_decisive:
            decisive.feasible, decisive.reason = False, "the rule never decides: it is always overridden or " \
                                                        "shadowed where it applies (mbt check: POL003)"
            if rule.name in never_matters:
                applicable.feasible, applicable.reason = False, "no decision depends on the rule: wherever it " \
                    "applies, the decision is the same without it, so no golden can verify it (mbt check: POL003)"
        out += [applicable, decisive]
    if analysis is not None:
        rules = model.rules
        for c in analysis.conflicts:
            first, second = rules[c.first], rules[c.second]
            severity = max((r.severity or Severity.medium for r in (first, second)), key=SEVERITY_WEIGHT.__getitem__)
            out.append(built(conflict_id(first, second), name, "policy", "conflict",
                             f"{first.effect} {first.name} and {second.effect} {second.name} both apply: "
                             f"{_resolution(model, first, second)}",
                             second.loc, second.span, second.status, severity, SEVERITY_WEIGHT[severity]))
    action = model.action_attribute()
    values = list(action.type.values) if action is not None else [None]
    for value in values:
        for decision in (PERMIT, DENY):
            where = f"`{action.qualified} = {value}` " if action is not None else ""
            element = element_from(name, "policy", "effect", effect_id(value, decision),
                                   f"a {where}request is {'permitted' if decision == PERMIT else 'denied'}",
                                   action if action is not None else model)
            if analysis is not None:
                answer = analysis.decision_possible(decision, value)
                if answer.unsat:
                    element.feasible, element.reason = False, f"no request {where}gets {decision}"
            out.append(element)
    types = model.scope()
    rules_by_name = {rule.name: rule for rule in model.rules}
    for point in boundaries(model):
        what = point.left if point.right is None else f"{point.left} - {point.right}"
        element = element_from(name, "policy", "boundary", point.id,
                               f"{point.rule}: `{point.atom}` at {what} = {point.value} "
                               f"({'holds' if point.holds else 'fails'})", rules_by_name[point.rule])
        reason = _outside(point, types)
        if reason is None and analysis is not None and analysis.boundary_verifiable(point).unsat:
            reason = (f"no request on {what} = {point.value} can verify it: wherever a request sits there, "
                      f"`{point.atom}` the other way changes neither the decision nor its deciding rules (the "
                      "rule's target fails elsewhere, or other rules decide anyway)")
        if reason is not None:
            element.feasible, element.reason = False, reason
        out.append(element)
    return out


def _resolution(model: PolicyModel, first: Rule, second: Rule) -> str:
    algorithm = model.algorithm
    if algorithm == "first-applicable":
        return f"the earlier {first.name} wins unless a rule before it applies"
    if algorithm == "only-one-applicable":
        return "Indeterminate (only-one-applicable)"
    winner = {"deny-overrides": "deny", "permit-overrides": "permit", "deny-unless-permit": "permit",
              "permit-unless-deny": "deny"}[algorithm]
    return f"{winner} wins ({algorithm})"


def _outside(point: Boundary, types: dict[str, ValueType]) -> str | None:
    """Why the point cannot be requested (outside the declared range), or None."""
    lo_hi: list[tuple[Decimal | None, Decimal | None]] = []
    for attr in (point.left, point.right):
        if attr is None:
            lo_hi.append((Decimal(0), Decimal(0)))
            continue
        t = types[attr]
        lo_hi.append((None if t.lo is None else Decimal(t.lo), None if t.hi is None else Decimal(t.hi)))
    (a_lo, a_hi), (b_lo, b_hi) = lo_hi
    low = None if a_lo is None or b_hi is None else a_lo - b_hi
    high = None if a_hi is None or b_lo is None else a_hi - b_lo
    if (low is not None and point.value < low) or (high is not None and point.value > high):
        what = point.left if point.right is None else f"{point.left} - {point.right}"
        return f"{what} = {point.value} is outside the declared range"
    return None
