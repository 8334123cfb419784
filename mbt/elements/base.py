"""The Element record shared by every kind: stable id, kind, criterion, source span, status, severity weight."""

from __future__ import annotations

from pydantic import BaseModel, Field
from pydantic.dataclasses import dataclass

from mbt.model.common import SEVERITY_WEIGHT, Annotated, Location, Severity, Span, Status


# A slotted dataclass, not a BaseModel: a large model has hundreds of thousands of elements, and a BaseModel
# instance (a dict and a set of the fields given per instance) costs some 1,600 bytes where this costs 450.
# Validated on construction and serialised by pydantic all the same (in reports, schemas and the cache).
@dataclass(slots=True)
class Element:
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
    # the model part's `tag` annotations (requirement ids); the schema shows the default as a BaseModel's did
    tags: list[str] = Field(default_factory=list, json_schema_extra={"default": []})

    def __reduce__(self):
        # Pickled as its values and rebuilt without validation: the compiled-model cache holds every element, and
        # a checked entry holds what a validated Element wrote.
        return _rebuilt, tuple(getattr(self, name) for name in _FIELDS)


_FIELDS = tuple(Element.__dataclass_fields__)
_SETTERS = tuple(Element.__dict__[name].__set__ for name in _FIELDS)  # the slots' descriptors


def _rebuilt(*values) -> Element:
    element = object.__new__(Element)
    for set_slot, value in zip(_SETTERS, values):
        set_slot(element, value)
    return element


def built(id_: str, model: str, kind: str, criterion: str, label: str, location: Location, span: Span | None,
          status: Status, severity: Severity, weight: float, tags: list[str] | None = None) -> Element:
    """An element of values an enumerator took from a validated model (typed already): built without validating
    them again, which was half of enumerating a large model. tests/test_elements_built.py checks that validation
    gives the same element from the same values, for every element of every shipped example."""
    return _rebuilt(id_, model, kind, criterion, label, location, span, status, severity, weight, True, None,
                    [] if tags is None else tags)


def element_from(model: str, kind: str, criterion: str, id_: str, label: str, source: Annotated,
                 default_severity: Severity = Severity.medium, severity: Severity | None = None) -> Element:
    """An element that takes its location, span, status and severity from the model part it stands for."""
    sev = severity or source.severity or default_severity
    return built(id_, model, kind, criterion, label, source.loc, source.span, source.status, sev,
                 SEVERITY_WEIGHT[sev], list(getattr(source, "tags", ())))


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
