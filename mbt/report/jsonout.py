"""The JSON coverage report, written without a pydantic object per element row: byte for byte what
`CoverageReport.model_dump_json` writes.

pydantic writes everything but the rows (as JSON fragments); msgspec writes the rows as they are (ElementCoverage is
a msgspec Struct, Element a dataclass) straight into the one output buffer, with each distinct location and span
written once by pydantic and copied in verbatim (`msgspec.Raw`), and indents the whole when asked, as pydantic does
(two spaces, `": "`, empty lists and objects as `[]` and `{}`). No copy of the rows' text is held beside the output:
for a model of hundreds of thousands of elements the report is the largest thing in memory.
"""

from __future__ import annotations

from typing import Any

import msgspec
from pydantic import BaseModel

from mbt.measure.coverage import CoverageReport, ModelCoverage

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])


def coverage_json(report: CoverageReport, indent: int | None = None) -> str:
    """The report as JSON, compact or indented by `indent` spaces (pydantic's two layouts), ending without a newline."""
    return coverage_json_bytes(report, indent, newline=False).decode("utf-8")


def coverage_json_bytes(report: CoverageReport, indent: int | None = None, newline: bool = True) -> bytearray:
    """`coverage_json` as UTF-8, ending with a newline unless `newline` is False (what `--format json` writes)."""
    fields = _FIELDS.decode(report.model_dump_json(exclude={"models"}))
    document = _placed(fields, "models", [_model(m) for m in report.models], CoverageReport)
    written: dict[int, tuple[BaseModel, msgspec.Raw]] = {}  # id -> (the part, its JSON): shared parts written once

    def pydantic_part(part: Any) -> msgspec.Raw:
        if not isinstance(part, BaseModel):
            raise TypeError(f"a coverage report holds no {type(part).__name__}")
        found = written.get(id(part))
        if found is None:
            found = written[id(part)] = (part, msgspec.Raw(part.model_dump_json()))  # keeps `part` alive: ids stay unique
        return found[1]

    buffer = bytearray()
    msgspec.json.Encoder(enc_hook=pydantic_part).encode_into(document, buffer)
    if indent is not None:
        buffer = bytearray(msgspec.json.format(buffer, indent=indent))
    if newline:
        buffer += b"\n"
    return buffer  # not copied into a bytes object: written as it is


def _model(m: ModelCoverage) -> dict:
    fields = _FIELDS.decode(m.model_dump_json(exclude={"elements"}))
    return _placed(fields, "elements", m.elements, ModelCoverage)


def _placed(fields: dict, name: str, value: object, model: type) -> dict:
    """The fields pydantic wrote with `name` put back where pydantic writes it: declaration order, computed
    fields after."""
    order = [n for n in model.model_fields if n == name or n in fields] + [n for n in fields if n not in model.model_fields]
    return {n: value if n == name else fields[n] for n in order}
