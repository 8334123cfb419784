"""The policy judge: docs/coverage-rules/policy.md implemented a second time, plainly and slowly.

It shares no code with mbt's policy evaluator or replay: it reads the request, evaluates every rule in XACML's
three-valued logic with its own expression walker, combines them with the algorithms as XACML 3.0 Appendix C writes
them, and decides every element's status from the written rule, re-evaluating the whole policy for each "were the
element's fact otherwise". Conversations are stepped with the FSM judge (tests/judge/fsm.py). From mbt it takes the
parsed model and the element ids (`mbt.elements.policy`): which conflict pairs and boundary points exist.
`campaign` generates random policies and goldens and compares the judge with `mbt coverage`.
"""

from __future__ import annotations

import random
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

from mbt.api import load_models, measure
from mbt.goldens.cases import GoldenCase, parse_case
from mbt.goldens.loader import GoldenSet
from mbt.kind import support
from mbt.model.expr import And, Arith, Compare, EnumLit, Lit, Member, Not, Or, Ref
from mbt.model.policy import PolicyModel
from tests.judge import fsm as fsm_judge
from tests.judge.common import EXERCISED, VERIFIED, Campaign, statuses_by_case

IND = "Indeterminate"  # an expression's value when XACML makes it Indeterminate
PERMIT, DENY, NA = "Permit", "Deny", "NotApplicable"
IND_D, IND_P, IND_DP = "Indeterminate{D}", "Indeterminate{P}", "Indeterminate{DP}"
DECISIONS = [PERMIT, DENY, NA, IND_D, IND_P, IND_DP]
APPLIES = "applies"  # a rule's value besides NA and IND

# ------------------------------------------------------------------ the language's meaning (dsl-reference.md)


def truthy(value) -> bool:
    return bool(value)  # `none` (an unset bool?) is false as a condition


def ev(expr, request: dict, required: set[str], forced: dict[int, bool]) -> Any:
    """The value of an expression: a plain value, or IND. `forced` gives some atoms (by id()) a truth value."""
    if id(expr) in forced:
        return forced[id(expr)]
    if isinstance(expr, (Lit, EnumLit)):
        return expr.value
    if isinstance(expr, Ref):
        if expr.name in required and expr.name not in request:
            return IND  # XACML's MustBePresent
        return request.get(expr.name)
    if isinstance(expr, Not):
        inner = ev(expr.operand, request, required, forced)
        return IND if inner is IND else not truthy(inner)
    if isinstance(expr, (And, Or)):
        values = [ev(item, request, required, forced) for item in expr.items]
        known = [truthy(v) for v in values if v is not IND]
        if isinstance(expr, And):
            return False if False in known else (IND if IND in values else True)
        return True if True in known else (IND if IND in values else False)
    if isinstance(expr, Member):
        operand = ev(expr.operand, request, required, forced)
        if operand is IND:
            return IND
        inside = any(operand == item.value for item in expr.items)
        return not inside if expr.negated else inside
    a, b = ev(expr.left, request, required, forced), ev(expr.right, request, required, forced)
    if a is IND or b is IND:
        return IND
    if isinstance(expr, Arith):
        if a is None or b is None:
            return None
        return a + b if expr.op == "+" else a - b
    if expr.op == "==":
        return a == b
    if expr.op == "!=":
        return a != b
    if a is None or b is None:
        return False  # an unset optional is never ordered
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[expr.op]


def top_atoms(expr) -> list:
    """The atoms of a condition through and/or/not, left to right (how boundaries and their comparisons are
    numbered)."""
    if isinstance(expr, (And, Or)):
        return [a for item in expr.items for a in top_atoms(item)]
    if isinstance(expr, Not):
        return top_atoms(expr.operand)
    return [expr]


def rule_value(rule, request: dict, required: set[str], forced: dict[int, bool]) -> str:
    """XACML 3.0, 7.11 (table 4): target first; Indeterminate keeps the rule's effect (written IND here)."""
    if rule.target is not None:
        t = ev(rule.target, request, required, forced)
        if t is IND:
            return IND
        if not truthy(t):
            return NA
    if rule.condition is not None:
        c = ev(rule.condition, request, required, forced)
        if c is IND:
            return IND
        if not truthy(c):
            return NA
    return APPLIES


