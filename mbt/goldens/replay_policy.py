"""Replays golden cases on a policy: request cases are evaluated; a conversation case is replayed on the FSM whose
tool calls the policy enforces, and each such call becomes a request. Marks exercised and verified elements as
docs/coverage-rules/policy.md defines them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from mbt.argpaths import lookup
from mbt.elements import policy as ids
from mbt.elements.base import Element
from mbt.elements.fsm import enumerate_fsm
from mbt.engine.fsm import CompiledFsm
from mbt.engine.policy import APPLIES, NA, Outcome, PolicyEvaluator, compile_tri, member
from mbt.goldens.cases import GoldenCase, tool_checks
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.goldens.requests import PolicyRequest
from mbt.goldens.results import CaseRun, Contradiction, Note, disagrees
from mbt.goldens.routing import applies
from mbt.model.expr import atoms, compile_expr
from mbt.model.fsm import FsmModel
from mbt.model.policy import DENY, PERMIT, Enforcement, PolicyModel

Checks = Callable[[str, tuple[str, ...]], bool]  # (decision, deciding rules) -> the golden's checks agree


@dataclass
class CompiledEnforcement:
    enforcement: Enforcement
    fsm: FsmModel  # the enforced FSM
    mappings: list[tuple[str, Callable]]  # attribute -> value read from the FSM at the call
    replayer: FsmReplayer  # of the enforced FSM


class CompiledPolicy:
    """A policy prepared for replay: its evaluator and the element indices each outcome touches."""

    def __init__(self, model: PolicyModel, elements: list[Element]):
        self.model = model
        self.evaluator = PolicyEvaluator(model)
        index = {e.id: i for i, e in enumerate(elements)}
        self.applicable = {r.name: index[ids.applicable_id(r)] for r in model.rules}
        self.decisive = {r.name: index[ids.decisive_id(r)] for r in model.rules}
        self.rule_names = {r.name for r in model.rules}
        # What each element is about, for verification: ("rule", NAME), ("conflict", FIRST, SECOND), ("effect",),
        # ("boundary", Boundary).
        self.facts: dict[int, tuple] = {}
        for r in model.rules:
            self.facts[self.applicable[r.name]] = self.facts[self.decisive[r.name]] = ("rule", r.name)
        # Conflicts by their first rule; boundary points by attribute and value (or attribute pair and difference):
        # a replayed request looks up what it touches instead of testing every element.
        self.conflicts: dict[str, list[tuple[str, int]]] = {}
        for e in elements:
            if e.criterion == "conflict":
                first, second = e.id.removeprefix("conflict:").split("|")
                self.conflicts.setdefault(first, []).append((second, index[e.id]))
                self.facts[index[e.id]] = ("conflict", first, second)
        self.action = model.action_attribute()
        self.effects = {key: index[key] for key in index if key.startswith("effect:")}
        self.facts.update({i: ("effect",) for i in self.effects.values()})
        self.points: dict[tuple[str, str | None], dict[Decimal, list[int]]] = {}
        for point in ids.boundaries(model):
            if point.id in index:
                by_value = self.points.setdefault((point.left, point.right), {})
                by_value.setdefault(Decimal(point.value), []).append(index[point.id])
                rule = self.evaluator.by_name[point.rule]
                # The rule's `==` / `in` conjuncts: a request with another value there leaves it NotApplicable
                # whichever way the comparison goes, so its point is not pinned down (checked first: it is cheap).
                gates = tuple(self.evaluator.gates[rule.index].items())
                self.facts[index[point.id]] = ("boundary", point, rule, gates)
        self._atoms: dict[tuple[str, str, int], Callable] = {}
        self.enforcements: list[CompiledEnforcement] = []
        for enf in model.enforcements:
            fsm = enf.fsm_model
            if enf.linked and fsm is not None:
                self.enforcements.append(CompiledEnforcement(
                    enf, fsm, [(m.attribute, compile_expr(m.value)) for m in enf.mappings], _fsm_replayer(fsm)))

    def elements_of(self, outcome: Outcome, request: dict) -> list[int]:
        """The elements one evaluated request exercises."""
        applying = outcome.applying
        out = [self.applicable[name] for name in applying]
        out += [self.decisive[name] for name in outcome.decisive]
        for first in applying:
            out += [i for second, i in self.conflicts.get(first, ()) if outcome.value(second) == APPLIES]
        if outcome.decision in (PERMIT, DENY):
            action = request.get(self.action.qualified) if self.action is not None else None
            key = ids.effect_id(action, outcome.decision)
            if key in self.effects:
                out.append(self.effects[key])
        for (left, right), by_value in self.points.items():
            a = request.get(left)
            b = request.get(right) if right is not None else 0
            if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
                continue
            try:
                out += by_value.get(Decimal(a) - Decimal(b), ())
            except (TypeError, ValueError, ArithmeticError):
                continue
        return out

    def verified_of(self, outcome: Outcome, request: dict, touched: list[int], agrees: Checks) -> set[int]:
        """The touched elements the golden's checks (which agree with `outcome`) pin down: the checks would fail
        were the element's fact otherwise — the rule NotApplicable (applicable, decisive), either rule of the pair
        NotApplicable (conflict), the comparison giving the point the other way (boundary). An effect is the
        decision itself, which the checks state."""
        values = outcome.values
        without: dict[str, bool] = {}

        def fails(changed: dict[str, str]) -> bool:
            return not agrees(*self.evaluator.combine(changed))

        def fails_without(name: str) -> bool:
            if name not in without:
                without[name] = fails({n: v for n, v in values.items() if n != name})
            return without[name]

        out = set()
        for i in touched:
            fact = self.facts[i]
            kind = fact[0]
            if kind == "boundary":
                if any(name in request and not member(request[name], allowed) for name, allowed in fact[3]):
                    continue
                if self._boundary_pinned(fact[1], fact[2], values, request, fails):
                    out.add(i)
            elif kind == "effect" or (kind == "rule" and fails_without(fact[1])) \
                    or (kind == "conflict" and (fails_without(fact[1]) or fails_without(fact[2]))):
                out.add(i)
        return out

    def _boundary_pinned(self, point: ids.Boundary, rule, values: dict[str, str], request: dict, fails) -> bool:
        for part, k in point.occurrences:
            truth = self._atom(rule, part, k)(request)
            if truth is None:
                continue
            flipped = rule.value_flipped(part, k, not truth)(request)
            if flipped == values.get(rule.name, NA):
                continue  # the rule's value does not change (e.g. its target fails elsewhere): neither does the rest
            changed = {n: v for n, v in values.items() if n != rule.name}
            if flipped != NA:
                changed[rule.name] = flipped
            if fails(changed):
                return True
        return False

    def _atom(self, rule, part: str, k: int) -> Callable:
        key = (rule.name, part, k)
        if key not in self._atoms:
            expr = rule.target_expr if part == "target" else rule.condition_expr
            self._atoms[key] = compile_tri(atoms(expr)[k], self.evaluator.required)
        return self._atoms[key]


def _fsm_replayer(fsm: FsmModel) -> FsmReplayer:
    return FsmReplayer(CompiledFsm(fsm, enumerate_fsm(fsm)))


class PolicyReplayer:
    def __init__(self, compiled: CompiledPolicy):
        self.c = compiled
        self.model = compiled.model

    def replay(self, case: GoldenCase) -> CaseRun:
        run = CaseRun(case)
        if case.turns:
            self._conversation(case, run)
        elif case.request is not None:
            self._request_case(case, case.request, run)
        return run

    # ---- request cases
    def _request_case(self, case: GoldenCase, given: PolicyRequest, run: CaseRun) -> None:
        request = self.request_of(given.attributes, case, run)
        if request is None:
            return
        outcome = self.c.evaluator.evaluate(request)
        touched = self.c.elements_of(outcome, request)
        run.exercised.update(touched)
        if given.expect is None:
            if given.reason:
                run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=None,
                                      message="`reason` is checked only beside `expect` (not checked)"))
            return
        agree = True
        if not _same_decision(given.expect, outcome.decision):
            agree = False
            why = f" by {', '.join(outcome.reasons)}" if outcome.reasons else ""
            missing = f" (missing {', '.join(outcome.missing)})" if outcome.missing and outcome.indeterminate else ""
            run.contradictions.append(Contradiction(
                case=case.id, where=case.where, model=self.model.name, turn=None, path="decision",
                expected=given.expect, actual=outcome.decision,
                message=f"golden expects {given.expect}, the policy decides {outcome.decision}{why}{missing}"))
        for name in given.reason or ():
            if name not in self.c.rule_names:
                run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=None,
                                      message=f"reason `{name}` is not a rule of the policy (not checked)"))
            elif name not in outcome.reasons:
                agree = False
                run.contradictions.append(Contradiction(
                    case=case.id, where=case.where, model=self.model.name, turn=None, path="reason",
                    expected=name, actual=list(outcome.reasons),
                    message=f"golden expects rule `{name}` to decide, the policy's deciding rules are "
                            f"{', '.join(outcome.reasons) or 'none'} ({outcome.decision})"))
        if agree:
            named = [n for n in given.reason or () if n in self.c.rule_names]

            def agrees(decision: str, reasons: tuple[str, ...]) -> bool:
                return given.expect is not None and _same_decision(given.expect, decision) \
                    and all(n in reasons for n in named)

            run.verified.update(self.c.verified_of(outcome, request, touched, agrees))

    def request_of(self, attributes: dict[str, Any], case: GoldenCase, run: CaseRun) -> dict[str, Any] | None:
        """The request as the evaluator takes it: values typed (floats become decimals), a bare category resolved
        to its id attribute, undeclared attributes noted and left out, `null` for a required attribute = missing."""
        model, request = self.model, {}
        for key, value in attributes.items():
            name = key if "." in key else self._id_attribute(key)
            if name is None:
                run.invalid = (f"request gives `{key}` a bare value, but the policy's {key} category has no `id` "
                               "attribute (nor a single one)")
                return None
            attribute = model.attributes.get(name)
            if attribute is None:
                run.notes.append(Note(case=case.id, where=case.where, model=model.name, turn=None,
                                      message=f"request attribute `{name}` is not declared by the policy (ignored)"))
                continue
            value = typed_value(value)
            if value is None and not attribute.type.optional:
                continue  # a required attribute without a value is missing: rules reading it are Indeterminate
            if not attribute.type.admits(value):
                run.invalid = f"request `{name}: {_show(value)}` is not a value of {attribute.type.text()}"
                return None
            request[name] = value
        for name, attribute in model.attributes.items():
            if attribute.type.optional and name not in request:
                request[name] = None  # an optional attribute left out is `none`
        return request

    def _id_attribute(self, category: str) -> str | None:
        mine = [a for a in self.model.attributes.values() if a.category == category]
        named = [a for a in mine if a.name == "id"]
        chosen = named or (mine if len(mine) == 1 else [])
        return chosen[0].qualified if chosen else None

    # ---- conversation cases: the tool calls of an enforced FSM
    def _conversation(self, case: GoldenCase, run: CaseRun) -> None:
        base = case.request.attributes if case.request is not None else {}
        verified: set[int] = set()
        trusted = True  # the golden agrees with every enforced FSM: its checks of the calls can be believed
        for ce in self.c.enforcements:
            e = ce.enforcement
            if not applies(ce.fsm, case):
                continue
            fsm_run = ce.replayer.replay(case, keep_snapshots=True)
            if fsm_run.invalid is not None:
                run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=None,
                                      message=f"the conversation cannot be replayed on fsm `{e.fsm}` "
                                              f"({fsm_run.invalid}); its `{e.tool}` calls are not checked"))
                continue
            checked = _checked_calls(case, fsm_run.snapshots, ce.replayer.c.tools, e.tool)
            calls = 0
            for number, snapshot in enumerate(fsm_run.snapshots, start=1):
                for position, call in enumerate(snapshot.calls):
                    if call.tool == e.tool:
                        calls += 1
                        self._call(case, ce, number, snapshot, call.args, base, run,
                                   verified if (number, position) in checked else None)
            if calls and disagrees(fsm_run):
                trusted = False
                run.contradicts_fsm = True
                run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=None,
                                      message=f"the golden contradicts fsm `{e.fsm}`: its `{e.tool}` calls verify "
                                              f"nothing on policy `{self.model.name}`"))
        # A golden that contradicts the model verifies nothing on it: one refused call is enough.
        if trusted and not run.contradictions and run.invalid is None:
            run.verified.update(verified)

    def _call(self, case, ce: CompiledEnforcement, number: int, snapshot, args: dict, base: dict,
              run: CaseRun, verified: set[int] | None) -> None:
        """One call as a request; `verified` (None when the golden does not check this call) collects what a
        permitted call pins down."""
        e = ce.enforcement
        env = dict(snapshot.variables)
        env.update({f"discarded.{k}": v for k, v in snapshot.discarded.items()})
        env.update({f"args.{k}": v for k, v in args.items()})
        attributes = dict(base)
        for attribute, value in ce.mappings:
            attributes[attribute] = value(env)
        request = self.request_of(attributes, case, run)
        if request is None:
            run.invalid = f"turn {number}: the call of `{e.tool}` makes a bad request: {run.invalid}"
            return
        outcome = self.c.evaluator.evaluate(request)
        touched = self.c.elements_of(outcome, request)
        run.exercised.update(touched)
        asserted = verified is not None
        if outcome.decision == PERMIT:
            if verified is not None:
                verified.update(self.c.verified_of(outcome, request, touched, _permitted))
            return
        why = f" by {', '.join(outcome.reasons)}" if outcome.reasons else ""
        missing = f" (missing {', '.join(outcome.missing)})" if outcome.missing and outcome.indeterminate else ""
        who = "the golden expects the call" if asserted else f"fsm `{e.fsm}` makes the call"
        run.contradictions.append(Contradiction(
            case=case.id, where=case.where, model=self.model.name, turn=number, path=f"policy.{e.tool}",
            expected=PERMIT, actual=outcome.decision,
            message=f"turn {number}: {who} to `{e.tool}`, but policy `{self.model.name}` decides "
                    f"{outcome.decision}{why}{missing} for it"))


def _permitted(decision: str, reasons: tuple[str, ...]) -> bool:
    return decision == PERMIT


def _checked_calls(case: GoldenCase, snapshots: list, tools, tool: str) -> set[tuple[int, int]]:
    """(step, position in the step) of the calls of `tool` that a `tool_arguments` check reads, as the FSM replay
    reads them: a turn's check reads that step's latest call of the tool it names (`{TOOL: {...}}`), or its latest
    call passing the argument (`{ARG: value}`); the final assertions read the latest such call of the whole run."""
    out: set[tuple[int, int]] = set()

    def read(calls: list[tuple[int, int, Any]], checks: dict) -> None:
        for named, arg, _ in tool_checks(checks, tools):
            if named is not None or arg is None:
                match = [c for c in calls if c[2].tool == named]
            else:
                match = [c for c in calls if lookup(c[2].args, arg)[0]]
            if match and match[-1][2].tool == tool:
                out.add(match[-1][:2])

    every: list[tuple[int, int, Any]] = []
    for number, snapshot in enumerate(snapshots, start=1):
        mine = [(number, position, call) for position, call in enumerate(snapshot.calls)]
        every += mine
        if number <= len(case.turns) and case.turns[number - 1].expect.tool_arguments:
            read(mine, case.turns[number - 1].expect.tool_arguments)
    if case.final.tool_arguments:
        read(every, case.final.tool_arguments)
    return out


def _same_decision(expected: str, actual: str) -> bool:
    """`Indeterminate` agrees with each of its three extended values."""
    return expected == actual or (expected == "Indeterminate" and actual.startswith("Indeterminate"))


def typed_value(value: Any) -> Any:
    """JSON/YAML numbers with a fraction arrive as floats: read them as the decimal they were written as."""
    if isinstance(value, float):
        try:
            return Decimal(repr(value))
        except InvalidOperation:
            return value
    return value


def _show(value: Any) -> str:
    return str(value) if isinstance(value, Decimal) else repr(value)


def accepts(model: PolicyModel, case: GoldenCase) -> bool:
    """A request case names this policy; a conversation case counts when the policy enforces a tool of an FSM the
    case applies to (its calls are the requests). Decision-table cases and other conversations are not for it."""
    if not case.turns:
        return case.request is not None and case.model == model.name
    return any(e.linked and e.fsm_model is not None and applies(e.fsm_model, case) for e in model.enforcements)
