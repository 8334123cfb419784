"""Static checks of an ABAC policy with z3: rules that never or always apply, rules never decisive, conflicts, gaps,
declared properties; every witness request is replayed through the evaluator (mbt/engine/policy.py) first."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from typing import Any, TypeGuard

import z3

from mbt.analysis.findings import Check, Finding, check
from mbt.analysis.policy_smt import INDETERMINATE, Answer, PolicyEncoding
from mbt.analysis.smt import candidates, constants_of
from mbt.elements.policy import Boundary
from mbt.engine.policy import APPLIES, NA, Outcome, PolicyEvaluator, compile_tri, ref_names, replace_atom, value_gates
from mbt.model.common import Location
from mbt.model.expr import Lit, atoms
from mbt.model.policy import NOT_APPLICABLE, Assertion, PolicyModel, Rule

# Check(code, name, severity, doc), registered in mbt.analysis.findings.CHECKS; stable, documented with a bad and a
# good example each in docs/checks.md (doc: its first sentence there).
RULE_NEVER_APPLIES = check("POL001", "rule-never-applies", "error",
                           "No request satisfies the rule's target and condition together (within the declared "
                           "types), so the rule never takes part in a decision and no golden can cover it.")
RULE_ALWAYS_APPLIES = check("POL002", "rule-always-applies", "warning",
                            "The rule has a target or a condition, yet it holds for every request: the condition "
                            "does not restrict anything (often a wrong bound or a tautology).")
RULE_NEVER_DECISIVE = check("POL003", "rule-never-decisive", "warning",
                            "The rule can apply, but whenever it does the decision is made by other rules: a permit "
                            "always overridden by a deny (deny-overrides), a rule shadowed by earlier ones "
                            "(first-applicable), a rule that always meets another one (Indeterminate under "
                            "only-one-applicable), a deny always beaten by a permit (deny-unless-permit).")
RULES_CONFLICT = check("POL004", "rules-conflict", "info",
                       "A permit and a deny rule both apply to one request; the message says which effect wins under "
                       "the combining algorithm (for first-applicable, the earlier rule) and what the policy decides "
                       "at the witness.")
RULES_OVERLAP = check("POL005", "rules-overlap", "error",
                      "Under only-one-applicable two rules (of any effect) apply to one request, which makes the "
                      "decision Indeterminate{DP}.")
POLICY_GAP = check("POL006", "policy-gap", "warning",
                   "Some complete requests are NotApplicable: no rule applies, and the enforcement point has to "
                   "decide on its own.")
PROPERTY_REFUTED = check("POL007", "property-refuted", "error",
                         "A declared property does not hold.")
PROPERTY_PROVED = check("POL008", "property-proved", "info",
                        "The declared property holds: for every request, with or without all its attributes "
                        "(`never`), or for every complete request (`always`).")
UNUSED_ATTRIBUTE = check("POL009", "unused-attribute", "info",
                         "An attribute that no rule and no assert reads.")
ENFORCED_FSM_MISSING = check("POL010", "enforced-fsm-not-loaded", "warning",
                             "An `enforce call TOOL in FSM` block names an FSM that is not among the models read, so "
                             "the link is not checked and conversation goldens are not checked against the policy.")
ENFORCED_TOOL_NEVER_CALLED = check("POL011", "enforced-tool-never-called", "warning",
                                   "The FSM that an `enforce` block names never calls the tool, so no conversation "
                                   "is checked against the policy (a typo in the tool's name, usually).")

# Whether a tidier witness still shows what the original one did (the evaluator's verdict on it).
Keeps = Callable[[dict[str, Any]], bool]

REPLAY_FAILED = " (the solver's witness did not replay on mbt's evaluator; this is an mbt bug, please report it)"
WINNER = {"deny-overrides": "deny wins (deny-overrides)", "permit-overrides": "permit wins (permit-overrides)",
          "deny-unless-permit": "permit wins (deny-unless-permit)",
          "permit-unless-deny": "deny wins (permit-unless-deny)"}


@dataclass(frozen=True)
class Conflict:
    """A permit and a deny rule that one request makes both apply (or, under only-one-applicable, any two rules)."""

    first: int  # rule indexes, first < second
    second: int
    request: dict[str, Any]
    outcome: Outcome  # the evaluator's decision at the witness


class PolicyAnalysis:
    """The solver-backed facts about one policy, computed once and shared by `mbt check` and the elements.

    Each question is first asked of a few thousand sample requests (drawn from each attribute's bounds and the
    constants the policy compares it with) on the evaluator: what they show is settled with a concrete witness.
    z3 answers the rest, and proves what no request can do. Witnesses are made readable (`tidy`) only when shown.
    """

    SAMPLES = 3000

    def __init__(self, model: PolicyModel):
        self.model = model
        self.evaluator = PolicyEvaluator(model)
        self.encoding = PolicyEncoding(model, complete=True)
        self.required = self.encoding.required
        self.gates = [self._gates(r) for r in model.rules]
        self.names = [r.name for r in model.rules]
        self._boundaries: dict[str, Answer] = {}  # boundary point id -> boundary_verifiable's answer

    @cached_property
    def any_encoding(self) -> PolicyEncoding:
        """Requests that may lack required attributes (for `never` properties)."""
        return PolicyEncoding(self.model, complete=False)

    # ---------------------------------------------------------------- samples
    @cached_property
    def samples(self) -> list[tuple[dict[str, Any], Outcome]]:
        """Deterministic sample requests with their outcomes (complete requests: every attribute given)."""
        pools = self._pools()
        names = sorted(pools)
        rng = random.Random(0)
        count = min(self.SAMPLES, max(200, 10 * len(self.model.rules)))
        out = []
        for _ in range(count):
            request = {n: rng.choice(pools[n]) for n in names}
            out.append((request, self.evaluator.evaluate(request)))
        return out

    def _pools(self) -> dict[str, list]:
        """Values worth trying per attribute: its bounds, the constants it is compared with and their neighbours
        at its precision, and for strings two made-up values (so attributes compared with each other meet)."""
        constants: dict[str, list] = {n: [] for n in self.encoding.scope}
        linked: set[tuple[str, str]] = set()
        exprs = [p for r in self.model.rules for p in (r.target, r.condition) if p is not None]
        exprs += [a.when for a in self.model.assertions if a.when is not None]
        for expr in exprs:
            for node in atoms(expr):
                refs = sorted(ref_names(node))
                found = constants_of([node])
                for name in refs:
                    constants.setdefault(name, []).extend(found)
                if len(refs) == 2:
                    linked.add((refs[0], refs[1]))
        constants = {n: list(dict.fromkeys(c)) for n, c in constants.items()}
        for a, b in sorted(linked):  # compared with each other: each gets the other's constants too
            merged = list(dict.fromkeys(constants[a] + constants[b]))
            constants[a] = constants[b] = merged
        pools = {}
        for name, vtype in self.encoding.scope.items():
            if vtype.kind == "string":
                written = [c for c in constants[name] if isinstance(c, str)]
                pools[name] = list(dict.fromkeys([*written, "v1", "v2"])) + ([None] if vtype.optional else [])
            else:
                pools[name] = candidates(vtype, constants[name])
        return pools

    @cached_property
    def _sampled(self) -> tuple[dict[int, int], dict[int, int], dict[tuple[int, int], int]]:
        """First sample index per rule that applies, per rule that decides, per pair of rules that both apply."""
        index = {name: i for i, name in enumerate(self.names)}
        applies: dict[int, int] = {}
        decides: dict[int, int] = {}
        pairs: dict[tuple[int, int], int] = {}
        for k, (_, outcome) in enumerate(self.samples):
            applying = sorted(index[n] for n in outcome.applying)
            for i in applying:
                applies.setdefault(i, k)
            for name in outcome.decisive:
                decides.setdefault(index[name], k)
            for x, i in enumerate(applying):
                for j in applying[x + 1:]:
                    pairs.setdefault((i, j), k)
        return applies, decides, pairs

    def sometimes_not(self, i: int) -> bool:
        """Some sample request does not make rule i apply (so it does not apply to every request)."""
        name = self.names[i]
        return any(outcome.value(name) != APPLIES for _, outcome in self.samples)

    def _sample_answer(self, k: int) -> Answer:
        return Answer("sat", dict(self.samples[k][0]))

    # ---------------------------------------------------------------- witnesses as shown
    @cached_property
    def _written_strings(self) -> set[str]:
        found = set()
        for rule in self.model.rules:
            for part in (rule.target, rule.condition):
                if part is not None:
                    found |= {n.value for n in part.walk() if isinstance(n, Lit) and isinstance(n.value, str)}
        return found

    def tidy(self, answer: Answer, keeps: Keeps) -> Answer:
        """The answer with its witness tidied (tidy_request), when it has one that `keeps` accepts."""
        if answer.request is None or not keeps(answer.request):
            return answer
        return Answer(answer.status, self.tidy_request(answer.request, keeps), answer.missing)

    def tidy_request(self, witness: dict[str, Any], keeps: Keeps) -> dict[str, Any]:
        """The same witness in plainer values, each change kept only where the evaluator says the witness still
        shows the same thing and no more rules take part than before: strings the solver made up become `v1`,
        `v2`, ... (equal ones alike, then each its own where equality was incidental), and every other attribute
        takes its type's default value (0, the first enum value, false, none) where it can. `keeps` accepts the
        witness itself."""
        request, scope = dict(witness), self.encoding.scope
        evaluator = self.evaluator
        busy = len(evaluator.evaluate(request).values)

        def accept(candidate: dict[str, Any]) -> bool:
            nonlocal busy
            if not keeps(candidate):
                return False
            taking_part = len(evaluator.evaluate(candidate).values)
            if taking_part > busy:
                return False
            busy = taking_part
            return True

        written = self._written_strings
        strings = sorted(n for n, v in request.items() if scope[n].kind == "string" and isinstance(v, str)
                         and v not in written)
        fresh = (f"v{k}" for k in range(1, 10 ** 6) if f"v{k}" not in written)
        if strings:
            names: dict[str, str] = {}
            for name in strings:
                names.setdefault(request[name], next(fresh))
            renamed = {**request, **{n: names[request[n]] for n in strings}}
            if keeps(renamed):
                request = renamed
                for name in strings:  # apart where equal by chance only
                    if sum(1 for n in strings if request[n] == request[name]) > 1:
                        candidate = {**request, name: next(fresh)}
                        if accept(candidate):
                            request = candidate
        for name in sorted(request):
            if name in strings:
                continue
            default = scope[name].default()
            if request[name] == default:
                continue
            candidate = {**request, name: default}
            if accept(candidate):
                request = candidate
        return request

    def applies_witness(self, i: int) -> Answer:
        """A request the rule applies to: one where it decides when there is one (a golden of it can then verify
        that the rule applies, docs/coverage-rules/policy.md), tidied."""
        name = self.names[i]
        decisive = self.decisive.get(i)
        if decisive is not None and decisive.request is not None:
            return self.tidy(decisive, lambda r: name in self.evaluator.evaluate(r).decisive)
        return self.tidy(self.applicable[i], lambda r: self.evaluator.evaluate(r).value(name) == APPLIES)

    @cached_property
    def applicable_matters(self) -> dict[int, Answer]:
        """For each rule that applies but never decides: a request (complete or not) where it applies and the
        decision would differ were it NotApplicable — where a golden can verify that it applies — or unsat when
        there is none (every decision it takes part in is the same without it)."""
        out = {}
        everyone = list(range(len(self.names)))
        for i, answer in self.decisive.items():
            if not answer.unsat:
                continue
            found = self.any_encoding.check(self.any_encoding.depends_on(i, self.compatible(i, everyone)))
            if found.sat and found.request is not None:
                outcome = self.evaluator.evaluate(found.request)
                without = {n: v for n, v in outcome.values.items() if n != self.names[i]}
                if outcome.value(self.names[i]) != APPLIES or self.evaluator.combine(without)[0] == outcome.decision:
                    found = Answer("sat")  # did not replay: no witness, and the element stays feasible
            out[i] = found
        return out

    # ---------------------------------------------------------------- per rule
    @cached_property
    def applicable(self) -> dict[int, Answer]:
        """Rule index -> a request it applies to (replayed), or the unsat / unknown answer."""
        sampled = self._sampled[0]
        out = {}
        for i, name in enumerate(self.names):
            if i in sampled:
                out[i] = self._sample_answer(sampled[i])
                continue
            answer = self.encoding.check(self.encoding.applies[i])
            if answer.sat and (answer.request is None
                               or self.evaluator.evaluate(answer.request).value(name) != APPLIES):
                answer = Answer("sat")  # sat, but the witness did not replay: no witness is shown
            out[i] = answer
        return out

    def compatible(self, i: int, among: list[int]) -> list[int]:
        """The rules of `among` that can apply together with rule i as far as their gates tell."""
        return [j for j in among if j != i and not _disjoint(self.gates[i], self.gates[j])]

    @cached_property
    def decisive(self) -> dict[int, Answer]:
        """Rule index -> a request where it applies and decides (replayed), for the rules that can apply."""
        sampled = self._sampled[1]
        everyone = list(range(len(self.names)))
        out = {}
        for i, name in enumerate(self.names):
            if not self.applicable[i].sat:
                continue
            if i in sampled:
                out[i] = self._sample_answer(sampled[i])
                continue
            answer = self.encoding.check(self.encoding.decisive(i, self.compatible(i, everyone)))
            if answer.sat and (answer.request is None or name not in self.evaluator.evaluate(answer.request).decisive):
                answer = Answer("sat")
            out[i] = answer
        return out

    @cached_property
    def conflicts(self) -> list[Conflict]:
        """Pairs that can apply together: permit/deny pairs, or every pair under only-one-applicable. The samples
        settle most; for each rule z3 is then asked for a request where it and any remaining partner apply, the
        witness's replay settles every partner it makes apply at once, and the last (unsat) answer proves that no
        other partner ever applies with it."""
        rules = self.model.rules
        only_one = self.model.algorithm == "only-one-applicable"
        live = [i for i in range(len(rules)) if self.applicable[i].sat]
        sampled = self._sampled[2]
        found: list[Conflict] = []
        for i in live:
            partners = [j for j in self.compatible(i, live) if j > i
                        and (only_one or rules[j].effect != rules[i].effect)]
            remaining = []
            for j in partners:
                if (i, j) in sampled:
                    request, outcome = self.samples[sampled[(i, j)]]
                    found.append(Conflict(i, j, request, outcome))
                else:
                    remaining.append(j)
            while remaining:
                answer = self.encoding.check(self.encoding.applies[i],
                                             _any([self.encoding.applies[j] for j in remaining]))
                if not answer.sat or answer.request is None:
                    break
                outcome = self.evaluator.evaluate(answer.request)
                hits = [j for j in remaining if outcome.value(rules[j].name) == APPLIES]
                if outcome.value(rules[i].name) != APPLIES or not hits:
                    break  # did not replay: never expected; the pairs stay unreported rather than guessed
                found.extend(Conflict(i, j, answer.request, outcome) for j in hits)
                remaining = [j for j in remaining if j not in hits]
        return sorted(found, key=lambda c: (c.first, c.second))

    def _gates(self, rule: Rule) -> dict[str, frozenset]:
        gate = rule.target if rule.target is not None else rule.condition
        return value_gates(gate, self.required) if gate is not None else {}

    # ---------------------------------------------------------------- per action
    @cached_property
    def actions(self) -> list[tuple[str | None, z3.BoolRef | None]]:
        """(action value, its condition) for each value of the action attribute; [(None, None)] without one."""
        attribute = self.model.action_attribute()
        if attribute is None:
            return [(None, None)]
        term = self.encoding.symbols[attribute.qualified]
        return [(value, term.value == self.encoding.symbols.enums.code(value)) for value in attribute.type.values]

    def decision_possible(self, decision: str, action: str | None) -> Answer:
        """A request (with this action) that gets the decision, replayed and tidied; unsat when none does."""
        key = self.model.action_attribute()

        def keeps(request: dict[str, Any]) -> bool:
            same_action = key is None or request.get(key.qualified) == action
            return same_action and self.evaluator.evaluate(request).decision == decision

        for request, outcome in self.samples:
            if outcome.decision == decision and (key is None or request.get(key.qualified) == action):
                return self.tidy(Answer("sat", dict(request)), keeps)
        condition = dict(self.actions).get(action)
        parts = [self.encoding.decision(decision)] + ([condition] if condition is not None else [])
        answer = self.encoding.check(*parts)
        if answer.sat:
            answer = self.tidy(answer, keeps) if answer.request is not None and keeps(answer.request) else Answer("sat")
        return answer

    # ---------------------------------------------------------------- boundary points
    def boundary_pinned(self, point: Boundary, request: dict[str, Any]) -> bool:
        """The request sits on the point, and a golden's checks of it (its decision and every deciding rule) would
        fail were one comparison of the rule that gives the point the other way: what verifies a boundary
        (docs/coverage-rules/policy.md; CompiledPolicy.verified_of in replay, on the strongest checks)."""
        left, right = request.get(point.left), request.get(point.right) if point.right is not None else 0
        if not _number(left) or not _number(right) or Decimal(left) - Decimal(right) != Decimal(point.value):
            return False
        outcome = self.evaluator.evaluate(request)
        rule = self.evaluator.by_name[point.rule]
        for part, k in point.occurrences:
            expr = rule.target_expr if part == "target" else rule.condition_expr
            assert expr is not None  # the point was found in this part
            truth = compile_tri(atoms(expr)[k], self.required)(request)
            if truth is None:
                continue
            flipped = rule.value_flipped(part, k, not truth)(request)
            if flipped == outcome.value(rule.name):
                continue  # the rule's value does not change (its target fails elsewhere): neither does the rest
            changed = {n: v for n, v in outcome.values.items() if n != rule.name}
            if flipped != NA:
                changed[rule.name] = flipped
            decision, reasons = self.evaluator.combine(changed)
            if decision != outcome.decision or not set(outcome.reasons) <= set(reasons):
                return True
        return False

    def boundary_verifiable(self, point: Boundary) -> Answer:
        """A request on the point that a golden can verify it with (boundary_pinned), or unsat when z3 proves there
        is none, over requests that may lack attributes: the one notion of a boundary's feasibility that coverage
        (its elements) and generation share. The samples, set on the point, are tried first."""
        found = self._boundaries.get(point.id)
        if found is None:
            found = self._boundaries[point.id] = self._boundary_verifiable(point)
        return found

    def _boundary_verifiable(self, point: Boundary) -> Answer:
        for request, _ in self.samples:
            placed = on_point(request, point)
            if placed is not None and self.boundary_pinned(point, placed):
                return Answer("sat", placed)
        enc = self.any_encoding
        i = self.names.index(point.rule)
        rule = self.model.rules[i]
        now_applies, now_indeterminate = enc.applies[i], enc.indeterminate[i]
        options = []
        for part, k in point.occurrences:
            expr = rule.target if part == "target" else rule.condition
            assert expr is not None  # the point was found in this part
            holds, fails = enc.tri(atoms(expr)[k])
            for truth, now in ((True, holds), (False, fails)):
                flipped = replace_atom(expr, k, not truth)
                target, condition = (flipped, rule.condition) if part == "target" else (rule.target, flipped)
                variant = enc.with_rule(i, *enc.rule_formulas(target, condition))
                differs = z3.Or(now_applies != variant.applies[i], now_indeterminate != variant.indeterminate[i])
                decided = enc.decisions()
                changes = [z3.And(decided[d], z3.Not(variant.decisions()[d])) for d in sorted(decided)]
                changes += [z3.And(enc.decisive(j), z3.Not(variant.decisive(j))) for j in range(len(self.names))]
                # The deciding rules of an Indeterminate decision are not encoded: counted as possibly changed, so
                # an `unsat` stays a proof.
                changes.append(enc.decision(INDETERMINATE))
                options.append(z3.And(now, differs, z3.Or(changes)))
        answer = enc.check(self._on_point(enc, point), _any(options))
        if answer.sat and (answer.request is None or not self.boundary_pinned(point, answer.request)):
            return Answer("sat")  # did not replay: no witness, and the element stays feasible
        return self.tidy(answer, lambda request: self.boundary_pinned(point, request)) if answer.sat else answer

    @staticmethod
    def _on_point(enc: PolicyEncoding, point: Boundary) -> z3.BoolRef:
        """The request gives the point's attributes, with `left - right` (or `left`) equal to its value."""
        parts: list[z3.BoolRef] = []
        values: list[z3.ExprRef] = []  # an attribute's term always has a value
        for name in (point.left, point.right):
            if name is None:
                continue
            term = enc.symbols[name]
            parts += [term.is_set] + ([enc.given[name]] if name in enc.given else [])
            values.append(term.value)
        difference = values[0] - values[1] if len(values) == 2 else values[0]
        return z3.And(*parts, difference == z3.RealVal(str(point.value)))


