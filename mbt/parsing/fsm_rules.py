"""Transformer rules for fsm.lark: build an FsmModel from its parse tree (names are resolved afterwards)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import v_args

from mbt.model.common import Location
from mbt.model.fsm import (
    Assign,
    Binding,
    Claim,
    Discard,
    Effect,
    Event,
    Forbid,
    Param,
    State,
    ToolBinding,
    ToolCall,
    Transition,
    Variable,
)
from mbt.model.types import BOOL, STRING, ValueType
from mbt.parsing.common import Annotations, annotation_fields, unquote


class FsmRules:
    """Mixin for the file transformer (see CommonRules for `self.loc`)."""

    # ---- types
    def bool_type(self, children):
        return BOOL

    def string_type(self, children):
        return STRING

    def pos_bound(self, children):
        return int(children[0])

    def neg_bound(self, children):
        return -int(children[0])

    def int_type(self, children):
        return ValueType("int", lo=children[0], hi=children[1])

    def enum_type(self, children):
        return ValueType("enum", values=tuple(str(c) for c in children))

    def type_ref(self, children):
        base, optional = children
        if optional is None:
            return base
        return ValueType(base.kind, base.lo, base.hi, base.values, optional=True)

    # ---- items: each returns (item-kind, value) for fsm_model to sort
    def fsm_title(self, children):
        return ("title", unquote(children[0]))

    def fsm_contract(self, children):
        return ("contract", unquote(children[0]))

    def fsm_complete(self, children):
        return ("complete", True)

    @v_args(meta=True)
    def var_decl(self, meta, children):
        name, vtype, initial, notes = children
        var = Variable(name=str(name), type=vtype, loc=self.loc(name), **annotation_fields(notes))
        # The initial literal is checked against the type by the resolver (enum values arrive as bare names).
        return ("var", (var, initial))

    def initial_flag(self, children):
        return "initial"

    def final_flag(self, children):
        return "final"

    @v_args(meta=True)
    def state_decl(self, meta, children):
        name, *flags, notes = children
        return ("state", State(name=str(name), initial="initial" in flags, final="final" in flags,
                               loc=self.loc(name), **annotation_fields(notes)))

    def param(self, children):
        return Param(name=str(children[0]), type=children[1])

    def param_list(self, children):
        return [c for c in children if c is not None]

    @v_args(meta=True)
    def event_decl(self, meta, children):
        name, params, notes = children
        return ("event", Event(name=str(name), params=params or [], loc=self.loc(name), **annotation_fields(notes)))

    @v_args(meta=True)
    def bind_decl(self, meta, children):
        how, pattern, event, notes = children
        return ("bind", Binding(how=str(how), pattern=unquote(pattern), event=str(event), loc=self.loc(meta),
                                **annotation_fields(notes)))

    def result_fields(self, children):
        return [c for c in children if c is not None]

    @v_args(meta=True)
    def bind_tool_decl(self, meta, children):
        tool, outcome, fields, event, params, notes = children
        fields = fields or []
        names = [str(f) for f in fields if f.type == "NAME"]
        codes = [unquote(f) for f in fields if f.type == "STRING"]
        return ("bind_tool", ToolBinding(tool=str(tool), outcome=str(outcome), fields=names, codes=codes,
                                         event=str(event), params=params or [], loc=self.loc(meta),
                                         **annotation_fields(notes)))

    @v_args(meta=True)
    def claim_decl(self, meta, children):
        state, *phrases, notes = children
        return ("claim", Claim(state=str(state), phrases=[unquote(p) for p in phrases], loc=self.loc(state),
                               **annotation_fields(notes)))

    @v_args(meta=True)
    def escalation_decl(self, meta, children):
        return ("escalation", (str(children[0]), self.loc(children[0])))

    def param_names(self, children):
        return [str(c) for c in children if c is not None]

    def guard(self, children):
        return children[0]

    effect_guard = guard  # a call effect's condition: the same as a guard, a rule of its own for the parser

    def actions(self, children):
        return list(children)

    @v_args(meta=True)
    def assign(self, meta, children):
        target, value = children
        return Assign(target=str(target), value=value, loc=self.loc(meta))

    @v_args(meta=True)
    def discard(self, meta, children):
        return Discard(target=str(children[0]), loc=self.loc(meta))

    @v_args(meta=True)
    def call(self, meta, children):
        tool, *args = children
        return ToolCall(tool=str(tool), args=[a for a in args if a is not None], loc=self.loc(meta))

    def tool_arg(self, children):
        return (str(children[0]), children[1])

    @v_args(meta=True)
    def transition_decl(self, meta, children):
        source, target, event, params, guard, actions, notes = children
        return ("transition", Transition(
            source=str(source), target=str(target), event=str(event), params=params or [], guard=guard,
            actions=actions or [], loc=self.loc(meta), **annotation_fields(notes)))

    # ---- forbidden transitions
    def forbid_source(self, children):
        return children[0]

    def any_state(self, children):
        return None

    def forbid_event(self, children):
        return children[0]

    def any_event(self, children):
        return None

    def matching(self, children):
        return [unquote(c) for c in children]

    def effect_call(self, children):
        tool, condition, sources, matching = children
        return Effect(kind="call", tool=str(tool), condition=condition, matching=matching or [],
                      sources=sources or {})

    def arg_sources(self, children):
        return dict(children)

    def arg_source(self, children):
        path, names = children
        return path, names

    def arg_path(self, children):
        return ".".join(str(c) for c in children)

    def source_names(self, children):
        return [str(c) for c in children]

    def effect_say(self, children):
        description, matching = children
        return Effect(kind="say", description=unquote(description), matching=matching or [])

    @v_args(meta=True)
    def forbid_decl(self, meta, children):
        source, event, guard, target, effect, notes = children
        return ("forbid", Forbid(
            source=str(source) if source is not None else None, event=str(event) if event is not None else None,
            guard=guard, target=str(target) if target is not None else None, effect=effect, loc=self.loc(meta),
            **annotation_fields(notes)))

    # ---- the model
    @v_args(meta=True)
    def fsm_model(self, meta, children):
        name, notes, *items = children
        raw = RawFsm(name=str(name), loc=self.loc(name), notes=notes)
        for kind, value in items:
            raw.items.setdefault(kind, []).append(value)
        return raw


@dataclass
class RawFsm:
    """An FSM as written, before names are resolved and types checked (see fsm_resolve)."""

    name: str
    loc: Location
    notes: Annotations
    items: dict[str, list] = field(default_factory=dict)
