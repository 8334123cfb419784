"""GenAI telemetry read as observed steps: one trace's decoded spans -> one run, whichever shape its spans use.

Each shape has one mapping here, and docs/runs.md lists every attribute each reads:

- **current**: the GenAI semantic conventions' attributes: `gen_ai.operation.name`; `gen_ai.input.messages` /
  `gen_ai.output.messages` on model spans; `gen_ai.tool.name`, `gen_ai.tool.call.arguments` and `.result` on
  `execute_tool` spans.
- **events**: the conventions' earlier span events (v1.36 and before): `gen_ai.system.message`,
  `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message` (the prompt), `gen_ai.choice` (the
  reply), each body in `gen_ai.event.content` (or flattened into the event's attributes); and the oldest
  `gen_ai.content.prompt` / `gen_ai.content.completion` events (`gen_ai.prompt` / `gen_ai.completion`).
- **openllmetry**: Traceloop's attributes: `gen_ai.prompt.N.role` / `.content` / `.tool_call_id`,
  `gen_ai.completion.N.*` with `gen_ai.completion.N.tool_calls.M.name` / `.arguments` / `.id`, `llm.request.type`;
  tool spans with `traceloop.span.kind = tool`, `traceloop.entity.name`, `.input` (`{"args": [], "kwargs": {}}`) and
  `.output`.

What a mapping does not read is never silently nothing: every attribute that looks like GenAI telemetry and that no
mapping reads or knowingly passes over is counted (`unread`), so a renamed field is loud.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mbt.runs.decoding import loads, nesting
from mbt.runs.grounding import GroundingProblem, read_document, read_grounding
from mbt.runs.marks import attribute_tags, merged
from mbt.runs.steps import ObservedRun, ObservedStep, Retrieval, RunContext

# Operation names of the GenAI conventions.
MODEL_OPERATIONS = ("chat", "text_completion", "generate_content")
TOOL_OPERATION = "execute_tool"
AGENT_OPERATION = "invoke_agent"
RETRIEVAL_OPERATION = "retrieval"
IGNORED_OPERATIONS = ("create_agent", "embeddings")
KNOWN_OPERATIONS = MODEL_OPERATIONS + (TOOL_OPERATION, AGENT_OPERATION, RETRIEVAL_OPERATION) + IGNORED_OPERATIONS
# Retrieval in the other shapes: OpenInference's RETRIEVER span, OpenLLMetry's vector-database result events.
OPENINFERENCE_KIND = "openinference.span.kind"
VECTOR_RESULT_EVENT = "db.query.result"
_OPENINFERENCE_DOCUMENT = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|score|content|metadata)$")
# mbt's own grounding attributes (seed 000's RAG trace fields the conventions have no name for), on any span.
MBT_GROUNDING_ATTRIBUTES = {"mbt.grounding.selected_source": "selected_source", "mbt.grounding.claims": "claims",
                            "mbt.grounding.must_not": "must_not", "mbt.run.route": "route"}

# Attribute prefixes of GenAI telemetry (the conventions, OpenLLMetry, OpenInference, the Vercel AI SDK, mbt's own):
# an attribute under one of them that no mapping reads is reported as unread.
GENAI_PREFIXES = ("gen_ai.", "llm.", "traceloop.", "openinference.", "ai.", "mbt.")
# Attributes known and deliberately not used for judging (request parameters, ids, provider names, ...).
_PASSED_OVER = re.compile(r"""^(?:
    gen_ai\.(?:system|provider\.name|output\.type|system_instructions|data_source\.id|token\.type
              |request\.(?!model$)[a-z_.]+|response\.(?:id|finish_reasons)|usage\.[a-z_.]+|agent\.[a-z_.]+
              |tool\.(?:call\.id|type|description|definitions)|openai\.[a-z_.]+|embeddings\.[a-z_.]+
              |retrieval\.top_k)
  | llm\.(?:is_streaming|usage\.[a-z_.]+|headers|user|top_k|frequency_penalty|presence_penalty|chat\.stop_sequences
           |request\.(?:functions\.[A-Za-z0-9_.]+|repetition_penalty)|response\.(?:finish_reason|stop_reason))
  | traceloop\.(?:workflow\.name|entity\.path|entity\.version|association\.properties\.[A-Za-z0-9_.]+|span\.kind
                 |entity\.name|entity\.input|entity\.output)
)$""", re.X)
# mbt's own attributes (docs/runs.md), read wherever they appear.
MBT_RUN_ATTRIBUTES = {"mbt.model": "model", "mbt.run.suite": "suite", "mbt.run.expected_intent": "expected_intent",
                      "mbt.run.intent": "intent"}
MBT_TOOL_ATTRIBUTES = ("mbt.tool.argument_sources", "mbt.state.before", "mbt.state.after", "mbt.idempotency_key")
CONTEXT_ATTRIBUTES = {"service.name": "service_name", "service.version": "service_version",
                      "gen_ai.request.model": "request_model", "gen_ai.response.model": "response_model",
                      "app.prompt.version": "prompt_version", "app.tool_schema.version": "tool_schema_version",
                      "deployment.environment.name": "environment", "deployment.environment": "environment",
                      "gen_ai.conversation.id": "conversation_id"}
CONTEXT_KEYS = frozenset(CONTEXT_ATTRIBUTES)
_CONTEXT_ORDER = {key: n for n, key in enumerate(CONTEXT_ATTRIBUTES)}
# Every key read_run_attributes looks at (a span with none of them skips it) and the tool spans' keys.
_RUN_KEYS = frozenset((*MBT_RUN_ATTRIBUTES, "mbt.run.precondition", *CONTEXT_ATTRIBUTES, *MBT_GROUNDING_ATTRIBUTES))
_TOOL_KEYS = frozenset(MBT_TOOL_ATTRIBUTES)
_TOOL_SPAN_KEYS = frozenset(("gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.arguments",
                             "gen_ai.tool.call.result", "error.type"))
_TRACELOOP_TOOL_KEYS = frozenset(("traceloop.span.kind", "traceloop.entity.name", "traceloop.entity.input",
                                  "traceloop.entity.output"))
INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
# The earlier conventions' events: the prompt's messages by role, and the reply.
MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                  "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
CHOICE_EVENT = "gen_ai.choice"
LEGACY_EVENTS = {"gen_ai.content.prompt": "gen_ai.prompt", "gen_ai.content.completion": "gen_ai.completion"}
_INDEXED = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")
_INDEXED_FIELDS = re.compile(r"^(?:role|content|tool_call_id|finish_reason|name|tool_calls\.\d+\.(?:id|name|arguments)"
                             r"|function_call\.(?:name|arguments))$")
_DIGITS = re.compile(r"\.\d+(?=\.|$)")

MAX_JSON_DEPTH = 200  # deeper JSON in an attribute is kept as text: json.loads recurses once per level

# What a span's attribute keys are, worked out once per distinct set of keys (an instrumentation writes the same
# few keys on every span of a kind): the keys that look like GenAI telemetry and that no mapping knowingly passes
# over (counted as unread unless a mapping reads them), and whether one is OpenLLMetry's indexed `gen_ai.prompt.N.*`.
_KEY_SETS: dict[tuple[str, ...], tuple[frozenset[str], bool]] = {}
_KEY_SETS_REMEMBERED = 10_000  # forgotten all at once past this many distinct sets, to bound memory


def key_set(attributes: dict[str, Any]) -> tuple[frozenset[str], bool]:
    """(the unread candidates, any indexed key) of a span's attributes."""
    keys = tuple(attributes)
    found = _KEY_SETS.get(keys)
    if found is None:
        found = (frozenset(k for k in keys if k.startswith(GENAI_PREFIXES) and not _PASSED_OVER.match(k)),
                 any(_INDEXED.match(k) for k in keys))
        if len(_KEY_SETS) >= _KEY_SETS_REMEMBERED:
            _KEY_SETS.clear()
        _KEY_SETS[keys] = found
    return found


