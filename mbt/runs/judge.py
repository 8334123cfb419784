"""Observable-only judgement of one run on an FSM: pass, the first deviation with its type, location and element, or
not judged when the evidence a criterion needs is missing.

A run is judged only on what it exposes: the user texts (bound by the model's bindings), the tool calls and their
arguments (against the `call` actions the model's transitions make), the tool results (bound by `bind tool`), the
assistant's texts (against `say` forbids and `claim`s) and business state where the run exports it. What the model
needs and the run does not show (no tool call recorded, arguments or argument sources not recorded, no assistant
text) is a gap: never a pass (docs/runs.md, "The evidence contract"). Whether an assistant text says what a `say`
forbid or a claim describes is decided through the judges (mbt.judges.sayings, as golden replay decides which element
a golden's phrase names): a phrase found folded, else the answer judge on a forbid's description — one it cannot
decide is a gap too. The rules are in docs/runs.md; tests/judge/runs.py judges the same runs a second, slower way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mbt.argpaths import flatten, lookup
from mbt.elements.base import Element
from mbt.goldens.replay_fsm import claim_ids, claim_saying, forbid_saying
from mbt.judges.sayings import Saying, SayingJudge
from mbt.judges.text import fold
from mbt.judges.verdicts import Judge
from mbt.judges.verdicts import Verdict as AnswerVerdict
from mbt.model.common import Severity
from mbt.model.expr import Ref
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
    sources: dict[str, str] = field(default_factory=dict)  # the call's recorded argument sources (call deviations)


@dataclass
class Said:
    """One assistant text judged on a `say` forbid in force or on a claim (kept for `mbt eval --model`, which reports
    each such element verified by a judged answer). `verdict` is the judges': pass — the text says it."""

    element: str  # the forbid's element id, or the claim's `claim:STATE`
    kind: str  # "say" (a forbid) or "claim"
    step: int
    where: str
    state: str  # the model's state when it was said
    verdict: AnswerVerdict


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
    gaps: list[str] = field(default_factory=list)  # what the model needed and the run did not show: not judged
    finals: frozenset[str] = frozenset()  # the model's final states (a hand-off that ends in one completes it)
    judged_steps: int = 0  # observed steps the judgement went through
    said: list[Said] = field(default_factory=list)  # assistant texts judged on say forbids and claims (keep_sayings)

    @property
    def not_judged(self) -> bool:
        """No deviation found, but some evidence a criterion needs is missing (or no step was judged at all)."""
        return self.invalid is None and self.deviation is None and (bool(self.gaps) or self.judged_steps == 0)

    @property
    def passed(self) -> bool:
        return self.invalid is None and self.deviation is None and not self.not_judged


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

    def __init__(self, model: FsmModel, elements: list[Element], answers: Judge | None = None,
                 keep_sayings: bool = False):
        """`answers`: the answer judge deciding a `say` forbid's description where no phrase decides (the embedded
        judge by default: deterministic, offline); `keep_sayings`: each verdict lists every text judged on a say
        forbid or a claim (`Verdict.said`)."""
        self.model = model
        self.elements = elements
        self.stepper = Stepper(model, elements)
        c = self.stepper.compiled
        self.state_el = c.state_el
        self.tool_bindings: dict[str, list] = {}
        for b in model.tool_bindings:
            self.tool_bindings.setdefault(b.tool, []).append(b)
        self.sayings = SayingJudge(answers)
        self.keep_sayings = keep_sayings
        self.claims = [(claim.state, claim_saying(claim, id_)) for claim, id_ in zip(model.claims, claim_ids(model))]
        self.say_forbids: dict[int, Saying] = {
            cf.element: saying for cf in c.forbids if cf.f.effect is not None and cf.f.effect.kind == "say"
            for saying in [forbid_saying(cf.f, cf.element_id)] if saying is not None}
        self.success = {claim.state for claim in model.claims if model.states[claim.state].final}
        self.finals = frozenset(name for name, st in model.states.items() if st.final)
        self.escalations = set(model.escalations)
        # The model speaks of what the assistant says (claims, `say` forbids): a run needs assistant texts.
        self.says = bool(model.claims) or any(f.effect is not None and f.effect.kind == "say" for f in model.forbids)
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
        v = Verdict(run=run, model=self.model.name, intent=run.intent, finals=self.finals)
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
        # The evidence contract: a run without a single tool step cannot show that a call was (not) made, nor deliver
        # the tool results the model moves on; its reader may also know that its format records none.
        tools_seen = run.records_tool_calls and any(s.kind in ("tool_call", "tool_result") for s in run.steps)
        touched: set[str] = set()  # variables the run's steps have set (through the model's assignments)
        undecided: dict[int, list[tuple[str, AnswerVerdict]]] = {}  # say forbid -> texts no judge decided on it
        for number, step in enumerate(run.steps, start=1):
            kind = step.kind
            v.judged_steps = number
            if kind == "assistant":
                if self._judge_saying(v, step.text or "", state, forbids, number, step.where, undecided):
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
            # A user text or a tool result: the next event. Calls the model expected before it must have been made
            # (a run that records no tool calls cannot show them: not judged).
            if pending and not tools_seen:
                v.gaps.extend(_unshown(p, step.where) for p in pending)
                pending.clear()
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
            if not tools_seen and not stepper.enabled(state, event):
                waiting = self._tool_events(state)
                if waiting:  # the model moves on a tool result the run cannot show: judged up to here
                    v.judged_steps = number - 1
                    v.gaps.append(f"{step.where}: the model waits in `{state}` for a tool result "
                                  f"({', '.join(waiting)}); the run records no tool call or result, so the "
                                  f"judgement stops before step {number}")
                    break
            fired = stepper.fire(state, variables, event, args, prev, number, exercised)
            state, taken = fired.state, fired.taken
            if taken is None and not run.precondition_recorded:
                unset = self._unrecorded_start(before, event, touched)
                if unset:  # refused by a guard over values the run never shows: where it started is unknown
                    v.judged_steps = number - 1
                    v.gaps.append(f"{step.where}: the model refuses `{event}` in `{before}` by a guard over "
                                  f"{', '.join(unset)}, which the run never sets and whose starting value it does "
                                  "not record (no precondition): the judgement stops here")
                    break
            v.path.append(turn)
            if taken is None:  # refused
                turn["rejected"] = True
                turn["assert_state"] = {"state": before}
                self._deviation(v, "step_not_allowed", step.where, number, self.state_el[before],
                                f"the model does not allow `{event}` in state `{before}`")
                break
            turn["_state"] = state  # the model's state after the turn (regression goldens assert it)
            touched.update(taken.assigned)
            prev = taken
            forbids = fired.forbids
            for call in fired.calls:
                v.expected_calls.append((call.tool, call.args, len(v.path) - 1))
                if call.tool in self.escalations:
                    v.escalation_expected = True
                pending.append(_Pending(call.tool, call.args, taken.transition_el, len(v.path) - 1))
            if kind == "tool_result" and step.state_after:
                if self._judge_state(v, step, variables, number, taken):
                    break
        else:
            if pending and not tools_seen:
                v.gaps.extend(_unshown(p, run.steps[-1].where) for p in pending)
            elif pending:
                p = pending[0]
                where = run.steps[-1].where if run.steps else run.where
                self._deviation(v, "missing_call", where, len(run.steps), p.element,
                                f"the model calls {p.tool}({_args_text(p.args)}); the run ends without it",
                                tool=p.tool, expected=p.args, turn=p.turn)
        for element, texts in undecided.items():
            v.gaps.append(self._undecided(element, texts))
        if v.deviation is None:
            if not run.steps:
                v.gaps.append(f"{run.where}: the run shows no step"
                              + (f" ({'; '.join(run.notes)})" if run.notes else ""))
            if self.says and (not run.records_assistant_texts or not any(s.kind == "assistant" for s in run.steps)):
                v.gaps.append(f"{run.where}: the run records no assistant text: the model's claims and `say` "
                              "forbids are not judged")
        v.exercised = exercised
        v.final_state = state
        v.completed = v.deviation is None and not v.gaps and state in self.success
        return v

    def _unrecorded_start(self, state: str, event: str, touched: set[str]) -> list[str]:
        """The variables the guards of `event`'s transitions from `state` read that no step of the run has set: what
        a refusal may owe to a starting configuration the run did not record. Empty: the model refuses the event
        itself there, or on values the run set."""
        found: set[str] = set()
        for t in self.model.transitions:
            if t.source == state and t.event == event and t.guard is not None:
                found.update(name for node in t.guard.walk() if isinstance(node, Ref)
                             for name in [node.name.removeprefix("discarded.")]
                             if name in self.model.variables and name not in touched)
        return sorted(found)

    def _tool_events(self, state: str) -> list[str]:
        """The events bound to tool results (`bind tool`) that the model takes in this state."""
        return sorted({b.event for bs in self.tool_bindings.values() for b in bs
                       if self.stepper.enabled(state, b.event)})

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
        sources = dict(step.sources)
        # A forbid by argument source judges every call of its tool, owed or not: the model may owe the call, but
        # not with a value the agent made up (seed 002).
        for cf in forbids:
            if cf.f.effect is not None and cf.f.effect.sources and self._forbids_call(v, cf, step, variables):
                self._forbidden(v, cf, step, number, sources)
                return True
        expected = next((p for p in pending if p.tool == tool), None)
        if expected is not None:
            pending.remove(expected)
            made.append((tool, args))
            if args is None:
                if expected.args:
                    v.gaps.append(f"{step.where}: the run records no arguments of {tool}; the model passes "
                                  f"{_args_text(expected.args)}: not judged")
            else:
                for name, value in expected.args.items():
                    found, actual = lookup(args, name)
                    if not found:
                        self._deviation(v, "missing_argument", step.where, number, expected.element,
                                        f"{tool} is called without `{name}`; the model passes {value!r}",
                                        tool=tool, argument=name, expected=value, turn=expected.turn,
                                        sources=sources)
                        return True
                    if not _same(actual, value):
                        source = source_of(sources, name)
                        self._deviation(v, "wrong_argument", step.where, number, expected.element,
                                        f"{tool} is called with {name} = {actual!r}"
                                        + (f" (from {source})" if source else "")
                                        + f"; the model passes {value!r}",
                                        tool=tool, argument=name, expected=value, actual=actual, source=source,
                                        turn=expected.turn, sources=sources)
                        return True
            if tool in self.escalations:
                v.escalated = True
            return False
        for cf in forbids:
            effect = cf.f.effect
            if effect is None or effect.kind != "call" or effect.tool != tool or effect.sources:
                continue
            if cf.condition is not None:
                env = dict(variables)
                env.update(_call_env(args or {}))
                if not cf.condition(env):
                    continue
            self._forbidden(v, cf, step, number, sources)
            return True
        one = _one_source(sources)
        if any(t == tool and (a == args or a is None or args is None) for t, a in made):
            self._deviation(v, "duplicate_call", step.where, number,
                            prev.transition_el if prev is not None else self.state_el[state],
                            f"{tool} is called again; the model calls it once here", tool=tool, actual=args,
                            source=one, sources=sources)
            return True
        self._deviation(v, "unexpected_call", step.where, number,
                        prev.transition_el if prev is not None else self.state_el[state],
                        f"{tool}({_args_text(args or {}, sources)}) is called; the model makes no such call in state "
                        f"`{state}`", tool=tool, actual=args, source=one, sources=sources)
        return True

    def _forbids_call(self, v: Verdict, cf, step, variables) -> bool:
        """Whether a forbid with `when args.X from S` forbids this call: its tool, its condition, and each named
        argument's recorded source among the listed ones. A source the run did not record is a gap."""
        effect = cf.f.effect
        if effect.tool != step.tool:
            return False
        if cf.condition is not None:
            if step.args is None:
                return False
            env = dict(variables)
            env.update(_call_env(step.args))
            if not cf.condition(env):
                return False
        for path, names in effect.sources.items():
            source = source_of(step.sources, path)
            if source is None:
                v.gaps.append(f"{step.where}: the run records no source of {step.tool}'s `{path}`: forbid "
                              f"{cf.f.label()} is not judged")
                return False
            if source not in names:
                return False
        return True

    def _forbidden(self, v: Verdict, cf, step, number: int, sources: dict[str, str]) -> None:
        effect = cf.f.effect
        named = [source_of(sources, path) for path in effect.sources] if effect.sources else []
        source = next((s for s in named if s), None) or _one_source(sources)
        self._deviation(v, "forbidden_call", step.where, number, cf.element,
                        f"{step.tool}({_args_text(step.args or {}, sources)}) is forbidden here: forbid "
                        f"{cf.f.label()} ({cf.f.loc})", tool=step.tool, actual=step.args, source=source,
                        sources=sources)

    def _judge_saying(self, v: Verdict, text: str, state: str, forbids: list, number: int, where: str,
                      undecided: dict[int, list[tuple[str, AnswerVerdict]]]) -> bool:
        """An assistant text against the `say` forbids of the last event and every claim (mbt.judges.sayings): True
        at a deviation. A forbid the judges cannot decide on the text is remembered for a gap."""
        folded = fold(text)
        for cf in forbids:
            saying = self.say_forbids.get(cf.element)
            if saying is None:
                continue
            said = self.sayings.says(text, saying, folded)
            if self.keep_sayings:
                v.said.append(Said(saying.element, "say", number, where, state, said))
            if said.verdict == "pass":
                phrase = saying.phrase_in(folded)
                what = f"says {phrase!r} (rules)" if phrase is not None else \
                    f"says what it describes, {saying.description!r} ({said.judge}: {said.reason})"
                self._deviation(v, "forbidden_saying", where, number, cf.element,
                                f"the assistant {what}: forbid {cf.f.label()} ({cf.f.loc})",
                                expected=phrase if phrase is not None else saying.description, actual=text)
                return True
            if not said.decided:
                undecided.setdefault(cf.element, []).append((where, said))
        for claimed, saying in self.claims:
            said = self.sayings.says(text, saying, folded)
            if self.keep_sayings:
                v.said.append(Said(saying.element, "claim", number, where, state, said))
            if said.verdict == "pass" and state != claimed:
                self._deviation(v, "premature_success", where, number, self.state_el[claimed],
                                f"the assistant says {saying.phrase_in(folded)!r} (claims `{claimed}`) while the model "
                                f"is in `{state}`", expected=state, actual=text)
                return True
        return False

    def _undecided(self, element: int, texts: list[tuple[str, AnswerVerdict]]) -> str:
        """The gap for a `say` forbid no judge decided on some assistant texts: never a pass (docs/runs.md)."""
        saying = self.say_forbids[element]
        wheres = [where for where, _ in texts]
        later = wheres[1:4]
        also = f" (also {', '.join(later)}" + (f" and {len(wheres) - 4} more" if len(wheres) > 4 else "") + ")" \
            if later else ""
        first = texts[0][1]
        return (f"{wheres[0]}: {saying.label} ({saying.description!r}) is not judged on {len(wheres)} assistant "
                f"text(s){also}: they say none of its phrases, and the {first.judge} judge does not decide whether "
                f"they say what it describes ({first.reason})")

    def _judge_state(self, v: Verdict, step, variables: dict, number: int, taken) -> bool:
        for name, value in step.state_after.items():
            if name in self.model.variables and not _same(variables[name], value):
                self._deviation(v, "wrong_state", step.where, number, taken.transition_el,
                                f"after {step.tool} the run exports {name} = {value!r}; the model has "
                                f"{variables[name]!r}", argument=name, expected=variables[name], actual=value)
                return True
        return False


