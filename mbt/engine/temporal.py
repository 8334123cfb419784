"""The meaning of an invariant on a run: propositions at positions, and one incremental monitor per invariant.

Shared by the state-space exploration of `mbt check` (mbt/analysis/invariant_checks.py) and the golden replay
(mbt/goldens/replay_invariant.py), so both judge a run the same way.

A *run* is a finite sequence of positions: position 0 is the starting configuration; each accepted event adds
the configuration right after it (refused events change nothing and call nothing, so they add no position). A run
is *complete* when it ends in a final state, or where no event is accepted any more.

The monitors implement Dwyer's LTL mappings of the patterns and scopes read on finite runs:

* `always P`: P at every position of the scope; `never P`: at none; `at most N P`: at most N occurrences
  (an occurrence starts where P becomes true; for a P that names an event or a call, each step where it holds).
* `eventually P`: P at some position of the scope; `S leads to P`: every S is followed (at the same or a later
  position) by P; both are owed by the end of the scope: an R that closes it, or the end of a complete run.
* `S precedes P`: no P before the first S of the scope (S and P at the same position is fine).
* Scopes: global; `before R` (from the start up to the first R, only when R occurs); `after Q` (from the first Q
  on); `between Q and R` (each interval from a Q up to the next R, only when R occurs); `after Q until R` (like
  between, but an interval R never closes lasts to the end). In the between/until scopes each Q (not also an R)
  restarts `eventually` and `precedes`, as Dwyer's formulas quantify over every Q; the Q and R positions
  themselves: Q's is inside, R's is outside.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mbt.model.expr import And, Expr, Not, Or, compile_expr
from mbt.model.invariant import CallMade, EventIs, Invariant


@dataclass(slots=True)
class CallAt:
    """A tool call made by a step: the tool, its arguments, and the variables at the moment of the call."""

    tool: str
    args: dict[str, Any]
    env: dict[str, Any]


@dataclass(slots=True)
class Position:
    """A configuration of the FSM with what led to it. `env` maps every variable, `discarded.X` and `state`."""

    env: dict[str, Any]
    event: str | None = None  # None at position 0
    args: dict[str, Any] = field(default_factory=dict)  # the event's arguments, by declared parameter name
    calls: list[CallAt] = field(default_factory=list)


def compile_prop(expr: Expr) -> Callable[[Position], bool]:
    """A proposition as a closure over a Position (plain sub-expressions go through compile_expr)."""
    if isinstance(expr, EventIs):
        name = expr.event
        if expr.condition is None:
            return lambda pos: pos.event == name
        cond = compile_expr(expr.condition)
        return lambda pos: pos.event == name and bool(cond({**pos.env, **pos.args}))
    if isinstance(expr, CallMade):
        tool = expr.tool
        if expr.condition is None:
            return lambda pos: any(c.tool == tool for c in pos.calls)
        cond = compile_expr(expr.condition)

        def at_call(pos: Position, c: CallAt) -> bool:
            env = {**c.env, "state": pos.env.get("state")}
            env.update({f"args.{k}": v for k, v in c.args.items()})
            return bool(cond(env))

        if expr.every:
            return lambda pos: all(at_call(pos, c) for c in pos.calls if c.tool == tool)
        return lambda pos: any(at_call(pos, c) for c in pos.calls if c.tool == tool)
    if isinstance(expr, Not):
        inner = compile_prop(expr.operand)
        return lambda pos: not inner(pos)
    if isinstance(expr, And):
        parts = [compile_prop(i) for i in expr.items]
        return lambda pos: all(p(pos) for p in parts)
    if isinstance(expr, Or):
        parts = [compile_prop(i) for i in expr.items]
        return lambda pos: any(p(pos) for p in parts)
    fn = compile_expr(expr)
    return lambda pos: bool(fn(pos.env))


def names_steps(expr: Expr) -> bool:
    """True when the proposition names an event or a call: it happens anew at each step where it holds."""
    return any(isinstance(node, (EventIs, CallMade)) for node in expr.walk())


# ---------------------------------------------------------------- monitors

WAITING, OPEN, DONE = 0, 1, 2
ROLES = ("p", "s", "a", "q", "r")

# A monitor state is (phase, x, y, was_p): phase of the scope; x, y the pattern's memory (see Monitor.update);
# was_p whether P held at the previous position (for counting occurrences). Small tuples: the exploration keeps
# one per (configuration, monitor state) pair.
State = tuple[int, int, int, bool]


@dataclass(frozen=True)
class Verdict:
    """A violation: where, and why in words."""

    position: int
    reason: str


class Monitor:
    """Judges one invariant on a run, position by position; `step` is pure, so states can be shared and hashed."""

    def __init__(self, inv: Invariant):
        self.inv = inv
        self.pattern = inv.pattern
        self.scope = inv.scope.kind
        self.bound = inv.bound if inv.bound is not None else 0
        self.steps_count = names_steps(inv.p)
        self.props = {role: compile_prop(expr) for role, expr in inv.props().items()}
        # Violations inside a `before` or `between` scope count only once R closes the interval.
        self.deferred = inv.scope.needs_close
        self.texts = self._texts(inv)

    @staticmethod
    def _texts(inv: Invariant) -> dict[str, str]:
        """The words a violation is explained with, built from the invariant's own propositions."""
        p = f"`{inv.p.text()}`"
        s = f"`{inv.s.text()}`" if inv.s is not None else ""
        n = inv.bound if inv.bound is not None else 0
        if inv.pattern == "universality" and isinstance(inv.p, CallMade) and inv.p.every and inv.p.condition:
            false = f"a call of `{inv.p.tool}` does not satisfy `{inv.p.condition.text()}`"
        elif inv.antecedent is not None:
            false = f"`{inv.antecedent.text()}` holds but {p} does not"
        else:
            false = f"{p} is false"
        return {"universality": false, "absence": f"{p} holds",
                "bounded-existence": f"{p} happens more than {n} time{'s' if n != 1 else ''}",
                "precedence": f"{p} holds before any {s}", "existence": f"{p} never held",
                "response": f"{s} was not followed by {p}"}

    def values(self, pos: Position) -> tuple[bool, bool, bool, bool, bool]:
        """(P, S, A, Q, R) at a position; a missing antecedent counts as true, missing Q/R/S as false."""
        props = self.props
        return (props["p"](pos), props["s"](pos) if "s" in props else False,
                props["a"](pos) if "a" in props else True,
                props["q"](pos) if "q" in props else False, props["r"](pos) if "r" in props else False)

    def initial(self) -> State:
        """The state before position 0: a global or `before` scope is open from the start, and owes its
        `eventually` from there."""
        if self.scope in ("global", "before"):
            return (OPEN, 1 if self.pattern == "existence" else 0, 0, False)
        return (WAITING, 0, 0, False)

    def in_scope(self, state: State) -> bool:
        return state[0] == OPEN

    def step(self, state: State, vals: tuple, position: int = 0) -> tuple[State, Verdict | None]:
        """The state after one more position with these proposition values, and a violation if one is certain
        (the state stays meaningful after a violation, so a golden's run can be followed to its end)."""
        p, s, a, q, r = vals
        phase, x, y, was_p = state
        scope = self.scope
        verdict = None
        if r and phase == OPEN and scope in ("before", "between", "after-until"):
            reason = self.closing(x, y)
            close = self.inv.scope.close  # these scopes always have one
            if reason is not None and close is not None:
                verdict = Verdict(position, f"{reason} before the scope closed (`{close.text()}`)")
            phase, x, y = (DONE if scope == "before" else WAITING), 0, 0
        if q and not (r and scope != "after"):
            if phase == WAITING:
                phase, x, y = OPEN, 0, 0
                if self.pattern == "existence":
                    x = 1  # owed: P has not happened in this interval yet
            elif phase == OPEN and scope in ("between", "after-until"):
                # Dwyer's formulas quantify over every Q: a new Q re-arms what is owed since the last Q.
                if self.pattern == "existence":
                    x = 1
                elif self.pattern == "precedence":
                    x = 0
        if phase != OPEN:
            return (phase, x, y, p), verdict
        x, y, reason = self.update(x, y, p, s, a, was_p)
        if reason is not None and not self.deferred and verdict is None:
            verdict = Verdict(position, reason)
        return (phase, x, y, p), verdict

    def fires(self, after: State, vals: tuple) -> bool:
        """Does this position trigger the invariant (antecedent coverage)? In scope, and: the antecedent holds
        (`always A -> P`, `every call`), P happens (`precedes`: the order is tested), S happens (`leads to`)."""
        if after[0] != OPEN:
            return False
        p, s, a, _, _ = vals
        if self.pattern == "universality":
            return a
        if self.pattern == "precedence":
            return p
        if self.pattern == "response":
            return s
        return True

    def update(self, x: int, y: int, p: bool, s: bool, a: bool, was_p: bool) -> tuple[int, int, str | None]:
        """One in-scope position. x, y per pattern: universality/absence: x = violated (deferred);
        existence: x = P still owed; bounded existence: x = occurrences (capped); precedence: x = S seen,
        y = violated (deferred); response: x = an S still waiting for its P."""
        pattern = self.pattern
        if pattern == "universality":
            if a and not p:
                return 1, y, self.texts["universality"]
            return x, y, None
        if pattern == "absence":
            if p:
                return 1, y, self.texts["absence"]
            return x, y, None
        if pattern == "existence":
            if p:
                x = 0
            return x, y, None
        if pattern == "bounded-existence":
            if p and (self.steps_count or not was_p):
                x = min(x + 1, self.bound + 1)
                if x > self.bound:
                    return x, y, self.texts["bounded-existence"]
            return x, y, None
        if pattern == "precedence":
            if s:
                x = 1
            if p and not x:
                return x, 1, self.texts["precedence"]
            return x, y, None
        # response
        if s:
            x = 1
        if p:
            x = 0
        return x, y, None

    def closing(self, x: int, y: int) -> str | None:
        """What is still wrong when an interval ends (R, or the end of a complete run)."""
        pattern = self.pattern
        if pattern in ("universality", "absence"):
            return self.texts[pattern] if x and self.deferred else None
        if pattern == "bounded-existence":
            return self.texts[pattern] if x > self.bound and self.deferred else None
        if pattern == "precedence":
            return self.texts[pattern] if y and self.deferred else None
        if pattern == "existence":
            return self.texts[pattern] if x else None
        return self.texts[pattern] if x else None

    def finish(self, state: State, position: int) -> Verdict | None:
        """At the end of a complete run: what is still owed (scopes that R must close owe nothing)."""
        phase, x, y, _ = state
        if phase != OPEN or self.scope in ("before", "between"):
            return None
        reason = self.closing(x, y)
        return Verdict(position, f"{reason} by the end of the run") if reason is not None else None


@dataclass
class Judgement:
    """A monitor run over a whole run: the first violation, and per position the values and the state after it."""

    verdict: Verdict | None
    values: list[tuple]
    states: list[State]


def judge(monitor: Monitor, positions: list[Position], complete: bool) -> Judgement:
    state = monitor.initial()
    first: Verdict | None = None
    values, states = [], []
    for i, pos in enumerate(positions):
        vals = monitor.values(pos)
        state, verdict = monitor.step(state, vals, i)
        values.append(vals)
        states.append(state)
        if first is None:
            first = verdict
    if first is None and complete and positions:
        first = monitor.finish(state, len(positions) - 1)
    return Judgement(first, values, states)
