"""The runs judge: docs/runs.md's judgement and metrics implemented a second time, plainly and slowly.

It shares nothing with mbt.runs beyond the typed model and the readers' ObservedRun: it steps the model with the
`transitions` reference machine (mbt/reference/machine.py), evaluates forbid guards and conditions with the FSM
judge's own expression evaluator, binds texts and results by re-reading the declarations, and then counts the
metrics from its own verdicts. Element ids come from mbt.elements.fsm's id functions (names only). What an assistant
text says is compared the way docs/runs.md says: phrases folded (mbt.judges.text.fold, the judges' normalisation),
and a `say` forbid's description, where no phrase is said, left to `describe` — the answer judge's decision, passed
in (pass / fail / not_judged): None takes the phrases as the whole of each forbid (`--judge rules`); a description
the answer judge leaves undecided is a gap only for a forbid without phrases (where it has phrases, they decide).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mbt.elements import fsm as ids
from mbt.judges.text import fold
from mbt.model.fsm import FsmModel
from mbt.reference.machine import ReferenceMachine
from mbt.runs.steps import ObservedRun
from tests.judge.fsm import value_of


@dataclass
class JudgeVerdict:
    type: str | None = None  # the first deviation's type; None: the run passes
    step: int | None = None
    element: str | None = None
    invalid: bool = False
    final_state: str | None = None
    completed: bool = False
    hands_off: bool = False
    handed_off: bool = False
    intent: str | None = None
    through: set[str] = field(default_factory=set)  # state and transition ids the run passed through
    gaps: int = 0  # evidence the model needed and the run did not show

    @property
    def not_judged(self) -> bool:
        return not self.invalid and self.type is None and self.gaps > 0


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _bind_text(model: FsmModel, text: str) -> tuple[str, dict] | None:
    for b in model.bindings:  # text and regex bindings in declaration order (intents bind no observed text)
        if b.how == "text" and b.pattern.casefold() in text.casefold():
            return b.event, {}
        if b.how == "regex":
            m = re.search(b.pattern, text)
            if m:
                return b.event, {k: v for k, v in m.groupdict().items() if v is not None}
    return None


def _value_at(args: dict, path: str) -> tuple[bool, Any]:
    """A dotted argument path in nested objects, walking every way of splitting it at dots (literal keys first)."""
    if path in args:
        return True, args[path]
    parts = path.split(".")
    for cut in range(1, len(parts)):
        head, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
        if isinstance(args.get(head), dict):
            found, value = _value_at(args[head], rest)
            if found:
                return True, value
    return False, None


def _leaves(args: dict, prefix: str = "") -> dict:
    out = {}
    for k, x in args.items():
        if isinstance(x, dict) and x:
            out.update(_leaves(x, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = x
    return out


def _source(sources: dict, path: str) -> str | None:
    parts = path.split(".")
    found = [sources[".".join(parts[:n])] for n in range(1, len(parts) + 1) if ".".join(parts[:n]) in sources]
    return found[-1] if found else None


def _reads_unset(guard, model: FsmModel, set_so_far: set[str]) -> bool:
    names = {n.name.split(".")[-1] if n.name.startswith("discarded.") else n.name
             for n in guard.walk() if type(n).__name__ == "Ref"}
    return any(name in model.variables and name not in set_so_far for name in names)


def _handles(model: FsmModel, state: str, event: str) -> bool:
    return any(t.source == state and t.event == event for t in model.transitions)


def _bind_result(model: FsmModel, state: str, step) -> tuple[str, dict] | None:
    outcome = "ok" if step.ok else "error"
    matching = [b for b in model.tool_bindings if b.tool == step.tool and b.outcome == outcome
                and (not b.codes or step.error in b.codes)]
    if not matching:
        return None
    chosen = next((b for b in matching if _handles(model, state, b.event)), matching[0])
    if outcome == "error":
        return chosen.event, ({chosen.params[0]: step.error} if chosen.fields else {})
    result = step.result if isinstance(step.result, dict) else {}
    if any(f not in result for f in chosen.fields):
        return None
    return chosen.event, {p: result[f] for p, f in zip(chosen.params, chosen.fields)}


def _args_ok(model: FsmModel, event: str, args: dict) -> bool:
    params = {p.name: p.type for p in model.events[event].params}
    if any(k not in params or not params[k].admits(v) for k, v in args.items()):
        return False
    return all(k in args or t.optional for k, t in params.items())


def _reacting_forbids(model: FsmModel, state: str, event: str, env: dict) -> list:
    out = []
    for f in model.forbids:
        if f.source not in (None, state) or f.event not in (None, event):
            continue
        if f.guard is not None and not value_of(f.guard, env):
            continue
        out.append(f)
    return out


def judge(model: FsmModel, run: ObservedRun, describe: Callable[[str, str], str] | None = None) -> JudgeVerdict:
    v = JudgeVerdict()
    undecided: set[str] = set()  # say forbids (ids) no judge decided on some text: one gap each
    rm = ReferenceMachine(model)
    try:
        state = run.precondition.get("state")
        rm.reset(state, {k: x for k, x in run.precondition.items() if k != "state" and k in model.variables})
    except ValueError:
        v.invalid = True
        return v
    v.through.add(ids.state_id(rm.state))
    owed: list[tuple[str, dict, str]] = []  # (tool, args, the transition id that makes the call)
    seen: list[tuple[str, dict | None]] = []
    reacting: list = []
    last_transition: str | None = None
    escalation = set(model.escalations)
    success = {c.state for c in model.claims if model.states[c.state].final}
    intents = {}
    for b in model.bindings:
        if b.how == "intent":
            intents.setdefault(b.event, b.pattern)
    v.intent = run.intent
    first_user = True
    tools = run.records_tool_calls and any(s.kind in ("tool_call", "tool_result") for s in run.steps)
    set_so_far: set[str] = set()
    tool_events = {b.event for b in model.tool_bindings}

    def deviate(kind: str, n: int, element: str) -> None:
        v.type, v.step, v.element = kind, n, element

    for n, step in enumerate(run.steps, start=1):
        here = ids.state_id(rm.state)
        if step.kind == "assistant":
            text = fold(step.text or "")
            said = []
            for f in reacting:
                if f.effect is None or f.effect.kind != "say":
                    continue
                if any(fold(p) in text for p in f.effect.matching):
                    said.append(f)
                    break
                if describe is None and f.effect.matching:
                    continue  # the phrases alone: none said
                decided = "not_judged" if describe is None else describe(step.text or "", f.effect.description or "")
                if decided == "pass":
                    said.append(f)
                    break
                if decided == "not_judged" and f.effect.matching:
                    continue  # undecided by the answer judge: the phrases, none said, have the last word
                if decided != "fail":
                    undecided.add(ids.forbidden_id(f))
            if said:
                deviate("forbidden_saying", n, ids.forbidden_id(said[0]))
                break
            claimed = [c for c in model.claims if any(fold(p) in text for p in c.phrases)
                       and rm.state != c.state]
            if claimed:
                deviate("premature_success", n, ids.state_id(claimed[0].state))
                break
            continue
        if step.kind == "tool_call":
            env = dict(rm.variables)
            env.update({f"discarded.{k}": x for k, x in rm.discarded.items()})
            env.update({f"args.{k}": x for k, x in (step.args or {}).items()})
            env.update({f"args.{k}": x for k, x in _leaves(step.args or {}).items()})
            by_source = []
            for f in reacting:
                if f.effect is None or f.effect.kind != "call" or f.effect.tool != step.tool or not f.effect.sources:
                    continue
                if f.effect.condition is not None and (step.args is None or not value_of(f.effect.condition, env)):
                    continue
                recorded = {path: _source(step.sources, path) for path in f.effect.sources}
                if any(x is None for x in recorded.values()):
                    v.gaps += 1
                elif all(recorded[path] in names for path, names in f.effect.sources.items()):
                    by_source.append(f)
            if by_source:
                deviate("forbidden_call", n, ids.forbidden_id(by_source[0]))
                break
            match = [o for o in owed if o[0] == step.tool]
            if match:
                tool, expected, element = match[0]
                owed.remove(match[0])
                seen.append((step.tool, step.args))
                if step.args is None and expected:
                    v.gaps += 1
                if step.args is not None:
                    bad = None
                    for name, value in expected.items():
                        found, actual = _value_at(step.args, name)
                        if not found:
                            bad = "missing_argument"
                        elif not _same(actual, value):
                            bad = "wrong_argument"
                        if bad:
                            break
                    if bad:
                        deviate(bad, n, element)
                        break
                if tool in escalation:
                    v.handed_off = True
                continue
            forbidden = []
            for f in reacting:
                if f.effect is None or f.effect.kind != "call" or f.effect.tool != step.tool or f.effect.sources:
                    continue
                if f.effect.condition is None or value_of(f.effect.condition, env):
                    forbidden.append(f)
            if forbidden:
                deviate("forbidden_call", n, ids.forbidden_id(forbidden[0]))
                break
            element = last_transition or here
            if any(t == step.tool and (a is None or step.args is None or a == step.args) for t, a in seen):
                deviate("duplicate_call", n, element)
            else:
                deviate("unexpected_call", n, element)
            break
        if step.kind == "tool_result" and not any(b.tool == step.tool for b in model.tool_bindings):
            continue  # a result no `bind tool` speaks of: listed, not judged
        if owed and not tools:  # calls the run cannot show: not judged
            v.gaps += len(owed)
            owed = []
        if owed:
            deviate("missing_call", n, owed[0][2])
            break
        if step.kind == "user":
            bound = _bind_text(model, step.text or "")
            if first_user and v.intent is None and bound is not None:
                v.intent = intents.get(bound[0])
            first_user = False
        else:
            bound = _bind_result(model, rm.state, step)
        if bound is None or not _args_ok(model, *bound):
            deviate("unbound_step", n, here)
            break
        event, args = bound
        before = rm.state
        if not tools and not _handles(model, before, event) and any(_handles(model, before, e) for e in tool_events):
            v.gaps += 1  # the model waits for a tool result the run cannot show: the judgement stops here
            break
        env = dict(rm.variables)
        env.update({f"discarded.{k}": x for k, x in rm.discarded.items()})
        env.update({p.name: args.get(p.name) for p in model.events[event].params})
        forbids_now = _reacting_forbids(model, before, event, env)
        if not rm.send(event, args):
            if not run.precondition_recorded and any(
                    t.source == before and t.event == event and t.guard is not None
                    and _reads_unset(t.guard, model, set_so_far) for t in model.transitions):
                v.gaps += 1  # refused on values the run never shows: where it started is unknown
                break
            deviate("step_not_allowed", n, here)
            break
        taken = next(t for t in model.transitions if t.key == rm.last_transition)
        set_so_far.update(a.target for a in taken.actions if not hasattr(a, "tool"))
        last_transition = ids.transition_id(taken)
        v.through.update({last_transition, ids.state_id(rm.state)})
        reacting = forbids_now
        for call in rm.last_calls:
            owed.append((call.tool, dict(call.args), last_transition))
            if call.tool in escalation:
                v.hands_off = True
        if step.kind == "tool_result" and step.state_after:
            wrong = [k for k, x in step.state_after.items() if k in model.variables
                     and not _same(rm.variables[k], x)]
            if wrong:
                deviate("wrong_state", n, last_transition)
                break
    else:
        if owed and tools:
            deviate("missing_call", len(run.steps), owed[0][2])
        elif owed:
            v.gaps += len(owed)
    v.gaps += len(undecided)
    _loop(run, v)
    speaks = bool(model.claims) or any(f.effect is not None and f.effect.kind == "say" for f in model.forbids)
    if v.type is None and not run.steps:
        v.gaps += 1
    if v.type is None and speaks and (not run.records_assistant_texts
                                      or all(s.kind != "assistant" for s in run.steps)):
        v.gaps += 1
    v.final_state = rm.state
    v.completed = v.type is None and v.gaps == 0 and rm.state in success
    return v


def _loop(run: ObservedRun, v: JudgeVerdict) -> None:
    """Seed 003's loop under the run's own configuration (docs/runs.md, section 3): the earliest finding, taken over
    the model's deviation when it comes at the same step or earlier."""
    found: list[tuple[int, str]] = []
    stops = [i for i, t in enumerate(run.turns[:-1]) if t.stop_reason not in (None, "completed")]
    if stops:
        found.append((run.turns[stops[0] + 1].step + 1, "continued_after_stop"))
    if run.max_turns is not None and len(run.turns) > run.max_turns:
        found.append((run.turns[run.max_turns].step + 1, "over_turn_budget"))
    if run.max_budget_tokens is not None:
        total = 0
        for t in run.turns:
            total += (t.input_tokens or 0) + (t.output_tokens or 0)
            if total > run.max_budget_tokens:
                found.append((t.step + 1, "over_token_budget"))
                break
    if run.structured_output:
        for n, s in enumerate(run.steps, start=1):
            if s.kind == "assistant":
                try:
                    json.loads(s.text or "")
                except ValueError:
                    found.append((n, "invalid_structured_output"))
                    break
    if found:
        step, kind = min(found)
        if v.type is None or step <= (v.step or 0):
            v.type, v.step, v.element, v.completed = kind, step, None, False


def metrics(pairs: list[tuple[ObservedRun, JudgeVerdict]], severities: dict[str, str]) -> dict[str, Any]:
    """docs/runs.md's run metrics, counted from the judge's verdicts: task completion and escalation success over the
    fully judged runs (passed or deviating), the rest over every run read."""
    read = [(r, v) for r, v in pairs if not v.invalid]
    full = [(r, v) for r, v in read if not v.not_judged]
    with_intent = [(r, v) for r, v in read if r.expected_intent is not None]
    hands_off = [(r, v) for r, v in full if v.hands_off]

    def ratio(a: int, b: int) -> float | None:
        return a / b if b else None

    return {
        "runs": len(read),
        "passed": sum(v.type is None and not v.not_judged for _, v in read),
        "not_judged": sum(v.not_judged for _, v in read),
        "intent_accuracy": ratio(sum(v.intent == r.expected_intent for r, v in with_intent), len(with_intent)),
        "task_completion_rate": ratio(sum(v.completed for _, v in full), len(full)),
        "escalation_success_rate": ratio(sum(v.handed_off for _, v in hands_off), len(hands_off)),
        "critical_failures": sum(v.type is not None and severities.get(v.element or "", "medium")
                                 in ("high", "critical") for _, v in read),
    }
