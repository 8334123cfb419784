"""Transformer rules for policy.lark: build a RawPolicy from its parse tree (names and types are resolved afterwards)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from lark import v_args

from mbt.model.common import Location
from mbt.model.policy import DENY, NOT_APPLICABLE, PERMIT, Assertion, Attribute, Combining, Enforcement, Mapping, Rule
from mbt.model.typecheck import INT_ANY
from mbt.model.types import ValueType
from mbt.parsing.common import Annotations, annotation_fields, unquote

INDETERMINATE = "Indeterminate"  # an assert about Indeterminate means any of the three extended values


class PolicyRules:
    """Mixin for the file transformer (see CommonRules for `self.loc`)."""

    # ---- types (bool, string, int[..] and enum come from FsmRules)
    def policy_any_int(self, children):
        return INT_ANY

    @v_args(meta=True)
    def policy_number_type(self, meta, children):
        precision, bounds = children
        lo, hi = bounds if bounds is not None else (None, None)
        # Checked by the resolver (which knows the position): precision a power of ten, bounds on its grid.
        return RawNumber(precision.value, lo.value if lo is not None else None,
                         hi.value if hi is not None else None, self.loc(meta))

    def policy_range(self, children):
        return tuple(children)

    def policy_type(self, children):
        base, optional = children
        if optional is None:
            return base
        if isinstance(base, RawNumber):
            base.optional = True
            return base
        return ValueType(base.kind, base.lo, base.hi, base.values, optional=True, scale=base.scale)

    # ---- items: each returns (item-kind, value) for policy_model to sort
    def policy_title(self, children):
        return ("title", unquote(children[0]))

    def policy_contract(self, children):
        return ("contract", unquote(children[0]))

    @v_args(meta=True)
    def policy_combining(self, meta, children):
        algorithm, notes = children
        return ("combining", Combining(algorithm=str(algorithm), loc=self.loc(algorithm), **annotation_fields(notes)))

    def category_subject(self, children):
        return "subject"

    def category_resource(self, children):
        return "resource"

    def category_action(self, children):
        return "action"

    def category_environment(self, children):
        return "environment"

    @v_args(meta=True)
    def policy_attribute(self, meta, children):
        category, name, vtype, notes = children
        return ("attribute", (Attribute(category=category, name=str(name), type=ValueType("string"),
                                        loc=self.loc(meta), **annotation_fields(notes)), vtype))

    def effect_permit(self, children):
        return "permit"

    def effect_deny(self, children):
        return "deny"

    def policy_target(self, children):
        return children[0]

    def policy_condition(self, children):
        return children[0]

    @v_args(meta=True)
    def policy_rule(self, meta, children):
        effect, name, target, condition, notes = children
        return ("rule", Rule(name=str(name), effect=effect, target=target, condition=condition, loc=self.loc(meta),
                             **annotation_fields(notes)))

    def quantifier_never(self, children):
        return "never"

    def quantifier_always(self, children):
        return "always"

    def decision_permit(self, children):
        return PERMIT

    def decision_deny(self, children):
        return DENY

    def decision_not_applicable(self, children):
        return NOT_APPLICABLE

    def decision_indeterminate(self, children):
        return INDETERMINATE

    @v_args(meta=True)
    def policy_assert(self, meta, children):
        quantifier, decision, when, notes = children
        return ("assert", Assertion(quantifier=quantifier, decision=decision, when=when, loc=self.loc(meta),
                                    **annotation_fields(notes)))

    @v_args(meta=True)
    def policy_mapping(self, meta, children):
        attribute, value = children
        return Mapping(attribute=str(attribute), value=value, loc=self.loc(meta))

    @v_args(meta=True)
    def policy_enforce(self, meta, children):
        tool, fsm, notes, *mappings = children
        return ("enforce", Enforcement(tool=str(tool), fsm=str(fsm), mappings=[m for m in mappings if m is not None],
                                       loc=self.loc(meta), **annotation_fields(notes)))

    # ---- the model
    @v_args(meta=True)
    def policy_model(self, meta, children):
        name, notes, *items = children
        raw = RawPolicy(name=str(name), loc=self.loc(name), notes=notes)
        for kind, value in items:
            raw.items.setdefault(kind, []).append(value)
        return raw


@dataclass
class RawNumber:
    """`number precision P [LO..HI]` as written; the resolver checks it and makes the ValueType."""

    precision: Decimal | int
    lo: Decimal | int | None
    hi: Decimal | int | None
    loc: Location
    optional: bool = False


@dataclass
class RawPolicy:
    """A policy as written, before names are resolved and types checked (see policy_resolve)."""

    name: str
    loc: Location
    notes: Annotations
    items: dict[str, list] = field(default_factory=dict)

