"""Resolves an `invariants for FSM` block against its FSM (from any loaded file): names, types, stable keys."""

from __future__ import annotations

import difflib
from dataclasses import replace

from mbt.errors import Problem, problem_at
from mbt.model.common import Location
from mbt.model.expr import And, Compare, EnumLit, Expr, Not, Or, Ref
from mbt.model.fsm import FsmModel, ToolCall
from mbt.model.invariant import CallMade, EventIs, Invariant, InvariantModel, Scope
from mbt.model.typecheck import Checker, TypeProblem
from mbt.model.types import ValueType
from mbt.parsing.common import annotation_fields
from mbt.parsing.invariant_rules import RawInvariants

STATE = "state"  # the control state inside propositions (a reserved word, so never a variable's name)


def _hint(name: str, known) -> str | None:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"did you mean `{close[0]}`?" if close else None


class InvariantResolver:
    def __init__(self, raw: RawInvariants, fsm: FsmModel, path: str, text: str, sources: dict):
        self.raw, self.fsm, self.path, self.text = raw, fsm, path, text
        self.problems: list[Problem] = []
        self.base = self._base_scope()
        self.tool_args = self._tool_args()

    # ---- reporting
    def problem(self, where: Location | Expr, message: str, hint: str | None = None) -> None:
        line, column = (where.line or self.raw.loc.line), (where.column or self.raw.loc.column)
        self.problems.append(problem_at(self.path, self.text, line, column, message, hint))

    # ---- scopes
    def _base_scope(self) -> dict[str, ValueType]:
        m = self.fsm
        scope = m.state_scope()
        scope[STATE] = ValueType("enum", values=tuple(m.states))
        return scope

    def _tool_args(self) -> dict[str, dict[str, ValueType]]:
        """Each tool the FSM calls, with the type of every argument some call passes (as fsm_resolve types them)."""
        m = self.fsm
        out: dict[str, dict[str, ValueType]] = {}
        for t in m.transitions:
            event = m.events.get(t.event)
            scope = {k: v for k, v in self.base.items() if k != STATE}
            if event is not None:
                for local, p in zip(t.params or [p.name for p in event.params], event.params):
                    scope[local] = p.type
            for action in t.actions:
                if isinstance(action, ToolCall):
                    known = out.setdefault(action.tool, {})
                    for name, value in action.args:
                        try:
                            known.setdefault(name, Checker(scope).typed(value)[1])
                        except TypeProblem:  # already reported when the FSM was read
                            pass
        return out

    # ---- propositions
    def prop(self, expr: Expr) -> Expr:
        """Type a proposition: conditions over the variables and `state`, with `on` and `call` atoms inside."""
        return self.condition(expr, self.base, atoms=True)

    def condition(self, expr: Expr, scope: dict[str, ValueType], atoms: bool = False) -> Expr:
        """Type a condition in `scope`; `state == NAME` names a state even where a variable has that name."""
        if atoms and isinstance(expr, EventIs):
            return self.event_prop(expr)
        if atoms and isinstance(expr, CallMade):
            return self.call_prop(expr)
        if isinstance(expr, Not):
            return replace(expr, operand=self.condition(expr.operand, scope, atoms))
        if isinstance(expr, (And, Or)):
            return replace(expr, items=tuple(self.condition(i, scope, atoms) for i in expr.items))
        if isinstance(expr, Compare) and (_is_state(expr.left) or _is_state(expr.right)):
            return self.state_compare(expr)
        for node in expr.walk():  # (brackets hold plain expressions: the grammar keeps `on`/`call` out of them)
            if isinstance(node, (EventIs, CallMade)):
                raise TypeProblem(node, f"`{node.text()}` is a condition; it cannot be compared or added",
                                  "combine it with `and`, `or`, `not`")
        return Checker(scope).condition(expr)

    def state_compare(self, expr: Compare) -> Compare:
        left_is_state = _is_state(expr.left)
        other = expr.right if left_is_state else expr.left
        if expr.op not in ("==", "!="):
            raise TypeProblem(expr, "`state` can only be compared with == or !=", "or write `state in {a, b}`")
        if _is_state(other):
            return expr
        if not isinstance(other, Ref) or "." in other.name:
            raise TypeProblem(other, f"`state` is compared with a state name, not `{other.text()}`")
        if other.name not in self.fsm.states:
            raise TypeProblem(other, f"fsm `{self.fsm.name}` has no state `{other.name}`",
                              _hint(other.name, self.fsm.states))
        name = EnumLit(other.name, line=other.line, column=other.column)
        return replace(expr, right=name) if left_is_state else replace(expr, left=name)

    def event_prop(self, expr: EventIs) -> EventIs:
        event = self.fsm.events.get(expr.event)
        if event is None:
            raise TypeProblem(expr, f"fsm `{self.fsm.name}` has no event `{expr.event}`", _hint(expr.event, self.fsm.events))
        if expr.condition is None:
            return expr
        scope = dict(self.base)
        for p in event.params:
            if p.name in self.fsm.variables:
                raise TypeProblem(expr, f"parameter `{p.name}` of `{event.name}` hides the variable of the same name",
                                  "rename the parameter in the fsm")
            scope[p.name] = p.type
        return replace(expr, condition=self.condition(expr.condition, scope))

    def call_prop(self, expr: CallMade) -> CallMade:
        if expr.tool not in self.tool_args:
            known = sorted(self.tool_args)
            hint = _hint(expr.tool, known) or (f"it calls {', '.join(f'`{t}`' for t in known)}" if known
                                               else "it calls no tool")
            raise TypeProblem(expr, f"fsm `{self.fsm.name}` never calls tool `{expr.tool}`", hint)
        if expr.condition is None:
            return expr
        scope = dict(self.base)
        for name, vtype in self.tool_args[expr.tool].items():
            scope[f"args.{name}"] = vtype
        for node in expr.condition.walk():
            if isinstance(node, Ref) and node.name.startswith("args.") and node.name not in scope:
                raise TypeProblem(node, f"tool `{expr.tool}` is never called with argument `{node.name[5:]}`",
                                  _hint(node.name, [k for k in scope if k.startswith("args.")]))
        return replace(expr, condition=self.condition(expr.condition, scope))

    # ---- the block
    def resolve(self) -> InvariantModel:
        raw, fsm = self.raw, self.fsm
        model = InvariantModel(name=raw.name, file=self.path, loc=raw.loc, fsm=fsm.name, fsm_model=fsm,
                               contracts=list(fsm.contracts), title=fsm.title, **annotation_fields(raw.notes))
        seen: dict[str, Location] = {}
        for inv in raw.items:
            key = inv.explicit_id or inv.name
            if key in seen:
                self.problem(inv.loc, f"invariant `{key}` is declared twice (first at line {seen[key].line})")
                continue
            seen[key] = inv.loc
            resolved = self.invariant(inv)
            if resolved is not None:
                resolved.key = key
                model.invariants.append(resolved)
        return model

    def invariant(self, inv: Invariant) -> Invariant | None:
        try:
            fields: dict[str, Expr | Scope] = {"p": self.prop(inv.p)}
            if inv.s is not None:
                fields["s"] = self.prop(inv.s)
            if inv.antecedent is not None:
                fields["antecedent"] = self.prop(inv.antecedent)
            scope = inv.scope
            fields["scope"] = Scope(kind=scope.kind, open=self.prop(scope.open) if scope.open is not None else None,
                                    close=self.prop(scope.close) if scope.close is not None else None)
        except TypeProblem as err:
            self.problem(err.node if getattr(err.node, "line", 0) else inv.loc, err.message, err.hint)
            return None
        return inv.model_copy(update=fields)


def _is_state(expr: Expr) -> bool:
    return isinstance(expr, Ref) and expr.name == STATE


def resolve_invariants(raw: RawInvariants, fsms: dict[str, FsmModel], path: str, text: str,
                       sources: dict) -> tuple[InvariantModel | None, list[Problem]]:
    """The typed model and its problems; (None, [problem]) when the FSM it names was not among the files read."""
    fsm = fsms.get(raw.fsm)
    if fsm is None:
        hint = _hint(raw.fsm, fsms) or "read the file that declares it too (e.g. give its folder)"
        return None, [problem_at(path, text, raw.fsm_loc.line, raw.fsm_loc.column,
                                 f"invariants for unknown fsm `{raw.fsm}`: no file read declares it", hint)]
    resolver = InvariantResolver(raw, fsm, path, text, sources)
    model = resolver.resolve()
    return model, resolver.problems
