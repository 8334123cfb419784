"""The policies that enforce an FSM's tool calls, as conditions on the steps of a witness run.

A conversation golden of an FSM is replayed on every policy that declares `enforce call TOOL in FSM {...}`: each call
of TOOL becomes a request, its attributes read by the mappings from the FSM's variables after the step and the
call's arguments (mbt/goldens/replay_policy.py). A value outside an attribute's declared range makes the whole case
invalid, and a call the policy does not permit is a contradiction. So a witness that goes through such a call must
choose its arguments so that the request is valid and, where the run allows it, permitted.

The conditions reuse the solver constraints of the policy analysis: each attribute's domain as `Symbols` declares
it (range and precision) and the decision formula of `PolicyEncoding` over requests that may lack attributes,
with the attribute symbols replaced by the FSM's terms. Where every value is concrete the request is checked on
the policy evaluator instead, exactly as replay builds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import z3

from mbt.analysis.policy_smt import PolicyEncoding
from mbt.analysis.smt import Symbols, Term, string_val
from mbt.engine.policy import PolicyEvaluator
from mbt.generate.symbolic import Cond, Constraint, SymbolicFsm
from mbt.model.fsm import FsmModel, ToolCall
from mbt.model.policy import PERMIT, Enforcement, PolicyModel
from mbt.model.types import ValueType


def enforcements_of(fsm: FsmModel, models: list) -> list[tuple[PolicyModel, Enforcement]]:
    """The enforce blocks among `models` linked to this FSM (the same object the policies were linked to)."""
    return [(m, e) for m in models if isinstance(m, PolicyModel)
            for e in m.enforcements if e.linked and e.fsm_model is fsm]


@dataclass
class _Policy:
    model: PolicyModel
    enforcement: Enforcement
    mappings: list[tuple[str, Any]]  # (attribute, expression) in block order
    evaluator: PolicyEvaluator
    encoding: PolicyEncoding | None = None  # made on the first symbolic call
    symbols: Symbols | None = None


class EnforcedCalls:
    """Conditions that the calls of enforced tools a step makes are valid requests of their policies and, with
    `permitted`, requests those policies permit."""

    def __init__(self, engine: SymbolicFsm, enforcements: list[tuple[PolicyModel, Enforcement]], permitted: bool):
        self.engine, self.permitted = engine, permitted
        self.policies: dict[str, list[_Policy]] = {}
        for policy, e in enforcements:
            self.policies.setdefault(e.tool, []).append(_Policy(
                policy, e, [(m.attribute, m.value) for m in e.mappings], PolicyEvaluator(policy)))
        # The transitions that call an enforced tool: only their steps get conditions.
        self.calling = {i for i, t in enumerate(engine.transitions)
                        if any(isinstance(a, ToolCall) and a.tool in self.policies for a in t.actions)}

    def names(self) -> list[str]:
        return sorted({f"`{p.model.name}`" for found in self.policies.values() for p in found})

    def conditions(self, store: dict[str, Any], t_index: int, args: dict[str, Any]) -> list[Cond]:
        """For each call of an enforced tool that transition `t_index` makes from `store` with `args`: its request
        is valid (and permitted)."""
        if t_index not in self.calling:
            return []
        calls: list[dict[str, Any]] = []

        def on_call(call: ToolCall, values: dict[str, Any], env: dict, types: dict) -> None:
            if call.tool in self.policies:
                calls.append({"tool": call.tool, "values": values, "types": types})

        engine = self.engine
        after = engine.apply(store, t_index, args, on_call)
        env = dict(after)  # the mappings read the variables after the step (as replay does) and `args.NAME`
        out: list[Cond] = []
        for call in calls:
            scope = dict(env)
            scope.update({f"args.{name}": value for name, value in call["values"].items()})
            for policy in self.policies[call["tool"]]:
                values = {attribute: engine.value(expr, scope, call["types"]) for attribute, expr in policy.mappings}
                if any(isinstance(v, Term) for v in values.values()):
                    out.append(self._symbolic(policy, values))
                else:
                    out.append(self._concrete(policy, values))
        return out

    # ------------------------------------------------------------ every value known: the evaluator decides
    def _concrete(self, policy: _Policy, values: dict[str, Any]) -> bool:
        request: dict[str, Any] = {}
        attributes = policy.model.attributes
        for name, value in values.items():
            if value is None:
                continue  # a value that is none at the call leaves the attribute out
            if not attributes[name].type.admits(value):
                return False
            request[name] = value
        for name, declared in attributes.items():
            if declared.type.optional and name not in request:
                request[name] = None  # an optional attribute left out is `none`
        return not self.permitted or policy.evaluator.evaluate(request).decision == PERMIT

    # ------------------------------------------------------------ some value symbolic: z3 decides
    def _symbolic(self, policy: _Policy, values: dict[str, Any]) -> Cond:
        if policy.encoding is None:
            policy.encoding = PolicyEncoding(policy.model, complete=False)
            policy.symbols = Symbols(policy.model.scope())
        scope = policy.model.scope()
        pairs: list[tuple[z3.ExprRef, z3.ExprRef]] = []
        valid: list[z3.BoolRef] = []
        leaves: set[str] = set()
        for name, vtype in scope.items():
            const = z3.Const(name, _sort(vtype))
            value = values.get(name)
            flag = z3.Bool(f"{name}?set" if vtype.optional else f"{name}?given")
            if isinstance(value, Term) and value.kind != "none":
                converted = self._convert(value, vtype, policy)
                if converted is None:
                    return True  # a value this encoding does not carry over: left to the replay check
                leaves |= value.leaves
                pairs += [(const, converted), (flag, value.is_set)]
                valid.append(z3.Or(z3.Not(value.is_set), z3.And(self._domain(name, vtype, converted, policy))))
            elif isinstance(value, Term) or value is None:
                pairs += [(const, _placeholder(vtype)), (flag, z3.BoolVal(False))]  # left out of the request
            elif not policy.model.attributes[name].type.admits(value):
                return False
            else:
                pairs += [(const, self._literal(value, vtype, policy)), (flag, z3.BoolVal(True))]
        formula = z3.And(valid) if valid else z3.BoolVal(True)
        if self.permitted:
            formula = z3.And(formula, policy.encoding.decision(PERMIT))
        formula = z3.simplify(z3.substitute(formula, *pairs))
        if z3.is_true(formula) or z3.is_false(formula):
            return bool(z3.is_true(formula))
        return Constraint(formula, frozenset(leaves))

    def _convert(self, term: Term, vtype: ValueType, policy: _Policy) -> z3.ExprRef | None:
        """The FSM term as the policy symbol's value: a number as its count of precision steps, an enum as the
        policy's code for the same name."""
        if vtype.kind == "number":
            return term.value * (10 ** vtype.scale) if term.kind == "int" else None
        if vtype.kind == "enum":
            if term.kind != "enum":
                return None
            assert policy.symbols is not None
            fsm_codes, policy_codes = self.engine.symbols.enums, policy.symbols.enums
            mapped: z3.ExprRef = z3.IntVal(-1)  # a name the policy does not know: outside its domain
            for name in sorted(fsm_codes.codes):
                mapped = z3.If(term.value == fsm_codes.codes[name], z3.IntVal(policy_codes.code(name)), mapped)
            return mapped
        expected = {"int": "int", "bool": "bool", "string": "string"}.get(vtype.kind)
        return term.value if term.kind == expected else None

    @staticmethod
    def _literal(value: Any, vtype: ValueType, policy: _Policy) -> z3.ExprRef:
        """A concrete (valid) value as the policy symbol's value."""
        assert policy.symbols is not None
        if vtype.kind == "number":
            return z3.IntVal(int(Decimal(value).scaleb(vtype.scale)))
        if vtype.kind == "enum":
            return z3.IntVal(policy.symbols.enums.code(value))
        if vtype.kind == "bool":
            return z3.BoolVal(value)
        if vtype.kind == "string":
            return string_val(value)
        return z3.IntVal(value)

    @staticmethod
    def _domain(name: str, vtype: ValueType, value: z3.ExprRef, policy: _Policy) -> list[z3.BoolRef]:
        """The attribute's domain constraints (policy_smt's Symbols), over `value`."""
        assert policy.symbols is not None
        policy.symbols[name]
        own = z3.Const(name, _sort(vtype))
        constraints = policy.symbols.domain({name})
        return [z3.substitute(c, (own, value)) for c in constraints] or [z3.BoolVal(True)]


def _sort(vtype: ValueType):
    if vtype.kind == "bool":
        return z3.BoolSort()
    if vtype.kind == "string":
        return z3.StringSort()
    return z3.IntSort()  # int, enum, and a number's count of precision steps (as policy_smt's Symbols)


def _placeholder(vtype: ValueType) -> z3.ExprRef:
    """Any value for an attribute the request lacks (its flag says it is missing, so the value is never read)."""
    if vtype.kind == "bool":
        return z3.BoolVal(False)
    if vtype.kind == "string":
        return string_val("")
    return z3.IntVal(0)
