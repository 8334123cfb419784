"""Drives a system under test through an adapter and checks each step against the model's expectations.

`mbt generate` copies this module (as mbt_support.py) beside the pytest modules it writes, so the generated tests need
nothing from mbt except, optionally, its reference adapter. It is plain Python with no imports from mbt.

An adapter is any object with these methods (the ones its tests use):

    reset(state, variables, discarded)  # start a fresh conversation; state None = the initial state; values override
    send(event, args, user)             # one turn: the model event and its arguments, and the user's words (or None)
    ...                                 # each kind's own methods join here (mbt.kind.DriverPart.adapter)
    observe()                           # what the last turn did, as a dict (or an object with these attributes):
        state      the control state (or None if the system does not expose it)
        accepted   whether the turn was handled (False: refused), or None
        variables  {name: value} of the model's variables the system exposes, or None
        discarded  {name: value} of discarded values, or None
        calls      [(tool, {arg: value})] tool calls the turn made, or None
        outputs    [text] what the system said in the turn, or None
        results    [(tool, {"ok": bool, "result": value, "error": type})] tool results the turn delivered to the
                   system (a test faking the tools knows them), or None

Each step's `expect` holds what the model says the turn does: `state`, `accepted`, `variables`, `discarded`, `calls`,
and `said`: `must_not` phrases (the model's `say` forbids that apply, and the claims of other states: claiming
success too early) and `must_have` phrases (a claim of the state the turn enters: when the turn says anything, one
of them is in it), matched without case in `outputs`.

Observable-only mode (MBT_OBSERVABLE_ONLY=1, or an adapter attribute `observable_only = True`): the model's variables
and discarded values are not asserted, only what a black box shows (state where exposed, tool calls and arguments,
what is said against those phrases). With MBT_TRANSCRIPTS=DIR every test's run is written to DIR as an
OpenAI-style transcript (user words, tool calls, tool results, outputs), which `mbt runs --runs DIR` reads back.

A value of None means "this adapter cannot observe it": plain expectations on it are skipped, but a forbidden
behaviour that can only be seen through it fails the test, since it could not be checked.
"""

from __future__ import annotations

import json
import operator
import os
import re
from pathlib import Path
from typing import Any

_FIELDS = ("state", "accepted", "variables", "discarded", "calls", "outputs", "results")
_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def observe(adapter: Any) -> dict[str, Any]:
    """The adapter's observation as a dict with every field (None when not observed)."""
    raw = adapter.observe()
    get = raw.get if isinstance(raw, dict) else (lambda name: getattr(raw, name, None))
    seen = {name: get(name) for name in _FIELDS}
    if seen["calls"] is not None:
        seen["calls"] = [(str(tool), dict(args)) for tool, args in seen["calls"]]
    if seen["outputs"] is not None:
        seen["outputs"] = [str(text) for text in seen["outputs"]]
    if seen["results"] is not None:
        seen["results"] = [(str(tool), dict(outcome)) for tool, outcome in seen["results"]]
    return seen


def same(a: Any, b: Any) -> bool:
    """Equality that does not let True pass for 1 (nor False for 0)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def evaluate(expr: Any, env: dict[str, Any]) -> Any:
    """Evaluate an expression written as data by mbt (["==", ["ref", "x"], ["lit", 1]], ...) with mbt's semantics."""
    op = expr[0]
    if op == "lit":
        return expr[1]
    if op == "ref":
        return env.get(expr[1])
    if op == "not":
        return not evaluate(expr[1], env)
    if op == "and":
        return all(evaluate(item, env) for item in expr[1:])
    if op == "or":
        return any(evaluate(item, env) for item in expr[1:])
    if op in ("in", "not in"):
        hit = evaluate(expr[1], env) in [evaluate(item, env) for item in expr[2]]
        return hit if op == "in" else not hit
    left, right = evaluate(expr[1], env), evaluate(expr[2], env)
    if op in ("+", "-"):
        if left is None or right is None:
            return None
        return left + right if op == "+" else left - right
    if op in ("==", "!="):
        return _CMP[op](left, right)
    # An unset value never satisfies an ordering comparison.
    return left is not None and right is not None and _CMP[op](left, right)


