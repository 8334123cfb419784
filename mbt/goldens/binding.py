"""Binds a golden turn to a model event: explicit `event`/`args`, else the model's bindings in declaration order.

A regex binding's named groups become the event's arguments, read by the parameter's declared type: a captured text
is the argument of a `string` or `enum` parameter as it is, the int it spells for an `int` one (`(?P<amount>\\d+)`
in "我要退款 100 元" gives 100), the decimal for a `number` one. A capture that spells no value of the type (not a
whole number, outside `int[0..1000]`, off a number's precision) is the reason the turn cannot be bound, said in
words; it never falls through to a later binding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from mbt.errors import did_you_mean
from mbt.goldens.cases import Turn
from mbt.model.fsm import FsmModel
from mbt.model.types import ValueType

# What a capture must look like to be read as a number: digits (any script's, as `\d` and int() read them), an
# optional sign, and for a `number` a decimal point (no exponent, no thousands separators: "1,000" is not read).
_WHOLE = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")


class CaptureError(ValueError):
    """A captured text that spells no value of its parameter's type; the message says why ("which is not ...")."""


def captured_value(text: str, vtype: ValueType | None) -> Any:
    """The argument a captured text gives a parameter of type `vtype` (None: not a parameter, kept as text for the
    argument check to name); raises CaptureError when it spells no value of the type."""
    if vtype is None or vtype.kind not in ("int", "number"):
        return text
    spelled = text.strip()
    value: Any
    if vtype.kind == "int":
        if not _WHOLE.fullmatch(spelled):
            raise CaptureError(f"which is not a whole number ({vtype.text()})")
        value = int(spelled)
    else:
        try:
            if not _DECIMAL.fullmatch(spelled):
                raise InvalidOperation
            value = Decimal(spelled)
        except InvalidOperation:  # (also digits of a script Decimal does not read)
            raise CaptureError(f"which is not a decimal number ({vtype.text()})") from None
    if not vtype.admits(value):
        raise CaptureError(f"which is not a value of {vtype.text()}")
    return value


@dataclass(frozen=True)
class Bound:
    event: str
    args: dict[str, Any]
    how: str  # explicit | intent | text | regex


class Binder:
    """Deterministic routing (seed 003's fixed routing): the same turn always binds to the same event, or to none."""

    def __init__(self, model: FsmModel):
        self.model = model
        self.intents: dict[str, str] = {}
        self.patterns: list[tuple[str, Any, str]] = []  # (how, matcher, event)
        self.params = {name: {p.name: p.type for p in e.params} for name, e in model.events.items()}
        for b in model.bindings:
            if b.how == "intent":
                self.intents.setdefault(b.pattern, b.event)  # intents are labels: compared exactly
            elif b.how == "text":
                self.patterns.append(("text", b.pattern.casefold(), b.event))
            else:
                self.patterns.append(("regex", re.compile(b.pattern), b.event))

    def bind(self, turn: Turn, intent: str | None = None) -> Bound | str:
        """The bound event, or the reason the turn cannot be bound."""
        if turn.event is not None:
            if turn.event not in self.model.events:
                return f"unknown event `{turn.event}`{did_you_mean(turn.event, self.model.events)}"
            return Bound(turn.event, dict(turn.args), "explicit")
        intent = turn.intent or intent
        if intent is not None and intent in self.intents:
            return Bound(self.intents[intent], dict(turn.args), "intent")
        text = turn.user
        if text:
            folded = text.casefold()
            for how, matcher, event in self.patterns:
                if how == "text":
                    if matcher in folded:
                        return Bound(event, dict(turn.args), "text")
                else:
                    found = matcher.search(text)
                    if found:
                        return self._captured(event, found, turn.args)
        if intent is not None:
            return f"no binding for intent `{intent}` and no text/regex binding matches"
        if not text:
            return "the turn has no `event`, `intent` or `user` text"
        return "no binding matches the user text"

    def _captured(self, event: str, found: re.Match, given: dict[str, Any]) -> Bound | str:
        """The event bound by a regex match: its named groups read by their parameters' types, the turn's explicit
        arguments taking precedence; or why a captured value is not one of its parameter's."""
        args: dict[str, Any] = {}
        types = self.params.get(event, {})
        for name, captured in found.groupdict().items():
            if captured is None or name in given:
                continue
            try:
                args[name] = captured_value(captured, types.get(name))
            except CaptureError as why:
                return f"the regex binding of event `{event}` captured `{captured}` for `{name}`, {why}"
        args.update(given)
        return Bound(event, args, "regex")