def single(rule, value: str) -> str:
    if value == APPLIES:
        return PERMIT if rule.effect == "permit" else DENY
    return IND_P if rule.effect == "permit" else IND_D


def combine(model: PolicyModel, values: dict[str, str]) -> tuple[str, list[str]]:
    """The decision and the deciding rules, from every rule's value (XACML 3.0 Appendix C, rule combining)."""
    rules = model.rules
    applying = [r.name for r in rules if values[r.name] == APPLIES]
    undecided = [r.name for r in rules if values[r.name] == IND]
    effect = {r.name: r.effect for r in rules}
    algorithm = model.algorithm
    if algorithm in ("deny-overrides", "permit-overrides"):
        strong, weak = ("deny", "permit") if algorithm == "deny-overrides" else ("permit", "deny")
        name = {"deny": DENY, "permit": PERMIT}
        ind = {"deny": IND_D, "permit": IND_P}
        if any(effect[n] == strong for n in applying):
            return name[strong], [n for n in applying if effect[n] == strong]
        error_strong = any(effect[n] == strong for n in undecided)
        error_weak = any(effect[n] == weak for n in undecided)
        weak_applies = any(effect[n] == weak for n in applying)
        if error_strong and (error_weak or weak_applies):
            return IND_DP, undecided
        if error_strong:
            return ind[strong], undecided
        if weak_applies:
            return name[weak], applying
        if error_weak:
            return ind[weak], undecided
        return NA, []
    if algorithm == "first-applicable":
        for r in rules:
            if values[r.name] != NA:
                return single(r, values[r.name]), [r.name]
        return NA, []
    if algorithm == "only-one-applicable":
        counted = [r for r in rules if values[r.name] != NA]
        if not counted:
            return NA, []
        if len(counted) > 1:
            return IND_DP, [r.name for r in counted]
        return single(counted[0], values[counted[0].name]), [counted[0].name]
    strong = "permit" if algorithm == "deny-unless-permit" else "deny"
    winners = [n for n in applying if effect[n] == strong]
    if winners:
        return (PERMIT if strong == "permit" else DENY), winners
    return (DENY if strong == "permit" else PERMIT), [n for n in applying if effect[n] != strong]


def evaluate(model: PolicyModel, request: dict, forced: dict[int, bool] | None = None,
             without: str | None = None) -> tuple[dict[str, str], str, list[str]]:
    """Every rule's value, the decision, the deciding rules; `without`: that rule taken as NotApplicable."""
    required = {n for n, a in model.attributes.items() if not a.type.optional}
    values = {r.name: rule_value(r, request, required, forced or {}) for r in model.rules}
    if without is not None:
        values[without] = NA
    decision, deciding = combine(model, values)
    return values, decision, deciding


# ------------------------------------------------------------------ requests as the golden writes them


def written_type(model: PolicyModel, name: str) -> str:
    """The attribute's type as the model file writes it (`int`, `int[0..5]`, `number precision 0.01 [..]`, ...)."""
    attribute = model.attributes[name]
    line = Path(model.file).read_text(encoding="utf-8").splitlines()[attribute.loc.line - 1]
    return line.split(":", 1)[1].strip()


def admits(model: PolicyModel, name: str, value) -> bool:
    vtype = model.attributes[name].type
    if value is None:
        return vtype.optional
    if vtype.kind == "bool":
        return isinstance(value, bool)
    if vtype.kind == "string":
        return isinstance(value, str)
    if vtype.kind == "enum":
        return isinstance(value, str) and value in vtype.values
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return False
    if vtype.kind == "int" and not isinstance(value, int):
        return False
    if isinstance(value, Decimal) and not value.is_finite():
        return False
    unbounded = vtype.kind == "int" and written_type(model, name).split()[0].rstrip("?") == "int"
    if not unbounded and ((vtype.lo is not None and value < vtype.lo) or (vtype.hi is not None and value > vtype.hi)):
        return False  # plain `int` is any whole number, whatever bounds the parsed type carries
    if vtype.kind == "number":
        steps = Decimal(value) * (Decimal(10) ** vtype.scale)
        return steps == steps.to_integral_value()
    return True


