"""Z3 encoding of a policy: each rule's value and the combining algorithm's decision, over typed request attributes.

Mirrors mbt/engine/policy.py exactly, and every witness is replayed through that evaluator by the callers. Two
modes: *complete* requests carry every attribute (the usual question: "which request makes ..."); *any* requests
may lack required attributes, each getting a `NAME?given` flag: a missing one is Indeterminate, and so is every
comparison, sum and `in` over an Indeterminate operand, while `and`/`or`/`not` follow Kleene's logic at any depth.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import z3

from mbt.analysis.smt import Symbols, Term, boolean, encode, model_to_valuation
from mbt.engine.policy import ref_names
from mbt.model.expr import And, Arith, Compare, Expr, Member, Not, Or, Ref
from mbt.model.policy import (
    DENY,
    INDETERMINATE_D,
    INDETERMINATE_DP,
    INDETERMINATE_P,
    NOT_APPLICABLE,
    PERMIT,
    PolicyModel,
)

TRUE, FALSE = z3.BoolVal(True), z3.BoolVal(False)
INDETERMINATE = "Indeterminate"  # any of the three extended values
TIMEOUT_MS = 5000


def any_of(items: list) -> z3.BoolRef:
    return z3.Or(items) if len(items) > 1 else (items[0] if items else FALSE)


def all_of(items: list) -> z3.BoolRef:
    return z3.And(items) if len(items) > 1 else (items[0] if items else TRUE)


@dataclass
class Answer:
    """One query: "sat" with the witness request, "unsat", or "unknown" (timeout)."""

    status: str
    request: dict[str, Any] | None = None
    missing: tuple[str, ...] = ()  # required attributes the witness leaves out (mode "any")

    @property
    def sat(self) -> bool:
        return self.status == "sat"

    @property
    def unsat(self) -> bool:
        return self.status == "unsat"


class PolicyEncoding:
    """One z3 solver holding the policy: domains, and per rule `applies` (A) and `indeterminate` (I) constants
    defined by their formulas; queries are assumptions on top, so the solver keeps what it learnt between them."""

    def __init__(self, model: PolicyModel, complete: bool = True, timeout_ms: int = TIMEOUT_MS):
        self.model, self.complete = model, complete
        self.scope = model.scope()
        self.symbols = Symbols(self.scope)
        self.required = frozenset(n for n, t in self.scope.items() if not t.optional)
        self.given = {} if complete else {n: z3.Bool(f"{n}?given") for n in sorted(self.required)}
        self.solver = z3.Solver()
        self.solver.set("timeout", timeout_ms)
        self.solver.add(*self.symbols.domain(set(self.scope)))
        # Each rule's formulas are used inline in the queries that need them (z3 shares equal subterms): asserting a
        # definition per rule would make every query carry the whole policy.
        self.applies: list[z3.BoolRef] = []
        self.indeterminate: list[z3.BoolRef] = []
        for rule in model.rules:
            applies, indet = self.rule_formulas(rule.target, rule.condition)
            self.applies.append(applies)
            self.indeterminate.append(FALSE if complete else indet)
        self._decisions: dict[str, z3.BoolRef] | None = None
        self.queries = 0

    # ---------------------------------------------------------------- three-valued conditions
    def tri(self, expr: Expr) -> tuple[z3.BoolRef, z3.BoolRef]:
        """(holds, fails): the condition is True / False; neither means Indeterminate. As compile_tri."""
        if isinstance(expr, (And, Or)):
            parts = [self.tri(item) for item in expr.items]
            trues, falses = [p[0] for p in parts], [p[1] for p in parts]
            if isinstance(expr, And):
                return all_of(trues), any_of(falses)
            return any_of(trues), all_of(falses)
        if isinstance(expr, Not):
            holds, fails = self.tri(expr.operand)
            return fails, holds
        if self.complete or not ref_names(expr) & self.required:
            value = encode(expr, self.symbols)
            return value, z3.Not(value)
        value, known = self._strict(expr)
        return z3.And(known, value), z3.And(known, z3.Not(value))

    def _strict(self, expr: Expr) -> tuple[z3.BoolRef, z3.BoolRef]:
        """An atom (a comparison, `in`, a boolean attribute): its two-valued formula, and when it is known — when
        every operand is, as comparisons, sums and `in` are Indeterminate on an Indeterminate operand. Each
        and/or/not inside it stands for its own three-valued value: a placeholder bound to `holds`, known where
        `holds` or `fails` is."""
        bound: dict[str, Term] = {}
        known: list[z3.BoolRef] = []

        def strip(node: Expr) -> Expr:
            if isinstance(node, (And, Or, Not)):
                holds, fails = self.tri(node)
                name = f"?part{len(bound)}"  # no attribute name has a `?`
                bound[name] = boolean(holds, frozenset())
                known.append(z3.Or(holds, fails))
                return Ref(name)
            if isinstance(node, Ref):
                if node.name in self.given:
                    known.append(self.given[node.name])
                return node
            if isinstance(node, (Compare, Arith)):
                return replace(node, left=strip(node.left), right=strip(node.right))
            if isinstance(node, Member):
                return replace(node, operand=strip(node.operand))
            return node  # a literal

        rebuilt = strip(expr)
        value = encode(rebuilt, self.symbols.view(values=bound) if bound else self.symbols)
        return value, all_of(known)

    def rule_formulas(self, target: Expr | None, condition: Expr | None) -> tuple[z3.BoolRef, z3.BoolRef]:
        """(applies, indeterminate) of a rule, as CompiledRule.value."""
        t_holds, t_fails = self.tri(target) if target is not None else (TRUE, FALSE)
        c_holds, c_fails = self.tri(condition) if condition is not None else (TRUE, FALSE)
        applies = all_of([f for f in (t_holds, c_holds) if f is not TRUE])
        if self.complete:
            return applies, FALSE
        t_unknown = z3.And(z3.Not(t_holds), z3.Not(t_fails))
        c_unknown = z3.And(z3.Not(c_holds), z3.Not(c_fails))
        return applies, z3.Or(t_unknown, z3.And(t_holds, c_unknown))

    def holds(self, expr: Expr) -> z3.BoolRef:
        return self.tri(expr)[0]

    # ---------------------------------------------------------------- the decision
    def rules_of(self, effect: str) -> list[int]:
        return [i for i, r in enumerate(self.model.rules) if r.effect == effect]

    def not_applicable(self, i: int) -> z3.BoolRef:
        return z3.And(z3.Not(self.applies[i]), z3.Not(self.indeterminate[i])) if not self.complete \
            else z3.Not(self.applies[i])

    def decisions(self) -> dict[str, z3.BoolRef]:
        """Decision name -> the formula that holds exactly when the policy decides it (as COMBINERS)."""
        if self._decisions is None:
            self._decisions = self._decision_formulas()
        return self._decisions

    def decision(self, name: str) -> z3.BoolRef:
        found = self.decisions()
        if name == INDETERMINATE:
            return any_of([found[INDETERMINATE_D], found[INDETERMINATE_P], found[INDETERMINATE_DP]])
        return found[name]

    def with_rule(self, i: int, applies: z3.BoolRef, indeterminate: z3.BoolRef) -> PolicyEncoding:
        """The same encoding with rule i's formulas replaced (a comparison of it the other way, say): decisions and
        decisive rules of the variant, in the same solver."""
        variant = copy.copy(self)
        variant.applies, variant.indeterminate = list(self.applies), list(self.indeterminate)
        variant.applies[i], variant.indeterminate[i] = applies, indeterminate
        variant._decisions = None
        return variant

    def depends_on(self, i: int, among: list[int] | None = None) -> z3.BoolRef:
        """Rule i applies and the decision would differ were it NotApplicable (a golden's decision can show it).
        `among` as for `decisive`: the other rules are NotApplicable whenever rule i applies."""
        keep = sorted(set(range(len(self.applies)) if among is None else among) | {i})
        now = self._decision_formulas(keep)
        then = self._decision_formulas([j for j in keep if j != i])
        return z3.And(self.applies[i], any_of([z3.And(now[d], z3.Not(then[d])) for d in sorted(now)]))

    def _decision_formulas(self, rules: list[int] | None = None) -> dict[str, z3.BoolRef]:
        """As COMBINERS, over the rules (indexes, in order; default all: the others are taken as NotApplicable)."""
        A, I = self.applies, self.indeterminate  # noqa: E741 - XACML's A(pplies) and I(ndeterminate)
        rules = list(range(len(A))) if rules is None else rules
        permits = [j for j in rules if self.model.rules[j].effect == "permit"]
        denies = [j for j in rules if self.model.rules[j].effect == "deny"]
        any_p, any_d = any_of([A[i] for i in permits]), any_of([A[i] for i in denies])
        ind_p, ind_d = any_of([I[i] for i in permits]), any_of([I[i] for i in denies])
        algorithm = self.model.algorithm
        out: dict[str, z3.BoolRef]
        if algorithm in ("deny-overrides", "permit-overrides"):
            win, win_ind, lose, lose_ind = (any_d, ind_d, any_p, ind_p) if algorithm == "deny-overrides" \
                else (any_p, ind_p, any_d, ind_d)
            win_name, lose_name = (DENY, PERMIT) if algorithm == "deny-overrides" else (PERMIT, DENY)
            win_ind_name, lose_ind_name = (INDETERMINATE_D, INDETERMINATE_P) if algorithm == "deny-overrides" \
                else (INDETERMINATE_P, INDETERMINATE_D)
            rest = z3.Not(win)
            out = {
                win_name: win,
                INDETERMINATE_DP: z3.And(rest, win_ind, z3.Or(lose_ind, lose)),
                win_ind_name: z3.And(rest, win_ind, z3.Not(lose_ind), z3.Not(lose)),
                lose_name: z3.And(rest, z3.Not(win_ind), lose),
                lose_ind_name: z3.And(rest, z3.Not(win_ind), z3.Not(lose), lose_ind),
                NOT_APPLICABLE: z3.And(rest, z3.Not(win_ind), z3.Not(lose), z3.Not(lose_ind)),
            }
        elif algorithm == "first-applicable":
            parts: dict[str, list] = {PERMIT: [], DENY: [], INDETERMINATE_P: [], INDETERMINATE_D: []}
            before: list[z3.BoolRef] = []  # every earlier rule is NotApplicable
            for i in rules:
                prefix = all_of(list(before))
                permit = self.model.rules[i].effect == "permit"
                parts[PERMIT if permit else DENY].append(z3.And(prefix, A[i]) if before else A[i])
                if not self.complete:
                    parts[INDETERMINATE_P if permit else INDETERMINATE_D].append(z3.And(prefix, I[i]))
                before.append(self.not_applicable(i))
            out = {name: any_of(items) for name, items in parts.items()}
            out[INDETERMINATE_DP] = FALSE
            out[NOT_APPLICABLE] = all_of(before)
        elif algorithm == "only-one-applicable":
            counted = [z3.Or(A[i], I[i]) if not self.complete else A[i] for i in rules]
            one = z3.AtMost(*counted, 1) if len(counted) > 1 else TRUE
            out = {
                PERMIT: z3.And(one, any_p), DENY: z3.And(one, any_d),
                INDETERMINATE_P: z3.And(one, ind_p), INDETERMINATE_D: z3.And(one, ind_d),
                INDETERMINATE_DP: z3.Not(one), NOT_APPLICABLE: z3.Not(any_of(counted)),
            }
        elif algorithm == "deny-unless-permit":
            out = {PERMIT: any_p, DENY: z3.Not(any_p)}
        else:  # permit-unless-deny
            out = {DENY: any_d, PERMIT: z3.Not(any_d)}
        for name in (PERMIT, DENY, NOT_APPLICABLE, INDETERMINATE_D, INDETERMINATE_P, INDETERMINATE_DP):
            out.setdefault(name, FALSE)
        return out

    def decisive(self, i: int, among: list[int] | None = None) -> z3.BoolRef:
        """Rule i applies and is among the rules that decide (policy_eval's `reasons`). `among` limits the other
        rules considered to those that can apply together with it (the others are NotApplicable whenever it
        applies, so leaving them out changes nothing and keeps the formula small)."""
        A, I = self.applies, self.indeterminate  # noqa: E741 - XACML's A(pplies) and I(ndeterminate)
        rule = self.model.rules[i]
        algorithm = self.model.algorithm
        others = [j for j in (range(len(A)) if among is None else among) if j != i]
        if algorithm in ("deny-overrides", "permit-overrides"):
            strong = "deny" if algorithm == "deny-overrides" else "permit"
            if rule.effect == strong:
                return A[i]
            rivals = [j for j in others if self.model.rules[j].effect == strong]
            return all_of([A[i]] + [z3.Not(A[j]) for j in rivals] + [z3.Not(I[j]) for j in rivals
                                                                      if not self.complete])
        if algorithm == "first-applicable":
            return all_of([A[i]] + [self.not_applicable(j) for j in others if j < i])
        if algorithm == "only-one-applicable":
            return all_of([A[i]] + [self.not_applicable(j) for j in others])
        strong = "permit" if algorithm == "deny-unless-permit" else "deny"
        if rule.effect == strong:
            return A[i]
        return all_of([A[i]] + [z3.Not(A[j]) for j in others if self.model.rules[j].effect == strong])

    # ---------------------------------------------------------------- solving
    def check(self, *conditions: z3.BoolRef) -> Answer:
        """Can the conditions hold together for some request? The witness is a request (plain values)."""
        self.queries += 1
        result = self.solver.check(*conditions)
        if result == z3.unsat:
            return Answer("unsat")
        if result != z3.sat:
            return Answer("unknown")
        model = self.solver.model()
        request = model_to_valuation(model, self.symbols, set(self.scope))
        missing = tuple(sorted(n for n, flag in self.given.items()
                               if not z3.is_true(model.eval(flag, model_completion=True))))
        for name in missing:
            request.pop(name, None)
        return Answer("sat", request, missing)
