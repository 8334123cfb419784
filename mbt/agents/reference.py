"""mbt's reference machine of a state machine model as a chat agent (`mbt serve`, docs/agents.md): what it does is
the model's, step by step, and what it says is built from the model's own words.

Each request carries the whole conversation; the agent holds nothing between requests. It starts a fresh reference
machine (mbt.reference, the `transitions` oracle) in the model's initial state — or where `--precondition` says, as
a golden's precondition does (`customer_id=C-1001`: the signed-in customer of every session) — and replays the
conversation:

- a user message becomes the model event its bindings give (`bind intent` / `bind text` / `bind regex`, in the
  order written, as golden turns are bound: mbt.goldens.binding), with the regex's named groups as arguments;
- a tool message (a result the client sends for one of the agent's tool calls) becomes the event of the first
  `bind tool` for that tool whose outcome (ok with its fields, or the error type) matches and whose event the current
  state handles (as `mbt runs` reads a tool result);
- assistant messages are the agent's own earlier replies: replaying the user and tool messages gives them again.

The reply answers what happened after the last assistant message. Its text, one sentence per part:

1. the step: the quote the fired transition cites (`@policy:22 "repeats it back and asks the user to confirm it"`),
   else the quote of the state it enters, else `Now in state NAME`; capitalised, ending with a full stop;
2. what the user gave that the step kept: `NAME: VALUE` for each variable the step set to one of the event's
   arguments (`recovery_email: li@example.com`), unless a tool call of the step sends that value (3 says it);
3. each tool call the step made: `Calling TOOL with ARG VALUE, ARG VALUE` — and the call itself as the message's
   `tool_calls` (OpenAI's shape, `finish_reason: tool_calls`);
4. the first phrase of a `claim` of the state entered (`claim cancelled matching "is cancelled"`).

An event the state does not handle is answered `I cannot help with that now.`, a text no binding reads `Sorry, I
cannot help with that: I did not understand it.` (both refusals, which the embedded judge tells apart from an
answer). The model's `say` forbids are what the agent must never say; it never says them.

Faults (`--fault`), each a misbehaviour a test suite should catch:

- `wrong-argument`: every tool call goes out with its first argument changed (an e-mail address gets `wrong-` before
  its `@`, other text gets `-wrong` after it, a number one more, a truth value its opposite); the text reports the
  call as made;
- `skipped-confirmation`: when a step enters a state that waits for a confirmation (it handles an event without
  parameters whose name holds `confirm`), the agent confirms on the user's behalf at once and says only what that
  second step did;
- `premature-success`: when a step calls a tool, the agent also says what success would say before the tool has
  answered: the claim of the nearest claimed state reachable from there, else the quote of the nearest final state
  (the first found, in the order the transitions are written).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from mbt.goldens.binding import Binder, Bound
from mbt.goldens.cases import Turn
from mbt.model.fsm import Assign, FsmModel, Transition
from mbt.reference import ReferenceMachine
from mbt.runs.genai import decode_json, tool_error

FAULTS = ("wrong-argument", "skipped-confirmation", "premature-success")
NOT_NOW = "I cannot help with that now."
NOT_UNDERSTOOD = "Sorry, I cannot help with that: I did not understand it."


class ConversationError(ValueError):
    """A conversation the agent cannot read (a message that is not one): the server answers 400 with it."""


@dataclass
class AgentReply:
    content: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


@dataclass
class _Step:
    """What one event did: the sentences to say and the calls made."""

    sentences: list[str] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?。" else text + "."


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def wrong(value: Any) -> Any:
    """The wrong argument `wrong-argument` sends in place of `value`."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str) and "@" in value:
        return "wrong-" + value
    if isinstance(value, str):
        return value + "-wrong"
    return value