def read_request(model: PolicyModel, attributes: dict) -> dict | None:
    """The request the policy sees (present attributes only, optional ones left out as None); None: invalid."""
    out = {}
    for key, value in attributes.items():
        name = key
        if "." not in key:
            mine = [a for a in model.attributes.values() if a.category == key]
            named = [a for a in mine if a.name == "id"]
            if named:
                name = named[0].qualified
            elif len(mine) == 1:
                name = mine[0].qualified
            else:
                return None
        if name not in model.attributes:
            continue  # not declared: noted and ignored
        if isinstance(value, float):
            value = Decimal(repr(value))
        if value is None and not model.attributes[name].type.optional:
            continue  # missing
        if not admits(model, name, value):
            return None
        out[name] = value
    for name, attribute in model.attributes.items():
        if attribute.type.optional:
            out.setdefault(name, None)
    return out


# ------------------------------------------------------------------ the rules (coverage-rules/policy.md)


def action_of(model: PolicyModel):
    enums = [a for a in model.attributes.values() if a.category == "action" and a.type.kind == "enum"]
    named = [a for a in enums if a.name == "id"]
    return (named or enums or [None])[0]


def boundary_parts(element: str) -> tuple[str, str, str | None, Decimal]:
    rule, rest = element[len("boundary:"):].split(":", 1)
    what, value = rest.split("=", 1)
    left, right = what.split("-", 1) if "-" in what else (what, None)
    return rule, left, right, Decimal(value)


