"""Static checks of an FSM model: reachability, dead ends, guards (z3), forbidden transitions, unused names."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

import networkx as nx
import z3

from mbt.analysis.findings import Check, Finding, check
from mbt.analysis.smt import (
    NONE,
    Solver,
    Symbols,
    Term,
    View,
    boolean,
    constants_of,
    encode_term,
    literal,
    model_to_valuation,
    search,
    truth,
)
from mbt.model.common import Location
from mbt.model.expr import Env, Expr, Ref, compile_expr
from mbt.model.fsm import Action, Assign, Discard, Effect, Forbid, FsmModel, ToolCall, Transition
from mbt.model.types import ValueType

# Check(code, name, severity, doc), registered in mbt.analysis.findings.CHECKS; stable, documented with a bad and a
# good example each in docs/checks.md (doc: its first sentence there).
UNREACHABLE_STATE = check("FSM001", "unreachable-state", "warning",
                          "No chain of transitions leads from the initial state to this state, whatever the guards.")
UNREACHABLE_BY_GUARDS = check("FSM002", "unreachable-by-guards", "warning",
                              "The state is reachable on the graph, but only over transitions whose guard can never "
                              "hold (FSM005), so in fact no run gets there.")
DEAD_END = check("FSM003", "dead-end", "warning",
                 "A state that is not `final` has no outgoing transition (or only transitions whose guard can never "
                 "hold): a run that enters it is stuck.")
NO_FINAL_STATE = check("FSM004", "no-final-state", "info",
                       "The machine declares no `final` state.")
GUARD_NEVER_HOLDS = check("FSM005", "guard-never-holds", "error",
                          "No values of the variables and parameters (within their declared types) satisfy the "
                          "guard, so the transition can never be taken.")
OVERLAPPING_GUARDS = check("FSM006", "overlapping-guards", "error",
                           "Two transitions leave the same state on the same event and their guards can both hold: "
                           "the model is non-deterministic there.")
TRANSITION_FORBIDDEN = check("FSM007", "transition-forbidden", "error",
                             "A declared transition does what a `forbid` declaration forbids.")
FORBID_NEVER_APPLIES = check("FSM008", "forbid-never-applies", "warning",
                             "The forbid's guard can never hold, so the forbid can match nothing and a golden can "
                             "never cover it.")
UNUSED_EVENT = check("FSM009", "unused-event", "info",
                     "An event that no transition, binding or forbid mentions.")
UNUSED_VARIABLE = check("FSM010", "unused-variable", "info",
                        "A variable that no guard, assigned value, tool argument, forbid guard or effect condition "
                        "reads (reading `discarded.X` counts as reading `X`).")
CONFLICTING_BINDINGS = check("FSM011", "conflicting-intent-bindings", "error",
                             "Two `bind intent` lines route the same intent (compared exactly) to different events; "
                             "a turn with that intent cannot be bound deterministically.")

REPLAY_FAILED = " (the solver's witness did not replay on mbt's evaluator; this is an mbt bug, please report it)"


def param_symbol(event: str, param: str) -> str:
    """The symbol of an event parameter; `:` cannot occur in a name, so it never clashes with a variable."""
    return f"{event}:{param}"


def shown_name(symbol: str) -> str:
    return symbol.split(":", 1)[1] if ":" in symbol else symbol


class Condition(Protocol):
    """One condition of a query: the symbols it reads, its constants, a concrete test, and its z3 encoding."""

    @property
    def leaves(self) -> frozenset[str]: ...

    @property
    def constants(self) -> list[Any]: ...

    @property
    def key(self) -> tuple | None:  # equal keys mean equal conditions (for the cache); None: not cached
        ...

    def holds(self, valuation: dict[str, Any]) -> bool:
        """mbt's own evaluator on a valuation of the leaves."""
        ...

    def encode(self) -> Term: ...


@dataclass
class ClosureCondition:
    """A Condition given by its parts (a forbidden effect's)."""

    leaves: frozenset[str]
    constants: list[Any]
    holds: Callable[[dict[str, Any]], bool]
    encode: Callable[[], Term]
    key: tuple | None = None