class TraceProblem(ValueError):
    """A trace no run can be built from (the caller adds its location)."""


@dataclass(slots=True)
class Message:
    """One chat message, whatever shape carried it."""

    role: str
    text: str | None = None
    tool_calls: list[tuple[str | None, str, Any]] = field(default_factory=list)  # (id, name, raw arguments)
    tool_call_id: str | None = None
    content: Any = None  # a tool message's raw content (its result)


def decode_json(value: Any) -> Any:
    """Attributes carrying structure are JSON strings (`gen_ai.tool.call.arguments`, ...); text that is not JSON, or
    is nested too deep to decode safely, stays text."""
    if not isinstance(value, str):
        return value
    # A bound on nesting before the decoder recurses into it: the brackets are counted (in C), and only when there
    # are enough of them is their nesting measured (in C too: a history of 1,000 messages costs what its bytes do).
    if value.count("[") + value.count("{") > MAX_JSON_DEPTH and nesting(value) > MAX_JSON_DEPTH:
        return value
    try:
        return loads(value)
    except (ValueError, RecursionError):  # ValueError covers digit strings past Python's int limit
        return value


def tool_error(result: Any) -> str | None:
    """The error type of a tool result object (`{"error": "TIMEOUT"}`, `{"error": {"type": ...}}`), else None."""
    error = result.get("error") if isinstance(result, dict) else None
    if isinstance(error, dict):
        error = error.get("type") or error.get("code") or "error"
    return None if error is None or error is False else str(error)