def comparison_points(model: PolicyModel, atom) -> list[tuple[str, str | None, Decimal]]:
    """The two values closest to the edge of an ordering comparison of a numeric attribute with a number (or with
    another numeric attribute: their difference), found by stepping over the grid of the declared precision."""
    if not isinstance(atom, Compare) or atom.op not in ("<", "<=", ">", ">="):
        return []
    left, op, right = atom.left, atom.op, atom.right
    if isinstance(left, Lit) and isinstance(right, Ref):
        left, right, op = right, left, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
    types = {n: a.type for n, a in model.attributes.items()}
    numeric = ("int", "number")
    if not isinstance(left, Ref) or left.name not in types or types[left.name].kind not in numeric:
        return []
    if isinstance(right, Lit) and isinstance(right.value, (int, Decimal)) and not isinstance(right.value, bool):
        other, edge, scale = None, Decimal(right.value), types[left.name].scale
    elif isinstance(right, Ref) and right.name in types and types[right.name].kind in numeric:
        other, edge, scale = right.name, Decimal(0), max(types[left.name].scale, types[right.name].scale)
    else:
        return []
    step = Decimal(1).scaleb(-scale)
    holds = {"<": lambda d: d < edge, "<=": lambda d: d <= edge, ">": lambda d: d > edge, ">=": lambda d: d >= edge}[op]
    start = (edge // step) * step - 2 * step
    grid = [start + k * step for k in range(6)]
    for a, b in zip(grid, grid[1:]):
        if holds(a) != holds(b):
            return [(left.name, other, a), (left.name, other, b)]
    return []


def request_judgement(model: PolicyModel, elements: list[str], request: dict, checks) -> tuple[set, set]:
    """(exercised, verified) for one evaluated request; `checks(decision, deciding)` is the golden's checks (None:
    it checks nothing)."""
    values, decision, deciding = evaluate(model, request)
    exercised, verified = set(), set()
    action = action_of(model)

    def fails(**change) -> bool:
        return not checks(*evaluate(model, request, **change)[1:])

    for element in elements:
        kind = element.split(":", 1)[0]
        if kind == "rule":
            name, which = element.split(":")[1:]
            hit = values[name] == APPLIES if which == "applicable" else \
                decision in (PERMIT, DENY) and name in deciding
            if hit:
                exercised.add(element)
                if checks is not None and fails(without=name):
                    verified.add(element)
        elif kind == "conflict":
            a, b = element[len("conflict:"):].split("|")
            if values[a] == APPLIES and values[b] == APPLIES:
                exercised.add(element)
                if checks is not None and (fails(without=a) or fails(without=b)):
                    verified.add(element)
        elif kind == "effect":
            parts = element.split(":")
            wanted, word = (parts[1], parts[2]) if len(parts) == 3 else (None, parts[1])
            given = request.get(action.qualified) if action is not None else None
            if decision == word.capitalize() and given == wanted:
                exercised.add(element)
                if checks is not None:
                    verified.add(element)
        elif kind == "boundary":
            rule_name, left, right, value = boundary_parts(element)
            a, b = request.get(left), request.get(right) if right is not None else 0
            if any(v is None or isinstance(v, bool) or not isinstance(v, (int, Decimal)) for v in (a, b)):
                continue
            if Decimal(a) - Decimal(b) != value:
                continue
            exercised.add(element)
            if checks is None:
                continue
            rule = next(r for r in model.rules if r.name == rule_name)
            required = {n for n, at in model.attributes.items() if not at.type.optional}
            for part in (rule.target, rule.condition):
                for atom in top_atoms(part) if part is not None else []:
                    if (left, right, value) not in comparison_points(model, atom):
                        continue
                    now = ev(atom, request, required, {})
                    if now is not IND and fails(forced={id(atom): not truthy(now)}):
                        verified.add(element)
    return exercised, verified


def same_decision(expected: str, actual: str) -> bool:
    return expected == actual or (expected == IND and actual.startswith("Indeterminate"))


def judge(model: PolicyModel, case: GoldenCase, elements: list[str] | None = None) -> dict[str, str]:
    """Element id -> "verified" / "exercised" for one golden (absent: not covered)."""
    return judgement(model, case, elements)[0]


def judgement(model: PolicyModel, case: GoldenCase, elements: list[str] | None = None
              ) -> tuple[dict[str, str], bool, bool]:
    """(statuses, contradicted, invalid) for one golden."""
    if elements is None:
        elements = [e.id for e in support("policy").enumerate(model)]
    if case.turns:
        return conversation(model, case, elements)
    if case.request is None or case.model != model.name:
        return {}, False, False
    request = read_request(model, case.request.attributes)
    if request is None:
        return {}, False, True
    _, decision, deciding = evaluate(model, request)
    expect = case.request.expect
    named = [n for n in case.request.reason or () if n in {r.name for r in model.rules}]
    checks = None
    contradicted = False
    if expect is not None:
        def checks(d, found):
            return same_decision(expect, d) and all(n in found for n in named)

        contradicted = not checks(decision, deciding)
    exercised, verified = request_judgement(model, elements, request, None if contradicted else checks)
    return {e: VERIFIED if e in verified else EXERCISED for e in exercised}, contradicted, False


def applies_to(fsm, case: GoldenCase) -> bool:
    if case.model is not None:
        return case.model == fsm.name
    if case.contract is not None and fsm.contracts:
        return case.contract in fsm.contracts
    return True


def checked_calls(fsm, case: GoldenCase, steps: list, tool: str) -> set[tuple[int, int]]:
    """(step, position) of the calls of `tool` a tool_arguments check reads: the latest call of the tool it names,
    or the latest passing the argument it names, in its turn's step (final assertions: in the whole run)."""
    tools = set(fsm.tools())
    out = set()

    def read(calls, tool_arguments):
        for key, value in tool_arguments.items():
            if key in tools and isinstance(value, dict):
                hits = [c for c in calls if c[2] == key]
            else:
                hits = [c for c in calls if key in c[3]]
            if hits and hits[-1][2] == tool:
                out.add(hits[-1][:2])

    every = []
    for k, step in enumerate(steps, start=1):
        mine = [(k, p, name, args) for p, (name, args) in enumerate(step.calls)]
        every += mine
        if k <= len(case.turns) and case.turns[k - 1].expect.tool_arguments:
            read(mine, case.turns[k - 1].expect.tool_arguments)
    if case.final.tool_arguments:
        read(every, case.final.tool_arguments)
    return out


def conversation(model: PolicyModel, case: GoldenCase, elements: list[str]) -> tuple[dict[str, str], bool, bool]:
    exercised, verified = set(), set()
    contradicted, trusted = False, True
    base = case.request.attributes if case.request is not None else {}
    for e in model.enforcements:
        fsm = e.fsm_model
        if not e.linked or fsm is None or not applies_to(fsm, case):
            continue
        fsm_verdict = fsm_judge.judge(fsm, case)
        ran = fsm_judge.run_case(fsm, case)
        if fsm_verdict.invalid or ran is None:
            continue  # noted by mbt; the calls are not checked
        steps = ran[0]
        checked = checked_calls(fsm, case, steps, e.tool)
        made = 0
        for k, step in enumerate(steps, start=1):
            for position, (tool, args) in enumerate(step.calls):
                if tool != e.tool:
                    continue
                made += 1
                env = dict(step.variables)
                env.update({f"args.{name}": v for name, v in args.items()})
                attributes = dict(base)
                attributes.update({m.attribute: fsm_judge.value_of(m.value, env) for m in e.mappings})
                request = read_request(model, attributes)
                if request is None:
                    return {}, contradicted, True
                _, decision, _ = evaluate(model, request)
                if decision != PERMIT:
                    contradicted = True
                ex, ver = request_judgement(model, elements, request,
                                            (lambda d, found: d == PERMIT) if (k, position) in checked else None)
                exercised |= ex
                verified |= ver if decision == PERMIT else set()
        if made and (fsm_verdict.contradicted or fsm_verdict.expected_forbidden):
            trusted = False
    if contradicted or not trusted:
        verified = set()
    return {e: VERIFIED if e in verified else EXERCISED for e in exercised}, contradicted, False


# ------------------------------------------------------------------ random policies and goldens

ATTRIBUTES = """  subject.id: string
  subject.role: enum{agent, admin, guest}
  subject.level: int[0..5]
  subject.n: int
  resource.owner: string
  resource.amount: number precision 0.01 [0..2000]
  resource.limit: number precision 0.1
  resource.tag: string?
  environment.flag: bool
  environment.opt: bool?
  action.id: enum{read, write, pay}
"""
BIG = [3000000000, 5000000000, 2147483647, -4000000000]


class Generator:
    """Random policies whose comparisons and requests meet: the constants written go into the request values."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.ints: set[int] = {0, 1, 5} | {b + d for b in BIG for d in (-1, 0, 1)}
        self.amounts: set[Decimal] = {Decimal("0.00")}

    def int_term(self, depth: int) -> str:
        rng = self.rng
        if depth > 0 and rng.random() < 0.2:
            return f"{self.int_term(depth - 1)} {rng.choice('+-')} {rng.choice(['subject.level', 'subject.n', '1'])}"
        if rng.random() < 0.5:
            return rng.choice(["subject.level", "subject.n"])
        value = rng.choice([rng.randrange(-1, 6), rng.choice(BIG)])
        self.ints.update((value - 1, value, value + 1))
        return str(value)

    def atom(self) -> str:
        rng = self.rng
        kind = rng.randrange(9)
        if kind == 0:
            op = rng.choice(["<", "<=", ">", ">="])
            value = Decimal(rng.choice(["100.00", "1000.00", "100.005", "1500.5"]))
            self.amounts.update(v.quantize(Decimal("0.01")) for v in (value - Decimal("0.01"), value,
                                                                       value + Decimal("0.01")))
            return rng.choice([f"resource.amount {op} {value}", f"{value} {op} resource.amount"])
        if kind == 1:
            return f"resource.amount {rng.choice(['<', '<=', '>', '>='])} resource.limit"
        if kind == 2:
            return f"{self.int_term(1)} {rng.choice(['==', '!=', '<', '<=', '>', '>='])} {self.int_term(1)}"
        if kind == 3:
            return rng.choice(["subject.level >= 3", "subject.level < 2", f"subject.n > {rng.choice(BIG)}",
                               f"subject.n in {{{rng.choice(BIG)}, 5}}", "subject.n + subject.level >= 5000000001"])
        if kind == 4:
            return rng.choice(["subject.role == agent", "subject.role != guest", "subject.role in {agent, admin}",
                               "action.id == pay", "action.id not in {read}", "action.id == write"])
        if kind == 5:
            return rng.choice(["subject.id == resource.owner", "subject.id == \"u1\"", "resource.tag == none",
                               "resource.tag == \"vip\"", "resource.tag != \"x\""])
        if kind == 6:
            return rng.choice(["environment.flag", "environment.opt", "environment.opt == true",
                               "not environment.flag"])
        if kind == 7:
            return f"resource.amount - subject.level {rng.choice(['>', '<='])} 99.99"
        return f"subject.level {rng.choice(['>', '<='])} resource.limit"

    def condition(self, depth: int) -> str:
        rng = self.rng
        roll = rng.random()
        if depth <= 0 or roll < 0.35:
            return self.atom()
        if roll < 0.7:
            parts = [f"({self.condition(depth - 1)})" for _ in range(rng.randrange(2, 4))]
            return f" {rng.choice(['and', 'or'])} ".join(parts)
        if roll < 0.8:
            return f"not ({self.condition(depth - 1)})"
        if roll < 0.93:  # a condition compared as a value: three-valued logic inside the comparison
            other = rng.choice(["true", "false", "environment.flag", f"({self.condition(depth - 1)})"])
            return f"({self.condition(depth - 1)}) {rng.choice(['==', '!='])} {other}"
        return f"({self.condition(depth - 1)}) in {{{rng.choice(['true', 'false'])}}}"

    def policy(self, enforce: str = "") -> str:
        rng = self.rng
        algorithm = rng.choice(["deny-overrides", "permit-overrides", "first-applicable", "only-one-applicable",
                                "deny-unless-permit", "permit-unless-deny"])
        lines = ["policy p {", f"  combining {algorithm}", ATTRIBUTES.rstrip("\n")]
        for i in range(rng.randrange(1, 6)):
            rule = f"  {rng.choice(['permit', 'deny'])} r{i}"
            if rng.random() < 0.6:
                rule += f" target {self.condition(1)}"
            if rng.random() < 0.75:
                rule += f" when {self.condition(2)}"
            lines.append(rule)
        return "\n".join(lines + ([enforce] if enforce else []) + ["}"]) + "\n"

    def value(self, name: str, vtype) -> Any:
        rng = self.rng
        if rng.random() < 0.006:  # a value the attribute cannot take: the case is invalid
            return rng.choice(["oops", 10.005, True, 7]) if vtype.kind != "string" else 3
        if vtype.optional and rng.random() < 0.3:
            return None
        if vtype.kind == "bool":
            return rng.random() < 0.5
        if vtype.kind == "enum":
            return rng.choice(vtype.values)
        if vtype.kind == "string":
            return rng.choice(["u1", "u2", "vip", "x"])
        if name == "subject.level":
            return rng.randrange(0, 6)
        if vtype.kind == "int":
            return rng.choice(sorted(self.ints))
        if name == "resource.amount":
            choice = rng.choice(sorted(self.amounts) + [Decimal("100.00"), Decimal("99.99")])
            return float(choice) if rng.random() < 0.3 else choice  # as JSON would give it
        return rng.choice([Decimal("100.0"), Decimal("100.1"), Decimal("1000.0"), Decimal("3"), Decimal("2")])

    def request(self, model: PolicyModel, limit: Decimal | None = None) -> dict:
        rng = self.rng
        out: dict[str, Any] = {}
        for name, attribute in model.attributes.items():
            if rng.random() < 0.18:
                continue  # left out: missing (required) or none (optional)
            out[name] = self.value(name, attribute.type)
        other = out.get("resource.limit")
        if isinstance(other, Decimal) and "resource.amount" in out and rng.random() < 0.3:
            # on an attribute-to-attribute boundary
            out["resource.amount"] = Decimal(other) + rng.choice([Decimal("0"), Decimal("0.01"), Decimal("-0.1")])
        if rng.random() < 0.05:
            out["subject.dept"] = "x"  # not declared: ignored
        if "action.id" in out and rng.random() < 0.3:
            out["action"] = out.pop("action.id")  # a bare category value: its id attribute
        if rng.random() < 0.02:
            out["environment"] = True  # two environment attributes, none named id: invalid
        return out

    def expectation(self, model: PolicyModel, raw: dict, request: dict | None) -> None:
        """`expect` and `reason`: mostly what the judge's evaluator decides, often wrong on purpose."""
        rng = self.rng
        if rng.random() < 0.12:
            if rng.random() < 0.3:
                raw["reason"] = "r0"
            return
        decision, deciding = (evaluate(model, request)[1:] if request is not None else (PERMIT, []))
        roll = rng.random()
        if roll < 0.6:
            raw["expect"] = decision
        elif roll < 0.7 and decision.startswith("Indeterminate"):
            raw["expect"] = "Indeterminate"
        else:
            raw["expect"] = rng.choice(DECISIONS + ["Indeterminate"])
        roll = rng.random()
        if roll < 0.35 and deciding:
            raw["reason"] = rng.sample(deciding, rng.randrange(1, len(deciding) + 1))
        elif roll < 0.5:
            raw["reason"] = [rng.choice(model.rules).name]
        elif roll < 0.55:
            raw["reason"] = "nobody"


SHOP = """fsm shop {
  var who: string? = none
  state idle initial
  state open
  state done final
  event start(name: string)
  event pay(amount: int[0..6000000000])
  event close
  idle -> open on start(n) / who := n
  open -> open on pay(a) [a <= 4000000000] / call pay(amount = a, payer = who)
  open -> done on pay(a) [a > 4000000000] / call pay(amount = a, payer = who), call pay(amount = 1, payer = who)
  open -> done on close / discard who
}
"""
ENFORCE = "  enforce call pay in shop { subject.n = args.amount, subject.id = args.payer, action.id = pay }"
AMOUNTS = [0, 1, 5, 3000000000, 4000000000, 4000000001, 5000000000]


def random_conversation(rng: random.Random, gen: Generator, fsm, model: PolicyModel, number: int) -> dict:
    turns: list[dict] = []
    for _ in range(rng.randrange(1, 5)):
        event = rng.choice(["start", "pay", "pay", "close"])
        turn: dict[str, Any] = {"event": event}
        if event == "start":
            turn["args"] = {"name": rng.choice(["u1", "u2"])}
        elif event == "pay":
            turn["args"] = {"amount": rng.choice(AMOUNTS + sorted(v for v in gen.ints if 0 <= v <= 6000000000))}
        turns.append(turn)
    raw: dict[str, Any] = {"id": f"C{number}", "model": "shop", "turns": turns}
    steps = fsm_judge.run_case(fsm, parse_case(raw, "judge.yaml", number))[0]
    for k, turn in enumerate(turns):
        calls = steps[k].calls if k < len(steps) else []
        roll = rng.random()
        if calls and roll < 0.5:  # check a call of this step, with its true argument or a wrong one
            tool, args = calls[rng.randrange(len(calls))]
            amount = args["amount"] if rng.random() < 0.85 else 7
            turn["tool_arguments"] = rng.choice([{"pay": {"amount": amount}}, {"amount": amount}, {"pay": {}}])
        elif roll < 0.55:
            turn["tool_arguments"] = {"pay": {}}  # expects a call; a contradiction where none is made
        if rng.random() < 0.15 and k < len(steps):
            turn["assert_state"] = {"state": steps[k].after if rng.random() < 0.7 else "idle"}
    if rng.random() < 0.3:
        raw["assertions"] = {"tool_arguments": rng.choice([{"pay": {}}, {"amount": 1}, {"payer": "u1"}])}
    if rng.random() < 0.6:
        given = {n: v for n, v in gen.request(model).items() if n not in ("subject.n", "subject.id", "action.id")}
        raw["request"] = {k: v for k, v in given.items() if k not in ("action", "environment")}
    return raw


def kleene_inside(model: PolicyModel, request: dict) -> bool:
    """Some comparison or `in` of a rule has an and/or/not operand that is known although an attribute it reads is
    missing (`(a > 1 or b > 1) == true` with b missing and a = 5): three-valued logic inside a comparison."""
    required = {n for n, a in model.attributes.items() if not a.type.optional}
    for rule in model.rules:
        for part in (rule.target, rule.condition):
            for node in part.walk() if part is not None else []:
                operands = [node.left, node.right] if isinstance(node, Compare) else \
                    [node.operand] if isinstance(node, Member) else []
                for operand in operands:
                    if isinstance(operand, (And, Or, Not)) and ev(operand, request, required, {}) is not IND and \
                            any(isinstance(r, Ref) and r.name in required and r.name not in request
                                for r in operand.walk()):
                        return True
    return False


def campaign(cases: int, seed: int, per_model: int = 10, tally: dict | None = None) -> Campaign:
    """Judge and `mbt coverage` on `cases` random goldens (request cases, and conversations whose calls the policy
    guards) over random policies: every element's status, whether the golden contradicts, whether it is invalid.
    `tally` (a dict) counts what the goldens were like, to show the generator reaches every path."""
    tally = {} if tally is None else tally
    rng = random.Random(seed)
    result = Campaign("policy")
    with tempfile.TemporaryDirectory() as folder:
        number = 0
        while result.cases < cases:
            gen = Generator(rng)
            talk = rng.random() < 0.25
            path = Path(folder) / f"p{number}.model"
            path.write_text((SHOP if talk else "") + gen.policy(ENFORCE if talk else ""), encoding="utf-8")
            models = load_models([str(path)])[1]
            model = next(m for m in models if m.kind == "policy")
            fsm = next((m for m in models if m.kind == "fsm"), None)
            elements = [e.id for e in support("policy").enumerate(model)]
            goldens = []
            for _ in range(min(per_model, cases - result.cases - len(goldens))):
                number += 1
                if talk and rng.random() < 0.8:
                    raw = random_conversation(rng, gen, fsm, model, number)
                else:
                    attributes = gen.request(model)
                    raw = {"id": f"R{number}", "policy": "p", "request": attributes}
                    gen.expectation(model, raw, read_request(model, attributes))
                goldens.append(parse_case(raw, "judge.yaml", number))
            report = measure([model], GoldenSet(cases=goldens))
            measured = statuses_by_case(report, goldens)
            for case in goldens:
                judged, contradicted, invalid = judgement(model, case, elements)
                request = read_request(model, case.request.attributes) if case.request is not None else None
                for feature, present in (
                        ("conversation", bool(case.turns)), ("contradicted", contradicted), ("invalid", invalid),
                        ("verified", VERIFIED in judged.values()),
                        ("large whole number", request is not None and any(
                            isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2 ** 31 for v in
                            request.values())),
                        ("missing attribute", request is not None and not case.turns and any(
                            n not in request for n in model.attributes)),
                        ("indeterminate", request is not None and not case.turns and
                         evaluate(model, request)[1].startswith("Indeterminate")),
                        ("three-valued inside a comparison", request is not None and not case.turns and
                         kleene_inside(model, request))):
                    tally[feature] = tally.get(feature, 0) + present
                got = dict(measured[case.id])
                judged = {**judged, "contradicted": str(contradicted), "invalid": str(invalid)}
                got["contradicted"] = str(any(c.case == case.id for c in report.contradictions))
                got["invalid"] = str(any(f"`{case.id}`" in i.message for i in report.invalid_cases))
                result.compare(f"{path.name} {case.id}", judged, got)
    return result