class ReferenceAgent:
    """One FSM model as a stateless chat agent: `reply(messages)` (module docstring)."""

    def __init__(self, model: FsmModel, fault: str | None = None, precondition: dict[str, Any] | None = None):
        """`precondition`: where every conversation starts, as a golden's precondition says it (`state`, variables,
        `discarded.NAME`); a ValueError names what the model does not have."""
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault `{fault}` (use {', '.join(FAULTS)})")
        self.model, self.fault = model, fault
        given = dict(precondition or {})
        state = given.pop("state", None)
        self.start = (state, {k: v for k, v in given.items() if not k.startswith("discarded.")},
                      {k.removeprefix("discarded."): v for k, v in given.items() if k.startswith("discarded.")})
        self._machine()  # the precondition checked once, here
        self.binder = Binder(model)
        self.transitions = {t.key or f"#{i}": t for i, t in enumerate(model.transitions)}
        self.handled = {(t.source, t.event) for t in model.transitions}

    def _machine(self) -> ReferenceMachine:
        machine = ReferenceMachine(self.model)
        machine.reset(*self.start)
        return machine

    @property
    def version(self) -> str:
        """What the agent says it is (the chat completion's `system_fingerprint`)."""
        return f"mbt-reference {self.model.name}" + (f" fault={self.fault}" if self.fault else "")

    def reply(self, messages: list[Any]) -> AgentReply:
        machine = self._machine()
        step = _Step()
        answered = 0  # calls made so far, for the ids of the tool calls
        for n, message in enumerate(messages, start=1):
            if not isinstance(message, dict):
                raise ConversationError(f"message {n} is not an object")
            role = message.get("role")
            if role in ("system", "developer"):
                continue
            if role == "assistant":  # the agent's own earlier reply: the next reply starts after it
                answered += len(step.calls)
                step = _Step()
                continue
            if role == "user":
                self._user(machine, _content(message, n), step)
            elif role == "tool":
                self._tool(machine, message, n, step)
            else:
                raise ConversationError(f"message {n} has role {role!r} (user, assistant, tool, system)")
        calls = [{"id": f"call_{answered + i + 1}", "type": "function",
                  "function": {"name": tool, "arguments": json.dumps(args, ensure_ascii=False, sort_keys=True)}}
                 for i, (tool, args) in enumerate(step.calls)]
        return AgentReply(" ".join(s for s in step.sentences if s) or NOT_UNDERSTOOD, calls)

    # ---- what each message does
    def _user(self, machine: ReferenceMachine, text: str, step: _Step) -> None:
        bound = self.binder.bind(Turn(user=text))
        if not isinstance(bound, Bound):
            step.sentences.append(NOT_UNDERSTOOD)
            return
        self._event(machine, bound.event, bound.args, step)

    def _tool(self, machine: ReferenceMachine, message: dict[str, Any], n: int, step: _Step) -> None:
        tool = message.get("name")
        result = decode_json(_content(message, n))
        error = tool_error(result)
        for b in self.model.tool_bindings:
            if tool is not None and b.tool != tool:
                continue
            if (b.outcome == "error") != (error is not None) or (b.codes and error not in b.codes):
                continue
            if b.outcome == "ok" and not all(isinstance(result, dict) and f in result for f in b.fields):
                continue
            if (machine.state, b.event) not in self.handled:
                continue
            params = b.params or [p.name for p in self.model.events[b.event].params]
            values = [error] if b.outcome == "error" and b.fields else [result.get(f) for f in b.fields] \
                if isinstance(result, dict) else []
            self._event(machine, b.event, dict(zip(params, values)), step)
            return
        step.sentences.append(NOT_NOW)

    def _event(self, machine: ReferenceMachine, event: str, args: dict[str, Any], step: _Step) -> None:
        before = dict(machine.variables)
        try:
            fired = machine.send(event, args)
        except ValueError:  # an argument the event's type refuses (a bound text that is no value of it)
            fired = False
        if not fired:
            step.sentences.append(NOT_NOW)
            return
        calls = [(c.tool, dict(c.args)) for c in machine.last_calls]
        said = self._said(machine, self.transitions[machine.last_transition or ""], args, before, calls)
        if self.fault == "skipped-confirmation":
            confirm = self._confirmation(machine.state)
            if confirm is not None:
                second = dict(machine.variables)
                if machine.send(confirm, {}):  # confirmed on the user's behalf: only this step is told
                    calls += [(c.tool, dict(c.args)) for c in machine.last_calls]
                    said = self._said(machine, self.transitions[machine.last_transition or ""], {}, second, calls)
        if self.fault == "wrong-argument":
            calls = [(tool, _first_wrong(args)) for tool, args in calls]
        step.sentences += said
        for tool, call_args in calls:
            shown = ", ".join(f"{k} {_shown(v)}" for k, v in call_args.items())
            step.sentences.append(f"Calling {tool}" + (f" with {shown}." if shown else "."))
        step.calls += calls
        if self.fault == "premature-success" and calls:
            success = self._success(machine.state)
            if success:
                step.sentences.append(success)

    # ---- the words
    def _said(self, machine: ReferenceMachine, t: Transition, args: dict[str, Any], before: dict[str, Any],
              calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        state = self.model.states[t.target]
        quote = (t.span.quote if t.span is not None else None) or (state.span.quote if state.span is not None
                                                                    else None)
        out = [_sentence(quote or f"now in state {t.target}")]
        sent = [v for _, call_args in calls for v in call_args.values()]  # a call says these itself
        given = [v for v in args.values() if v is not None and v not in sent]
        for action in t.actions:
            if isinstance(action, Assign):
                value = machine.variables.get(action.target)
                if value is not None and value != before.get(action.target) and value in given:
                    out.append(f"{action.target}: {_shown(value)}.")
        claim = next((c for c in self.model.claims if c.state == t.target and c.phrases), None)
        if claim is not None:
            out.append(_sentence(claim.phrases[0]))
        return out

    def _confirmation(self, state: str) -> str | None:
        """The confirmation event the state waits for, if any (skipped-confirmation)."""
        for t in self.model.transitions:
            event = self.model.events.get(t.event)
            if t.source == state and event is not None and not event.params and "confirm" in t.event.casefold():
                return t.event
        return None

    def _success(self, state: str) -> str | None:
        """What success would say, from `state` (premature-success): the nearest claim, else the nearest final state's
        quote, breadth first in the order the transitions are written."""
        claimed = {c.state: c.phrases[0] for c in self.model.claims if c.phrases}
        seen, queue, final = {state}, deque([state]), None
        while queue:
            current = queue.popleft()
            for t in self.model.transitions:
                if t.source != current or t.target in seen:
                    continue
                seen.add(t.target)
                if t.target in claimed:
                    return _sentence(claimed[t.target])
                target = self.model.states[t.target]
                if final is None and target.final:
                    final = (t.span.quote if t.span is not None else None) or (
                        target.span.quote if target.span is not None else None) or f"now in state {t.target}"
                queue.append(t.target)
        return _sentence(final) if final else None


def _first_wrong(args: dict[str, Any]) -> dict[str, Any]:
    out = dict(args)
    for key, value in out.items():
        if value is not None:
            out[key] = wrong(value)
            break
    return out


def _content(message: dict[str, Any], n: int) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise ConversationError(f"message {n}: `content` must be text or a list of parts")
