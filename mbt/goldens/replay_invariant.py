"""Replays golden cases for invariants: the FSM replay engine drives the run, monitors judge it, triggers are counted.

The rules are docs/coverage-rules/invariant.md (tests/judge/invariant.py implements them a second time). A trigger
is *exercised* when the run triggers the invariant (Monitor.fires) in an interval of the scope the pattern speaks
of, and *verified* when the golden also checks EVERY variable, discarded value, control state, tool call and call
argument the consequent reads, at the position where the consequent is evaluated. A vacuous pass covers nothing; a
golden whose run breaks an invariant is a contradiction (path `invariant:NAME`) and, like any golden that
contradicts the model or its FSM, verifies nothing on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mbt.argpaths import lookup
from mbt.elements.base import Element
from mbt.elements.fsm import enumerate_fsm
from mbt.elements.invariant import trigger_id
from mbt.engine.fsm import CompiledFsm, Snapshot
from mbt.engine.temporal import OPEN, CallAt, Judgement, Monitor, Position, judge
from mbt.goldens.cases import GoldenCase, OneOf, tool_checks
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.goldens.results import CaseRun, Contradiction, Note, disagrees
from mbt.model.expr import And, Expr, Not, Or, Ref, refs
from mbt.model.fsm import FsmModel
from mbt.model.invariant import CallMade, EventIs, Invariant, InvariantModel

# ---------------------------------------------------------------- steps with the variables at each call


class CallRecorder(list):
    """Receives the replay engine's tool calls and keeps, with each, the variables at the moment of the call."""

    def __init__(self, env: dict):
        super().__init__()
        self.env = env

    def append(self, item) -> None:  # called by a compiled `call` action with (tool, {arg: value})
        super().append(CallAt(item[0], item[1], dict(self.env)))


class Fireable(Protocol):
    """What `fire` needs of a transition (a CompiledTransition, or the invariant checker's StepRule)."""

    @property
    def actions(self) -> Sequence[Callable[[dict, dict, list], None]]: ...

    @property
    def param_names(self) -> list[str]: ...


def fire(ct: Fireable, variables: dict, args: dict, declared: list[str]) -> list[CallAt]:
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
    assert run.start is not None  # replayed with keep_snapshots
    previous = config_of(run.start)
    positions = [Position({**previous, "state": run.start.state})]
    turns, problems = [0], []
    for number, snap in enumerate(run.snapshots, start=1):
        if snap.transition is None:
            continue  # refused: no step of the system
        ct = by_key[snap.transition]
        variables = dict(previous)
        calls = fire(ct, variables, snap.args, compiled.params[snap.event or ct.t.event])
        after = config_of(snap)
        if variables != after or [(c.tool, c.args) for c in calls] != [(c.tool, c.args) for c in snap.calls]:
            problems.append(f"turn {number}: the replay engine and a re-run of `{snap.transition}` disagree")
        positions.append(Position({**after, "state": snap.state}, snap.event, dict(snap.args), calls))
        turns.append(number)
        previous = after
    return positions, turns, problems


# ---------------------------------------------------------------- what a golden checks at each position


@dataclass
class Checked:
    """What a golden's checks pin at one position of the run. Only goldens whose every check agrees with the model
    verify anything, so a check here is also a check of the model's value."""

    state: bool = False
    names: set[str] = field(default_factory=set)  # variables and `discarded.X` asserted in this configuration
    outcome: bool = False  # the turn whose step reached this position checks the outcome (as the FSM's rules say)
    not_called: set[str] = field(default_factory=set)  # `must_not_call` of that turn, or of the final assertions
    pinned: dict[int, set[str | None]] = field(default_factory=dict)  # Position.calls index -> args checked (None: the call)
    phrases: list[str] = field(default_factory=list)  # folded `must_not` items of that turn and of the final ones


def resolve_tool_arguments(tool_arguments: dict, calls: list, tools: set[str]) -> Iterator[tuple[int, str | None]]:
    """The call each `tool_arguments` entry speaks of, as an index into `calls`, with the argument path it pins
    (None: `{TOOL: {}}`, the call itself). As the FSM replay compares them (cases.tool_checks): `TOOL.ARG` the latest
    call of TOOL passing ARG, a plain `ARG` the latest call of any tool passing ARG. A set of accepted values
    (OneOf) pins no value of its argument: such an entry is left out."""
    for tool, arg, expected in tool_checks(tool_arguments, tools):
        if type(expected) is OneOf:
            continue
        for i in range(len(calls) - 1, -1, -1):
            if (tool is None or calls[i].tool == tool) and (arg is None or lookup(calls[i].args, arg)[0]):
                yield i, arg
                break


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


Need = Callable[[Position, Checked], bool]


