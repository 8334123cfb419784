"""Replays golden cases for invariants: the FSM replay engine drives the run, monitors judge it, triggers are counted.

A trigger element is *exercised* when the golden's run makes the invariant's antecedent or scope true (see
Monitor.fires) and *verified* when, in the same opening of the scope, the golden also asserts the consequent: it
checks (and agrees with) the state, variables, tool arguments or `must_not` phrases the consequent speaks of.
An invariant that passes only vacuously (its scope never opens, its antecedent never holds) covers nothing. For
`before` and `between` scopes, only intervals that R actually closes count, as in Dwyer's patterns.

A golden whose run violates an invariant is reported as a contradiction (path `invariant:NAME`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mbt.elements.base import Element
from mbt.elements.fsm import enumerate_fsm
from mbt.elements.invariant import trigger_id
from mbt.goldens.cases import Assertions, GoldenCase
from mbt.goldens.replay_fsm import CaseRun, CompiledFsm, CompiledTransition, FsmReplayer, Snapshot
from mbt.goldens.results import Contradiction, Note
from mbt.model.expr import Expr, Ref
from mbt.model.fsm import FsmModel, ToolCall
from mbt.model.invariant import CallMade, EventIs, Invariant, InvariantModel
from mbt.model.temporal import OPEN, CallAt, Judgement, Monitor, Position, judge

# ---------------------------------------------------------------- steps with the variables at each call


class CallRecorder(list):
    """Receives the replay engine's tool calls and keeps, with each, the variables at the moment of the call."""

    def __init__(self, env: dict):
        super().__init__()
        self.env = env

    def append(self, item) -> None:  # called by a compiled `call` action with (tool, {arg: value})
        super().append(CallAt(item[0], item[1], dict(self.env)))


def fire(ct: CompiledTransition, variables: dict, args: dict, declared: list[str]) -> list[CallAt]:
    """Run a transition's actions on `variables` (changed in place) exactly as replay does; the calls made."""
    env = variables
    if args:
        env = dict(variables)
        for name, local in zip(declared, ct.param_names):
            env[local] = args[name]
    calls = CallRecorder(env)
    for action in ct.actions:
        action(env, variables, calls)
    return list(calls)


def config_of(snapshot: Snapshot) -> dict[str, Any]:
    variables = dict(snapshot.variables)
    variables.update({f"discarded.{k}": v for k, v in snapshot.discarded.items()})
    return variables


def positions_of(compiled: CompiledFsm, run: CaseRun) -> tuple[list[Position], list[int], list[str]]:
    """The run as positions (its start, then one per accepted turn), the turn of each (0 for the start), and
    disagreements between the replay engine and a re-run of its transitions (an mbt bug if ever non-empty)."""
    by_key = {ct.t.key: ct for ct in compiled.transitions}
    previous = config_of(run.start)
    positions = [Position({**previous, "state": run.start.state})]
    turns, problems = [0], []
    for number, snap in enumerate(run.snapshots, start=1):
        if snap.transition is None:
            continue  # refused: no step of the system
        ct = by_key[snap.transition]
        variables = dict(previous)
        calls = fire(ct, variables, snap.args, compiled.params[snap.event])
        after = config_of(snap)
        if variables != after or [(c.tool, c.args) for c in calls] != [(c.tool, c.args) for c in snap.calls]:
            problems.append(f"turn {number}: the replay engine and a re-run of `{snap.transition}` disagree")
        positions.append(Position({**after, "state": snap.state}, snap.event, dict(snap.args), calls))
        turns.append(number)
        previous = after
    return positions, turns, problems


# ---------------------------------------------------------------- what a golden's check observes


