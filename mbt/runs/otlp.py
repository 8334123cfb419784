"""OpenTelemetry traces (OTLP/JSON files, JSON Lines of spans) decoded into plain span records, via
opentelemetry-proto; each trace is one run, its steps made by mbt.runs.genai from whichever GenAI shape its spans
use (the current semantic conventions, their earlier span events, OpenLLMetry's attributes).

A file is read as a stream (`OtlpFile`): a first pass locates every span by its trace without decoding it (msgspec
skips a span's contents in C), then each trace's spans are decoded, in trace id order, and turned into its run before
the next trace's are: a file's runs need the memory of its largest trace (and a few dozen bytes a span for the
index), not of the file. A span in the common shape is decoded straight into typed structs (mbt.runs.decoding);
any other goes through the checks below, which decide as they always did.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mbt.runs import decoding
from mbt.runs.genai import TraceProblem, run_of_trace
from mbt.runs.steps import ObservedRun

if TYPE_CHECKING:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

_IDS = ("traceId", "spanId", "parentSpanId")  # hex in OTLP/JSON, base64 in proto3 JSON: read as written


class SpanProblem(ValueError):
    """A span no run can be built from (its location is added by the caller)."""


# Python refuses to turn longer digit strings into ints (sys.get_int_max_str_digits); an OTLP int is 64 bits anyway.
_MAX_INT_DIGITS = 20


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
                         "endTimeUnixNano", "attributes", "status", "traceState", "flags", "droppedAttributesCount",
                         "events", "droppedEventsCount"))
_PLAIN_EVENT_KEYS = frozenset(("timeUnixNano", "name", "attributes", "droppedAttributesCount"))
_ERROR_CODES = (2, "STATUS_CODE_ERROR")
# The status codes OTLP/JSON may write: the numbers, or their names (an encoder's choice).
_STATUS_CODES = (0, 1, 2, *(f"STATUS_CODE_{c}" for c in ("UNSET", "OK", "ERROR")))


_UINT64 = 2 ** 64
# An int64 as OTLP/JSON writes it in a string (at most 20 characters); anything else is for protobuf's parser.
_INTEGER = re.compile(r"-?[0-9]{1,19}")
_FLOAT_INTS = 2 ** 1024  # integers past this have no float


def _nanos(value: Any) -> int | None:
    if type(value) is str and value.isascii() and value.isdigit() and len(value) <= _MAX_INT_DIGITS:
        value = int(value)  # OTLP/JSON writes 64-bit integers as strings
    if type(value) is int and 0 <= value < _UINT64:
        return value
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
        n = x if isinstance(x, int) else int(x) if isinstance(x, str) and _INTEGER.fullmatch(x) else None
        return (n is not None and -2 ** 63 <= n < 2 ** 63), n
    if kind == "doubleValue" and isinstance(x, (int, float)) and not isinstance(x, bool):
        if isinstance(x, int) and not -_FLOAT_INTS < x < _FLOAT_INTS:
            return False, None  # no float holds it: protobuf's parser says why
        return True, float(x)
    if kind == "arrayValue" and isinstance(x, dict) and set(x) <= {"values"} and isinstance(x.get("values", []), list):
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
    attributes = _plain_attributes(raw.get("attributes"))
    if attributes is None:
        return None
    events = []
    for e in raw.get("events") or ():
        if not isinstance(e, dict) or not _PLAIN_EVENT_KEYS.issuperset(e) or not isinstance(e.get("name", ""), str):
            return None
        when, event_attributes = _nanos(e.get("timeUnixNano", 0)), _plain_attributes(e.get("attributes"))
        if when is None or event_attributes is None or not isinstance(e.get("droppedAttributesCount", 0), int):
            return None
        events.append({"name": e.get("name", ""), "time": when, "attributes": event_attributes})
    status = raw.get("status") or {}
    if not isinstance(status, dict) or not set(status) <= {"code", "message"} \
            or not isinstance(status.get("message", ""), str) or status.get("code", 0) not in _STATUS_CODES:
        return None
    for key in ("traceState",):
        if not isinstance(raw.get(key, ""), str):
            return None
    if not (isinstance(raw.get("flags", 0), int) and isinstance(raw.get("droppedAttributesCount", 0), int)
            and isinstance(raw.get("droppedEventsCount", 0), int)):
        return None
    if not isinstance(raw.get("events", []), list):
        return None
    return {"name": name, "start": start, "end": end, "attributes": attributes, "events": events,
            "failed": status.get("code", 0) in _ERROR_CODES, "status": status.get("message", "")}


def _plain_attributes(raw: Any) -> dict[str, Any] | None:
    """Attributes in the common shape (a list of key / plain value), else None (protobuf's parser decides)."""
    if raw is not None and not isinstance(raw, list):
        return None
    attributes = {}
    for a in raw or ():
        if not isinstance(a, dict) or not set(a) <= {"key", "value"} or not isinstance(a.get("key"), str):
            return None
        ok, value = _plain_value(a.get("value", {}))
        if not ok:
            return None
        attributes[a["key"]] = value
    return attributes


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
    # on use: start-up time (a span in the common shape, as exporters write them, needs no protobuf)
    from google.protobuf import json_format
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    try:
        span = json_format.ParseDict({k: v for k, v in raw.items() if k not in _IDS}, Span())
    except (json_format.ParseError, ValueError, TypeError, RecursionError, OverflowError) as err:  # protobuf raises
        # all of these (OverflowError: a JSON integer past any float, as a doubleValue)
        raise SpanProblem(f"not an OTLP span: {str(err)[:300]}") from None
    return {"name": span.name, "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
            "attributes": {kv.key: _value(kv.value) for kv in span.attributes},
            "events": [{"name": e.name, "time": e.time_unix_nano,
                        "attributes": {kv.key: _value(kv.value) for kv in e.attributes}} for e in span.events],
            "failed": span.status.code == Status.STATUS_CODE_ERROR, "status": span.status.message}


def resource_attributes(raw: Any) -> dict[str, Any]:
    """A resource's attributes (they apply to every span under it); raises SpanProblem."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise SpanProblem("`resource` must be an object")
    dropped = raw.get("droppedAttributesCount", 0)
    if set(raw) <= {"attributes", "droppedAttributesCount"} and isinstance(raw.get("attributes", []), list) \
            and type(dropped) is int and 0 <= dropped < 2 ** 32:  # a uint32
        plain = _plain_attributes(raw.get("attributes"))
        if plain is not None:  # the common shape, read directly as a span's attributes are
            return plain
    return proto_resource(raw)


def proto_resource(raw: dict) -> dict[str, Any]:
    """A resource's attributes as protobuf's json_format reads it into opentelemetry-proto's Resource; raises
    SpanProblem."""
    # on use: start-up time (a resource in the common shape needs no protobuf)
    from google.protobuf import json_format
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource

    try:
        resource = json_format.ParseDict(raw, Resource(), ignore_unknown_fields=True)
    except (json_format.ParseError, OverflowError) as err:  # OverflowError: an integer past any float
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


def read_otlp(file: str, documents: list[tuple[int | None, Any]]
              ) -> tuple[list[ObservedRun], list[tuple[str, str]], list[str]]:
    """Runs from one file's decoded JSON values (one document, or one per JSON Lines line with its number):
    OTLP/JSON documents and single spans; spans of one trace are gathered across the file's lines. Also returns the
    file's notes: telemetry attributes that no mapping reads, counted over the file (docs/runs.md, "Unread")."""
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
    unread: Counter[str] = Counter()
    for trace_id in sorted(by_trace):
        try:
            run, trace_unread = run_of_trace(trace_id, by_trace[trace_id], file, first_where[trace_id], fmt)
        except TraceProblem as err:
            problems.append((first_where[trace_id], str(err)))
            continue
        runs.append(run)
        unread.update(trace_unread)
    notes = [f"{what} on {n} span(s): read as nothing" for what, n in sorted(unread.items())]
    return runs, problems, notes


class OtlpFile:
    """One file's OTLP documents and spans, located by trace as they are met, then read a trace at a time (`runs`):
    the runs, problems and notes `read_otlp` gives for the same documents, in the same order.

    A span is kept as where it is (a msgspec.Raw into the file's buffer, or a line's byte range) until its trace is
    read; documents and spans that need mbt's careful checks are decoded when met (`add`), as `read_otlp` does."""

    def __init__(self, file: str, buffer: Any = None):
        self.file = file
        self.buffer = buffer  # the file's bytes (or their mapping), which line ranges point into
        self.fmt = "otlp"
        # trace id -> its spans in document order: (ordinal, the document's place, the span's place, the span)
        self.traces: dict[str, list[tuple[int, str, Any, Any, dict[str, Any]]]] = {}
        self._problems: list[tuple[int, str, str]] = []  # (ordinal, where, message), in document order once sorted
        self._trace_problems: list[tuple[str, str]] = []
        self._ordinal = 0
        self.unread: Counter[str] = Counter()

    def _next(self) -> int:
        self._ordinal += 1
        return self._ordinal

    def _problem(self, where: str, message: str) -> None:
        self._problems.append((self._next(), where, message))

    def _locate(self, trace_id: str, where: str, at: Any, span: Any, resource: dict[str, Any]) -> None:
        self.traces.setdefault(trace_id, []).append((self._next(), where, at, span, resource))

    # ---------------------------------------------------------------- decoded values (read_otlp's own loop)

    def add(self, line: int | None, doc: Any) -> None:
        """One decoded JSON value (a document or a span), as `read_otlp` reads it."""
        where = f"{self.file}:{line}" if line is not None else self.file
        if isinstance(doc, dict) and "resourceSpans" in doc:
            problems: list[tuple[str, str]] = []
            found = spans_of_document(doc, where, problems)
            for at, message in problems:  # problems and spans keep their document order through the ordinals
                self._problem(at, message)
            for trace_id, spans in found.items():
                for span in spans:
                    self._locate(trace_id, where, None, span, {})
            return
        self.fmt = "otlp-spans"
        try:
            trace_id, span = decode_span(doc, {})
        except SpanProblem as err:
            self._problem(where, str(err))
            return
        self._locate(trace_id, where, None, span, {})

    # ---------------------------------------------------------------- undecoded documents and lines

    def add_document(self, data: Any, line: int | None) -> None:
        """An OTLP/JSON document, valid JSON as msgspec reads it: its spans located, each decoded with its trace."""
        try:
            envelope = decoding.envelope_decoder.decode(data)
        except decoding.DecodeFailure:
            envelope = None
        where = f"{self.file}:{line}" if line is not None else self.file
        if envelope is None or not self._locate_envelope(envelope, where):
            self.add(line, decoding.loads(data))

    def _locate_envelope(self, envelope: decoding.Envelope, where: str) -> bool:
        """Locate the spans of a typed document; False (nothing located) when a span's trace id is not plain text,
        which the careful reading reports."""
        located: list[tuple[str, tuple[int, int, int], Any, dict[str, Any]] | tuple[str, str]] = []
        for i, rs in enumerate(envelope.resourceSpans or ()):
            try:
                resource = resource_attributes(decoding.loads(rs.resource) if rs.resource is not decoding.UNSET
                                               else None)
            except SpanProblem as err:
                located.append((f"{where} resourceSpans[{i}]", str(err)))
                continue
            for j, ss in enumerate(rs.scopeSpans or ()):
                for k, raw in enumerate(ss.spans or ()):
                    trace_id = _trace_id(raw)
                    if trace_id is None:
                        return False
                    located.append((trace_id, (i, j, k), raw, resource))
        for item in located:
            if len(item) == 2:
                self._problem(*item)
            else:
                trace_id, at, raw, resource = item
                self._locate(trace_id, where, at, raw, resource)
        return True

    def add_span_line(self, start: int, end: int, line: int | None, trace_id_raw: Any) -> None:
        """A value holding one span (bytes start..end of the buffer: a JSON Lines line, or a file's whole document,
        `line` None), valid JSON as msgspec reads it."""
        self.fmt = "otlp-spans"
        trace_id = _plain_text(trace_id_raw)
        if trace_id is None:  # the careful reading says what is wrong with it
            self.add(line, decoding.loads(self.buffer[start:end]))
            return
        self._locate(trace_id, f"{self.file}:{line}" if line is not None else self.file, None, (start, end), {})

    # ---------------------------------------------------------------- the runs

    def runs(self) -> Iterator[ObservedRun]:
        """Each trace's run, in trace id order; a trace is decoded when its turn comes."""
        for trace_id in sorted(self.traces):
            spans: list[dict[str, Any]] = []
            first: str | None = None
            for ordinal, where, at, source, resource in self.traces.pop(trace_id):
                span = self._span(ordinal, where, at, source, resource)
                if span is not None:
                    spans.append(span)
                    first = first or where
            if first is None:
                continue
            try:
                run, trace_unread = run_of_trace(trace_id, spans, self.file, first, self.fmt)
            except TraceProblem as err:
                self._trace_problems.append((first, str(err)))
                continue
            self.unread.update(trace_unread)
            yield run

    def _span(self, ordinal: int, where: str, at: Any, source: Any, resource: dict[str, Any]) -> dict | None:
        if type(source) is dict:  # decoded by the careful reading already
            return source
        data = self.buffer[source[0]:source[1]] if type(source) is tuple else source
        found = decoding.typed_span(data)
        if found is not None:
            record = found[1]
            if resource:
                attributes = dict(resource)
                attributes.update(record["attributes"])
                record["attributes"] = attributes
            return record
        try:
            return decode_span(decoding.loads(data), resource)[1]
        except SpanProblem as err:
            place = where if at is None else f"{where} resourceSpans[{at[0]}].scopeSpans[{at[1]}].spans[{at[2]}]"
            self._problems.append((ordinal, place, str(err)))
            return None

    def problems(self) -> list[tuple[str, str]]:
        """The file's problems once `runs` is done: the documents' and spans' in document order, then the traces'."""
        return [(where, message) for _, where, message in sorted(self._problems)] + self._trace_problems

    def notes(self) -> list[str]:
        return [f"{what} on {n} span(s): read as nothing" for what, n in sorted(self.unread.items())]


def _plain_text(raw: Any) -> str | None:
    """A Raw JSON value that is a non-empty string, decoded; else None."""
    try:
        value = decoding.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) and value else None


def _trace_id(raw: Any) -> str | None:
    """The `traceId` of an undecoded span when it is a non-empty string; None when the careful reading must say why
    not (the span is not an object, has no trace id, or one of another type)."""
    try:
        found = decoding.trace_id_decoder.decode(raw)
    except decoding.DecodeFailure:
        return None
    return _plain_text(found.traceId) if found.traceId is not decoding.UNSET else None
