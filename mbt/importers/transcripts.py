"""Chat transcripts read as observed runs: OpenAI-style message lists and seed 003's session store with turn results."""

from __future__ import annotations

import json
from typing import Any

from mbt.runs.steps import ObservedRun, ObservedStep

_RUN_FIELDS = (("model", "model"), ("suite", "suite"), ("expected_intent", "expected_intent"), ("intent", "intent"))


class TranscriptProblem(ValueError):
    """A transcript no run can be built from; `where` is the message or turn when it is known."""

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message)
        self.where = where


def is_transcript(raw: Any) -> bool:
    if isinstance(raw, list):
        return bool(raw) and all(isinstance(m, dict) and "role" in m for m in raw)
    return isinstance(raw, dict) and ("messages" in raw or "session_id" in raw or "turns" in raw)


def _decoded(text: Any) -> Any:
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _content_text(content: Any, at: str | None = None) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise TranscriptProblem(f"message content must be text or a list of parts, not {type(content).__name__}", at)


def _messages(run: ObservedRun, messages: list, where: str) -> None:
    """OpenAI chat messages: `user`, `assistant` (text and `tool_calls`), `tool` (a result for a `tool_call_id`)."""
    names: dict[str, str] = {}  # tool_call_id -> tool name
    for n, m in enumerate(messages, start=1):
        at = f"{where} message {n}"
        if not isinstance(m, dict):
            raise TranscriptProblem("a message must be an object", at)
        role = m.get("role")
        if role in ("system", "developer"):
            continue
        if role == "user":
            run.steps.append(ObservedStep("user", at, text=_content_text(m.get("content"), at) or ""))
        elif role == "assistant":
            text = _content_text(m.get("content"), at)
            if text:
                run.steps.append(ObservedStep("assistant", at, text=text))
            for call in m.get("tool_calls") or []:
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not fn.get("name"):
                    raise TranscriptProblem("a tool call needs `function.name`", at)
                args = _decoded(fn.get("arguments"))
                if call.get("id"):
                    names[str(call["id"])] = str(fn["name"])
                sources = call.get("mbt_sources") or {}
                run.steps.append(ObservedStep("tool_call", at, tool=str(fn["name"]),
                                              args=args if isinstance(args, dict) else None,
                                              sources={str(k): str(v) for k, v in sources.items()},
                                              idempotency_key=call.get("mbt_idempotency_key")))
        elif role == "tool":
            tool = m.get("name") or names.get(str(m.get("tool_call_id")))
            if not tool:
                raise TranscriptProblem("a tool message names no earlier tool call (`tool_call_id`)", at)
            result = _decoded(_content_text(m.get("content"), at))
            error = result.get("error") if isinstance(result, dict) else None
            if isinstance(error, dict):
                error = error.get("type") or error.get("code") or "error"
            state = m.get("mbt_state")
            run.steps.append(ObservedStep("tool_result", at, tool=str(tool), ok=error is None,
                                          error=str(error) if error is not None else None, result=result,
                                          state_after=state if isinstance(state, dict) else None))
        else:
            raise TranscriptProblem(f"unknown role `{role}` (user, assistant, tool, system)", at)


def _turns(run: ObservedRun, turns: list, where: str) -> None:
    """Seed 003's per-turn results: `prompt`, `output`, `matched_tools` (calls whose arguments were not recorded),
    `permission_denials` (a call refused: an error result `permission_denied`)."""
    for n, t in enumerate(turns, start=1):
        at = f"{where} turn {n}"
        if not isinstance(t, dict) or not isinstance(t.get("prompt"), str):
            raise TranscriptProblem("a turn result needs a `prompt`", at)
        run.steps.append(ObservedStep("user", at, text=t["prompt"]))
        denied = {}
        for d in t.get("permission_denials") or []:
            name = d.get("tool_name") or d.get("tool") if isinstance(d, dict) else d
            denied[str(name)] = str(d.get("reason", "permission_denied")) if isinstance(d, dict) else "permission_denied"
        for tool in t.get("matched_tools") or []:
            run.steps.append(ObservedStep("tool_call", at, tool=str(tool), args=None))
            if str(tool) in denied:
                run.steps.append(ObservedStep("tool_result", at, tool=str(tool), ok=False, error="permission_denied"))
        if t.get("output"):
            run.steps.append(ObservedStep("assistant", at, text=str(t["output"])))


def read_transcript(raw: Any, file: str, where: str, default_id: str) -> ObservedRun:
    """One transcript -> one run; raises TranscriptProblem."""
    if isinstance(raw, list):
        run = ObservedRun(id=default_id, file=file, where=where, format="messages")
        _messages(run, raw, where)
        return run
    if not isinstance(raw, dict):
        raise TranscriptProblem("a transcript is a list of messages or an object with `messages`")
    run_id = raw.get("session_id") or raw.get("id") or raw.get("conversation_id") or default_id
    session = "session_id" in raw
    run = ObservedRun(id=str(run_id), file=file, where=where, format="session" if session else "messages")
    for key, attr in _RUN_FIELDS:
        if raw.get(key) is not None:
            setattr(run, attr, str(raw[key]))
    pre = raw.get("precondition")
    if pre is not None and not isinstance(pre, dict):
        raise TranscriptProblem("`precondition` must be an object")
    run.precondition = dict(pre or {})
    if raw.get("turns") is not None:
        if not isinstance(raw["turns"], list):
            raise TranscriptProblem("`turns` must be a list of turn results")
        _turns(run, raw["turns"], where)
        return run
    messages = raw.get("messages")
    if not isinstance(messages, list):
        raise TranscriptProblem("`messages` must be a list")
    if session and all(isinstance(m, str) for m in messages):  # seed 003's StoredSession: the user prompts
        run.steps = [ObservedStep("user", f"{where} message {n}", text=m) for n, m in enumerate(messages, start=1)]
        return run
    _messages(run, messages, where)
    return run


def read_transcripts(file: str, documents: list[tuple[int | None, Any]]) -> tuple[list[ObservedRun], list]:
    """Runs from one file's decoded JSON values (the run reader interface of mbt.importers.RUN_READERS)."""
    runs, problems = [], []
    stem = file.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    for line, doc in documents:
        where = f"{file}:{line}" if line is not None else file
        try:
            runs.append(read_transcript(doc, file, where, stem if line is None else f"{stem}:{line}"))
        except TranscriptProblem as err:
            problems.append((err.where or where, str(err)))
    return runs, problems
