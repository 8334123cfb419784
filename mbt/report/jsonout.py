"""The JSON coverage report (schema 3.2): the report's parts as pydantic writes them, each element's row an array.

A large model has hundreds of thousands of elements, and a row per element is most of the report. So a row is a
JSON array of the element's values in the order of the report's `element_columns` (ELEMENT_COLUMNS): its id, label
and location first, then the goldens that exercise and verify it (indices into one table, `golden_ids`, written
last: every golden a row names, once, in the order the rows first name them), then the fields that mostly hold
their default; the cells at a row's end that hold what a reader infers (the column's default, the criterion its id
begins with, the model's own file, name and kind) are left out (docs/user-guide.md, "The JSON report"). Object
rows would name each field on every row: the 2,000-state benchmark's report is 35 MB with array rows, 46 MB with
object rows. Everything else is what `model_dump_json` writes.

pydantic writes everything but the rows (as JSON fragments); msgspec writes the rows, a batch at a time, with each
distinct span written once by pydantic and copied in verbatim (`msgspec.Raw`). The compact report is made in
pieces while it is written (mbt.files.Chunks): for a large model it would otherwise be the largest thing in memory.
The indented one is made whole and indented as pydantic does (two spaces, `": "`, empty lists and objects as `[]`
and `{}`).
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
_DEFAULT = {name: f.default for name, f in Element.__dataclass_fields__.items()}


class ElementRow(msgspec.Struct, kw_only=True):
    """The cells of an element's row, in order (the published schema's `prefixItems`): the rows themselves are
    written as arrays (`row` in _row_maker), this declares their columns, types and what a left-out cell means."""

    id: str
    label: str
    line: Annotated[int, msgspec.Meta(description="of the element's location")]
    column: Annotated[int, msgspec.Meta(description="of the element's location")]
    # a run with a covering cap keeps the first goldens and counts the rest in the *_more cells
    exercised_by: Annotated[list[int], msgspec.Meta(
        description="the goldens that exercise the element, in case order, as indices into golden_ids; left out: "
                    "[]")] = []
    verified_by: Annotated[list[int], msgspec.Meta(
        description="the goldens that verify the element, in case order, as indices into golden_ids; left out: "
                    "[]")] = []
    exercised_more: Annotated[int, msgspec.Meta(description="goldens exercising it beyond exercised_by; left out: 0")] = 0
    verified_more: Annotated[int, msgspec.Meta(description="goldens verifying it beyond verified_by; left out: 0")] = 0
    severity: Severity = _DEFAULT["severity"]
    weight: float = _DEFAULT["weight"]
    # the element's Span (a pydantic model, which the encoder writes once per distinct span)
    span: Annotated[Any, msgspec.Meta(extra_json_schema={"anyOf": [{"$ref": "#/$defs/Span"}, {"type": "null"}]})] = None
    status: Status = _DEFAULT["status"]
    feasible: bool = _DEFAULT["feasible"]
    reason: str | None = _DEFAULT["reason"]
    tags: list[str] = []
    criterion: Annotated[str, msgspec.Meta(description="left out: the part of `id` before the first `:`")]
    file: Annotated[str, msgspec.Meta(description="the location's file; left out: the model's file")]
    model: Annotated[str, msgspec.Meta(description="left out: the model's name")]
    kind: Annotated[str, msgspec.Meta(description="left out: the model's kind")]


ELEMENT_COLUMNS = ElementRow.__struct_fields__
# A row always holds these first cells; the later ones are left out from the end while they hold what is inferred.
REQUIRED_CELLS = 4


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


def with_coverage_json(document: BaseModel, indent: int | None = None) -> bytes:
    """A report holding a coverage report in its `coverage` field (the runs report) as JSON, that field written as
    `coverage_json` writes a coverage report; UTF-8, the form it is made and written in (a runs report of a million
    runs is hundreds of megabytes: no copy of it as text and back)."""
    coverage = getattr(document, "coverage", None)
    if coverage is None:
        return type(document).__pydantic_serializer__.to_json(document, indent=indent)  # model_dump_json's bytes
    head, tail = _around(_encoder().encode, document.model_dump_json(exclude={"coverage"}), "coverage", type(document))
    text = head + b"".join(_pieces(coverage)) + tail
    return msgspec.json.format(text, indent=indent) if indent is not None else text


def _pieces(report: CoverageReport, newline: bool = False) -> Iterator[bytes]:
    encode = _encoder().encode
    head, tail = _around(encode, report.model_dump_json(exclude={"models"}), "models", CoverageReport,
                         {"element_columns": list(ELEMENT_COLUMNS)})
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


def _row_maker(m: ModelCoverage, numbers: _Numbers) -> Callable[[ElementCoverage], list]:
    number = numbers.__getitem__
    file, model, kind = m.file, m.model, m.kind
    # A criterion a reader infers from the id: the part before the first `:` (None: one with a `:` never is).
    prefixes = {c: None if ":" in c else c + ":" for c in {ec.element.criterion for ec in m.elements}}
    inferred, medium, weight = Status.inferred, Severity.medium, _DEFAULT["weight"]

    def row(ec: ElementCoverage) -> list:
        e = ec.element
        where = e.location
        # How many cells to write: up to the last one that holds something a reader cannot infer (ELEMENT_COLUMNS'
        # order, read from the end; tests/test_json_report.py checks each column's count). Compared by value: an
        # enum and its plain string are the same cell.
        if e.kind != kind:
            count = 19
        elif e.model != model:
            count = 18
        elif where.file != file:
            count = 17
        elif (prefix := prefixes[e.criterion]) is None or not e.id.startswith(prefix):
            count = 16
        elif e.tags:
            count = 15
        elif e.reason is not None:
            count = 14
        elif not e.feasible:
            count = 13
        elif e.status != inferred:
            count = 12
        elif e.span is not None:
            count = 11
        elif e.weight != weight:
            count = 10
        elif e.severity != medium:
            count = 9
        elif ec.verified_more:
            count = 8
        elif ec.exercised_more:
            count = 7
        elif ec.verified_by:
            count = 6
        elif ec.exercised_by:
            count = 5
        else:
            return [e.id, e.label, where.line, where.column]
        cells = [e.id, e.label, where.line, where.column, list(map(number, ec.exercised_by)),
                 list(map(number, ec.verified_by)), ec.exercised_more, ec.verified_more, e.severity, e.weight, e.span,
                 e.status, e.feasible, e.reason, e.tags, e.criterion, where.file, e.model, e.kind]
        return cells if count == 19 else cells[:count]

    return row


def _around(encode: Callable[[object], bytes], written: str, name: str, model: type[BaseModel],
            before: dict | None = None) -> tuple[bytes, bytes]:
    """The text pydantic wrote for a document without its list `name`, cut where that list goes: before, after
    (with the fields of `before` just ahead of it)."""
    head, tail = encode(_placed(_FIELDS.decode(written), name, _HERE, model, before or {})).split(b"\x00")
    return head, tail


def _encoder() -> msgspec.json.Encoder:
    written: dict[int, tuple[BaseModel, msgspec.Raw]] = {}  # id -> (the part, its JSON): shared parts written once

    def pydantic_part(part: object) -> msgspec.Raw:
        if not isinstance(part, BaseModel):
            raise TypeError(f"a coverage report holds no {type(part).__name__}")
        found = written.get(id(part))
        if found is None:
            found = written[id(part)] = (part, msgspec.Raw(part.model_dump_json()))  # keeps `part` alive: ids stay unique
        return found[1]

    return msgspec.json.Encoder(enc_hook=pydantic_part)


def _placed(fields: dict, name: str, value: object, model: type[BaseModel], before: dict) -> dict:
    """The fields pydantic wrote with `name` put back where pydantic writes it (declaration order, computed fields
    after), and the fields of `before` just ahead of it."""
    order = [n for n in model.model_fields if n == name or n in fields] + [n for n in fields if n not in model.model_fields]
    placed: dict = {}
    for n in order:
        if n == name:
            placed.update(before)
            placed[n] = value
        else:
            placed[n] = fields[n]
    return placed
