"""Report models for review: source-document coverage (seed 004's three gap kinds) and the traceability matrix."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from mbt.measure.numbers import Numbers
from mbt.model.common import Location

UnitStatus = Literal["covered", "partial", "exercised", "uncovered", "modelled", "not-modelled", "excluded"]


class SourceUnit(BaseModel):
    """One unit of a source document: a heading, sentence, list item, table row, or a YAML leaf."""

    id: str  # source name + first line (+ `#n` when several units start on one line): stable while the text stays
    kind: Literal["heading", "sentence", "list-item", "table-row", "code", "yaml-leaf"]
    line_start: int
    line_end: int
    col_start: int = 1  # 1-based column of the first character on line_start
    col_end: int = 1  # 1-based column just past the last character on line_end
    text: str
    key: str | None = None  # a YAML leaf's path, e.g. must_not[0]
    status: UnitStatus
    cited_by: list[str] = []  # coverage elements citing the unit ("model/element-id")
    cited_by_parts: list[str] = []  # other model parts citing it (variables, events, bindings, the model)
    exclusion: str | None = None  # why it is excluded, from the gate file


class DocumentCoverage(BaseModel):
    source: str  # the name a model declares it as (`source policy "..."`)
    path: str
    format: Literal["markdown", "text", "yaml"]
    error: str | None = None  # the document could not be read; no units
    lines: list[str] = []  # the text, for the HTML report's document view
    units: list[SourceUnit] = []
    modelled: Numbers = Numbers()  # units some model part cites / units not excluded
    tested: Numbers = Numbers()  # units a verified element cites / units not excluded


class SilentPart(BaseModel):
    """A model part marked `unspecified`: the document is silent and the modeller assumed it."""

    model: str
    part: str
    location: Location
    reason: str | None = None
    span: str | None = None
    elements: list[str] = []


class UnusedExclusion(BaseModel):
    source: str
    line: int  # in the gate file
    message: str


class SourceCoverage(BaseModel):
    """The three gaps: units no model part cites (not modelled), parts marked unspecified (the document is silent),
    and elements no golden verifies (no golden covers it: the models' uncovered lists)."""

    documents: list[DocumentCoverage] = []
    silent: list[SilentPart] = []
    unused_exclusions: list[UnusedExclusion] = []


class TraceRow(BaseModel):
    """One line of the traceability matrix: source span -> element -> covering goldens -> expected result."""

    model: str
    element: str
    criterion: str
    label: str
    status: str  # stated | inferred | unspecified
    severity: str
    source: str | None = None  # declared source name
    document: str | None = None  # its path
    line_start: int | None = None  # the span resolved in the document (the quote's lines when it is found)
    line_end: int | None = None
    column_start: int | None = None  # a span with columns (a minified file): the characters it cites
    column_end: int | None = None  # included
    quote: str | None = None
    found: bool = True  # False: the quote is not in the document (drift; `mbt check` says more)
    coverage: Literal["verified", "exercised", "uncovered", "infeasible", "waived"]
    tags: list[str] = []  # the element's requirement tags
    verified_by: list[str] = []
    exercised_by: list[str] = []
    expected: str = ""
