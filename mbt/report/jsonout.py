"""The JSON coverage report, written without a pydantic object per element row: byte for byte what
`CoverageReport.model_dump_json` writes.

pydantic writes everything but the rows (as JSON fragments); msgspec writes the rows as they are (ElementCoverage is
a msgspec Struct, Element a dataclass), a batch at a time, with each distinct location and span written once by
pydantic and copied in verbatim (`msgspec.Raw`). The compact report is made in pieces while it is written
(mbt.files.Chunks): for a model of hundreds of thousands of elements it would otherwise be the largest thing in
memory. The indented one is made whole and indented as pydantic does (two spaces, `": "`, empty lists and objects
as `[]` and `{}`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
from pydantic import BaseModel

from mbt.files import Chunks
from mbt.measure.coverage import CoverageReport, ModelCoverage

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
# Where a list goes in its document's text: a raw NUL byte, which JSON text never holds (in strings it is \u0000).
_HERE = msgspec.Raw(b"\x00")
ROWS_PER_PIECE = 10_000


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


def _pieces(report: CoverageReport, newline: bool = False) -> Iterator[bytes]:
    encode = _encoder().encode
    head, tail = _around(encode, report.model_dump_json(exclude={"models"}), "models", CoverageReport)
    yield head + b"["
    for n, m in enumerate(report.models):
        model_head, model_tail = _around(encode, m.model_dump_json(exclude={"elements"}), "elements", ModelCoverage)
        yield (b"," if n else b"") + model_head + b"["
        rows = m.elements
        for start in range(0, len(rows), ROWS_PER_PIECE):
            yield (b"," if start else b"") + encode(rows[start:start + ROWS_PER_PIECE])[1:-1]
        yield b"]" + model_tail
    yield b"]" + tail + (b"\n" if newline else b"")


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