class Driver:
    """Runs a generated test's steps on an adapter; every step's outcome is compared with the model's."""

    def __init__(self, adapter: Any):
        self.adapter = adapter
        self.before: dict[str, Any] = {}
        self.trail: list[str] = []
        self.observable_only = os.environ.get("MBT_OBSERVABLE_ONLY", "") not in ("", "0") or bool(
            getattr(adapter, "observable_only", False))
        self.precondition: dict[str, Any] = {}
        self.messages: list[dict[str, Any]] = []  # the run as an OpenAI-style transcript (save_transcript)

    def start(self, precondition: dict[str, Any] | None = None) -> None:
        """Reset the system: the precondition's `state` and values (`discarded.X` for discarded ones) on top of the
        initial configuration."""
        given = dict(precondition or {})
        state = given.pop("state", None)
        discarded = {k[len("discarded."):]: v for k, v in given.items() if k.startswith("discarded.")}
        variables = {k: v for k, v in given.items() if not k.startswith("discarded.")}
        self.adapter.reset(state, variables, discarded)
        self.precondition, self.messages = dict(precondition or {}), []
        self.trail = [f"start {precondition!r}" if precondition else "start in the initial state"]
        self.before = observe(self.adapter)

    def step(self, event: str, args: dict[str, Any], expect: dict[str, Any], forbid: dict[str, Any] | None = None,
             user: str | None = None) -> None:
        """Send one event and check what the system did against `expect` (and that `forbid` did not happen)."""
        self.adapter.send(event, dict(args), user)
        seen = observe(self.adapter)
        self._record(user, seen)
        self.trail.append(f"{event}({', '.join(f'{k}={v!r}' for k, v in args.items())})")
        problems = self._compare(expect, seen)
        if forbid is not None:
            problems += self._forbidden(forbid, args, seen)
        if problems:
            steps = " -> ".join(self.trail)
            raise AssertionError(f"step {len(self.trail) - 1} `{event}`: " + "; ".join(problems) + f"\n  run: {steps}")
        self.before = seen

    # ---- each kind's part joins here (mbt.generate.support: mbt.kind.DriverPart.methods)
    def _record(self, user: str | None, seen: dict[str, Any]) -> None:
        """The turn in the transcript: the tool results delivered, the user's words, the calls made, what was said."""
        for tool, outcome in seen["results"] or ():
            content = ({"error": {"type": outcome.get("error")}} if outcome.get("ok") is False
                       else outcome.get("result", {}))
            self.messages.append({"role": "tool", "name": tool, "content": json.dumps(content, default=str)})
        if user is not None:
            self.messages.append({"role": "user", "content": user})
        calls = [{"id": f"call_{len(self.messages)}_{i}", "type": "function",
                  "function": {"name": tool, "arguments": json.dumps(args, default=str)}}
                 for i, (tool, args) in enumerate(seen["calls"] or ())]
        if calls:
            self.messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for text in seen["outputs"] or ():
            self.messages.append({"role": "assistant", "content": text})

    def save_transcript(self, folder: str, test_id: str, model: str | None = None) -> Path:
        """Write the run as `FOLDER/<test id>.json` (a transcript `mbt runs` reads); returns the path."""
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", test_id).strip("_") or "run"
        path = Path(folder) / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"id": test_id, "model": model, "precondition": self.precondition, "messages": self.messages}
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
        return path

    def _compare(self, expect: dict[str, Any], seen: dict[str, Any]) -> list[str]:
        problems = []
        if "state" in expect and seen["state"] is not None and seen["state"] != expect["state"]:
            problems.append(f"state is {seen['state']!r}, the model expects {expect['state']!r}")
        if "accepted" in expect and seen["accepted"] is not None and bool(seen["accepted"]) != expect["accepted"]:
            problems.append("the event was " + ("handled" if seen["accepted"] else "refused")
                            + ", the model " + ("handles" if expect["accepted"] else "refuses") + " it")
        for part in ("variables", "discarded"):
            observed = seen[part]
            if part not in expect or observed is None or self.observable_only:
                continue
            for name, value in expect[part].items():
                if name not in observed:
                    problems.append(f"{part} `{name}` is not observed (the model expects {value!r})")
                elif not same(observed[name], value):
                    problems.append(f"{part} `{name}` is {observed[name]!r}, the model expects {value!r}")
        if "calls" in expect and seen["calls"] is not None:
            wanted = [(tool, dict(args)) for tool, args in expect["calls"]]
            if not same(seen["calls"], wanted):
                problems.append(f"tool calls were {seen['calls']!r}, the model makes {wanted!r}")
        said = expect.get("said")
        if said and seen["outputs"] is not None:
            folded = [text.casefold() for text in seen["outputs"]]
            for phrase in said.get("must_not", ()):
                hit = next((text for text, f in zip(seen["outputs"], folded) if phrase.casefold() in f), None)
                if hit is not None:
                    problems.append(f"said {hit!r}, which the model forbids here ({phrase!r})")
            wanted_phrases = said.get("must_have", ())  # held to it only when the turn says something: a reply may
            # come in a later turn, and the reference machine says nothing
            if wanted_phrases and folded and not any(p.casefold() in f for p in wanted_phrases for f in folded):
                problems.append(f"said {seen['outputs']!r}; the model expects one of {list(wanted_phrases)!r}")
        return problems

    def _forbidden(self, forbid: dict[str, Any], args: dict[str, Any], seen: dict[str, Any]) -> list[str]:
        kind, element = forbid["kind"], forbid["element"]
        if kind == "state":
            if seen["state"] is None:
                return [f"{element}: the adapter does not observe the state, so the forbidden move cannot be checked"]
            if seen["state"] == forbid["state"]:
                return [f"{element}: moved to the forbidden state {forbid['state']!r}"]
            return []
        if kind == "refused":
            if seen["accepted"] is not None:
                return [f"{element}: the forbidden event was handled"] if seen["accepted"] else []
            if seen["state"] is None or seen["calls"] is None:
                return [f"{element}: the adapter observes neither `accepted` nor state and calls, so the refusal "
                        "cannot be checked"]
            if seen["state"] != self.before.get("state") or seen["calls"]:
                return [f"{element}: the forbidden event was handled"]
            return []
        if kind == "call":
            if seen["calls"] is None:
                return [f"{element}: the adapter does not observe tool calls, so the forbidden call cannot be checked"]
            for tool, call_args in seen["calls"]:
                if tool == forbid["tool"] and self._violates(forbid.get("when"), call_args, args, seen):
                    return [f"{element}: made the forbidden call {tool}({call_args!r})"]
            return []
        if kind == "say":
            if seen["outputs"] is None:
                return [f"{element}: the adapter does not observe what the system says, so this cannot be checked"]
            for text in seen["outputs"]:
                for phrase in forbid.get("phrases", []):
                    if phrase.casefold() in text.casefold():
                        return [f"{element}: said {text!r} (matches the forbidden {phrase!r})"]
            return []
        raise ValueError(f"unknown forbidden check {kind!r}")

    def _violates(self, when: Any, call_args: dict[str, Any], args: dict[str, Any], seen: dict[str, Any]) -> bool:
        """Does a call meet the forbidden condition? The condition reads the configuration at the moment of the
        call, which a black box does not show: it is tried against the configuration before and after the turn."""
        if when is None:
            return True
        for config in (self.before, seen):
            env = dict(config.get("variables") or {})
            env.update({f"discarded.{k}": v for k, v in (config.get("discarded") or {}).items()})
            env.update(args)
            env.update({f"args.{k}": v for k, v in call_args.items()})
            if evaluate(when, env):
                return True
        return False
