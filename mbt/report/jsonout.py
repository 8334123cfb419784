"""The JSON coverage report (schema 2.0): the report's parts as pydantic writes them, each element's row compact.

A large model has hundreds of thousands of elements, and a row per element is most of the report. So a row is the
element's fields flattened (`line` and `column` of its location beside its `id`), without the fields that hold their
default value, without the model, kind and file it shares with its model, without the criterion its id begins with,
and with the goldens that exercise and verify it as indices into one table, `golden_ids`, written last: every golden
a row names, once, in the order the rows first name them (docs/user-guide.md, "The JSON report"). Everything else is
what `model_dump_json` writes.

pydantic writes everything but the rows (as JSON fragments); msgspec writes the rows (ElementRow), a batch at a
time, with each distinct span written once by pydantic and copied in verbatim (`msgspec.Raw`). The compact report
is made in pieces while it is written (mbt.files.Chunks): for a large model it would otherwise be the largest thing
in memory. The indented one is made whole and indented as pydantic does (two spaces, `": "`, empty lists and
objects as `[]` and `{}`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated, Any

import msgspec
from pydantic import BaseModel

from mbt.elements.base import Element
from mbt.files import Chunks
from mbt.measure.coverage import CoverageReport, ElementCoverage, ModelCoverage
from mbt.model.common import Severity, Status

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
# Where a list goes in its document's text: a raw NUL byte, which JSON text never holds (in strings it is \u0000).
_HERE = msgspec.Raw(b"\x00")
ROWS_PER_PIECE = 10_000
_DEFAULT = {name: f.default for name, f in Element.__dataclass_fields__.items()}  # type: ignore[attr-defined]
# msgspec leaves out a float field that *is* its default object: an equal float (from the cache's pickle) is not it
_DEFAULT_WEIGHT = _DEFAULT["weight"]


# What a row says of its criterion when it leaves it out (docs/user-guide.md, "The JSON report").
CRITERION_RULE = "the element's criterion; left out where it is the part of `id` before the first `:`"


class ElementRow(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One element's row: the element's fields and its coverage; a field holding its default is left out."""

    id: str
    # "" (left out): the id's prefix, which it is for most elements (`transition-pair:...`)
    criterion: Annotated[str, msgspec.Meta(description=CRITERION_RULE)] = ""
    label: str
    line: int  # of the element's location
    column: int
    file: str | None = None  # the location's file, where it is not the model's
    model: str | None = None  # the element's model and kind, where they are not its model's
    kind: str | None = None
    # the element's Span (a pydantic model, which the encoder writes once per distinct span)
    span: Annotated[Any, msgspec.Meta(extra_json_schema={"anyOf": [{"$ref": "#/$defs/Span"}, {"type": "null"}]})] = None
    status: Status = _DEFAULT["status"]
    severity: Severity = _DEFAULT["severity"]
    weight: float = _DEFAULT["weight"]
    feasible: bool = _DEFAULT["feasible"]
    reason: str | None = _DEFAULT["reason"]
    tags: list[str] = []
    # indices into the report's golden_ids, in case order; a run with a covering cap keeps the first ones and
    # counts the rest in the *_more fields
    exercised_by: list[int] = []
    verified_by: list[int] = []
    exercised_more: int = 0
    verified_more: int = 0


def coverage_json(report: CoverageReport, indent: int | None = None) -> str:
    """The report as JSON, compact or indented by `indent` spaces (pydantic's two layouts), ending without a newline."""
    text = b"".join(_pieces(report))
    if indent is not None:
        text = msgspec.json.format(text, indent=indent)
    return text.decode("utf-8")


def coverage_json_body(report: CoverageReport, indent: int | None = None) -> Chunks | bytes:
    """What `--format json` writes: `coverage_json` and a newline, in pieces when compact."""
    if indent is not None:
        return msgspec.json.format(b"".join(_pieces(report)), indent=indent) + b"\n"
    return Chunks(_pieces(report, newline=True))


class _Numbers(dict[str, int]):
    """Golden id -> its index in golden_ids, a new id numbered on first sight (a dict lookup in C per covering
    golden: a large report names millions)."""

    def __missing__(self, golden: str) -> int:
        self[golden] = found = len(self)
        return found