def _text(content: Any) -> str | None:
    """The text of a content value: a string, or the text parts of a list (OpenAI `{"type": "text", "text"}`,
    GenAI `{"type": "text", "content"}`)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", p.get("content")) for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "".join(str(p) for p in parts if p is not None) if parts else None
    return None


def _message(raw: Any, role: str | None = None) -> Message | None:
    """A message from an OpenAI-style or GenAI-parts object; None when it is not one."""
    raw = decode_json(raw)
    if not isinstance(raw, dict):
        return None
    content = raw.get("content")
    if type(content) is str and len(raw) <= 2 and (len(raw) == 1 or "role" in raw):
        # the common message of a history, {"role", "content": text}: read in one step (histories repeat at every
        # model call, so most messages a trace holds are these)
        return Message(role=str(raw.get("role") or role or ""), text=content, content=content)
    parts = raw.get("parts")
    if content is None and type(parts) is list and len(raw) <= 3 and (len(raw) == 1 or "role" in raw) and all(
            type(p) is dict and p.get("type") == "text" for p in parts):
        # the current conventions' message of text parts (what model spans' histories hold): one step too
        text = "".join(str(p.get("content", "")) for p in parts)
        return Message(role=str(raw.get("role") or role or ""), text=text if parts else None)
    if isinstance(raw.get("message"), dict):  # a choice: {"index", "finish_reason", "message"}
        raw = raw["message"]
    msg = Message(role=str(raw.get("role") or role or ""))
    msg.tool_call_id = str(raw["id"]) if msg.role == "tool" and raw.get("id") is not None else None
    if raw.get("tool_call_id") is not None:
        msg.tool_call_id = str(raw["tool_call_id"])
    content = raw.get("content")
    msg.text = _text(content)
    msg.content = content
    for call in raw.get("tool_calls") or []:
        if isinstance(call, dict):
            fn: dict = call["function"] if isinstance(call.get("function"), dict) else call
            if fn.get("name"):
                msg.tool_calls.append((str(call["id"]) if call.get("id") is not None else None, str(fn["name"]),
                                       fn.get("arguments")))
    for part in raw.get("parts") or []:  # the current conventions' message parts
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            msg.text = (msg.text or "") + str(part.get("content", ""))
        elif kind == "tool_call" and part.get("name"):
            msg.tool_calls.append((str(part["id"]) if part.get("id") is not None else None, str(part["name"]),
                                   part.get("arguments")))
        elif kind == "tool_call_response":
            msg.role = msg.role or "tool"
            msg.tool_call_id = str(part["id"]) if part.get("id") is not None else msg.tool_call_id
            msg.content = part.get("response")
    return msg


def _messages(value: Any) -> list[Message]:
    value = decode_json(value)
    if isinstance(value, dict):
        value = [value]
    return [m for m in (_message(v) for v in value) if m is not None] if isinstance(value, list) else []


def _indexed(attributes: dict[str, Any], which: str, used: set[str]) -> list[Message]:
    """OpenLLMetry's `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` attributes as messages, in index order."""
    prefix = f"gen_ai.{which}."
    if not any(key.startswith(prefix) for key in attributes):  # most spans have none: no pattern is matched then
        return []
    fields: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        m = _INDEXED.match(key)
        if m and m.group(1) == which and _INDEXED_FIELDS.match(m.group(3)):
            fields.setdefault(int(m.group(2)), {})[m.group(3)] = value
            used.add(key)
    out = []
    for index in sorted(fields):
        f = fields[index]
        msg = Message(role=str(f.get("role") or ("assistant" if which == "completion" else "")))
        msg.text = _text(decode_json(f["content"])) if isinstance(decode_json(f.get("content")), list) \
            else (str(f["content"]) if f.get("content") is not None else None)
        msg.content = f.get("content")
        msg.tool_call_id = str(f["tool_call_id"]) if f.get("tool_call_id") is not None else None
        calls = sorted({int(k.split(".")[1]) for k in f if k.startswith("tool_calls.")})
        for j in calls:
            name = f.get(f"tool_calls.{j}.name")
            if name:
                call_id = f.get(f"tool_calls.{j}.id")
                msg.tool_calls.append((str(call_id) if call_id is not None else None, str(name),
                                       f.get(f"tool_calls.{j}.arguments")))
        if f.get("function_call.name"):
            msg.tool_calls.append((None, str(f["function_call.name"]), f.get("function_call.arguments")))
        out.append(msg)
    return out


