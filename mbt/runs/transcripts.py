"""Chat transcripts read as observed runs: OpenAI-style message lists, and seed 003's turn loop as it records itself:
its session store (`StoredSession`: the prompts and token totals), a list of `TurnResult` records, or a session with
per-turn records. docs/runs.md says what each shape shows and what it cannot (a `TurnResult` records the router's
candidate tools, not the calls made)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mbt.runs.genai import decode_json, tool_error
from mbt.runs.grounding import GROUNDING_KEYS, GroundingProblem, count_unread, read_grounding
from mbt.runs.marks import TagProblem, transcript_tags
from mbt.runs.steps import ObservedRun, ObservedStep, TurnRecord

_RUN_FIELDS = (("model", "model"), ("suite", "suite"), ("expected_intent", "expected_intent"), ("intent", "intent"))
# The run's context (seed 002's first layer), as a wrapping object may give it.
_CONTEXT_FIELDS = (("agent_version", "service_version"), ("service_version", "service_version"),
                   ("model_name", "response_model"), ("prompt_version", "prompt_version"),
                   ("tool_schema_version", "tool_schema_version"), ("environment", "environment"),
                   ("conversation_id", "conversation_id"))


class TranscriptProblem(ValueError):
    """A transcript no run can be built from; `where` is the message or turn when it is known."""

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message)
        self.where = where


def is_transcript(raw: Any) -> bool:
    if isinstance(raw, list):
        return bool(raw) and (all(isinstance(m, dict) and "role" in m for m in raw) or _is_turn_list(raw))
    return isinstance(raw, dict) and ("messages" in raw or "session_id" in raw or "turns" in raw)


def _is_turn_list(raw: list) -> bool:
    """A list of seed 003's `TurnResult` records, as `run_turn_loop` returns them dumped with `asdict`."""
    return bool(raw) and all(isinstance(t, dict) and "prompt" in t and ("stop_reason" in t or "output" in t)
                             for t in raw)


_decoded = decode_json


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
            calls = m.get("tool_calls") or []
            if not isinstance(calls, list):
                raise TranscriptProblem("`tool_calls` must be a list", at)
            for call in calls:
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not fn.get("name") or not isinstance(fn["name"], str):
                    raise TranscriptProblem("a tool call needs `function.name`", at)
                args = _decoded(fn.get("arguments"))
                if call.get("id"):
                    names[str(call["id"])] = fn["name"]
                sources = call.get("mbt_sources") or {}
                if not isinstance(sources, dict):
                    raise TranscriptProblem("`mbt_sources` must be an object of argument -> source", at)
                key = call.get("mbt_idempotency_key")
                run.steps.append(ObservedStep("tool_call", at, tool=fn["name"],
                                              args=args if isinstance(args, dict) else None,
                                              sources={str(k): str(v) for k, v in sources.items()},
                                              idempotency_key=str(key) if key is not None else None))
        elif role == "tool":
            tool = m.get("name") or names.get(str(m.get("tool_call_id")))
            if not tool or not isinstance(tool, str):
                raise TranscriptProblem("a tool message names no earlier tool call (`tool_call_id`)", at)
            result = _decoded(_content_text(m.get("content"), at))
            error = tool_error(result)
            state = m.get("mbt_state")
            run.steps.append(ObservedStep("tool_result", at, tool=str(tool), ok=error is None, error=error,
                                          result=result, state_after=state if isinstance(state, dict) else None))
        else:
            raise TranscriptProblem(f"unknown role `{role}` (user, assistant, tool, system)", at)


def _names(value: Any, what: str, at: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (str, dict)) for v in value):
        raise TranscriptProblem(f"`{what}` must be a list of names", at)
    return tuple(str(v.get("name", "")) if isinstance(v, dict) else v for v in value)


