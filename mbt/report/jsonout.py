"""The JSON coverage report, written without a pydantic object per element row: byte for byte what
`CoverageReport.model_dump_json` writes.

pydantic writes everything but the rows (as JSON fragments) and every model's elements in one call; msgspec puts the
fragments, the golden ids and counts together (`msgspec.Raw` copies a fragment verbatim) and indents the whole when
asked, as pydantic does (two spaces, `": "`, empty lists and objects as `[]` and `{}`).
"""

from __future__ import annotations

import msgspec
from pydantic import TypeAdapter

from mbt.elements.base import Element
from mbt.measure.coverage import ROW_FIELDS, CoverageReport, ModelCoverage

_ELEMENTS = TypeAdapter(list[Element])
_FRAGMENTS = msgspec.json.Decoder(list[msgspec.Raw])
_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])


def coverage_json(report: CoverageReport, indent: int | None = None) -> str:
    """The report as JSON, compact or indented by `indent` spaces (pydantic's two layouts), ending without a newline."""
    fields = _FIELDS.decode(report.model_dump_json(exclude={"models"}))
    data = msgspec.json.encode(_placed(fields, "models", [_model(m) for m in report.models], CoverageReport))
    if indent is not None:
        data = msgspec.json.format(data, indent=indent)
    return data.decode("utf-8")


def _model(m: ModelCoverage) -> dict:
    fields = _FIELDS.decode(m.model_dump_json(exclude={"elements"}))
    elements = _FRAGMENTS.decode(_ELEMENTS.dump_json([row.element for row in m.elements]))
    rows = [dict(zip(ROW_FIELDS, (fragment, row.exercised_by, row.verified_by, row.exercised_more, row.verified_more)))
            for fragment, row in zip(elements, m.elements)]
    return _placed(fields, "elements", rows, ModelCoverage)


def _placed(fields: dict, name: str, value: object, model: type) -> dict:
    """The fields pydantic wrote with `name` put back where pydantic writes it: declaration order, computed
    fields after."""
    order = [n for n in model.model_fields if n == name or n in fields] + [n for n in fields if n not in model.model_fields]
    return {n: value if n == name else fields[n] for n in order}