@dataclass(frozen=True)
class Observables:
    """What a proposition speaks of, so a golden's check can be said to assert it."""

    variables: frozenset[str]
    discarded: frozenset[str]
    state: bool
    tools: frozenset[str]
    tool_args: frozenset[str]  # argument names the FSM passes to those tools (the flat tool_arguments form)
    phrases: tuple[str, ...]  # the invariant's `matching` phrases, folded
    anything: bool  # an event, or nothing observable: any check of the step asserts it

    @classmethod
    def of(cls, exprs: list[Expr], inv: Invariant, fsm: FsmModel) -> "Observables":
        names, tools, events = set(), set(), False
        for expr in exprs:
            for node in expr.walk():
                if isinstance(node, Ref):
                    names.add(node.name)
                elif isinstance(node, CallMade):
                    tools.add(node.tool)
                elif isinstance(node, EventIs):
                    events = True
        variables = frozenset(n for n in names if n in fsm.variables)
        discarded = frozenset(n[10:] for n in names if n.startswith("discarded."))
        args = frozenset(name for t in fsm.transitions for a in t.actions if isinstance(a, ToolCall)
                         and a.tool in tools for name, _ in a.args)
        state = "state" in names
        return cls(variables, discarded, state, frozenset(tools), args,
                   tuple(p.casefold() for p in inv.matching),
                   events or not (variables or discarded or state or tools))

    def asserted_by(self, a: Assertions, tools: set[str]) -> bool:
        if a.empty():
            return False
        if self.anything:
            return True
        if self.state and a.state is not None:
            return True
        if self.variables & a.variables.keys() or self.discarded & a.discarded.keys():
            return True
        for key in a.tool_arguments:
            if key in self.tools or (key not in tools and key in self.tool_args):
                return True
        return bool(self.phrases) and any(p in item.casefold() for item in a.must_not for p in self.phrases)

    def asserted_by_final(self, final: Assertions, tools: set[str]) -> bool:
        """The final `must_not` and `tool_arguments` speak of the whole conversation, so of every step."""
        if self.phrases and any(p in item.casefold() for item in final.must_not for p in self.phrases):
            return True
        return any(key in self.tools or (key not in tools and key in self.tool_args) for key in final.tool_arguments)


# ---------------------------------------------------------------- the replayer


@dataclass
class _Compiled:
    inv: Invariant
    monitor: Monitor
    element: int
    consequent: Observables