def _event_messages(span: dict, used_events: set[int]) -> tuple[list[Message], list[Message]]:
    """The earlier conventions' span events as (prompt messages, reply messages)."""
    inputs: list[Message] = []
    outputs: list[Message] = []
    for i, event in enumerate(span.get("events") or ()):
        name, a = event["name"], event["attributes"]
        if name in MESSAGE_EVENTS or name == CHOICE_EVENT:
            body = a.get("gen_ai.event.content")
            if body is None:  # the body's fields flattened into the event's attributes
                body = {k: v for k, v in a.items() if not k.startswith("gen_ai.")}
            msg = _message(body, "assistant" if name == CHOICE_EVENT else MESSAGE_EVENTS[name])
            if msg is not None and (msg.text is not None or msg.tool_calls or msg.content is not None):
                (outputs if name == CHOICE_EVENT else inputs).append(msg)
                used_events.add(i)
        elif name in LEGACY_EVENTS:
            found = _messages(a.get(LEGACY_EVENTS[name]))
            (inputs if name == "gen_ai.content.prompt" else outputs).extend(
                m if m.role else Message("assistant", m.text, m.tool_calls, m.tool_call_id, m.content) for m in found)
            used_events.add(i)
    return inputs, outputs


def _arguments(raw: Any) -> dict[str, Any] | None:
    args = decode_json(raw)
    return args if isinstance(args, dict) else None


def _sources(a: dict[str, Any]) -> dict[str, str]:
    sources = decode_json(a.get("mbt.tool.argument_sources"))
    return {str(k): str(v) for k, v in sources.items()} if isinstance(sources, dict) else {}


def _state(value: Any) -> dict[str, Any] | None:
    state = decode_json(value)
    return state if isinstance(state, dict) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _first(a: dict[str, Any], keys: tuple[str, str]) -> Any:
    """The value of the first of two keys that has one (token counts: the current name, then the older one)."""
    found = a.get(keys[0])
    return found if found is not None else a.get(keys[1])


class _History:
    """A history as a model span carried it (`gen_ai.input.messages`): its user messages and its tool messages (raw,
    and read as messages when first needed), in order, and enough of its text to see whether the next span's history
    extends it. A model call repeats the whole conversation, so the next span's text is usually this text with new
    messages before its closing bracket: then only they are decoded (`_TraceReader.history`), and a history of 1,000
    messages costs its new messages, not a thousand. The decoded list is the same either way: a JSON array's text
    with more elements before its `]` decodes to the same elements followed by the new ones."""

    __slots__ = ("text", "head", "opens", "closes", "messages", "users", "tools", "read_tools")

    def __init__(self, text: str | None):
        self.text = text
        self.head = text[:-1] if text is not None and text.endswith("]") else None  # the text but its closing `]`
        self.opens = self.closes = 0  # the head's `[`/`{` and `]`/`}`, counted (strings included) as decode_json does
        if self.head is not None:
            self.opens = self.head.count("[") + self.head.count("{")
            self.closes = self.head.count("]") + self.head.count("}")
        self.messages = 0  # the history's objects (messages)
        self.users: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.read_tools: list[Message | None] = []  # tools[:len(read_tools)] read as messages (None: not one)

    def add(self, decoded: list[Any]) -> None:
        for m in decoded:
            if isinstance(m, dict):
                self.messages += 1
                role = m.get("role") if "role" in m else (_message(m) or Message("")).role
                if role == "user":
                    self.users.append(m)
                elif role == "tool":
                    self.tools.append(m)

    def tool_messages(self) -> list[Message]:
        """The tool messages, each read once however many spans repeat it."""
        read = self.read_tools
        for m in self.tools[len(read):]:
            read.append(_message(m))
        return [m for m in read if m is not None]


