"""Parts shared by every model kind: locations, source spans, status, severity and the model base classes."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, PrivateAttr


class Location(BaseModel):
    """Where something is written in a model file (1-based line and column)."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class Status(str, Enum):
    """How an element relates to its source document (seed 004's three gap kinds start here)."""

    stated = "stated"  # the document says it
    inferred = "inferred"  # a reasonable reading of the document
    unspecified = "unspecified"  # the document is silent; the modeller assumed it


class Severity(str, Enum):
    low = "low"
    medium = "medium"
    high = "high"
    critical = "critical"


# Weight of an element in risk-weighted coverage, by severity.
SEVERITY_WEIGHT: dict[Severity, float] = {
    Severity.low: 1.0,
    Severity.medium: 2.0,
    Severity.high: 3.0,
    Severity.critical: 5.0,
}


class SourceDecl(BaseModel):
    """`source NAME "path"`: a document the model cites; path relative to the model file."""

    name: str
    path: str
    loc: Location


class Span(BaseModel):
    """A citation of a source document: a line range (optionally from a column to a column), an exact quote, or
    both. Columns count characters from 1; the end column is included; a missing start column is 1, a missing end
    column the end of its line."""

    source: str
    line_start: int | None = None
    line_end: int | None = None
    quote: str | None = None
    loc: Location
    column_start: int | None = None
    column_end: int | None = None

    @property
    def has_columns(self) -> bool:
        return self.line_start is not None and (self.column_start is not None or self.column_end is not None)

    def range_text(self) -> str:
        """`12`, `12-14`, or with columns `3:5-3:40` (a missing column left out: `3:5-4`)."""
        if self.line_start is None:
            return ""
        end = self.line_end if self.line_end is not None else self.line_start
        if not self.has_columns:
            return f"{self.line_start}" + (f"-{end}" if end != self.line_start else "")
        first = f"{self.line_start}" + (f":{self.column_start}" if self.column_start is not None else "")
        return f"{first}-{end}" + (f":{self.column_end}" if self.column_end is not None else "")

    def describe(self) -> str:
        where = self.source
        if self.line_start is not None:
            where += f":{self.range_text()}"
        if self.quote:
            where += f' "{self.quote}"'
        return where


class Annotated(BaseModel):
    """Annotations any model element may carry."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    loc: Location
    span: Span | None = None
    status: Status = Status.inferred
    status_reason: str | None = None
    severity: Severity | None = None
    explicit_id: str | None = None
    tags: list[str] = []  # `tag "..."`: requirement ids and other labels (GraphWalker's `requirements`)


class ModelBase(Annotated):
    """Base of every typed model; `kind` selects the kind's analysis, elements and replay."""

    kind: str
    name: str
    file: str
    sources: dict[str, SourceDecl] = {}
    title: str | None = None
    contracts: list[str] = []
    _elements: list | None = PrivateAttr(default=None)  # its coverage elements, once enumerated (kinds.elements_of)