def _count(value: Any, what: str, at: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TranscriptProblem(f"`{what}` must be a whole number of tokens", at)
    return value


def _turns(run: ObservedRun, turns: list, where: str) -> None:
    """Seed 003's per-turn results: `prompt`, `output`, `matched_commands` and `matched_tools` (the router's
    candidates, reused every turn: not calls), `permission_denials` (a call the agent tried and was refused: a call
    without recorded arguments and an error result `permission_denied`), `usage`, `stop_reason`. A turn result
    records no call that was made, so the run's tool calls are not evidence (`records_tool_calls`)."""
    run.records_tool_calls = False
    for n, t in enumerate(turns, start=1):
        at = f"{where} turn {n}"
        if not isinstance(t, dict) or not isinstance(t.get("prompt"), str):
            raise TranscriptProblem("a turn result needs a `prompt`", at)
        output = t.get("output")
        if output is not None and not isinstance(output, str):
            raise TranscriptProblem("a turn's `output` must be text", at)
        usage = t.get("usage") if t.get("usage") is not None else {}
        if not isinstance(usage, dict):
            raise TranscriptProblem("a turn's `usage` must be an object", at)
        stop = t.get("stop_reason")
        if stop is not None and not isinstance(stop, str):
            raise TranscriptProblem("a turn's `stop_reason` must be text", at)
        run.turns.append(TurnRecord(
            at, len(run.steps), t["prompt"], output, _names(t.get("matched_commands"), "matched_commands", at),
            _names(t.get("matched_tools"), "matched_tools", at), stop,
            _count(usage.get("input_tokens"), "usage.input_tokens", at),
            _count(usage.get("output_tokens"), "usage.output_tokens", at)))
        run.steps.append(ObservedStep("user", at, text=t["prompt"]))
        denials = t.get("permission_denials") or []
        if not isinstance(denials, list):
            raise TranscriptProblem("`permission_denials` must be a list", at)
        for d in denials:
            name = (d.get("tool_name") or d.get("tool")) if isinstance(d, dict) else d
            if not isinstance(name, str) or not name:
                raise TranscriptProblem("a permission denial names its tool (`tool_name`)", at)
            run.steps.append(ObservedStep("tool_call", at, tool=name, args=None))
            # the denial's `reason` is prose; its type, for `bind tool NAME error(...)`, is always permission_denied
            run.steps.append(ObservedStep("tool_result", at, tool=name, ok=False, error="permission_denied",
                                          result=d.get("reason") if isinstance(d, dict) else None))
        if output:
            run.steps.append(ObservedStep("assistant", at, text=output))


def _loop_config(run: ObservedRun, raw: dict) -> None:
    """What the turn loop's configuration says (top level or under `config`): budgets and structured output."""
    given = raw.get("config")
    config: dict[str, Any] = given if isinstance(given, dict) else raw
    for key in ("max_turns", "max_budget_tokens"):
        value = config.get(key)
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise TranscriptProblem(f"`{key}` must be a whole number")
            setattr(run, key, value)
    if config.get("structured_output") is not None:
        if not isinstance(config["structured_output"], bool):
            raise TranscriptProblem("`structured_output` must be true or false")
        run.structured_output = config["structured_output"]


def _usage(run: ObservedRun, raw: dict) -> None:
    """Token usage: the session's totals, else the sum of its turns'."""
    ctx = run.context
    ctx.input_tokens = _count(raw.get("input_tokens"), "input_tokens", run.where)
    ctx.output_tokens = _count(raw.get("output_tokens"), "output_tokens", run.where)
    if ctx.input_tokens is None and any(t.input_tokens is not None for t in run.turns):
        ctx.input_tokens = sum(t.input_tokens or 0 for t in run.turns)
    if ctx.output_tokens is None and any(t.output_tokens is not None for t in run.turns):
        ctx.output_tokens = sum(t.output_tokens or 0 for t in run.turns)


def read_wrapper(run: ObservedRun, raw: dict) -> None:
    """What a wrapping object says about its run: model (or seed 000's `contract`), suite, intents, context, the
    golden case it answers, its precondition, and seed 000's retrieval evidence (mbt.runs.grounding)."""
    for key, attr in _RUN_FIELDS:
        if raw.get(key) is not None:
            if not isinstance(raw[key], (str, int, float)) or isinstance(raw[key], bool):
                raise TranscriptProblem(f"`{key}` must be text")
            setattr(run, attr, str(raw[key]))
    if run.model is None and raw.get("contract") is not None:  # seed 000's cases name their contract so
        if not isinstance(raw["contract"], str):
            raise TranscriptProblem("`contract` must be the contract's id")
        run.model = raw["contract"]
    for key, attr in _CONTEXT_FIELDS:
        if raw.get(key) is not None and isinstance(raw[key], (str, int, float)) and not isinstance(raw[key], bool):
            setattr(run.context, attr, str(raw[key]))
    metadata = raw.get("metadata")
    case_id = raw.get("case_id", metadata.get("case_id") if isinstance(metadata, dict) else None)
    if isinstance(case_id, (str, int)) and not isinstance(case_id, bool):
        run.case_id = str(case_id)
    try:
        run.tags = transcript_tags(raw)
    except TagProblem as err:
        raise TranscriptProblem(str(err)) from None
    _driven(run, raw)
    pre = raw.get("precondition")
    if pre is not None and not isinstance(pre, dict):
        raise TranscriptProblem("`precondition` must be an object")
    run.precondition, run.precondition_recorded = dict(pre or {}), pre is not None
    try:
        run.retrieval = read_grounding(raw, run.where)
    except GroundingProblem as err:
        raise TranscriptProblem(err.reason, err.where) from None


def _driven(run: ObservedRun, raw: dict) -> None:
    """What `mbt eval --agent` records beside the messages: the agent's error that cut the run short, and the time
    the whole conversation took."""
    error = raw.get("agent_error")
    if error is not None:
        if not isinstance(error, str) or not error.strip():
            raise TranscriptProblem("`agent_error` must be text saying why the agent did not answer")
        run.agent_error = error
    wall = raw.get("wall_ms")
    if wall is not None:
        if not isinstance(wall, (int, float)) or isinstance(wall, bool) or wall < 0:
            raise TranscriptProblem("`wall_ms` must be a number of milliseconds")
        run.context.wall_ms = float(wall)


def read_transcript(raw: Any, file: str, where: str, default_id: str) -> ObservedRun:
    """One transcript -> one run; raises TranscriptProblem."""
    if isinstance(raw, list):
        if _is_turn_list(raw):
            run = ObservedRun(id=default_id, file=file, where=where, format="turns")
            _turns(run, raw, where)
            _usage(run, {})
            return run
        run = ObservedRun(id=default_id, file=file, where=where, format="messages")
        _messages(run, raw, where)
        return run
    if not isinstance(raw, dict):
        raise TranscriptProblem("a transcript is a list of messages or an object with `messages`")
    run_id = raw.get("session_id") or raw.get("id") or raw.get("conversation_id") or default_id
    if not isinstance(run_id, (str, int)) or isinstance(run_id, bool):
        raise TranscriptProblem("`session_id` (or `id`) must be text")
    session = "session_id" in raw
    run = ObservedRun(id=str(run_id), file=file, where=where, format="session" if session else "messages")
    read_wrapper(run, raw)
    _loop_config(run, raw)
    if raw.get("turns") is not None:
        if not isinstance(raw["turns"], list):
            raise TranscriptProblem("`turns` must be a list of turn results")
        _turns(run, raw["turns"], where)
        _usage(run, raw)
        return run
    messages = raw.get("messages")
    if not isinstance(messages, list):
        raise TranscriptProblem("`messages` must be a list")
    if session and all(isinstance(m, str) for m in messages):
        # seed 003's StoredSession: the prompts the loop submitted and token totals; no answer, no call, no turn
        run.steps = [ObservedStep("user", f"{where} message {n}", text=m) for n, m in enumerate(messages, start=1)]
        run.records_tool_calls = run.records_assistant_texts = False
        _usage(run, raw)
        return run
    _messages(run, messages, where)
    _usage(run, raw)
    return run


# What each part of a transcript may hold; any other key is reported once per file as read as nothing.
_RUN_KEYS = frozenset({"session_id", "id", "conversation_id", "messages", "turns", "precondition", "config", "case_id",
                       "metadata", "tags", "contract", "agent_error", "wall_ms", *GROUNDING_KEYS,
                       "max_turns", "max_budget_tokens", "structured_output", "input_tokens", "output_tokens"}
                      | {k for k, _ in _RUN_FIELDS} | {k for k, _ in _CONTEXT_FIELDS})
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name", "mbt_state", "refusal",
                           "annotations", "audio", "function_call"})
