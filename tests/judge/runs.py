"""The runs judge: docs/runs.md's judgement and metrics implemented a second time, plainly and slowly.

It shares nothing with mbt.runs beyond the typed model and the readers' ObservedRun: it steps the model with the
`transitions` reference machine (mbt/reference/machine.py), evaluates forbid guards and conditions with the FSM
judge's own expression evaluator, binds texts and results by re-reading the declarations, and then counts the
metrics from its own verdicts. Element ids come from mbt.elements.fsm's id functions (names only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mbt.elements import fsm as ids
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


def judge(model: FsmModel, run: ObservedRun) -> JudgeVerdict:
    v = JudgeVerdict()
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

    def deviate(kind: str, n: int, element: str) -> None:
        v.type, v.step, v.element = kind, n, element

    for n, step in enumerate(run.steps, start=1):
        here = ids.state_id(rm.state)
        if step.kind == "assistant":
            text = (step.text or "").casefold()
            said = [f for f in reacting if f.effect is not None and f.effect.kind == "say"
                    and any(p.casefold() in text for p in f.effect.matching)]
            if said:
                deviate("forbidden_saying", n, ids.forbidden_id(said[0]))
                break
            claimed = [c for c in model.claims if any(p.casefold() in text for p in c.phrases)
                       and rm.state != c.state]
            if claimed:
                deviate("premature_success", n, ids.state_id(claimed[0].state))
                break
            continue
        if step.kind == "tool_call":
            match = [o for o in owed if o[0] == step.tool]
            if match:
                tool, expected, element = match[0]
                owed.remove(match[0])
                seen.append((step.tool, step.args))
                if step.args is not None:
                    bad = None
                    for name, value in expected.items():
                        if name not in step.args:
                            bad = "missing_argument"
                        elif not _same(step.args[name], value):
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
                if f.effect is None or f.effect.kind != "call" or f.effect.tool != step.tool:
                    continue
                env = dict(rm.variables)
                env.update({f"discarded.{k}": x for k, x in rm.discarded.items()})
                env.update({f"args.{k}": x for k, x in (step.args or {}).items()})
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
        env = dict(rm.variables)
        env.update({f"discarded.{k}": x for k, x in rm.discarded.items()})
        env.update({p.name: args.get(p.name) for p in model.events[event].params})
        forbids_now = _reacting_forbids(model, before, event, env)
        if not rm.send(event, args):
            deviate("step_not_allowed", n, here)
            break
        taken = next(t for t in model.transitions if t.key == rm.last_transition)
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
        if owed:
            deviate("missing_call", len(run.steps), owed[0][2])
    v.final_state = rm.state
    v.completed = v.type is None and rm.state in success
    return v


def metrics(pairs: list[tuple[ObservedRun, JudgeVerdict]], severities: dict[str, str]) -> dict[str, Any]:
    """docs/runs.md's run metrics, counted from the judge's verdicts."""
    judged = [(r, v) for r, v in pairs if not v.invalid]
    with_intent = [(r, v) for r, v in judged if r.expected_intent is not None]
    hands_off = [(r, v) for r, v in judged if v.hands_off]

    def ratio(a: int, b: int) -> float | None:
        return a / b if b else None

    return {
        "runs": len(judged),
        "passed": sum(v.type is None for _, v in judged),
        "intent_accuracy": ratio(sum(v.intent == r.expected_intent for r, v in with_intent), len(with_intent)),
        "task_completion_rate": ratio(sum(v.completed for _, v in judged), len(judged)),
        "escalation_success_rate": ratio(sum(v.handed_off for _, v in hands_off), len(hands_off)),
        "critical_failures": sum(v.type is not None and severities.get(v.element or "", "medium")
                                 in ("high", "critical") for _, v in judged),
    }
