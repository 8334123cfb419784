"""Observable-only judgement of one run on an FSM: pass, or the first deviation with its type, location and element.

A run is judged only on what it exposes: the user texts (bound by the model's bindings), the tool calls and their
arguments (against the `call` actions the model's transitions make), the tool results (bound by `bind tool`), the
assistant's texts (against `say` forbids and `claim`s) and business state where the run exports it. The rules are in
docs/runs.md; tests/judge/runs.py judges the same runs a second, slower way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mbt.elements.base import Element
from mbt.model.common import Severity
from mbt.model.fsm import FsmModel
from mbt.runs.engine import Stepper
from mbt.runs.steps import ObservedRun

# In the order docs/runs.md lists them.
DEVIATION_TYPES = ("unexpected_call", "wrong_argument", "missing_argument", "missing_call", "forbidden_call",
                   "forbidden_saying", "duplicate_call", "premature_success", "wrong_state", "unbound_step",
                   "step_not_allowed")
CRITICAL_SEVERITIES = (Severity.high, Severity.critical)


@dataclass
class Deviation:
    type: str
    where: str  # trace and span id, or transcript turn
    step: int  # 1-based index of the observed step
    element: str | None  # the model element it concerns
    severity: str
    message: str
    tool: str | None = None
    argument: str | None = None
    expected: Any = None
    actual: Any = None
    source: str | None = None  # where the argument's value came from (seed 002), when the run recorded it
    turn: int | None = None  # index into Verdict.path of the turn whose outcome deviated (None: before any)


@dataclass
class Verdict:
    """What judging one run on one model found."""

    run: ObservedRun
    model: str
    invalid: str | None = None
    deviation: Deviation | None = None
    exercised: set[int] = field(default_factory=set)  # element indices the run passed through (usage)
    final_state: str | None = None
    completed: bool = False  # judged to the end without deviation, in a claimed final state
    escalation_expected: bool = False  # the model, on the run's path, hands off (an `escalation` tool call)
    escalated: bool = False  # ... and the run made that call with the model's arguments
    intent: str | None = None  # the run's intent: exposed by the run, else the one its first user text binds
    path: list[dict[str, Any]] = field(default_factory=list)  # the bound turns, in mbt's golden format
    expected_calls: list[tuple[str, dict[str, Any], int]] = field(default_factory=list)  # (tool, args, path turn)
    start_state: str | None = None
    unbound: list[str] = field(default_factory=list)  # results of tools no `bind tool` speaks of: listed, not judged

    @property
    def passed(self) -> bool:
        return self.invalid is None and self.deviation is None


@dataclass
class _Pending:
    tool: str
    args: dict[str, Any]
    element: int  # the transition whose action makes the call
    turn: int  # index into the path of the turn that made it


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    return actual == expected


class RunJudge:
    """Judges runs on one FSM; built once per model."""

    def __init__(self, model: FsmModel, elements: list[Element]):
        self.model = model
        self.elements = elements
        self.stepper = Stepper(model, elements)
        c = self.stepper.compiled
        self.state_el = c.state_el
        self.tool_bindings: dict[str, list] = {}
        for b in model.tool_bindings:
            self.tool_bindings.setdefault(b.tool, []).append(b)
        self.claims = [(claim.state, [p.casefold() for p in claim.phrases]) for claim in model.claims]
        self.success = {claim.state for claim in model.claims if model.states[claim.state].final}
        self.escalations = set(model.escalations)
        self.intent_of_event: dict[str, str] = {}
        for binding in model.bindings:
            if binding.how == "intent":
                self.intent_of_event.setdefault(binding.event, binding.pattern)

    def _el(self, index: int | None) -> str | None:
        return self.elements[index].id if index is not None else None

    def _deviation(self, verdict: Verdict, kind: str, where: str, step: int, element: int | None, message: str,
                   **extra) -> None:
        sev = self.elements[element].severity.value if element is not None else Severity.medium.value
        extra.setdefault("turn", len(verdict.path) - 1 if verdict.path else None)
        verdict.deviation = Deviation(kind, where, step, self._el(element), sev, message, **extra)

    def judge(self, run: ObservedRun) -> Verdict:
        v = Verdict(run=run, model=self.model.name, intent=run.intent)
        try:
            state, variables, exercised = self.stepper.start(run.precondition)
        except ValueError as err:
            v.invalid = str(err)
            return v
        v.start_state = state
        stepper = self.stepper
        prev = None
        pending: list[_Pending] = []
        made: list[tuple[str, dict | None]] = []  # calls the run made and the model expected
        forbids: list = []  # the forbids the last event exercised: they judge the reaction to it
        first_user = True
        for number, step in enumerate(run.steps, start=1):
            kind = step.kind
            if kind == "assistant":
                if self._judge_saying(v, step.text or "", state, forbids, number, step.where, prev):
                    break
                continue
            if kind == "tool_call":
                if self._judge_call(v, step, pending, made, forbids, variables, number, prev, state):
                    break
                continue
            if kind == "tool_result" and step.tool not in self.tool_bindings:
                v.unbound.append(f"{step.where}: the result of `{step.tool}` (no `bind tool {step.tool}` "
                                 "declaration: not judged)")
                continue
            # A user text or a tool result: the next event. Calls the model expected before it must have been made.
            if pending:
                p = pending[0]
                self._deviation(v, "missing_call", step.where, number, p.element,
                                f"the model calls {p.tool}({_args_text(p.args)}) before this step; the run does not",
                                tool=p.tool, expected=p.args, turn=p.turn)
                break
            if kind == "user":
                # The text binds (the intent a run exposes is the agent's own reading, judged by intent accuracy).
                bound = stepper.bind_text(step.text)
                if isinstance(bound, str):
                    self._deviation(v, "unbound_step", step.where, number, self.state_el[state],
                                    f"user text {step.text!r}: {bound}")
                    break
                event, raw_args = bound
                if first_user and v.intent is None:
                    v.intent = self.intent_of_event.get(event)
                first_user = False
                turn: dict[str, Any] = {"user": step.text, "event": event}
            else:
                found = self._bind_result(step, state)
                if isinstance(found, str):
                    self._deviation(v, "unbound_step", step.where, number, self.state_el[state], found,
                                    tool=step.tool)
                    break
                event, raw_args = found
                turn = {"event": event}
            args = stepper.args(event, raw_args)
            if isinstance(args, str):
                self._deviation(v, "unbound_step", step.where, number, self.state_el[state], args, tool=step.tool)
                break
            if args:
                turn["args"] = dict(args)
            before = state
            fired = stepper.fire(state, variables, event, args, prev, number, exercised)
            state, taken = fired.state, fired.taken
            v.path.append(turn)
            if taken is None:  # refused
                turn["rejected"] = True
                turn["assert_state"] = {"state": before}
                self._deviation(v, "step_not_allowed", step.where, number, self.state_el[before],
                                f"the model does not allow `{event}` in state `{before}`")
                break
            turn["_state"] = state  # the model's state after the turn (regression goldens assert it)
            prev = taken
            forbids = fired.forbids
            for call in fired.calls:
                pending.append(_Pending(call.tool, call.args, taken.transition_el, len(v.path) - 1))
                v.expected_calls.append((call.tool, call.args, len(v.path) - 1))
                if call.tool in self.escalations:
                    v.escalation_expected = True
            if kind == "tool_result" and step.state_after:
                if self._judge_state(v, step, variables, number, taken):
                    break
        else:
            if pending:
                p = pending[0]
                where = run.steps[-1].where if run.steps else run.where
                self._deviation(v, "missing_call", where, len(run.steps), p.element,
                                f"the model calls {p.tool}({_args_text(p.args)}); the run ends without it",
                                tool=p.tool, expected=p.args, turn=p.turn)
        v.exercised = exercised
        v.final_state = state
        v.completed = v.deviation is None and state in self.success
        return v

    # ---- one observed step
    def _bind_result(self, step, state: str) -> tuple[str, dict[str, Any]] | str:
        """The event a tool result binds to (the first matching `bind tool` whose event the state accepts)."""
        outcome = "ok" if step.ok else "error"
        matching = [b for b in self.tool_bindings.get(step.tool, ())
                    if b.outcome == outcome and (not b.codes or step.error in b.codes)]
        if not matching:
            what = "a success" if step.ok else f"error `{step.error}`"
            return f"{what} of `{step.tool}`: no `bind tool {step.tool} {outcome}` declaration matches"
        chosen = next((b for b in matching if self.stepper.enabled(state, b.event)), matching[0])
        if outcome == "error":
            return chosen.event, dict(zip(chosen.params, [step.error] if chosen.fields else []))
        result = step.result if isinstance(step.result, dict) else {}
        missing = [f for f in chosen.fields if f not in result]
        if missing:
            return f"the result of `{step.tool}` has no field `{missing[0]}` (`bind tool` at {chosen.loc})"
        return chosen.event, {p: result[f] for p, f in zip(chosen.params, chosen.fields)}

    def _judge_call(self, v: Verdict, step, pending: list[_Pending], made: list, forbids: list, variables, number,
                    prev, state) -> bool:
        tool, args = step.tool, step.args
        expected = next((p for p in pending if p.tool == tool), None)
        if expected is not None:
            pending.remove(expected)
            made.append((tool, args))
            if args is not None:  # a transcript that lists tool names only: arguments are not judged
                for name, value in expected.args.items():
                    if name not in args:
                        self._deviation(v, "missing_argument", step.where, number, expected.element,
                                        f"{tool} is called without `{name}`; the model passes {value!r}",
                                        tool=tool, argument=name, expected=value, turn=expected.turn)
                        return True
                    if not _same(args[name], value):
                        source = step.sources.get(name)
                        self._deviation(v, "wrong_argument", step.where, number, expected.element,
                                        f"{tool} is called with {name} = {args[name]!r}"
                                        + (f" (from {source})" if source else "")
                                        + f"; the model passes {value!r}",
                                        tool=tool, argument=name, expected=value, actual=args[name], source=source,
                                        turn=expected.turn)
                        return True
            if tool in self.escalations:
                v.escalated = True
            return False
        for cf in forbids:
            effect = cf.f.effect
            if effect is None or effect.kind != "call" or effect.tool != tool:
                continue
            if cf.condition is not None:
                env = dict(variables)
                env.update({f"args.{k}": val for k, val in (args or {}).items()})
                if not cf.condition(env):
                    continue
            self._deviation(v, "forbidden_call", step.where, number, cf.element,
                            f"{tool}({_args_text(args or {})}) is forbidden here: forbid {cf.f.label()} ({cf.f.loc})",
                            tool=tool, actual=args)
            return True
        if any(t == tool and (a == args or a is None or args is None) for t, a in made):
            self._deviation(v, "duplicate_call", step.where, number,
                            prev.transition_el if prev is not None else self.state_el[state],
                            f"{tool} is called again; the model calls it once here", tool=tool, actual=args)
            return True
        self._deviation(v, "unexpected_call", step.where, number,
                        prev.transition_el if prev is not None else self.state_el[state],
                        f"{tool}({_args_text(args or {})}) is called; the model makes no such call in state `{state}`",
                        tool=tool, actual=args)
        return True

    def _judge_saying(self, v: Verdict, text: str, state: str, forbids: list, number: int, where: str, prev) -> bool:
        folded = text.casefold()
        for cf in forbids:
            said = next((p for p in cf.phrases if p in folded), None)
            if said is not None and cf.f.effect is not None and cf.f.effect.kind == "say":
                self._deviation(v, "forbidden_saying", where, number, cf.element,
                                f"the assistant says {said!r}: forbid {cf.f.label()} ({cf.f.loc})", expected=said,
                                actual=text)
                return True
        for claimed, phrases in self.claims:
            said = next((p for p in phrases if p in folded), None)
            if said is not None and state != claimed:
                self._deviation(v, "premature_success", where, number, self.state_el[claimed],
                                f"the assistant says {said!r} (claims `{claimed}`) while the model is in `{state}`",
                                expected=state, actual=text)
                return True
        return False

    def _judge_state(self, v: Verdict, step, variables: dict, number: int, taken) -> bool:
        for name, value in step.state_after.items():
            if name in self.model.variables and not _same(variables[name], value):
                self._deviation(v, "wrong_state", step.where, number, taken.transition_el,
                                f"after {step.tool} the run exports {name} = {value!r}; the model has "
                                f"{variables[name]!r}", argument=name, expected=variables[name], actual=value)
                return True
        return False


def _args_text(args: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {v!r}" for k, v in args.items())


def is_critical(verdict: Verdict) -> bool:
    """A critical failure: the first deviation concerns an element of severity high or critical."""
    d = verdict.deviation
    return d is not None and d.severity in tuple(s.value for s in CRITICAL_SEVERITIES)