def needs_of(expr: Expr, fsm: FsmModel) -> list[Need] | None:
    """What a golden must check at a position to assert this proposition there, one test per thing it reads; None
    when it reads nothing a golden could check (a constant), so that no check asserts it."""
    if not any(isinstance(n, (Ref, EventIs)) or (isinstance(n, CallMade) and not n.every) for n in expr.walk()):
        return None
    return _needs(expr, fsm, set())


def _needs(expr: Expr, fsm: FsmModel, params: set[str]) -> list[Need]:
    if isinstance(expr, EventIs):
        # The event and its arguments are the golden's own input; that the model accepted it is an outcome.
        own = {p.name for p in fsm.events[expr.event].params}
        inner = _needs(expr.condition, fsm, own) if expr.condition is not None else []
        return [lambda pos, seen: pos.event is not None and seen.outcome] + inner
    if isinstance(expr, CallMade):
        return [_call_need(expr)]
    if isinstance(expr, (Not, And, Or)):
        return [need for child in expr.children() for need in _needs(child, fsm, params)]
    out: list[Need] = []
    for name in sorted(refs(expr) - params):
        if name == "state":
            out.append(lambda pos, seen: bool(seen.state))
        else:
            out.append(_names_need(name))
    return out


def _names_need(name: str) -> Need:
    return lambda pos, seen: name in seen.names


def _call_need(expr: CallMade) -> Need:
    """`call T [C]` is checked where T is not called and the golden says so (`must_not_call`), or where the step made
    exactly one call of T and the golden pins it: the call (unless it is the antecedent of `every call`), every
    `args.NAME` C reads, and every variable C reads, asserted here with the value it had at the moment of the call."""
    tool, every = expr.tool, expr.every
    names = refs(expr.condition) if expr.condition is not None else set()
    args = {n[5:] for n in names if n.startswith("args.")}
    variables = sorted(n for n in names if not n.startswith("args.") and n != "state")
    reads_state = "state" in names

    def need(pos: Position, seen: Checked) -> bool:
        made = [i for i, c in enumerate(pos.calls) if c.tool == tool]
        if not made:
            return tool in seen.not_called
        if len(made) > 1:
            return False  # a golden's tool_arguments check speaks of one call only
        pinned = seen.pinned.get(made[0], set())
        if (not every and not pinned) or not args <= pinned or (reads_state and not seen.state):
            return False
        at_call = pos.calls[made[0]].env
        return all(n in seen.names and _same(at_call.get(n), pos.env.get(n)) for n in variables)

    return need


# ---------------------------------------------------------------- the replayer


@dataclass
class _Compiled:
    inv: Invariant
    monitor: Monitor
    element: int
    p: list[Need] | None  # what asserts P at a position
    s: list[Need] | None  # what asserts S (the precondition of `precedes`)
    phrases: tuple[str, ...]  # `matching` phrases, folded: they assert the absence of P (`never` only)