class _TraceReader:
    """Builds one run from one trace's spans; see the module docstring for the shapes."""

    def __init__(self, trace_id: str, spans: list[dict], file: str, where: str, fmt: str):
        self.trace_id = trace_id
        self.spans = sorted(spans, key=lambda s: (s["start"], s["end"], s["span_id"]))
        self.run = ObservedRun(id=trace_id, file=file, where=where, format=fmt)
        self.timed: list[tuple[int, int, ObservedStep]] = []
        self.unread: Counter[str] = Counter()
        self.users_seen = 0
        self.tool_results_seen: set[str] = set()
        self.tool_messages_seen = 0
        self.call_names: dict[str, str] = {}  # tool call id -> tool name, from the model's requests
        self.open_calls: list[tuple[str | None, str]] = []  # requested calls not answered yet, in order
        self.retrieval: Retrieval | None = None  # what the trace's retrieval spans returned (docs/runs.md, Grounding)
        self.grounding: dict[str, Any] = {}  # mbt's grounding attributes, as seed 000's RAG trace names them
        self.last_history: _History | None = None  # the last model span's history, when one may extend it

    def history(self, value: Any) -> _History | None:
        """The history a model span's `gen_ai.input.messages` holds (None: not a list of messages, or nested too
        deep: what decode_json keeps as text); decoded from where the previous span's history ends when this one
        extends it (see _History)."""
        last = self.last_history
        if last is not None and last.head is not None and type(value) is str:
            if value == last.text:  # the same history again (a reply without a new message in between)
                return last
            start = len(last.head) + 1
            if len(value) > start and value[start - 1] == "," and value.startswith(last.head):
                added = "[" + value[start:]  # the new messages, as an array of their own
                opens = last.opens + added.count("[") + added.count("{") - 1
                # decode_json's bound on nesting, for the whole text: the head ends `opens - closes` deep, and the
                # added text starts there; the head's own nesting passed already (the last history was decoded)
                if opens <= MAX_JSON_DEPTH or last.opens - last.closes - 1 + nesting(added) <= MAX_JSON_DEPTH:
                    try:
                        decoded = loads(added)
                    except (ValueError, RecursionError):
                        decoded = None
                    if isinstance(decoded, list):
                        last.text = value
                        if value.endswith("]"):
                            tail = added[1:-1]
                            last.head = value[:-1]
                            last.opens, last.closes = opens, last.closes + tail.count("]") + tail.count("}")
                        else:
                            last.head = None
                        last.add(decoded)
                        return last
        decoded = decode_json(value)
        found = _History(value if type(value) is str and isinstance(decoded, list) else None)
        found.add(decoded if isinstance(decoded, list) else [decoded])
        self.last_history = found if found.head is not None else None
        return found

    def at(self, span: dict) -> str:
        return f"trace {self.trace_id} span {span['span_id']}"

    def add(self, when: int, step: ObservedStep) -> None:
        self.timed.append((when, len(self.timed), step))

    def operation(self, span: dict) -> str | None:
        """The span's part in the run: model, tool, agent, ignored; None for a span that carries no GenAI data."""
        a = span["attributes"]
        op = a.get("gen_ai.operation.name")
        if op is not None:
            if op in MODEL_OPERATIONS:
                return "model"
            if op == TOOL_OPERATION:
                return "tool"
            if op == AGENT_OPERATION:
                return "agent"
            if op == RETRIEVAL_OPERATION:
                return "retrieval"
            if op in IGNORED_OPERATIONS:
                return "ignored"
            raise TraceProblem(f"{self.at(span)}: unknown gen_ai.operation.name `{op}` (known: "
                               + ", ".join(KNOWN_OPERATIONS) + ")")
        if a.get("traceloop.span.kind") == "tool":
            return "tool"
        if a.get(OPENINFERENCE_KIND) == "RETRIEVER" or any(e["name"] == VECTOR_RESULT_EVENT
                                                           for e in span.get("events") or ()):
            return "retrieval"
        if a.get("llm.request.type") is not None or key_set(a)[1] or any(
                e["name"] in MESSAGE_EVENTS or e["name"] == CHOICE_EVENT or e["name"] in LEGACY_EVENTS
                for e in span.get("events") or ()):
            return "model"
        if a.get("traceloop.span.kind") is not None:
            return "ignored"  # an OpenLLMetry workflow, task or agent span: its input and output are not steps
        return None

    def read(self) -> tuple[ObservedRun, Counter[str]]:
        roles = [(span, self.operation(span)) for span in self.spans]
        kinds = {role for _, role in roles}
        has_tool_spans, has_model_spans = "tool" in kinds, "model" in kinds
        for span, role in roles:
            found = _RUN_KEYS.intersection(span["attributes"])
            used = set(found)
            if not found <= CONTEXT_KEYS:  # context keys only (most spans, through the resource): read by read_context
                self.read_run_attributes(span["attributes"], used)
            if role is not None:
                used.add("gen_ai.operation.name")
            if role == "model" or (role == "agent" and not has_model_spans):
                self.read_model_span(span, used, messages_carry_tools=not has_tool_spans)
            elif role == "agent":  # its messages repeat what the trace's model spans carry
                used.update(k for k in ("gen_ai.input.messages", "gen_ai.output.messages") if k in span["attributes"])
            elif role == "tool":
                self.read_tool_span(span, used)
            elif role == "retrieval":
                self.read_retrieval_span(span, used)
            elif role is None and any(k.startswith("gen_ai.") for k in span["attributes"]):
                self.unread["`gen_ai.operation.name` absent (the span has gen_ai.* attributes)"] += 1
            self.count_unread(span, used, role)
        self.run.steps = [step for _, _, step in sorted(self.timed)]  # by time, then as added (numbers are unique)
        self.read_context(roles)
        self.read_grounding()
        self.run.notes = [f"{what} on {n} span(s): read as nothing" for what, n in sorted(self.unread.items())]
        return self.run, self.unread

    def read_run_attributes(self, a: dict[str, Any], used: set[str]) -> None:
        for key, attr in MBT_RUN_ATTRIBUTES.items():
            if a.get(key) is not None:
                used.add(key)
                if getattr(self.run, attr) is None:
                    setattr(self.run, attr, str(a[key]))
        if "mbt.run.precondition" in a:
            used.add("mbt.run.precondition")
            pre = decode_json(a["mbt.run.precondition"])
            if isinstance(pre, dict) and not self.run.precondition_recorded:
                self.run.precondition, self.run.precondition_recorded = pre, True
        used.update(CONTEXT_KEYS.intersection(a))
        tags = attribute_tags(a, used)  # mbt.run.tags, app.run.kind (mbt.runs.marks)
        if tags:
            self.run.tags = merged(self.run.tags, tags)
        for key, name in MBT_GROUNDING_ATTRIBUTES.items():
            if key in a:
                used.add(key)
                self.grounding.setdefault(name, decode_json(a[key]))

    def retrieval_of(self) -> Retrieval:
        if self.retrieval is None:
            self.retrieval = Retrieval(where=f"trace {self.trace_id}")
        return self.retrieval

    def read_retrieval_span(self, span: dict, used: set[str]) -> None:
        """A retrieval's query and documents, in any of the three shapes: the conventions' `retrieval` span
        (`gen_ai.retrieval.query.text`, `gen_ai.retrieval.documents`), OpenInference's RETRIEVER span (`input.value`,
        `retrieval.documents.N.document.*`), OpenLLMetry's `db.query.result` events. A document's approval and
        status are read from the document or its `metadata` (no convention names them)."""
        a, at = span["attributes"], self.at(span)
        r = self.retrieval_of()
        raw: list[Any] = []
        recorded = False
        if a.get("gen_ai.operation.name") == RETRIEVAL_OPERATION:
            used.update(k for k in ("gen_ai.retrieval.query.text", "gen_ai.retrieval.documents") if k in a)
            query = a.get("gen_ai.retrieval.query.text")
            if "gen_ai.retrieval.documents" in a:
                recorded = True
                found = decode_json(a["gen_ai.retrieval.documents"])
                if not isinstance(found, list):
                    raise TraceProblem(f"{at}: `gen_ai.retrieval.documents` is not a list of documents")
                # some instrumentations wrap each one: {"document": {...}}
                raw = [d["document"] if isinstance(d, dict) and isinstance(d.get("document"), dict) else d
                       for d in found]
        elif a.get(OPENINFERENCE_KIND) == "RETRIEVER":
            used.add(OPENINFERENCE_KIND)
            query = a.get("input.value")
            by_index: dict[int, dict[str, Any]] = {}
            for key, value in a.items():
                m = _OPENINFERENCE_DOCUMENT.match(key)
                if m:
                    by_index.setdefault(int(m.group(1)), {})[m.group(2)] = value
            recorded = bool(by_index)
            raw = [by_index[i] for i in sorted(by_index)]
        else:
            query = None
        for event in span.get("events") or ():
            if event["name"] == VECTOR_RESULT_EVENT:  # OpenLLMetry: one event per result
                e = event["attributes"]
                recorded = True
                raw.append({"id": e.get("db.query.result.id"), "score": e.get("db.query.result.score"),
                            "content": e.get("db.query.result.document"),
                            "metadata": e.get("db.query.result.metadata")})
        if isinstance(query, str):
            r.queries.append(query)
        r.documents_recorded = r.documents_recorded or recorded
        for n, doc in enumerate(raw):
            if isinstance(doc, dict) and isinstance(doc.get("metadata"), str):
                doc = {**doc, "metadata": decode_json(doc["metadata"])}
            try:
                r.documents.append(read_document(doc, f"{at} document {n}"))
            except GroundingProblem as err:
                raise TraceProblem(str(err)) from None

    def read_grounding(self) -> None:
        """The run's retrieval evidence: its retrieval spans' documents, and mbt's grounding attributes."""
        if self.retrieval is None and not self.grounding:
            return
        r = self.retrieval_of()
        try:
            given = read_grounding(self.grounding, r.where, always=True)
        except GroundingProblem as err:
            raise TraceProblem(str(err)) from None
        if given is not None:
            r.selected, r.claims, r.must_not = given.selected, given.claims, given.must_not
            r.route = given.route
        self.run.retrieval = r

    def read_model_span(self, span: dict, used: set[str], messages_carry_tools: bool) -> None:
        a = span["attributes"]
        if "gen_ai.operation.name" in a:
            used.add("gen_ai.operation.name")
        if "llm.request.type" in a:
            used.add("llm.request.type")
        used_events: set[int] = set()
        history: _History | None = None  # the current conventions' history, its messages parsed only where read
        outputs: list[Message] = []
        if "gen_ai.input.messages" in a:
            used.add("gen_ai.input.messages")
            history = self.history(a["gen_ai.input.messages"])
        if "gen_ai.output.messages" in a:
            used.add("gen_ai.output.messages")
            outputs = _messages(a["gen_ai.output.messages"])
        ev_in, ev_out = _event_messages(span, used_events) if span.get("events") else ([], [])
        indexed = key_set(a)[1]
        ix_in, ix_out = (_indexed(a, "prompt", used), _indexed(a, "completion", used)) if indexed else ([], [])
        # One shape per direction: an instrumentation that writes both an attribute and events of the same messages
        # must not double them.
        outputs = outputs or ev_out or ix_out
        if history is not None and history.messages:
            # a model call repeats the whole history: only its new user messages and tool results count
            users_count = len(history.users)
            new_users = [msg for msg in (_message(m) for m in history.users[self.users_seen:]) if msg is not None]
            tools = history.tool_messages() if messages_carry_tools else []
        else:
            inputs = ev_in or ix_in
            users = [m for m in inputs if m.role == "user"]
            users_count, new_users = len(users), users[self.users_seen:]
            tools = [m for m in inputs if m.role == "tool"] if messages_carry_tools else []
        for i, event in enumerate(span.get("events") or ()):
            if i not in used_events and event["name"].startswith("gen_ai."):
                self.unread[f"span event `{event['name']}`"] += 1
                for key in event["attributes"]:  # what the event carried instead of a body mbt reads
                    if key.startswith(GENAI_PREFIXES) and not _PASSED_OVER.match(key):
                        self.unread[f"attribute `{key}` of span event `{event['name']}`"] += 1
        at, sid = self.at(span), span["span_id"]
        for m in new_users:
            self.add(span["start"], ObservedStep("user", at, text=m.text or "", span_id=sid))
        self.users_seen = max(self.users_seen, users_count)
        if messages_carry_tools:
            tool_messages = tools
            for n, m in enumerate(tool_messages):
                key = m.tool_call_id if m.tool_call_id is not None else f"#{n}"
                if key in self.tool_results_seen or (m.tool_call_id is None and n < self.tool_messages_seen):
                    continue
                self.tool_results_seen.add(key)
                answered = next((c for c in self.open_calls if c[0] == m.tool_call_id), None) \
                    if m.tool_call_id is not None else (self.open_calls[0] if self.open_calls else None)
                if answered is not None:
                    self.open_calls.remove(answered)
                tool = answered[1] if answered is not None else self.call_names.get(m.tool_call_id or "", "?")
                result = decode_json(m.content if not isinstance(m.content, list) else _text(m.content))
                error = tool_error(result)
                self.add(span["start"], ObservedStep("tool_result", at, tool=tool, ok=error is None, error=error,
                                                     result=result, span_id=sid))
            self.tool_messages_seen = max(self.tool_messages_seen, len(tool_messages))
        for m in outputs:
            if m.role not in ("assistant", "model", ""):
                continue
            if m.text:
                self.add(span["end"], ObservedStep("assistant", at, text=m.text, span_id=sid))
            if messages_carry_tools:
                for call_id, name, raw in m.tool_calls:
                    if call_id is not None:
                        self.call_names[call_id] = name
                    self.open_calls.append((call_id, name))
                    self.add(span["end"], ObservedStep("tool_call", at, tool=name, args=_arguments(raw),
                                                       sources=_sources(a), span_id=sid))
        if messages_carry_tools:
            used.update(_TOOL_KEYS.intersection(a))

    def read_tool_span(self, span: dict, used: set[str]) -> None:
        a = span["attributes"]
        at, sid = self.at(span), span["span_id"]
        if a.get("gen_ai.operation.name") == TOOL_OPERATION:
            used.update(_TOOL_SPAN_KEYS.intersection(a))
            tool = a.get("gen_ai.tool.name")
            if not tool:
                raise TraceProblem(f"{at}: an `execute_tool` span without `gen_ai.tool.name`")
            args = _arguments(a.get("gen_ai.tool.call.arguments"))
            result = decode_json(a.get("gen_ai.tool.call.result"))
        else:  # OpenLLMetry's @tool: the function's arguments and return value
            used.update(_TRACELOOP_TOOL_KEYS.intersection(a))
            tool = a.get("traceloop.entity.name") or span["name"].removesuffix(".tool")
            given = decode_json(a.get("traceloop.entity.input"))
            args = None
            if isinstance(given, dict) and isinstance(given.get("kwargs"), dict):
                if given.get("args"):  # positional arguments have no names: the call's arguments are not recorded
                    self.unread[f"positional arguments of tool `{tool}` (traceloop.entity.input.args)"] += 1
                else:
                    args = given["kwargs"]
            result = decode_json(a.get("traceloop.entity.output"))
        used.update(_TOOL_KEYS.intersection(a))
        self.add(span["start"], ObservedStep(
            "tool_call", at, tool=str(tool), args=args, sources=_sources(a),
            idempotency_key=str(a["mbt.idempotency_key"]) if a.get("mbt.idempotency_key") is not None else None,
            state_before=_state(a.get("mbt.state.before")), span_id=sid))
        error = a.get("error.type") or (span["status"] or "error" if span["failed"] else None) or tool_error(result)
        self.add(max(span["end"], span["start"]), ObservedStep(
            "tool_result", at, tool=str(tool), ok=error is None, error=str(error) if error is not None else None,
            result=result, state_after=_state(a.get("mbt.state.after")), span_id=sid))

    def count_unread(self, span: dict, used: set[str], role: str | None) -> None:
        """Each attribute that looks like GenAI telemetry and that no mapping read or knowingly passes over."""
        candidates = key_set(span["attributes"])[0]
        if not used.issuperset(candidates):
            for key in candidates - used:
                self.unread[f"attribute `{_DIGITS.sub('.N', key)}`"] += 1

    def read_context(self, roles: list[tuple[dict, str | None]]) -> None:
        ctx: RunContext = self.run.context
        for span, _ in roles:
            a = span["attributes"]
            found = CONTEXT_KEYS.intersection(a)
            # in the table's order: one span may give two names of one field (deployment.environment[.name])
            for key in (found if len(found) < 2 else sorted(found, key=_CONTEXT_ORDER.__getitem__)):
                value, attr = a[key], CONTEXT_ATTRIBUTES[key]
                if value is not None and getattr(ctx, attr) is None:
                    setattr(ctx, attr, str(value))
        model_spans = [s for s, role in roles if role == "model"]
        tool_spans = [s for s, role in roles if role == "tool"]
        tokens_in, tokens_out = [], []
        for s in model_spans or [s for s, role in roles if role == "agent"]:
            a = s["attributes"]
            tokens_in.append(_int(_first(a, INPUT_TOKENS)))
            tokens_out.append(_int(_first(a, OUTPUT_TOKENS)))
        if any(t is not None for t in tokens_in):
            ctx.input_tokens = sum(t or 0 for t in tokens_in)
        if any(t is not None for t in tokens_out):
            ctx.output_tokens = sum(t or 0 for t in tokens_out)
        if self.spans:  # sorted by start: the first starts first
            ctx.wall_ms = (max(s["end"] for s in self.spans) - self.spans[0]["start"]) / 1e6
        ms = lambda s: max(s["end"] - s["start"], 0) / 1e6  # noqa: E731
        if model_spans:
            ctx.model_ms = sum([ms(s) for s in model_spans])
        if tool_spans:
            ctx.tool_ms = sum([ms(s) for s in tool_spans])
            failed: set[str] = set()
            retry_ms = 0.0
            result_of: dict[str | None, ObservedStep] = {}  # span id -> its tool result (the first)
            for _, _, st in self.timed:
                if st.kind == "tool_result":
                    result_of.setdefault(st.span_id, st)
            for s in tool_spans:  # a call of a tool whose previous call failed is a retry
                result = result_of.get(s["span_id"])
                tool = result.tool if result is not None else None
                if tool in failed:
                    ctx.retries += 1
                    retry_ms += ms(s)
                if result is not None and not result.ok:
                    failed.add(str(tool))
                elif tool in failed:
                    failed.discard(str(tool))
            ctx.retry_ms = retry_ms if ctx.retries else None


def run_of_trace(trace_id: str, spans: list[dict], file: str, where: str, fmt: str
                 ) -> tuple[ObservedRun, Counter[str]]:
    """One trace -> one run (steps in time order: a span's prompt and call at its start, its reply and result at its
    end) and the telemetry it read as nothing, counted by attribute; raises TraceProblem."""
    return _TraceReader(trace_id, spans, file, where, fmt).read()
