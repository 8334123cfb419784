"""A run's session as turns (what a result set keeps as a case's history) and seed 003's `compare_turns` between two
runs of the same prompts.

A turn starts at each user message: its prompt, the agent's answer (its texts up to the next user message), the tool
calls it made (`name(arguments)`, in order), and, where the run records seed 003's turn records, the commands and
tools the router matched, the stop reason and the tokens. A run with no user message is one turn.
"""

from __future__ import annotations

import json
from typing import Any

from mbt.runs.steps import ObservedRun

# The fields compare_turns looks at, in the order a diff lists them (seed 003: answer, tools, commands, stop reason).
TURN_FIELDS = ("prompt", "answer", "calls", "matched_tools", "commands", "stop_reason")
NO_TURN = "(no such turn)"


def _call(tool: str | None, args: dict[str, Any] | None) -> str:
    if args is None:
        return f"{tool}(?)"  # the run did not record the arguments
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}" for k, v in sorted(args.items()))
    return f"{tool}({shown})"


def session_turns(run: ObservedRun) -> list[dict[str, Any]]:
    """The run's turns as plain JSON values (module docstring)."""
    turns: list[dict[str, Any]] = []
    starts: list[int] = []
    for index, step in enumerate(run.steps):
        if step.kind == "user" or not turns:
            turns.append({"prompt": (step.text or "") if step.kind == "user" else "", "answer": None, "calls": [],
                          "matched_tools": None, "commands": None, "stop_reason": None, "tokens": None})
            starts.append(index)
            if step.kind == "user":
                continue
        turn = turns[-1]
        if step.kind == "assistant" and step.text:
            turn["answer"] = step.text if turn["answer"] is None else f"{turn['answer']}\n{step.text}"
        elif step.kind == "tool_call":
            turn["calls"].append(_call(step.tool, step.args))
        elif step.kind == "tool_result" and not step.ok:
            turn["calls"].append(f"{step.tool} -> error {step.error or ''}".rstrip())
    for record in run.turns:  # seed 003's records, by the step each starts at
        at = starts.index(record.step) if record.step in starts else None
        if at is None:
            continue
        turn = turns[at]
        if turn["answer"] is None and record.output is not None:
            turn["answer"] = record.output
        turn["matched_tools"] = list(record.matched_tools) if record.matched_tools is not None else None
        turn["commands"] = list(record.matched_commands) if record.matched_commands is not None else None
        turn["stop_reason"] = record.stop_reason
        if record.input_tokens is not None or record.output_tokens is not None:
            turn["tokens"] = {"input": record.input_tokens, "output": record.output_tokens}
    return turns


def compare_turns(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per turn, the fields that differ between two sessions as {field: [before, after]} (seed 003's
    `compare_turns`, turn by turn); a turn only one session has is compared with NO_TURN."""
    out = []
    for n in range(max(len(before), len(after))):
        a = before[n] if n < len(before) else None
        b = after[n] if n < len(after) else None
        if a is None or b is None:
            present = a if a is not None else b
            assert present is not None  # n is below the longer list's length
            changed = {"prompt": [a["prompt"] if a else NO_TURN, b["prompt"] if b else NO_TURN]}
        else:
            changed = {name: [a.get(name), b.get(name)] for name in TURN_FIELDS if a.get(name) != b.get(name)}
        out.append({"turn": n + 1, "same": not changed, "changed": changed})
    return out
