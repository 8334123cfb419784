"""OpenTelemetry GenAI traces (OTLP/JSON files, JSON Lines of spans) read as observed runs, via opentelemetry-proto.

Each trace is one run. Spans follow the GenAI semantic conventions (`gen_ai.operation.name` = `invoke_agent`, `chat`,
`execute_tool`); mbt's extra attributes (`mbt.*`, docs/runs.md) carry what the conventions lack: where each tool
argument came from, business state around a tool call, the idempotency key, the run's suite and expected intent.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from mbt.runs.steps import ObservedRun, ObservedStep

# Operation names of the GenAI conventions: the first three make steps, the others carry nothing mbt judges.
USED_OPERATIONS = ("invoke_agent", "chat", "execute_tool")
IGNORED_OPERATIONS = ("create_agent", "embeddings", "retrieval", "text_completion", "generate_content")
_IDS = ("traceId", "spanId", "parentSpanId")  # hex in OTLP/JSON, base64 in proto3 JSON: read as written


class SpanProblem(ValueError):
    """A span no run can be built from (its location is added by the caller)."""


def is_otlp(raw: Any) -> bool:
    """An OTLP/JSON document (`resourceSpans`) or one span of a JSON Lines file (`traceId` and `spanId`)."""
    return isinstance(raw, dict) and ("resourceSpans" in raw or ("traceId" in raw and "spanId" in raw))


def _value(v: AnyValue) -> Any:
    which = v.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, which)


_PLAIN_KEYS = frozenset(("traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano",
                         "endTimeUnixNano", "attributes", "status", "traceState", "flags", "droppedAttributesCount"))
_ERROR_CODES = (2, "STATUS_CODE_ERROR")


def _nanos(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _plain_value(v: Any) -> tuple[bool, Any]:
    """(read, value) for the AnyValue shapes spans carry; (False, None) sends the span to protobuf's parser."""
    if not isinstance(v, dict) or len(v) != 1:
        return False, None
    (kind, x), = v.items()
    if kind == "stringValue" and isinstance(x, str):
        return True, x
    if kind == "boolValue" and isinstance(x, bool):
        return True, x
    if kind == "intValue" and not isinstance(x, bool):
        n = x if isinstance(x, int) else int(x) if isinstance(x, str) and x.lstrip("-").isdigit() else None
        return (n is not None and -2 ** 63 <= n < 2 ** 63), n
    if kind == "doubleValue" and isinstance(x, (int, float)) and not isinstance(x, bool):
        return True, float(x)
    if kind == "arrayValue" and isinstance(x, dict) and set(x) <= {"values"}:
        out = []
        for item in x.get("values", []):
            ok, value = _plain_value(item)
            if not ok:
                return False, None
            out.append(value)
        return True, out
    return False, None


def _plain_span(raw: dict) -> dict[str, Any] | None:
    """The span read directly when it has the common OTLP/JSON shape (what exporters write), else None. Accepts
    nothing protobuf's parser refuses; anything unusual (events, links, bytes, kvlists) goes to that parser."""
    if not _PLAIN_KEYS.issuperset(raw):
        return None
    name, start, end = raw.get("name", ""), _nanos(raw.get("startTimeUnixNano", 0)), _nanos(raw.get("endTimeUnixNano", 0))
    kind = raw.get("kind", 0)
    if not isinstance(name, str) or start is None or end is None or not isinstance(kind, int) or isinstance(kind, bool):
        return None
    attributes = {}
    for a in raw.get("attributes") or ():
        if not isinstance(a, dict) or not set(a) <= {"key", "value"} or not isinstance(a.get("key"), str):
            return None
        ok, value = _plain_value(a.get("value", {}))
        if not ok:
            return None
        attributes[a["key"]] = value
    status = raw.get("status") or {}
    if not isinstance(status, dict) or not set(status) <= {"code", "message"} \
            or not isinstance(status.get("message", ""), str) or status.get("code", 0) not in (0, 1, 2, *(
                f"STATUS_CODE_{c}" for c in ("UNSET", "OK", "ERROR"))):
        return None
    for key in ("traceState",):
        if not isinstance(raw.get(key, ""), str):
            return None
    if not isinstance(raw.get("flags", 0), int) or not isinstance(raw.get("droppedAttributesCount", 0), int):
        return None
    return {"name": name, "start": start, "end": end, "attributes": attributes,
            "failed": status.get("code", 0) in _ERROR_CODES, "status": status.get("message", "")}


