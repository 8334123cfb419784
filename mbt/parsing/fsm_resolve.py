"""Resolves a written FSM: duplicate and unknown names, types of guards and actions, stable element keys."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from mbt.errors import Problem
from mbt.model.common import Location, ModelBase, Status
from mbt.model.expr import EnumLit, Expr, Lit, Ref
from mbt.model.fsm import (
    ARGUMENT_SOURCES,
    Assign,
    Discard,
    Effect,
    Event,
    Forbid,
    FsmModel,
    ToolCall,
    Transition,
    Variable,
)
from mbt.model.typecheck import Checker, TypeProblem
from mbt.model.types import ValueType
from mbt.parsing.common import annotation_fields
from mbt.parsing.fsm_rules import RawFsm

RESERVED_VARIABLES = {"state", "discarded", "args"}


class Resolver:
    def __init__(self, raw: RawFsm, path: str, text: str, sources: dict):
        self.raw, self.path, self.text = raw, path, text
        self.problems: list[Problem] = []
        self.model = FsmModel(name=raw.name, file=path, loc=raw.loc, sources=sources, **annotation_fields(raw.notes))

    # ---- reporting
    def problem(self, loc: Location | Expr, message: str, hint: str | None = None) -> None:
        line, column = loc.line, loc.column
        lines = self.text.splitlines()
        source_line = lines[line - 1] if 1 <= line <= len(lines) else None
        self.problems.append(Problem(self.path, line, column, message, source_line, hint))

    def type_problem(self, err: TypeProblem, fallback: Location) -> None:
        node = err.node
        where = node if getattr(node, "line", 0) else fallback
        self.problem(where, err.message, err.hint)

    def hint_for(self, name: str, known: Iterable[str]) -> str | None:
        close = difflib.get_close_matches(name, list(known), n=1)
        return f"did you mean `{close[0]}`?" if close else None

    # ---- resolution
    def resolve(self) -> FsmModel:
        m, items = self.model, self.raw.items
        m.title = (items.get("title") or [None])[-1]
        m.contracts = items.get("contract", [])
        m.complete = bool(items.get("complete"))
        m.bindings = items.get("bind", [])
        self.declare_all()
        m.discardable = sorted({a.target for t in items.get("transition", []) for a in t.actions
                                if isinstance(a, Discard)})
        self.check_variables()
        self.check_bindings()
        tool_args = self.check_transitions()
        self.check_forbids(tool_args)
        self.check_run_declarations()
        self.assign_keys()
        if m.complete:
            self.add_sneak_paths()
        return m

    def add_sneak_paths(self) -> None:
        """In a model declared `complete`, every event a non-final state does not handle is forbidden there
        (Binder's sneak paths): the system must refuse it."""
        m = self.model
        handled = {(t.source, t.event) for t in m.transitions}
        declared = {(f.source, f.event) for f in m.forbids if f.guard is None}
        for state in m.states.values():
            if state.final:
                continue
            for event in m.events:
                if (state.name, event) in handled or {(state.name, event), (None, event), (state.name, None)} & declared:
                    continue
                m.forbids.append(Forbid(source=state.name, event=event, loc=m.loc, key=f"sneak:{state.name}.{event}",
                                        sneak=True, status=Status.inferred,
                                        status_reason="the model is declared complete"))

    def declare_all(self) -> None:
        m = self.model
        for kind, table, label in (("var", m.variables, "variable"), ("state", m.states, "state"),
                                   ("event", m.events, "event")):
            for item in self.raw.items.get(kind, []):
                element = item[0] if kind == "var" else item
                if element.name in table:
                    first = table[element.name].loc
                    self.problem(element.loc, f"{label} `{element.name}` is declared twice (first at line {first.line})")
                    continue
                if kind == "var" and element.name in RESERVED_VARIABLES:
                    self.problem(element.loc, f"`{element.name}` is reserved and cannot name a variable")
                    continue
                table[element.name] = element
        if not m.states:
            self.problem(m.loc, f"fsm `{m.name}` declares no states", "add `state NAME initial`")
            return
        initial = [s for s in m.states.values() if s.initial]
        if not initial:
            self.problem(m.loc, f"fsm `{m.name}` has no initial state", "mark one state `initial`")
        for extra in initial[1:]:
            self.problem(extra.loc, f"a second initial state `{extra.name}` (first is `{initial[0].name}`)")

    def state_scope(self) -> dict[str, ValueType]:
        return self.model.state_scope()

    def check_variables(self) -> None:
        declared: list[tuple[Variable, Expr | None]] = self.raw.items.get("var", [])
        for var, initial in declared:
            if self.model.variables.get(var.name) is not var:
                continue
            if initial is None:
                var.initial = var.type.default()
                continue
            try:
                node = Checker({}).value(initial, var.type)
            except TypeProblem as err:
                self.type_problem(err, var.loc)
                continue
            assert isinstance(node, (Lit, EnumLit))  # an initial value is a literal or an enum name (the grammar)
            var.initial = node.value

    def check_bindings(self) -> None:
        m = self.model
        for binding in m.bindings:
            event = m.events.get(binding.event)
            if event is None:
                self.problem(binding.loc, f"binding to unknown event `{binding.event}`", self.hint_for(binding.event, m.events))
                continue
            if binding.how == "regex":
                try:
                    compiled = re.compile(binding.pattern)
                except re.error as err:
                    self.problem(binding.loc, f"invalid regular expression: {err}")
                    continue
                for group in compiled.groupindex:
                    if event.param(group) is None:
                        self.problem(binding.loc, f"regex group `{group}` is not a parameter of event `{event.name}`")

    def check_run_declarations(self) -> None:
        """`bind tool`, `claim` and `escalation` (observed runs, docs/runs.md): known tools, events and states."""
        m, items = self.model, self.raw.items
        tools = set(m.tools())
        for b in items.get("bind_tool", []):
            if b.tool not in tools:
                self.problem(b.loc, f"`bind tool {b.tool}`: no transition calls `{b.tool}`", self.hint_for(b.tool, tools))
                continue
            event = m.events.get(b.event)
            if event is None:
                self.problem(b.loc, f"binding to unknown event `{b.event}`", self.hint_for(b.event, m.events))
                continue
            if b.outcome == "ok" and b.codes:
                self.problem(b.loc, "`ok(...)` names result fields; only `error(\"CODE\")` matches codes")
                continue
            if b.outcome == "error" and len(b.fields) > 1:
                self.problem(b.loc, "`error(...)` passes one value, the error type")
                continue
            targets = b.params or [p.name for p in event.params][:len(b.fields)]
            if len(targets) != len(b.fields) or len(b.fields) > len(event.params):
                self.problem(b.loc, f"`{b.event}` has {len(event.params)} parameter(s); the binding passes "
                                    f"{len(b.fields)} value(s) to {len(targets)} name(s)")
                continue
            unknown = [p for p in targets if event.param(p) is None]
            if unknown:
                self.problem(b.loc, f"`{unknown[0]}` is not a parameter of event `{b.event}`")
                continue
            b.params = list(targets)
            m.tool_bindings.append(b)
        for c in items.get("claim", []):
            if c.state not in m.states:
                self.problem(c.loc, f"`claim {c.state}`: unknown state", self.hint_for(c.state, m.states))
                continue
            m.claims.append(c)
        for tool, loc in items.get("escalation", []):
            if tool not in tools:
                self.problem(loc, f"`escalation {tool}`: no transition calls `{tool}`", self.hint_for(tool, tools))
                continue
            m.escalations.append(tool)

    def event_scope(self, event: Event, local_names: list[str], where: Location) -> dict[str, ValueType] | None:
        scope = self.state_scope()
        if len(local_names) > len(event.params):
            self.problem(where, f"event `{event.name}` has {len(event.params)} parameter(s), {len(local_names)} named here")
            return None
        names = local_names or [p.name for p in event.params]
        for name, param in zip(names, event.params):
            if name in self.model.variables:
                self.problem(where, f"parameter name `{name}` hides the variable of the same name",
                             f"name it differently, e.g. `on {event.name}({name}_)`")
                return None
            scope[name] = param.type
        return scope

    def check_transitions(self) -> dict[str, dict[str, ValueType]]:
        m = self.model
        tool_args: dict[str, dict[str, ValueType]] = {}
        resolved: list[Transition] = []
        for t in self.raw.items.get("transition", []):
            ok = True
            for role, name in (("source", t.source), ("target", t.target)):
                if name not in m.states:
                    self.problem(t.loc, f"unknown {role} state `{name}`", self.hint_for(name, m.states))
                    ok = False
            event = m.events.get(t.event)
            if event is None:
                self.problem(t.loc, f"unknown event `{t.event}`", self.hint_for(t.event, m.events))
                continue
            scope = self.event_scope(event, t.params, t.loc)
            if scope is None or not ok:
                continue
            try:
                if t.guard is not None:
                    t.guard = Checker(scope).condition(t.guard)
                t.actions = self.check_actions(t.actions, scope, tool_args)
            except TypeProblem as err:
                self.type_problem(err, t.loc)
                continue
            if m.states[t.source].final:
                self.problem(t.loc, f"final state `{t.source}` cannot have outgoing transitions")
                continue
            resolved.append(t)
        m.transitions = resolved
        return tool_args

    def check_actions(self, actions, scope, tool_args) -> list:
        m = self.model
        out = []
        for action in actions:
            if isinstance(action, Assign):
                var = m.variables.get(action.target)
                if var is None:
                    raise TypeProblem(Ref(action.target, line=action.loc.line, column=action.loc.column),
                                      f"assignment to unknown variable `{action.target}`",
                                      self.hint_for(action.target, m.variables))
                action.value = Checker(scope).value(action.value, var.type)
            elif isinstance(action, Discard):
                var = m.variables.get(action.target)
                if var is None:
                    raise TypeProblem(Ref(action.target, line=action.loc.line, column=action.loc.column),
                                      f"discard of unknown variable `{action.target}`")
                if not var.type.optional:
                    raise TypeProblem(Ref(action.target, line=action.loc.line, column=action.loc.column),
                                      f"`discard {action.target}` needs an optional variable (it becomes none)",
                                      f"declare it as `{var.type.text()}?`")
            elif isinstance(action, ToolCall):
                self.check_arg_paths(action)
                known = tool_args.setdefault(action.tool, {})
                args = []
                for name, value in action.args:
                    value, vtype = Checker(scope).typed(value)
                    known.setdefault(name, vtype)
                    args.append((name, value))
                action.args = args
            out.append(action)
        return out

    def check_arg_paths(self, call: ToolCall) -> None:
        """One value per argument path in a call: not `x` twice, nor `a` beside its field `a.b` (what would the tool
        receive?)."""
        names = [name for name, _ in call.args]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise TypeProblem(Ref(name, line=call.loc.line, column=call.loc.column),
                                  f"argument `{name}` is given twice in this call")
            fields = [other for other in names if other.startswith(name + ".")]
            if fields:
                raise TypeProblem(Ref(name, line=call.loc.line, column=call.loc.column),
                                  f"argument `{name}` is given a value and fields (`{fields[0]}`) in this call")

    def check_forbids(self, tool_args) -> None:
        m = self.model
        resolved: list[Forbid] = []
        for f in self.raw.items.get("forbid", []):
            ok = True
            for role, name in (("source", f.source), ("target", f.target)):
                if name is not None and name not in m.states:
                    self.problem(f.loc, f"unknown {role} state `{name}`", self.hint_for(name, m.states))
                    ok = False
            scope: dict[str, ValueType] | None = self.state_scope()
            if f.event is not None:
                event = m.events.get(f.event)
                if event is None:
                    self.problem(f.loc, f"unknown event `{f.event}`", self.hint_for(f.event, m.events))
                    continue
                scope = self.event_scope(event, [], f.loc)
            if scope is None or not ok:
                continue
            try:
                if f.guard is not None:
                    f.guard = Checker(scope).condition(f.guard)
                if f.effect is not None and f.effect.kind == "call":
                    self.check_effect(f.effect, scope, tool_args, f.loc)
            except TypeProblem as err:
                self.type_problem(err, f.loc)
                continue
            resolved.append(f)
        m.forbids = resolved

    def check_effect(self, effect: Effect, scope, tool_args, loc: Location) -> None:
        if effect.tool not in tool_args:
            # Forbidding a tool the model never calls is legitimate (it must never be called at all).
            tool_args.setdefault(effect.tool, {})
        for path, names in effect.sources.items():
            unknown = [n for n in names if n not in ARGUMENT_SOURCES]
            if unknown:
                self.problem(loc, f"`{unknown[0]}` is not an argument source (known: {', '.join(ARGUMENT_SOURCES)})")
            # The path names an argument the model passes, a field of one, or a structured argument whose fields it
            # passes (`call t(a.b = ...)`: `args.a` and `args.a.b` are both its).
            passed = tool_args[effect.tool]
            if passed and not any(name == path or path.startswith(name + ".") or name.startswith(path + ".")
                                  for name in passed):
                self.problem(loc, f"tool `{effect.tool}` is never called with argument `{path.split('.')[0]}`")
        if effect.condition is not None:
            call_scope = dict(scope)
            for name, vtype in tool_args[effect.tool].items():
                call_scope[f"args.{name}"] = vtype
            for node in effect.condition.walk():
                if isinstance(node, Ref) and node.name.startswith("args.") and node.name not in call_scope:
                    raise TypeProblem(node, f"tool `{effect.tool}` is never called with argument `{node.name[5:]}`")
            effect.condition = Checker(call_scope).condition(effect.condition)

    def assign_keys(self) -> None:
        """Stable readable keys: `source.event->target` (+ `#n` for repeats), unless the element names its own id."""
        explicit: dict[str, Location] = {}
        seen: dict[str, int] = {}  # transitions and forbids have separate id namespaces (transition:, forbidden:)
        for t in self.model.transitions:
            base = t.explicit_id or f"{t.source}.{t.event}->{t.target}"
            t.key = self.unique(base, seen, explicit, t)
        seen = {}
        for f in self.model.forbids:
            base = f.explicit_id or forbid_key(f)
            f.key = self.unique(base, seen, explicit, f)

    def unique(self, base: str, seen: dict[str, int], explicit: dict[str, Location], element) -> str:
        if element.explicit_id:
            if base in explicit:
                self.problem(element.loc, f"id `{base}` is used twice (first at line {explicit[base].line})")
            explicit[base] = element.loc
        seen[base] = seen.get(base, 0) + 1
        return base if seen[base] == 1 else f"{base}#{seen[base]}"


def forbid_key(f: Forbid) -> str:
    key = f"{f.source or 'any'}.{f.event or '*'}"
    if f.target:
        key += f"->{f.target}"
    if f.effect is not None:
        key += f"!call:{f.effect.tool}" if f.effect.kind == "call" else "!say"
        key += "".join(f"!{arg}:{'+'.join(names)}" for arg, names in f.effect.sources.items())
    return key


def resolve_fsm(raw: RawFsm, path: str, text: str, sources: dict) -> tuple[FsmModel, list[Problem]]:
    resolver = Resolver(raw, path, text, sources)
    model = resolver.resolve()
    return model, resolver.problems


__all__ = ["resolve_fsm", "forbid_key", "ModelBase", "EnumLit", "Lit"]
