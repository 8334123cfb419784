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
    """A citation of a source document: a line range, an exact quote, or both."""

    source: str
    line_start: int | None = None
    line_end: int | None = None
    quote: str | None = None
    loc: Location

    def describe(self) -> str:
        where = self.source
        if self.line_start is not None:
            where += f":{self.line_start}"
            if self.line_end is not None and self.line_end != self.line_start:
                where += f"-{self.line_end}"
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
