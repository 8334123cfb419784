"""Binds a golden turn to a model event: explicit `event`/`args`, else the model's bindings in declaration order."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mbt.errors import did_you_mean
from mbt.goldens.cases import Turn
from mbt.model.fsm import FsmModel


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
                        args = {k: v for k, v in found.groupdict().items() if v is not None}
                        args.update(turn.args)
                        return Bound(event, args, "regex")
        if intent is not None:
            return f"no binding for intent `{intent}` and no text/regex binding matches"
        if not text:
            return "the turn has no `event`, `intent` or `user` text"
        return "no binding matches the user text"
