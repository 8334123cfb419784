"""JSON for the run readers at the speed of msgspec, giving exactly what Python's json gives.

msgspec decodes in C, into plain values or straight into typed structs (OTLP's spans below), several times faster
than `json.loads` builds dictionaries. It refuses everything json refuses, and also a few things json takes (NaN and
Infinity, numbers past a double, lone surrogate escapes, integers near Python's digit limit): those values are
decoded by json, as before, so a reader sees the same values either way. A span whose shape the typed structs do not
describe exactly (an unusual value kind, an unknown key, a wrong type) is left to the readers' own checks
(mbt.runs.otlp), which decide as they always did; tests/test_runs_decoding.py compares both ways on hostile input.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType

# What msgspec raises where json may still decide: not JSON as msgspec reads it, nested past the recursion limit, a
# text holding a lone surrogate (no UTF-8 for msgspec to read).
DecodeFailure = (msgspec.DecodeError, RecursionError, UnicodeEncodeError)
_decode = msgspec.json.Decoder().decode


def loads(data: str | bytes | memoryview) -> Any:
    """`json.loads(data)`: its value, or its error (bytes are UTF-8 here)."""
    try:
        return _decode(data)
    except DecodeFailure:
        return json.loads(data if isinstance(data, str) else bytes(data).decode("utf-8"))


# ---------------------------------------------------------------- what json reads differently from msgspec's skipping

# msgspec checks every value it skips (a struct's unknown keys, a Raw's content) except two things: the number of
# digits of an integer, and the size of a float. Past 4,300 digits json refuses an integer (Python's limit) while
# msgspec skips it; so a document holding such a run of digits is read by json, which decides.
_DIGITS_AS_ZERO = bytes(ord("0") if chr(b).isdigit() and b < 128 else ord("x") for b in range(256))
LONG_DIGITS = b"0" * 4301


def has_long_digits(data: bytes | memoryview, chunk: int = 1 << 20) -> bool:
    """Whether the text holds a run of more than 4,300 ASCII digits (anywhere: in a string too, which is harmless),
    looked for a chunk at a time (chunks overlap by a run's length)."""
    return bool(long_digit_runs(data, chunk))


def long_digit_runs(data: bytes | memoryview, chunk: int = 1 << 20) -> list[int]:
    """Where runs of more than 4,300 ASCII digits start (about: within a run's length), in order."""
    view = memoryview(data)
    size, overlap = len(view), len(LONG_DIGITS)
    found: list[int] = []
    if size <= overlap:
        return found
    for start in range(0, size, chunk):
        first = max(start - overlap, 0)
        digits = view[first:start + chunk].tobytes().translate(_DIGITS_AS_ZERO)
        at = digits.find(LONG_DIGITS)
        while at != -1:
            found.append(first + at)
            after = digits.find(b"x", at)  # past this run
            at = digits.find(LONG_DIGITS, after) if after != -1 else -1
    return found


def is_utf8(data: bytes | memoryview, chunk: int = 1 << 20) -> bool:
    """Whether the bytes are UTF-8 (as Python's codec decides: no lone surrogates)."""
    return encoding_of(data, chunk) is not None


def encoding_of(data: bytes | memoryview, chunk: int = 1 << 20) -> str | None:
    """"ascii", "utf-8", or None when the bytes are not UTF-8 (as Python's codec decides: no lone surrogates); checked
    a chunk at a time so that a large file is never held as text too, an ASCII chunk (most JSON) only looked at."""
    if isinstance(data, bytes) and data.isascii():
        return "ascii"
    import codecs

    view = memoryview(data)
    decoder = codecs.getincrementaldecoder("utf-8")()
    ascii_only = True
    try:
        for start in range(0, len(view), chunk):
            part = view[start:start + chunk]
            if decoder.getstate()[0] or not part.tobytes().isascii():  # a sequence may start in the last chunk
                ascii_only = False
                decoder.decode(part)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return None
    return "ascii" if ascii_only else "utf-8"


# ---------------------------------------------------------------- nesting (mbt.runs.genai.decode_json)

_KEEP_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
for _open in b"[{":
    _STEP[_open] = 1
for _close in b"]}":
    _STEP[_close] = -1


def nesting(text: str) -> int:
    """The deepest the text's brackets nest, counting every `[`, `{`, `]` and `}` (in strings too): a bound on the
    JSON value's depth computed in C, whatever the text's size."""
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _KEEP_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


# ---------------------------------------------------------------- OTLP/JSON, typed

class Head(Struct):
    """What a JSON Lines line or a document is, without decoding it: an OTLP document, a span, or something else."""

    resourceSpans: Raw | UnsetType = UNSET  # noqa: N815 - OTLP's names
    traceId: Raw | UnsetType = UNSET  # noqa: N815
    spanId: Raw | UnsetType = UNSET  # noqa: N815


class ScopeSpans(Struct):
    spans: list[Raw] | None = None


class ResourceSpans(Struct):
    resource: Raw | UnsetType = UNSET
    scopeSpans: list[ScopeSpans] | None = None  # noqa: N815


class Envelope(Struct):
    """An OTLP/JSON document with its spans left undecoded (each is decoded with its trace)."""

    resourceSpans: list[ResourceSpans] | None = None  # noqa: N815


class TraceIdOnly(Struct):
    traceId: Raw | UnsetType = UNSET  # noqa: N815


class ArrayValue(Struct, forbid_unknown_fields=True):
    values: list[AnyValue] = msgspec.field(default_factory=list)


class AnyValue(Struct, forbid_unknown_fields=True):
    stringValue: str | UnsetType = UNSET  # noqa: N815
    boolValue: bool | UnsetType = UNSET  # noqa: N815
    intValue: int | str | UnsetType = UNSET  # noqa: N815
    doubleValue: float | UnsetType = UNSET  # noqa: N815
    arrayValue: ArrayValue | UnsetType = UNSET  # noqa: N815


class KeyValue(Struct, forbid_unknown_fields=True):
    key: str
    value: AnyValue


class Status(Struct, forbid_unknown_fields=True):
    code: int | str = 0
    message: str = ""


class Event(Struct, forbid_unknown_fields=True):
    timeUnixNano: int | str = 0  # noqa: N815
    name: str = ""
    attributes: list[KeyValue] | None = None
    droppedAttributesCount: int = 0  # noqa: N815


class Span(Struct, forbid_unknown_fields=True):
    """A span in the shape exporters write; any other shape is read by mbt.runs.otlp's checks."""

    traceId: str  # noqa: N815
    spanId: str | UnsetType = UNSET  # noqa: N815
    parentSpanId: Raw | UnsetType = UNSET  # noqa: N815 - not read
    name: str = ""
    kind: int = 0
    startTimeUnixNano: int | str = 0  # noqa: N815
    endTimeUnixNano: int | str = 0  # noqa: N815
    attributes: list[KeyValue] | None = None
    status: Status | None = None
    traceState: str = ""  # noqa: N815
    flags: int = 0
    droppedAttributesCount: int = 0  # noqa: N815
    events: list[Event] = msgspec.field(default_factory=list)
    droppedEventsCount: int = 0  # noqa: N815


head_decoder = msgspec.json.Decoder(Head)
envelope_decoder = msgspec.json.Decoder(Envelope)
trace_id_decoder = msgspec.json.Decoder(TraceIdOnly)
span_decoder = msgspec.json.Decoder(Span)

_UINT64 = 2 ** 64
_INT64 = 2 ** 63
_MAX_INT_DIGITS = 20  # mbt.runs.otlp's bound: an OTLP int is 64 bits
_INTEGER = re.compile(r"-?[0-9]{1,19}")  # mbt.runs.otlp's: an int64 in a string
_ERROR_CODES = (2, "STATUS_CODE_ERROR")
_CODES = (0, 1, 2, "STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR")


def _nanos(value: int | str) -> int | None:
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit() and len(value) <= _MAX_INT_DIGITS):
            return None
        value = int(value)
    return value if 0 <= value < _UINT64 else None