def decode_span(raw: Any, resource: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(trace id, the span as a plain record) from one OTLP/JSON span; raises SpanProblem. opentelemetry-proto's
    Span message (via protobuf's json_format) decides what a span is; the common shape is read directly, as
    json_format.ParseDict costs ~0.3 ms a span (tests/test_runs_readers.py checks both give the same record)."""
    if not isinstance(raw, dict):
        raise SpanProblem(f"a span must be an object, not {type(raw).__name__}")
    trace_id = raw.get("traceId")
    if not trace_id or not isinstance(trace_id, str):
        raise SpanProblem("the span has no `traceId`")
    record = _plain_span(raw)
    if record is None:
        record = proto_span(raw)
    attributes = dict(resource)
    attributes.update(record["attributes"])
    record["attributes"] = attributes
    record["span_id"] = str(raw.get("spanId") or "")
    return trace_id, record


def proto_span(raw: dict) -> dict[str, Any]:
    """The span as protobuf's json_format reads it into opentelemetry-proto's Span; raises SpanProblem."""
    try:
        span = json_format.ParseDict({k: v for k, v in raw.items() if k not in _IDS}, Span())
    except json_format.ParseError as err:
        raise SpanProblem(f"not an OTLP span: {err}") from None
    return {"name": span.name, "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
            "attributes": {kv.key: _value(kv.value) for kv in span.attributes},
            "failed": span.status.code == Status.STATUS_CODE_ERROR, "status": span.status.message}


def resource_attributes(raw: Any) -> dict[str, Any]:
    """A resource's attributes (they apply to every span under it); raises SpanProblem."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise SpanProblem("`resource` must be an object")
    try:
        resource = json_format.ParseDict(raw, Resource(), ignore_unknown_fields=True)
    except json_format.ParseError as err:
        raise SpanProblem(f"not an OTLP resource: {err}") from None
    return {kv.key: _value(kv.value) for kv in resource.attributes}


def _list(value: Any, what: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SpanProblem(f"`{what}` must be a list")
    return value


def spans_of_document(doc: dict, where: str, problems: list[tuple[str, str]]) -> dict[str, list[dict]]:
    """Spans by trace id from one OTLP/JSON document; a part that cannot be read is a problem, the rest is kept."""
    by_trace: dict[str, list[dict]] = defaultdict(list)
    try:
        resource_spans = _list(doc.get("resourceSpans"), "resourceSpans")
    except SpanProblem as err:
        problems.append((where, str(err)))
        return by_trace
    for i, rs in enumerate(resource_spans):
        at = f"{where} resourceSpans[{i}]"
        try:
            if not isinstance(rs, dict):
                raise SpanProblem("must be an object")
            resource = resource_attributes(rs.get("resource"))
            scopes = _list(rs.get("scopeSpans"), "scopeSpans")
        except SpanProblem as err:
            problems.append((at, str(err)))
            continue
        for j, ss in enumerate(scopes):
            try:
                spans = _list(ss.get("spans") if isinstance(ss, dict) else ss, "spans")
            except SpanProblem as err:
                problems.append((f"{at}.scopeSpans[{j}]", str(err)))
                continue
            for k, raw in enumerate(spans):
                try:
                    trace_id, span = decode_span(raw, resource)
                except SpanProblem as err:
                    problems.append((f"{at}.scopeSpans[{j}].spans[{k}]", str(err)))
                    continue
                by_trace[trace_id].append(span)
    return by_trace


def _json(value: Any) -> Any:
    """Attributes carrying structure are JSON strings (the conventions' `gen_ai.tool.call.arguments`, ...)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _texts(messages: Any, role: str) -> list[str]:
    """The text parts of the messages with this role (GenAI `parts` or a plain `content` string)."""
    out = []
    for m in _json(messages) or []:
        if not isinstance(m, dict) or m.get("role") != role:
            continue
        if isinstance(m.get("content"), str):
            out.append(m["content"])
            continue
        parts = [p.get("content") for p in m.get("parts") or [] if isinstance(p, dict) and p.get("type") == "text"]
        if parts:
            out.append("".join(str(p) for p in parts))
    return out


def run_of_trace(trace_id: str, spans: list[dict], file: str, where: str, fmt: str) -> ObservedRun:
    """One trace -> one run: steps in time order (a span's call at its start, its result at its end)."""
    run = ObservedRun(id=trace_id, file=file, where=where, format=fmt)
    timed: list[tuple[int, int, ObservedStep]] = []
    users_seen = 0
    order = 0
    for span in sorted(spans, key=lambda s: (s["start"], s["end"], s["span_id"])):
        a = span["attributes"]
        op = a.get("gen_ai.operation.name")
        at = f"trace {trace_id} span {span['span_id']}"
        for key, field in (("mbt.model", "model"), ("mbt.run.suite", "suite"),
                           ("mbt.run.expected_intent", "expected_intent"), ("mbt.run.intent", "intent")):
            if a.get(key) is not None and getattr(run, field) is None:
                setattr(run, field, str(a[key]))
        if isinstance(_json(a.get("mbt.run.precondition")), dict) and not run.precondition:
            run.precondition = _json(a["mbt.run.precondition"])
        if op is None or op in IGNORED_OPERATIONS or op == "invoke_agent":
            continue  # not a GenAI step (HTTP, database spans of the same trace) or nothing to judge
        if op not in USED_OPERATIONS:
            raise SpanProblem(f"{at}: unknown gen_ai.operation.name `{op}` (known: "
                              + ", ".join(USED_OPERATIONS + IGNORED_OPERATIONS) + ")")
        if op == "chat":
            users = _texts(a.get("gen_ai.input.messages"), "user")
            for text in users[users_seen:]:  # each chat call repeats the history: only new user messages count
                order += 1
                timed.append((span["start"], order, ObservedStep("user", at, text=text, span_id=span["span_id"])))
            users_seen = max(users_seen, len(users))
            for text in _texts(a.get("gen_ai.output.messages"), "assistant"):
                order += 1
                timed.append((span["end"], order, ObservedStep("assistant", at, text=text, span_id=span["span_id"])))
            continue
        tool = a.get("gen_ai.tool.name")
        if not tool:
            raise SpanProblem(f"{at}: an `execute_tool` span without `gen_ai.tool.name`")
        args = _json(a.get("gen_ai.tool.call.arguments"))
        sources = _json(a.get("mbt.tool.argument_sources"))
        before, after = _json(a.get("mbt.state.before")), _json(a.get("mbt.state.after"))
        order += 1
        timed.append((span["start"], order, ObservedStep(
            "tool_call", at, tool=str(tool), args=args if isinstance(args, dict) else None,
            sources={str(k): str(v) for k, v in sources.items()} if isinstance(sources, dict) else {},
            idempotency_key=a.get("mbt.idempotency_key"), state_before=before if isinstance(before, dict) else None,
            span_id=span["span_id"])))
        error = a.get("error.type") or (span["status"] or "error" if span["failed"] else None)
        order += 1
        timed.append((max(span["end"], span["start"]), order, ObservedStep(
            "tool_result", at, tool=str(tool), ok=error is None, error=str(error) if error is not None else None,
            result=_json(a.get("gen_ai.tool.call.result")), state_after=after if isinstance(after, dict) else None,
            span_id=span["span_id"])))
    run.steps = [step for _, _, step in sorted(timed, key=lambda x: (x[0], x[1]))]
    return run


def read_otlp(file: str, documents: list[tuple[int | None, Any]]) -> tuple[list[ObservedRun], list[tuple[str, str]]]:
    """Runs from one file's decoded JSON values (one document, or one per JSON Lines line with its number):
    OTLP/JSON documents and single spans; spans of one trace are gathered across the file's lines."""
    problems: list[tuple[str, str]] = []
    by_trace: dict[str, list[dict]] = defaultdict(list)
    first_where: dict[str, str] = {}
    fmt = "otlp"
    for line, doc in documents:
        where = f"{file}:{line}" if line is not None else file
        if isinstance(doc, dict) and "resourceSpans" in doc:
            found = spans_of_document(doc, where, problems)
        else:
            fmt = "otlp-spans"
            try:
                trace_id, span = decode_span(doc, {})
            except SpanProblem as err:
                problems.append((where, str(err)))
                continue
            found = {trace_id: [span]}
        for trace_id, spans in found.items():
            by_trace[trace_id].extend(spans)
            first_where.setdefault(trace_id, where)
    runs = []
    for trace_id in sorted(by_trace):
        try:
            runs.append(run_of_trace(trace_id, by_trace[trace_id], file, first_where[trace_id], fmt))
        except SpanProblem as err:
            problems.append((first_where[trace_id], str(err)))
    return runs, problems