def _args_text(args: dict[str, Any], sources: dict[str, str] | None = None) -> str:
    """`order_id = 'SO-1'`, with each argument's recorded source when given: `order_id = 'SO-1' (model_inference)`."""
    return ", ".join(f"{k} = {v!r}" + (f" ({sources[k]})" if sources and k in sources else "")
                     for k, v in args.items())


def _unshown(p: _Pending, where: str) -> str:
    return f"{where}: the model calls {p.tool}({_args_text(p.args)}) before this point; the run records no tool calls"


def _call_env(args: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as a condition reads them: `args.NAME` and, for nested ones, `args.PATH`."""
    env = {f"args.{k}": v for k, v in args.items()}
    env.update({f"args.{k}": v for k, v in flatten(args).items()})
    return env


def source_of(sources: dict[str, str], path: str) -> str | None:
    """The recorded source of an argument path: its own, else the nearest enclosing argument's."""
    parts = path.split(".")
    for n in range(len(parts), 0, -1):
        found = sources.get(".".join(parts[:n]))
        if found is not None:
            return found
    return None


def _one_source(sources: dict[str, str]) -> str | None:
    """The call's source when all its recorded arguments share one (what a report shows beside the call)."""
    distinct = set(sources.values())
    return distinct.pop() if len(distinct) == 1 else None


def is_critical(verdict: Verdict) -> bool:
    """A critical failure: the first deviation concerns an element of severity high or critical."""
    d = verdict.deviation
    return d is not None and d.severity in tuple(s.value for s in CRITICAL_SEVERITIES)