class GuardCondition:
    """A guard as a Condition; only its key is computed up front, the rest when the cache misses."""

    def __init__(self, checker: FsmChecker, guard: Expr, renames: dict[str, str]):
        self.checker, self.guard, self.renames = checker, guard, renames
        self.names = ref_names(guard)
        # The canonical text plus what each name stands for: equal keys mean equal formulas.
        self.key = (guard.text(), tuple(sorted((r, renames.get(r, r)) for r in self.names)))

    @cached_property
    def leaves(self) -> frozenset[str]:
        return frozenset(self.renames.get(r, r) for r in self.names) & self.checker.symbols.scope.keys()

    @cached_property
    def constants(self) -> list[Any]:
        return constants_of([self.guard])

    def holds(self, valuation: dict[str, Any]) -> bool:
        return bool(self.checker.compiled(self.guard)(local_env(valuation, self.renames)))

    def encode(self) -> Term:
        return encode_term(self.guard, self.checker.symbols.view(self.renames))


class FsmChecker:
    """Runs every FSM check on one model; one solver (push/pop) and one guard cache serve all queries."""

    def __init__(self, model: FsmModel, solver: Solver | None = None):
        self.model = model
        self.solver = solver or Solver()
        self.symbols = Symbols(self.scope())
        self.findings: list[Finding] = []
        self._witnesses: dict[tuple, tuple[str, dict[str, Any] | None]] = {}
        self._compiled: dict[Expr, Callable] = {}

    # ------------------------------------------------------------ scopes
    def scope(self) -> dict[str, ValueType]:
        m = self.model
        scope = m.state_scope()
        for event in m.events.values():
            for p in event.params:
                scope[param_symbol(event.name, p.name)] = p.type
        return scope

    def transition_renames(self, t: Transition) -> dict[str, str]:
        event = self.model.events[t.event]
        names = t.params or [p.name for p in event.params]
        return {local: param_symbol(t.event, p.name) for local, p in zip(names, event.params)}

    def forbid_renames(self, f: Forbid) -> dict[str, str]:
        if f.event is None:
            return {}
        return {p.name: param_symbol(f.event, p.name) for p in self.model.events[f.event].params}

    # ------------------------------------------------------------ solving
    def compiled(self, expr: Expr) -> Callable:
        # Keyed by the (frozen, structurally compared) expression itself: an id() key would be reused by a new
        # temporary expression once the old one is freed, and hand back the wrong closure.
        fn = self._compiled.get(expr)
        if fn is None:
            fn = self._compiled[expr] = compile_expr(expr)
        return fn

    def guard_condition(self, guard: Expr, renames: dict[str, str]) -> GuardCondition:
        return GuardCondition(self, guard, renames)

    def can_hold(self, guard: Expr, renames: dict[str, str]) -> str:
        """"sat", "unsat" or "unknown" for one guard over the domains of what it reads."""
        return self.witness([self.guard_condition(guard, renames)])[0]

    def witness(self, conditions: Sequence[Condition]) -> tuple[str, dict[str, Any] | None]:
        """Can the conditions hold together? ("sat", witness), ("unsat", None) or ("unknown", None).

        Candidate values are tried first with mbt's evaluator; z3 decides the rest, and its witness is replayed on
        the evaluator before it is believed (("sat", None) when it does not replay: an encoding bug, said so).
        """
        keys = tuple(c.key for c in conditions)
        cacheable = all(k is not None for k in keys)
        if cacheable and keys in self._witnesses:
            return self._witnesses[keys]
        result = self._solve(conditions)
        if cacheable:
            self._witnesses[keys] = result
        return result

    def _solve(self, conditions: Sequence[Condition]) -> tuple[str, dict[str, Any] | None]:
        if not conditions:
            return "sat", {}
        leaves = frozenset().union(*(c.leaves for c in conditions))
        constants = [k for c in conditions for k in c.constants]
        scope = self.symbols.scope

        def all_hold(valuation: dict[str, Any]) -> bool:
            return all(c.holds(valuation) for c in conditions)

        found = search({n: scope[n] for n in leaves}, constants, all_hold)
        if found is not None:
            return "sat", shown(found)
        terms = [c.encode() for c in conditions]
        outcome = self.solver.check(terms, self.symbols, want_model=True)
        if not outcome.sat:
            return outcome.status, None
        leaves = leaves.union(*(t.leaves for t in terms))
        valuation = model_to_valuation(outcome.model, self.symbols, leaves)
        if not all(scope[n].admits(v) for n, v in valuation.items()) or not all_hold(valuation):
            return "sat", None
        return "sat", shown(valuation)

    # ------------------------------------------------------------ reporting
    def report(self, kind: Check, location: Location, message: str,
               related: list[Location] | None = None, witness: dict[str, Any] | None = None) -> None:
        code, name, severity = kind.code, kind.name, kind.severity
        self.findings.append(Finding(code=code, name=name, severity=severity, location=location, message=message,
                                     model=self.model.name, related=related or [], witness=witness))

    def at(self, expr: Expr, fallback: Location) -> Location:
        if expr.line:
            return Location(file=fallback.file, line=expr.line, column=expr.column)
        return fallback

    # ------------------------------------------------------------ checks
    def run(self) -> list[Finding]:
        impossible = self.check_guards()
        self.check_reachability(impossible)
        self.check_dead_ends(impossible)
        self.check_overlaps(impossible)
        self.check_forbids()
        self.check_unused()
        self.check_bindings()
        return self.findings

    def check_guards(self) -> set[int]:
        """Report guards that can never hold; returns the indexes of their transitions."""
        impossible = set()
        for i, t in enumerate(self.model.transitions):
            if t.guard is None:
                continue
            if self.can_hold(t.guard, self.transition_renames(t)) == "unsat":
                impossible.add(i)
                self.report(GUARD_NEVER_HOLDS, self.at(t.guard, t.loc),
                            f"guard `{t.guard.text()}` of `{t.source} -> {t.target} on {t.event}` can never hold "
                            "(no values of the variables and parameters satisfy it)")
        return impossible

    def check_reachability(self, impossible: set[int]) -> None:
        m = self.model
        if not any(s.initial for s in m.states.values()):
            return
        graph, feasible = nx.DiGraph(), nx.DiGraph()
        graph.add_nodes_from(m.states)
        feasible.add_nodes_from(m.states)
        for i, t in enumerate(m.transitions):
            graph.add_edge(t.source, t.target)
            if i not in impossible:
                feasible.add_edge(t.source, t.target)
        start = m.initial_state
        reached = nx.descendants(graph, start) | {start}
        reached_feasibly = nx.descendants(feasible, start) | {start}
        for state in m.states.values():
            if state.name not in reached:
                role = "final state" if state.final else "state"
                self.report(UNREACHABLE_STATE, state.loc,
                            f"{role} `{state.name}` cannot be reached from the initial state `{start}`")
            elif state.name not in reached_feasibly:
                self.report(UNREACHABLE_BY_GUARDS, state.loc,
                            f"state `{state.name}` is reachable only over transitions whose guard can never hold")
        if not any(s.final for s in m.states.values()):
            self.report(NO_FINAL_STATE, m.loc, f"fsm `{m.name}` has no final state")

    def check_dead_ends(self, impossible: set[int]) -> None:
        outgoing: dict[str, list[int]] = {}
        for i, t in enumerate(self.model.transitions):
            outgoing.setdefault(t.source, []).append(i)
        for state in self.model.states.values():
            if state.final:
                continue
            ways = outgoing.get(state.name, [])
            if not ways:
                self.report(DEAD_END, state.loc, f"state `{state.name}` is not final but has no outgoing transition")
            elif all(i in impossible for i in ways):
                self.report(DEAD_END, state.loc, f"state `{state.name}` is not final and every outgoing transition "
                                                 "has a guard that can never hold")

    def check_overlaps(self, impossible: set[int]) -> None:
        groups: dict[tuple[str, str], list[int]] = {}
        for i, t in enumerate(self.model.transitions):
            if i not in impossible:
                groups.setdefault((t.source, t.event), []).append(i)
        transitions = self.model.transitions
        for (source, event), members in groups.items():
            if len(members) < 2:
                continue
            for a_pos, a in enumerate(members):
                for b in members[a_pos + 1:]:
                    self.check_overlap(transitions[a], transitions[b], source, event)

    def check_overlap(self, first: Transition, second: Transition, source: str, event: str) -> None:
        conditions = [self.guard_condition(t.guard, self.transition_renames(t)) for t in (first, second)
                      if t.guard is not None]
        status, witness = self.witness(conditions)
        if status != "sat":
            return
        message = (f"guards overlap on `{event}` in state `{source}`: {guard_shown(first)} -> {first.target} "
                   f"(line {first.loc.line}) and {guard_shown(second)} -> {second.target} can both hold")
        self.report(OVERLAPPING_GUARDS, second.loc, message + ("" if witness is not None else REPLAY_FAILED),
                    [first.loc], witness or None)

    # ------------------------------------------------------------ forbids
    def check_forbids(self) -> None:
        by_source: dict[str, list[Transition]] = {}
        for t in self.model.transitions:
            by_source.setdefault(t.source, []).append(t)
        for f in self.model.forbids:
            if f.sneak:
                continue  # derived from the model's own gaps: it matches no declared transition by construction
            renames = self.forbid_renames(f)
            if f.guard is not None and self.can_hold(f.guard, renames) == "unsat":
                self.report(FORBID_NEVER_APPLIES, self.at(f.guard, f.loc),
                            f"forbid `{f.label()}` can never apply: its guard `{f.guard.text()}` never holds")
                continue
            if f.effect is not None and f.effect.kind == "say":
                continue  # what the agent says is behaviour outside the model: no declared transition can match
            if f.effect is not None and f.effect.sources:
                continue  # forbidden by where an argument came from, which only an observed run records
            candidates = by_source.get(f.source, []) if f.source is not None else self.model.transitions
            for t in candidates:
                if f.event is not None and t.event != f.event:
                    continue
                if f.target is not None and t.target != f.target:
                    continue
                self.check_forbid_match(f, t, renames)

    def check_forbid_match(self, f: Forbid, t: Transition, renames: dict[str, str]) -> None:
        conditions: list[Condition] = []
        if f.guard is not None:
            conditions.append(self.guard_condition(f.guard, renames))
        if t.guard is not None:
            conditions.append(self.guard_condition(t.guard, self.transition_renames(t)))
        if f.effect is not None:
            effect = self.effect_condition(f.effect, t, renames)
            if effect is None:
                return
            conditions.append(effect)
        status, witness = self.witness(conditions)
        if status != "sat":
            return
        message = f"transition `{heading(t)}` does what forbid `{f.label()}` (line {f.loc.line}) forbids"
        self.report(TRANSITION_FORBIDDEN, t.loc, message + ("" if witness is not None else REPLAY_FAILED),
                    [f.loc], witness or None)

    def effect_condition(self, effect: Effect, t: Transition, renames: dict[str, str]) -> Condition | None:
        """The condition under which the transition's actions make the forbidden tool call, or None if they never do.

        The effect's condition is read at the moment of the call: `args.NAME` is the call's argument, and the
        variables hold what earlier actions of the same list assigned (e.g. `discarded.email` after `discard email`).
        `renames` are the forbid's own names of the event's parameters.
        """
        tool, condition = effect.tool, effect.condition
        calls = [a for a in t.actions if isinstance(a, ToolCall) and a.tool == tool]
        if tool is None or not calls:  # (a `call` effect always names its tool)
            return None
        if condition is None:
            return ClosureCondition(frozenset(), [], lambda val: True, lambda: literal(True))
        t_renames = self.transition_renames(t)
        t_view = self.symbols.view(t_renames)
        values: dict[str, Term] = {}
        options: list[Term] = []
        for action in t.actions:
            current = t_view.view(values=values)
            if isinstance(action, Assign):
                values[action.target] = encode_term(action.value, current)
            elif isinstance(action, Discard):
                values[f"discarded.{action.target}"] = current[action.target]
                values[action.target] = NONE
            elif action.tool == tool:
                args = {f"args.{name}": encode_term(value, current) for name, value in action.args}
                call_view: View = self.symbols.view(renames, {**values, **args})
                options.append(encode_term(condition, call_view))
        term = any_of(options)
        cond = self.compiled(condition)
        actions = t.actions

        def holds(val: dict[str, Any]) -> bool:
            for state in run_actions(actions, local_env(val, t_renames), tool, self.compiled):
                # The transition's local parameter names stay behind: the forbid names parameters its own way.
                at_call = {k: v for k, v in state.items() if k not in t_renames}
                if cond({**local_env(val, renames), **at_call}):
                    return True
            return False

        return ClosureCondition(term.leaves, constants_of([condition, *action_exprs(actions)]), holds, lambda: term)

    # ------------------------------------------------------------ names
    def check_unused(self) -> None:
        m = self.model
        used_events = {t.event for t in m.transitions} | {b.event for b in m.bindings}
        used_events |= {f.event for f in m.forbids if f.event is not None}
        for event in m.events.values():
            if event.name not in used_events:
                self.report(UNUSED_EVENT, event.loc,
                            f"event `{event.name}` is not used by any transition, binding or forbid")
        read: set[str] = set()
        for expr in m.expressions():
            for name in ref_names(expr):
                read.add(name.removeprefix("discarded."))
        for var in m.variables.values():
            if var.name not in read:
                self.report(UNUSED_VARIABLE, var.loc, f"variable `{var.name}` is never read by a guard, action or forbid")

    def check_bindings(self) -> None:
        first: dict[str, Any] = {}
        for b in self.model.bindings:
            if b.how != "intent":
                continue
            earlier = first.setdefault(b.pattern, b)
            if earlier is not b and earlier.event != b.event:
                self.report(CONFLICTING_BINDINGS, b.loc,
                            f'intent "{b.pattern}" is bound to `{b.event}` here and to `{earlier.event}` '
                            f"at line {earlier.loc.line}", [earlier.loc])


