"""A counterexample run, as data (part of a Finding) and as text a person can read and paste into a golden."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel


class CallShown(BaseModel):
    tool: str
    args: dict[str, Any] = {}


class TraceStep(BaseModel):
    """One position of the run: step 0 is the starting configuration; every later step an accepted event."""

    step: int
    event: str | None = None
    args: dict[str, Any] = {}
    transition: str | None = None  # the key of the transition taken
    state: str
    changed: dict[str, Any] = {}  # variables whose value this step changed (every variable at step 0)
    calls: list[CallShown] = []


class Counterexample(BaseModel):
    """The shortest run (fewest events) that violates an invariant, replayed on the replay engine."""

    invariant: str
    reason: str
    violated_at: int  # the step where the violation becomes certain
    depth: int  # the bound it was searched within
    replayed: bool  # True when the replay engine reproduced the run and the violation
    steps: list[TraceStep]
    golden: dict[str, Any]  # the run as a golden case (seed 000's format): paste it, then add assertions

    def lines(self) -> list[str]:
        """Hypothesis-style: the falsifying sequence, one event per line, then the golden case to paste."""
        n = len(self.steps) - 1
        proof = "replayed on the model" if self.replayed else \
            "NOT reproduced by the replay engine: this is an mbt bug, please report it"
        out = [f"counterexample: {n} step{'s' if n != 1 else ''}, the shortest within depth {self.depth} ({proof})"]
        calls = [_call(c) for c in self.steps[0].calls]
        width = max([len(_event(s)) for s in self.steps[1:]] + [12])
        start = self.steps[0]
        values = ", ".join(f"{k} = {show(v)}" for k, v in start.changed.items())
        out.append(f"  {'start':<{width + 4}} in {start.state}" + (f": {values}" if values else "") +
                   ("; " + "; ".join(calls) if calls else ""))
        for s in self.steps[1:]:
            effects = [f"{k} := {show(v)}" for k, v in s.changed.items()] + [_call(c) for c in s.calls]
            line = f"  {s.step:>2}. {_event(s):<{width}} -> {s.state}"
            out.append(line + (f"   {', '.join(effects)}" if effects else ""))
        out.append(f"      violated at step {self.violated_at}: {self.reason}")
        out.append("  as a golden case (add the assertions you expect):")
        out.append("    " + json.dumps(self.golden, ensure_ascii=False, sort_keys=False))
        return out


def _event(step: TraceStep) -> str:
    args = ", ".join(f"{k}={show(v)}" for k, v in step.args.items())
    return f"{step.event}({args})"


def _call(call: CallShown) -> str:
    return f"call {call.tool}(" + ", ".join(f"{k}={show(v)}" for k, v in call.args.items()) + ")"


def show(value: Any) -> str:
    """A value as the DSL writes it: none, true/false, quoted strings (JSON escapes), numbers."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