class InvariantReplayer:
    """Replays a golden on the invariants' FSM and returns a CaseRun over the trigger elements."""

    def __init__(self, model: InvariantModel, elements: list[Element]):
        self.model = model
        fsm: FsmModel = model.fsm_model
        self.fsm = fsm
        self.compiled = CompiledFsm(fsm, enumerate_fsm(fsm))
        self.fsm_replayer = FsmReplayer(self.compiled)
        self.tools = set(fsm.tools())
        index = {e.id: i for i, e in enumerate(elements)}
        self.invariants = []
        for inv in model.invariants:
            consequent = [inv.p] + ([inv.s] if inv.pattern == "precedence" else [])
            self.invariants.append(_Compiled(inv, Monitor(inv), index[trigger_id(inv)],
                                             Observables.of(consequent, inv, fsm)))

    def replay(self, case: GoldenCase) -> CaseRun:
        fsm_run = self.fsm_replayer.replay(case, keep_snapshots=True)
        run = CaseRun(case)
        if fsm_run.invalid is not None:
            run.invalid = fsm_run.invalid
            return run
        positions, turns, problems = positions_of(self.compiled, fsm_run)
        for problem in problems:  # never expected: the engine and its own transitions must agree
            run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=None,
                                  message=f"{problem} (an mbt bug, please report it)"))
        finished = not fsm_run.unbound and len(fsm_run.snapshots) == len(case.turns)
        complete = finished and self.fsm.states[positions[-1].env["state"]].final
        # A precondition that only sets variables in the initial state is context (who is signed in); one that
        # starts in another state stands for a history nobody saw.
        from_initial = fsm_run.start.state == self.fsm.initial_state
        checks = self._checks(case, fsm_run, positions, turns, finished)
        for c in self.invariants:
            judgement = judge(c.monitor, positions, complete)
            verdict = judgement.verdict
            violated = verdict is not None and (from_initial or not _needs_history(c.inv))
            # A golden whose run breaks the invariant contradicts it: like a contradicted check, it verifies nothing.
            # (Nor does one whose run breaks it only for want of the history its precondition hides.)
            self._cover(c, judgement, checks, run, case, fsm_run, finished, may_verify=verdict is None)
            if violated:
                self._violation(c.inv, verdict, positions, turns, run, case, from_initial)
        return run

    # ---- which checks apply at each position, and whether they agree with the model
    def _checks(self, case: GoldenCase, fsm_run: CaseRun, positions: list[Position], turns: list[int],
                finished: bool) -> list[list[Assertions]]:
        disagree = {c.turn for c in fsm_run.contradictions}
        at: list[list[Assertions]] = [[] for _ in positions]
        position = 0
        for number, turn in enumerate(case.turns[:len(fsm_run.snapshots)], start=1):
            while position + 1 < len(turns) and turns[position + 1] <= number:
                position += 1  # a refused turn's checks read the configuration it left unchanged
            if number not in disagree:
                at[position].append(turn.expect)
            if number == len(case.turns) and finished and None not in disagree:
                at[position].append(case.final)
        return at

    def _cover(self, c: _Compiled, j: Judgement, checks: list[list[Assertions]], run: CaseRun, case: GoldenCase,
               fsm_run: CaseRun, finished: bool, may_verify: bool = True) -> None:
        """Exercised: a trigger fired; verified: the consequent was asserted in the same opening of the scope."""
        monitor, obs = c.monitor, c.consequent
        final_ok = finished and None not in {x.turn for x in fsm_run.contradictions}
        whole_run = final_ok and obs.asserted_by_final(case.final, self.tools)

        def asserted(i: int) -> bool:
            return whole_run or any(obs.asserted_by(a, self.tools) for a in checks[i])

        # Openings of the scope: each interval gets a number; `closed` holds those an R ended.
        openings: list[int | None] = []
        closed: set[int] = set()
        closes = monitor.scope in ("before", "between", "after-until")
        current: int | None = 0 if monitor.initial()[0] == OPEN else None
        following = 1 if current is not None else 0
        for state, vals in zip(j.states, j.values):
            if current is not None and closes and vals[4]:
                closed.add(current)
                current = None
            if state[0] == OPEN:
                if current is None:
                    current, following = following, following + 1
            else:
                current = None
            openings.append(current)
        needs_close = monitor.inv.scope.needs_close
        exercised = verified = False
        for i, state in enumerate(j.states):
            inst = openings[i]
            if inst is None or not monitor.fires(state, j.values[i]):
                continue
            if needs_close and inst not in closed:
                continue  # an interval R never closes: the pattern makes no claim about it
            exercised = True
            if not may_verify:
                break
            if self._consequent_asserted(c, j, openings, i, asserted):
                verified = True
                break
        if exercised:
            run.exercised.add(c.element)
        if verified:
            run.verified.add(c.element)

    @staticmethod
    def _consequent_asserted(c: _Compiled, j: Judgement, openings: list, i: int, asserted) -> bool:
        """Is the consequent of the trigger at position i asserted within the same opening of the scope?"""
        pattern, inst = c.inv.pattern, openings[i]
        if pattern in ("universality", "absence", "precedence"):
            return asserted(i)  # the condition at the trigger itself (P, and for `precedes` the order)
        same = [k for k in range(len(j.states)) if openings[k] == inst]
        if pattern == "existence":
            return any(j.values[k][0] and asserted(k) for k in same)  # P happened, and the golden checked it
        if pattern == "response":
            return any(j.values[k][0] and asserted(k) for k in same if k >= i)  # the answer to this S
        return any(asserted(k) for k in same if k >= i)  # bounded existence: the count, checked from here on

    def _violation(self, inv: Invariant, verdict, positions, turns, run: CaseRun, case: GoldenCase,
                   from_initial: bool) -> None:
        turn = turns[verdict.position] or None
        where = f"turn {turn}" if turn else "the start"
        state = positions[verdict.position].env["state"]
        start_note = "" if from_initial else " (the case starts from its precondition)"
        run.contradictions.append(Contradiction(
            case=case.id, where=case.where, model=self.model.name, turn=turn, path=f"invariant:{inv.key}",
            expected=inv.text(), actual=f"violated at {where} in state `{state}`: {verdict.reason}",
            message=f"the run of this golden violates invariant `{inv.key}` at {where}{start_note}: {verdict.reason}"))


def _needs_history(inv: Invariant) -> bool:
    """Verdicts that depend on what happened before a case's starting configuration, which a precondition hides:
    whether P already happened (eventually), whether S did (precedes), and where a `before` scope began."""
    return inv.pattern in ("existence", "precedence") or inv.scope.kind == "before"


__all__ = ["InvariantReplayer", "positions_of", "fire", "CallRecorder", "Observables"]