_TURN_KEYS = frozenset({"prompt", "output", "matched_commands", "matched_tools", "permission_denials", "usage",
                        "stop_reason"})


def _unread(raw: Any, counts: dict[str, int]) -> None:
    """Count the keys of a transcript, its messages and its turns that no rule of docs/runs.md reads."""
    def count(obj: Any, known: frozenset[str], what: str) -> None:
        if isinstance(obj, dict):
            for key in obj:
                if key not in known:
                    name = f"key `{key}` of {what}"
                    counts[name] = counts.get(name, 0) + 1

    if isinstance(raw, dict):
        count(raw, _RUN_KEYS, "a transcript")
        messages, turn_list = raw.get("messages"), raw.get("turns")
        items: list[Any] = messages if isinstance(messages, list) else []
        turns: list[Any] = turn_list if isinstance(turn_list, list) else []
    else:
        items, turns = (raw, []) if not _is_turn_list(raw) else ([], raw)
    if isinstance(raw, dict):
        count_unread(raw, counts)
    for m in items:
        count(m, _MESSAGE_KEYS, "a message")
    for t in turns:
        count(t, _TURN_KEYS, "a turn")


class TranscriptFile:
    """One file's transcripts read one value at a time (`add`), and the keys read as nothing, counted over the
    file (`notes`)."""

    def __init__(self, file: str, buffer: object = None):
        self.file = file
        self.stem = file.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        self._problems: list[tuple[str, str]] = []
        self.unread: dict[str, int] = {}

    def add(self, line: int | None, doc: Any) -> ObservedRun | None:
        where = f"{self.file}:{line}" if line is not None else self.file
        try:
            run = read_transcript(doc, self.file, where, self.stem if line is None else f"{self.stem}:{line}")
        except TranscriptProblem as err:
            self._problems.append((err.where or where, str(err)))
            return None
        _unread(doc, self.unread)
        return run

    def runs(self) -> Iterator[ObservedRun]:
        return iter(())  # each run comes from `add`

    def problems(self) -> list[tuple[str, str]]:
        return self._problems

    def notes(self) -> list[str]:
        return [f"{what} on {n} occasion(s): read as nothing" for what, n in sorted(self.unread.items())]


def read_transcripts(file: str, documents: list[tuple[int | None, Any]]
                     ) -> tuple[list[ObservedRun], list[tuple[str, str]], list[str]]:
    """Runs from one file's decoded JSON values (the run reader interface of mbt.importers.RUN_READERS), and the
    keys read as nothing (counted over the file)."""
    reading = TranscriptFile(file)
    runs = [run for line, doc in documents if (run := reading.add(line, doc)) is not None]
    return runs, reading.problems(), reading.notes()