class InvariantReplayer:
    """Replays a golden on the invariants' FSM and returns a CaseRun over the trigger elements."""

    def __init__(self, model: InvariantModel, elements: list[Element]):
        self.model = model
        fsm = model.fsm_model
        self.fsm = fsm
        self.compiled = CompiledFsm(fsm, enumerate_fsm(fsm))
        self.fsm_replayer = FsmReplayer(self.compiled)
        self.tools = set(fsm.tools())
        index = {e.id: i for i, e in enumerate(elements)}
        self.invariants = []
        for inv in model.invariants:
            phrases = tuple(p.casefold() for p in inv.matching) if inv.pattern == "absence" else ()
            self.invariants.append(_Compiled(inv, Monitor(inv), index[trigger_id(inv)], needs_of(inv.p, fsm),
                                             needs_of(inv.s, fsm) if inv.s is not None else None, phrases))

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
        from_initial = fsm_run.start is not None and fsm_run.start.state == self.fsm.initial_state
        seen = self._checked(case, fsm_run, positions, turns, finished)
        for c in self.invariants:
            judgement = judge(c.monitor, positions, complete)
            verdict = judgement.verdict
            # A break that depends on the hidden history is not reported, but the golden verifies nothing of it.
            self._cover(c, judgement, positions, seen, run, from_initial, may_verify=verdict is None)
            if verdict is not None and (from_initial or not _needs_history(c.inv)):
                self._violation(c.inv, verdict, positions, turns, run, case, from_initial)
        run.contradicts_fsm = disagrees(fsm_run)
        if disagrees(run):
            # A golden that contradicts the model (its FSM, or any of its invariants) verifies nothing on it.
            run.verified.clear()
        return run

    # ---- what the golden checks at each position
    def _checked(self, case: GoldenCase, fsm_run: CaseRun, positions: list[Position], turns: list[int],
                 finished: bool) -> list[Checked]:
        """Per position: a turn's configuration checks apply where its turn left the run (a refused turn: where the
        run already was); its outcome, call and `must_not` checks only to the position its own step reached. The
        final assertions add to the last turn's, and their calls and phrases speak of the whole run."""
        at = [Checked() for _ in positions]
        position = 0
        last = len(case.turns)
        for number, turn in enumerate(case.turns[:len(fsm_run.snapshots)], start=1):
            while position + 1 < len(turns) and turns[position + 1] <= number:
                position += 1
            seen, own = at[position], turns[position] == number
            for a in [turn.expect] + ([case.final] if finished and number == last else []):
                # A set of accepted values (OneOf) pins none of them: the consequent may read another one.
                if a.state is not None and type(a.state) is not OneOf:
                    seen.state = True
                seen.names.update(k for k, v in a.variables.items() if type(v) is not OneOf)
                seen.names.update(f"discarded.{k}" for k, v in a.discarded.items() if type(v) is not OneOf)
                seen.outcome |= own and a.checks_outcome()
            if own:
                seen.not_called.update(turn.expect.must_not_call)
                seen.phrases.extend(m.casefold() for m in turn.expect.must_not)
                for i, arg in resolve_tool_arguments(turn.expect.tool_arguments, positions[position].calls, self.tools):
                    seen.pinned.setdefault(i, set()).add(arg)
        if finished:
            final = case.final
            for seen in at:
                seen.not_called.update(final.must_not_call)
                seen.phrases.extend(m.casefold() for m in final.must_not)
            made = [(k, i) for k, pos in enumerate(positions) for i in range(len(pos.calls))]
            calls = [positions[k].calls[i] for k, i in made]
            for n, arg in resolve_tool_arguments(final.tool_arguments, calls, self.tools):
                k, i = made[n]
                at[k].pinned.setdefault(i, set()).add(arg)
        return at

    # ---- exercised and verified
    def _cover(self, c: _Compiled, j: Judgement, positions: list[Position], seen: list[Checked], run: CaseRun,
               from_initial: bool, may_verify: bool) -> None:
        monitor, inv = c.monitor, c.inv
        openings = self._openings(monitor, j)
        if inv.scope.kind == "before" and not from_initial:
            return  # whether R already happened before the precondition is hidden: so is the scope
        fires = [i for i, inst in enumerate(openings) if inst is not None and monitor.fires(j.states[i], j.values[i])]
        if not fires:
            return
        run.exercised.add(c.element)
        if may_verify and self._verified(c, j, positions, seen, openings, fires, from_initial):
            run.verified.add(c.element)

    @staticmethod
    def _openings(monitor: Monitor, j: Judgement) -> list[int | None]:
        """Per position, the number of the scope's opening (interval) it belongs to, or None: outside the scope, or
        in an interval the pattern makes no claim about (`before`/`between` intervals that R never closes)."""
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
        if monitor.inv.scope.needs_close:
            openings = [inst if inst in closed else None for inst in openings]
        return openings

    def _verified(self, c: _Compiled, j: Judgement, positions: list[Position], seen: list[Checked],
                  openings: list[int | None], fires: list[int], from_initial: bool) -> bool:
        """The consequent checked where it is evaluated (docs/coverage-rules/invariant.md, per pattern)."""

        def asserts(needs: list[Need] | None, k: int) -> bool:
            return needs is not None and all(need(positions[k], seen[k]) for need in needs)

        pattern, n = c.inv.pattern, len(positions)
        holds = [v[0] for v in j.values]
        if pattern == "universality":  # P where A holds
            return any(asserts(c.p, i) for i in fires)
        if pattern == "absence":  # P's absence: P checked false, or a `matching` phrase in a `must_not`
            return any(asserts(c.p, i) or any(p in m for m in seen[i].phrases for p in c.phrases) for i in fires)
        if pattern == "existence":  # P checked where it holds
            return any(holds[k] and asserts(c.p, k) for k in fires)
        if pattern == "response":  # after an S, P checked where it holds, in the same interval
            return any(holds[k] and asserts(c.p, k) and any(i <= k and openings[i] == openings[k] for i in fires)
                       for k in range(n) if openings[k] is not None)
        if pattern == "precedence":  # before a P, an S checked where it held, since the interval (re)started
            restarts = c.monitor.scope in ("between", "after-until")
            for i in fires:
                k = i
                while True:
                    if j.values[k][1] and asserts(c.s, k):
                        return True
                    if k == 0 or openings[k - 1] != openings[i] or (restarts and j.values[k][3]):
                        break
                    k -= 1
            return False
        # bounded existence: P checked at every step of one interval (the count), unless hidden history adds to it
        if not from_initial:
            return False
        for inst in {openings[i] for i in fires}:
            steps = [k for k in range(1, n) if openings[k] == inst]
            if steps and all(asserts(c.p, k) for k in steps):
                return True
        return False

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


__all__ = ["InvariantReplayer", "positions_of", "fire", "CallRecorder", "Checked", "needs_of",
           "resolve_tool_arguments"]