class _Odd(Exception):
    """A value the typed reading does not take: mbt.runs.otlp's checks read the span."""


def _value(v: AnyValue) -> Any:
    """The attribute value as mbt.runs.otlp's direct reading gives it; _Odd where it would ask protobuf."""
    found: Any = UNSET
    kinds = 0
    if v.stringValue is not UNSET:
        found, kinds = v.stringValue, 1
    if v.boolValue is not UNSET:
        found, kinds = v.boolValue, kinds + 1
    if v.intValue is not UNSET:
        n = v.intValue
        if isinstance(n, str):
            if not _INTEGER.fullmatch(n):
                raise _Odd
            n = int(n)
        if not -_INT64 <= n < _INT64:
            raise _Odd
        found, kinds = n, kinds + 1
    if v.doubleValue is not UNSET:
        found, kinds = float(v.doubleValue), kinds + 1
    if v.arrayValue is not UNSET:
        found, kinds = [_value(item) for item in v.arrayValue.values], kinds + 1
    if kinds != 1:
        raise _Odd
    return found


def _attributes(given: list[KeyValue] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in given or ():
        v = kv.value
        text = v.stringValue
        # nearly every attribute is a string: one test for it, the others only when it is not
        if text is not UNSET and v.boolValue is UNSET and v.intValue is UNSET and v.doubleValue is UNSET \
                and v.arrayValue is UNSET:
            out[kv.key] = text
        else:
            out[kv.key] = _value(v)
    return out


def typed_span(data: bytes | memoryview | Raw) -> tuple[str, dict[str, Any]] | None:
    """(trace id, the span record mbt.runs.otlp.decode_span makes, before the resource's attributes), or None when
    the span is not in the common shape or not valid JSON as msgspec reads it (the caller reads it the careful way)."""
    try:
        s = span_decoder.decode(data)
    except DecodeFailure:
        return None
    if not s.traceId:
        return None
    start, end = _nanos(s.startTimeUnixNano), _nanos(s.endTimeUnixNano)
    if start is None or end is None:
        return None
    status = s.status
    if status is not None and status.code not in _CODES:
        return None
    try:
        attributes = _attributes(s.attributes)
        events = []
        for e in s.events:
            when = _nanos(e.timeUnixNano)
            if when is None:
                return None
            events.append({"name": e.name, "time": when, "attributes": _attributes(e.attributes)})
    except _Odd:
        return None
    return s.traceId, {"name": s.name, "start": start, "end": end, "attributes": attributes, "events": events,
                       "failed": status is not None and status.code in _ERROR_CODES,
                       "status": status.message if status is not None else "",
                       "span_id": s.spanId if s.spanId is not UNSET else ""}
