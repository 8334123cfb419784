"""The typed ABAC policy model (XACML 3.0): attributes by category, permit/deny rules, a combining algorithm, asserts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr

from mbt.model.common import Annotated, Location, ModelBase
from mbt.model.expr import Expr
from mbt.model.fsm import FsmModel
from mbt.model.types import ValueType

CATEGORIES = ("subject", "resource", "action", "environment")
ALGORITHMS = ("deny-overrides", "permit-overrides", "first-applicable", "only-one-applicable",
              "deny-unless-permit", "permit-unless-deny")
Effect = Literal["permit", "deny"]

# Decisions as XACML names them; the three Indeterminate values say which effects the request could have had.
PERMIT, DENY, NOT_APPLICABLE = "Permit", "Deny", "NotApplicable"
INDETERMINATE_D, INDETERMINATE_P, INDETERMINATE_DP = "Indeterminate{D}", "Indeterminate{P}", "Indeterminate{DP}"
DECISIONS = (PERMIT, DENY, NOT_APPLICABLE, INDETERMINATE_D, INDETERMINATE_P, INDETERMINATE_DP)


class Attribute(Annotated):
    """`subject.role: enum{...}`: one attribute of a request; without `?` a request must carry it."""

    category: str  # one of CATEGORIES
    name: str  # without the category
    type: ValueType

    @property
    def qualified(self) -> str:
        return f"{self.category}.{self.name}"


class Combining(Annotated):
    """`combining ALGORITHM`: how the rules' values make the policy's decision."""

    algorithm: str  # one of ALGORITHMS


class Rule(Annotated):
    """`permit|deny NAME target EXPR when EXPR`: the rule's value is its effect when both hold."""

    name: str
    effect: Effect
    target: Expr | None = None
    condition: Expr | None = None

    def text(self) -> str:
        out = f"{self.effect} {self.name}"
        if self.target is not None:
            out += f" target {self.target.text()}"
        if self.condition is not None:
            out += f" when {self.condition.text()}"
        return out


class Assertion(Annotated):
    """`assert never|always DECISION [when EXPR]`: a declared property `mbt check` proves or refutes."""

    quantifier: Literal["never", "always"]
    decision: str  # Permit, Deny, NotApplicable or Indeterminate (any of the three)
    when: Expr | None = None

    def text(self) -> str:
        word = {PERMIT: "permit", DENY: "deny", NOT_APPLICABLE: "not-applicable"}.get(self.decision, "indeterminate")
        return f"assert {self.quantifier} {word}" + (f" when {self.when.text()}" if self.when is not None else "")


class Mapping(BaseModel):
    """One `ATTRIBUTE = EXPR` of an enforce block; EXPR reads the FSM's variables and the call's `args.NAME`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    attribute: str  # qualified name
    value: Expr
    loc: Location


class Enforcement(Annotated):
    """`enforce call TOOL in FSM { ... }`: every call of TOOL in that FSM must be permitted by this policy."""

    tool: str
    fsm: str
    mappings: list[Mapping] = []
    linked: bool = False  # the FSM was loaded and the mappings type-checked against it (parsing/policy_link.py)
    _fsm: FsmModel | None = PrivateAttr(default=None)  # once linked

    @property
    def fsm_model(self) -> FsmModel | None:
        return self._fsm


class PolicyModel(ModelBase):
    kind: Literal["policy"] = "policy"
    combining: list[Combining] = []  # exactly one after resolution (a list so its span is checked like the rest)
    attributes: dict[str, Attribute] = {}  # by qualified name, in declaration order
    rules: list[Rule] = []
    assertions: list[Assertion] = []
    enforcements: list[Enforcement] = []

    @property
    def algorithm(self) -> str:
        return self.combining[0].algorithm

    def rule(self, name: str) -> Rule | None:
        return next((r for r in self.rules if r.name == name), None)

    def scope(self) -> dict[str, ValueType]:
        return {name: a.type for name, a in self.attributes.items()}

    def action_attribute(self) -> Attribute | None:
        """The enum attribute that names the action (`action.id`, else the first enum of the action category):
        effect elements and gap findings are given per action."""
        enums = [a for a in self.attributes.values() if a.category == "action" and a.type.kind == "enum"]
        return next((a for a in enums if a.name == "id"), enums[0] if enums else None)