def on_point(request: dict[str, Any], point: Boundary) -> dict[str, Any] | None:
    """The request moved onto the boundary point (its left attribute set so that `left - right` is the point's
    value), or None when its right attribute is not a number."""
    out = dict(request)
    if point.right is None:
        out[point.left] = point.value
        return out
    other = out.get(point.right)
    if not _number(other):
        return None
    out[point.left] = Decimal(other) + Decimal(point.value)
    return out


def _number(value: Any) -> TypeGuard[int | Decimal]:
    return isinstance(value, (int, Decimal)) and not isinstance(value, bool)


def _all_apply(evaluator: PolicyEvaluator, names: Iterable[str]) -> Keeps:
    def keeps(request: dict[str, Any]) -> bool:
        outcome = evaluator.evaluate(request)
        return all(outcome.value(n) == APPLIES for n in names)

    return keeps


def _any(items: list) -> z3.BoolRef:
    return z3.Or(items) if len(items) > 1 else items[0]


def _disjoint(a: dict[str, frozenset], b: dict[str, frozenset]) -> bool:
    """True when the two rules need different values of one attribute (neither can apply when the other does)."""
    return any(name in b and not (allowed & b[name]) for name, allowed in a.items())


class PolicyChecker:
    """Runs every policy check on one model and collects the findings."""

    def __init__(self, model: PolicyModel, analysis: PolicyAnalysis | None = None):
        self.model = model
        self.analysis = analysis or analysis_of(model)
        self.findings: list[Finding] = []
        self.rules = {rule.name: rule for rule in model.rules}

    def report(self, kind: Check, location: Location, message: str,
               related: list[Location] | None = None, witness: dict[str, Any] | None = None) -> None:
        code, name, severity = kind.code, kind.name, kind.severity
        self.findings.append(Finding(code=code, name=name, severity=severity, location=location, message=message,
                                     model=self.model.name, related=related or [], witness=witness))

    def run(self) -> list[Finding]:
        self.check_rules()
        self.check_conflicts()
        self.check_gaps()
        self.check_assertions()
        self.check_unused()
        self.check_enforcements()
        return self.findings

    # ---------------------------------------------------------------- rules
    def check_rules(self) -> None:
        a = self.analysis
        for i, rule in enumerate(self.model.rules):
            applicable = a.applicable[i]
            if applicable.unsat:
                self.report(RULE_NEVER_APPLIES, rule.loc,
                            f"{rule.effect} rule `{rule.name}` can never apply: no request satisfies its "
                            f"{_parts(rule)} (within the attributes' declared types)")
                continue
            if applicable.sat and (rule.target is not None or rule.condition is not None) \
                    and not a.sometimes_not(i):
                always = a.encoding.check(z3.Not(a.encoding.applies[i]))
                if always.unsat:
                    verb = "hold" if rule.target is not None and rule.condition is not None else "holds"
                    self.report(RULE_ALWAYS_APPLIES, rule.loc,
                                f"{rule.effect} rule `{rule.name}` applies to every request: its {_parts(rule)} "
                                f"always {verb} (a rule meant for every request is written without target and "
                                "condition)")
            decisive = a.decisive.get(i)
            if decisive is not None and decisive.unsat:
                message = f"{rule.effect} rule `{rule.name}` is never decisive: {self._never_decisive_reason(rule)}"
                sample = a.applies_witness(i).request
                related = []
                if sample is not None:
                    outcome = a.evaluator.evaluate(sample)
                    winners = [r for r in outcome.reasons if r != rule.name]
                    message += (f"; e.g. where it applies (witness) the decision is {outcome.decision}"
                                + (f" by {_names(winners)}" if winners else ""))
                    related = [self.rules[r].loc for r in winners]
                self.report(RULE_NEVER_DECISIVE, rule.loc, message, related, _shown(sample))

    def _never_decisive_reason(self, rule: Rule) -> str:
        algorithm = self.model.algorithm
        if algorithm == "first-applicable":
            return "whenever it applies, an earlier rule applies too (shadowed under first-applicable)"
        if algorithm == "only-one-applicable":
            return "whenever it applies, another rule applies too (Indeterminate under only-one-applicable)"
        other = "deny" if rule.effect == "permit" else "permit"
        return f"whenever it applies, a {other} rule applies too and overrides it ({algorithm})"

    # ---------------------------------------------------------------- conflicts
    def check_conflicts(self) -> None:
        rules = self.model.rules
        only_one = self.model.algorithm == "only-one-applicable"
        shown: dict[int, tuple[dict, Outcome]] = {}  # one tidy witness per distinct witness request
        groups: dict[int, list[Conflict]] = {}
        for c in self.analysis.conflicts:
            groups.setdefault(id(c.request), []).append(c)
        evaluator = self.analysis.evaluator
        for key, members in groups.items():
            names = {rules[k].name for c in members for k in (c.first, c.second)}
            request, keeps = members[0].request, _all_apply(evaluator, names)
            if keeps(request):
                request = self.analysis.tidy_request(request, keeps)
            shown[key] = (request, evaluator.evaluate(request))
        for c in self.analysis.conflicts:
            request, outcome = shown[id(c.request)]
            c = Conflict(c.first, c.second, request, outcome)
            first, second = rules[c.first], rules[c.second]
            both = f"{first.effect} `{first.name}` (line {first.loc.line}) and {second.effect} `{second.name}`"
            if only_one:
                self.report(RULES_OVERLAP, second.loc,
                            f"rules {both} can both apply to one request: only-one-applicable then decides "
                            f"{c.outcome.decision}", [first.loc], _shown(c.request))
                continue
            resolution = WINNER.get(self.model.algorithm)
            if resolution is None:  # first-applicable: the order decides
                resolution = f"the earlier rule `{first.name}` wins (first-applicable)"
            self.report(RULES_CONFLICT, second.loc,
                        f"rules {both} both apply to one request: {resolution}; at the witness the decision is "
                        f"{c.outcome.decision}" + (f" by {_names(c.outcome.reasons)}" if c.outcome.reasons else ""),
                        [first.loc], _shown(c.request))

    # ---------------------------------------------------------------- gaps
    def check_gaps(self) -> None:
        if self.model.algorithm in ("deny-unless-permit", "permit-unless-deny"):
            return  # these algorithms always decide Permit or Deny
        a = self.analysis
        attribute = a.model.action_attribute()
        for action, _ in a.actions:
            answer = a.decision_possible(NOT_APPLICABLE, action)
            if not answer.sat:
                continue
            # (the actions are the attribute's values, or the one None without it)
            where = f"`{attribute.qualified} = {action}` requests" if attribute is not None and action is not None \
                else "requests"
            message = (f"gap: some {where} are NotApplicable: no rule applies to them"
                       + ("" if answer.request is not None else REPLAY_FAILED))
            self.report(POLICY_GAP, self.model.combining[0].loc if self.model.combining else self.model.loc,
                        message, witness=_shown(answer.request))

    # ---------------------------------------------------------------- declared properties
    def check_assertions(self) -> None:
        for assertion in self.model.assertions:
            self.check_assertion(assertion)

    def check_assertion(self, assertion: Assertion) -> None:
        a = self.analysis
        refuted = self._counterexample(assertion, a.encoding)
        if refuted is None and assertion.quantifier == "never":
            refuted = self._counterexample(assertion, a.any_encoding)
        text = assertion.text()
        if refuted is None:
            scope = "every request, including those missing attributes" if assertion.quantifier == "never" \
                else "every request that carries all its attributes"
            self.report(PROPERTY_PROVED, assertion.loc, f"`{text}` holds for {scope}")
            return
        if refuted.status == "unknown":
            return  # undecided within the time limit: neither proved nor refuted
        if refuted.request is None:
            self.report(PROPERTY_REFUTED, assertion.loc, f"`{text}` does not hold" + REPLAY_FAILED)
            return
        outcome = a.evaluator.evaluate(refuted.request)
        by = f" by {_names(outcome.reasons)}" if outcome.reasons else ""
        missing = f" (it lacks {_names(refuted.missing)})" if refuted.missing else ""
        message = f"`{text}` does not hold: the counterexample request{missing} is decided " \
                  f"{outcome.decision}{by}"
        related = [self.rules[r].loc for r in outcome.reasons]
        self.report(PROPERTY_REFUTED, assertion.loc, message, related, _shown(refuted.request))

    def _counterexample(self, assertion: Assertion, encoding: PolicyEncoding) -> Answer | None:
        """A replayed request that breaks the assertion under this encoding, None when there is none ("unknown" when
        z3 could not tell; "sat" without a request when its witness did not replay)."""
        parts = [encoding.holds(assertion.when)] if assertion.when is not None else []
        decided = encoding.decision(assertion.decision)
        parts.append(decided if assertion.quantifier == "never" else z3.Not(decided))
        answer = encoding.check(*parts)
        if answer.unsat:
            return None
        if not answer.sat:
            return answer
        if answer.request is None or not self._breaks(assertion, answer.request):
            return Answer("sat")
        return self.analysis.tidy(answer, lambda request: self._breaks(assertion, request))

    def _breaks(self, assertion: Assertion, request: dict[str, Any]) -> bool:
        """The evaluator's verdict: the `when` holds and the decision is (never) / is not (always) the one named."""
        if assertion.when is not None:
            when = compile_tri(assertion.when, self.analysis.required)
            if when(request) is not True:
                return False
        decision = self.analysis.evaluator.evaluate(request).decision
        named = decision.startswith("Indeterminate") if assertion.decision == INDETERMINATE \
            else decision == assertion.decision
        return named if assertion.quantifier == "never" else not named

    # ---------------------------------------------------------------- names and links
    def check_unused(self) -> None:
        read: set[str] = set()
        for rule in self.model.rules:
            for part in (rule.target, rule.condition):
                if part is not None:
                    read |= ref_names(part)
        for assertion in self.model.assertions:
            if assertion.when is not None:
                read |= ref_names(assertion.when)
        for name, attribute in self.model.attributes.items():
            if name not in read:
                self.report(UNUSED_ATTRIBUTE, attribute.loc,
                            f"attribute `{name}` is never read by a rule or an assert")

    def check_enforcements(self) -> None:
        for e in self.model.enforcements:
            fsm = e.fsm_model
            if not e.linked or fsm is None:  # (linking sets both)
                self.report(ENFORCED_FSM_MISSING, e.loc,
                            f"calls of `{e.tool}` in fsm `{e.fsm}` are enforced, but no fsm `{e.fsm}` is among the "
                            "models read; give its file too, so the link is checked and conversation goldens are "
                            "checked against this policy")
            elif e.tool not in fsm.tools():
                self.report(ENFORCED_TOOL_NEVER_CALLED, e.loc,
                            f"fsm `{e.fsm}` never calls `{e.tool}`, so no conversation is checked against this "
                            f"policy (it calls {', '.join(f'`{t}`' for t in fsm.tools()) or 'no tool'})",
                            [fsm.loc])


def _parts(rule: Rule) -> str:
    if rule.target is not None and rule.condition is not None:
        return "target and condition together"
    return "target" if rule.target is not None else "condition"


def _names(names: Iterable[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _shown(request: dict[str, Any] | None) -> dict[str, Any] | None:
    return dict(sorted(request.items())) if request else None


_CACHE: dict[int, tuple[PolicyModel, PolicyAnalysis]] = {}
_CACHE_SIZE = 8


def analysis_of(model: PolicyModel) -> PolicyAnalysis:
    """One analysis per model object: `mbt coverage` enumerates elements from the same facts `mbt check` reports.
    Keyed by id() but holding the model itself, so the id cannot be reused by another object while cached; the
    few most recent are kept."""
    cached = _CACHE.pop(id(model), None)
    if cached is None or cached[0] is not model:
        cached = (model, PolicyAnalysis(model))
    _CACHE[id(model)] = cached
    while len(_CACHE) > _CACHE_SIZE:
        del _CACHE[next(iter(_CACHE))]
    return cached[1]


def check_policy(model: PolicyModel) -> list[Finding]:
    return PolicyChecker(model).run()

