"""The Element record shared by every kind: stable id, kind, criterion, source span, status, severity weight."""

from __future__ import annotations

from pydantic import BaseModel

from mbt.model.common import SEVERITY_WEIGHT, Annotated, Location, Severity, Span, Status


class Element(BaseModel):
    """One coverage element. `id` is stable across runs and unrelated edits: it is built from names, not positions."""

    id: str
    model: str
    kind: str  # model kind: fsm | table | policy | invariant
    criterion: str  # e.g. state, transition, guard, forbidden, transition-pair
    label: str  # human description
    location: Location
    span: Span | None = None
    status: Status = Status.inferred
    severity: Severity = Severity.medium
    weight: float = SEVERITY_WEIGHT[Severity.medium]
    feasible: bool = True  # False: no run can ever cover it (reason says why); excluded from the denominator
    reason: str | None = None
    tags: list[str] = []  # the model part's `tag` annotations (requirement ids)


def element_from(model: str, kind: str, criterion: str, id_: str, label: str, source: Annotated,
                 default_severity: Severity = Severity.medium, severity: Severity | None = None) -> Element:
    """An element that takes its location, span, status and severity from the model part it stands for."""
    sev = severity or source.severity or default_severity
    return Element(id=id_, model=model, kind=kind, criterion=criterion, label=label, location=source.loc,
                   span=source.span, status=source.status, severity=sev, weight=SEVERITY_WEIGHT[sev],
                   tags=list(getattr(source, "tags", [])))


SCHEMA_VERSION = "1.0"


class ModelElements(BaseModel):
    model: str
    kind: str
    file: str
    criteria: list[str]
    elements: list[Element]


class ElementsReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    models: list[ModelElements]
