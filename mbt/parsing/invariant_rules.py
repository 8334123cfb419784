"""Transformer rules for invariant.lark: build invariants from the parse tree (names are resolved afterwards)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import v_args

from mbt.model.common import Location
from mbt.model.expr import Ref
from mbt.model.invariant import CallMade, EventIs, Invariant, Scope
from mbt.parsing.common import Annotations, annotation_fields, pos


class InvariantRules:
    """Mixin for the file transformer (see CommonRules for `self.loc`)."""

    # ---- propositions
    @v_args(meta=True)
    def state_ref(self, meta, children):
        return Ref("state", **pos(meta))

    @v_args(meta=True)
    def event_prop(self, meta, children):
        event, condition = children
        return EventIs(str(event), condition, **pos(meta))

    @v_args(meta=True)
    def call_prop(self, meta, children):
        tool, condition = children
        return CallMade(str(tool), condition, **pos(meta))

    # ---- patterns: (pattern, fields) for invariant_decl
    def always_pattern(self, children):
        return ("universality", {"p": children[0]})

    def always_implies_pattern(self, children):
        antecedent, consequent = children
        return ("universality", {"antecedent": antecedent, "p": consequent})

    def never_pattern(self, children):
        return ("absence", {"p": children[0]})

    def eventually_pattern(self, children):
        return ("existence", {"p": children[0]})

    def at_most_pattern(self, children):
        bound, prop = children
        return ("bounded-existence", {"bound": int(bound), "p": prop})

    def every_call_pattern(self, children):
        tool, condition = children
        line, column = getattr(tool, "line", 0) or 0, getattr(tool, "column", 0) or 0
        return ("universality", {"antecedent": CallMade(str(tool), line=line, column=column),
                                 "p": CallMade(str(tool), condition, every=True, line=condition.line or line,
                                               column=condition.column or column),
                                 "written": f"every call {tool} [{condition.text()}]"})

    def precedes_pattern(self, children):
        first, then = children
        return ("precedence", {"s": first, "p": then})

    def leads_to_pattern(self, children):
        cause, effect = children
        return ("response", {"s": cause, "p": effect})

    # ---- scopes
    def scope_before(self, children):
        return Scope(kind="before", close=children[0])

    def scope_after(self, children):
        return Scope(kind="after", open=children[0])

    def scope_after_until(self, children):
        return Scope(kind="after-until", open=children[0], close=children[1])

    def scope_between(self, children):
        return Scope(kind="between", open=children[0], close=children[1])

    # ---- items and the block
    @v_args(meta=True)
    def invariant_decl(self, meta, children):
        name, (pattern, fields), scope, matching, notes = children
        return Invariant(name=str(name), pattern=pattern, scope=scope or Scope(), matching=matching or [],
                         loc=self.loc(name), **fields, **annotation_fields(notes))

    @v_args(meta=True)
    def invariants_model(self, meta, children):
        name, fsm, notes, *items = children
        return RawInvariants(name=str(name) if name is not None else f"{fsm}_invariants",
                             loc=self.loc(name if name is not None else meta), fsm=str(fsm), fsm_loc=self.loc(fsm),
                             notes=notes, items=list(items))


@dataclass
class RawInvariants:
    """An `invariants ... for FSM` block as written; resolved against the FSM once every file is read."""

    name: str
    loc: Location
    fsm: str
    fsm_loc: Location
    notes: Annotations
    items: list[Invariant] = field(default_factory=list)