def with_coverage_json(document: BaseModel, indent: int | None = None) -> str:
    """A report holding a coverage report in its `coverage` field (the runs report) as JSON, that field written as
    `coverage_json` writes a coverage report."""
    coverage = getattr(document, "coverage", None)
    if coverage is None:
        return document.model_dump_json(indent=indent)
    head, tail = _around(_encoder().encode, document.model_dump_json(exclude={"coverage"}), "coverage", type(document))
    text = head + b"".join(_pieces(coverage)) + tail
    return (msgspec.json.format(text, indent=indent) if indent is not None else text).decode("utf-8")


def _pieces(report: CoverageReport, newline: bool = False) -> Iterator[bytes]:
    encode = _encoder().encode
    head, tail = _around(encode, report.model_dump_json(exclude={"models"}), "models", CoverageReport)
    numbers = _Numbers()
    yield head + b"["
    for n, m in enumerate(report.models):
        model_head, model_tail = _around(encode, m.model_dump_json(exclude={"elements"}), "elements", ModelCoverage)
        yield (b"," if n else b"") + model_head + b"["
        row = _row_maker(m, numbers)
        rows = m.elements
        for start in range(0, len(rows), ROWS_PER_PIECE):
            yield (b"," if start else b"") + encode([row(ec) for ec in rows[start:start + ROWS_PER_PIECE]])[1:-1]
        yield b"]" + model_tail
    # golden_ids goes after the report's last field: it is complete only once every row is written
    yield b"]" + tail[:-1] + b',"golden_ids":' + encode(list(numbers)) + b"}" + (b"\n" if newline else b"")


def _row_maker(m: ModelCoverage, numbers: _Numbers) -> Callable[[ElementCoverage], ElementRow]:
    number = numbers.__getitem__
    file, model, kind = m.file, m.model, m.kind
    prefixes = {criterion: criterion + ":" for criterion in {ec.element.criterion for ec in m.elements}}

    def row(ec: ElementCoverage) -> ElementRow:
        e = ec.element
        where = e.location
        criterion = e.criterion
        return ElementRow(
            id=e.id, criterion="" if e.id.startswith(prefixes[criterion]) else criterion, label=e.label,
            line=where.line, column=where.column, file=where.file if where.file != file else None,
            model=e.model if e.model != model else None, kind=e.kind if e.kind != kind else None, span=e.span,
            status=e.status, severity=e.severity, weight=_DEFAULT_WEIGHT if e.weight == _DEFAULT_WEIGHT else e.weight,
            feasible=e.feasible, reason=e.reason, tags=e.tags, exercised_by=list(map(number, ec.exercised_by)),
            verified_by=list(map(number, ec.verified_by)), exercised_more=ec.exercised_more,
            verified_more=ec.verified_more)

    return row


def _around(encode, written: str, name: str, model: type) -> tuple[bytes, bytes]:
    """The text pydantic wrote for a document without its list `name`, cut where that list goes: before, after."""
    head, tail = encode(_placed(_FIELDS.decode(written), name, _HERE, model)).split(b"\x00")
    return head, tail


def _encoder() -> msgspec.json.Encoder:
    written: dict[int, tuple[BaseModel, msgspec.Raw]] = {}  # id -> (the part, its JSON): shared parts written once

    def pydantic_part(part: Any) -> msgspec.Raw:
        if not isinstance(part, BaseModel):
            raise TypeError(f"a coverage report holds no {type(part).__name__}")
        found = written.get(id(part))
        if found is None:
            found = written[id(part)] = (part, msgspec.Raw(part.model_dump_json()))  # keeps `part` alive: ids stay unique
        return found[1]

    return msgspec.json.Encoder(enc_hook=pydantic_part)


def _placed(fields: dict, name: str, value: object, model: type) -> dict:
    """The fields pydantic wrote with `name` put back where pydantic writes it: declaration order, computed
    fields after."""
    order = [n for n in model.model_fields if n == name or n in fields] + [n for n in fields if n not in model.model_fields]
    return {n: value if n == name else fields[n] for n in order}