def any_of(options: list[Term]) -> Term:
    leaves = frozenset().union(*(o.leaves for o in options))
    return boolean(z3.Or([truth(o) for o in options]), leaves)


def heading(t: Transition) -> str:
    """`source -> target on event(params) [guard]`, without the actions."""
    text = f"{t.source} -> {t.target} on {t.event}" + (f"({', '.join(t.params)})" if t.params else "")
    return text + (f" [{t.guard.text()}]" if t.guard is not None else "")


def guard_shown(t: Transition) -> str:
    return f"[{t.guard.text()}]" if t.guard is not None else "(no guard)"


def ref_names(expr: Expr) -> set[str]:
    """The names an expression reads (like expr.refs, without a generator per node: this runs per transition)."""
    names, stack = set(), [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Ref):
            names.add(node.name)
        else:
            stack.extend(node.children())
    return names


def shown(valuation: dict[str, Any]) -> dict[str, Any]:
    """A witness as the user reads it: parameters under the event's own names."""
    return {shown_name(n): v for n, v in valuation.items()}


def action_exprs(actions: list[Action]) -> list[Expr]:
    out: list[Expr] = []
    for a in actions:
        if isinstance(a, Assign):
            out.append(a.value)
        elif isinstance(a, ToolCall):
            out.extend(value for _, value in a.args)
    return out


def local_env(valuation: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    """A concrete environment for an expression written with local parameter names."""
    env = {n: v for n, v in valuation.items() if ":" not in n}
    for local, symbol in renames.items():
        if symbol in valuation:
            env[local] = valuation[symbol]
    return env


def run_actions(actions: list[Action], env: Env, tool: str,
                compiled: Callable[[Expr], Callable[[Env], Any]]) -> Iterator[Env]:
    """Apply the actions to a copy of env concretely; yield `args.NAME` + variables at each call of `tool`."""
    env = dict(env)
    for action in actions:
        if isinstance(action, Assign):
            env[action.target] = compiled(action.value)(env)
        elif isinstance(action, Discard):
            env[f"discarded.{action.target}"] = env.get(action.target)
            env[action.target] = None
        elif action.tool == tool:
            args = {f"args.{name}": compiled(value)(env) for name, value in action.args}
            yield {**env, **args}


def check_fsm(model: FsmModel) -> list[Finding]:
    return FsmChecker(model).run()
