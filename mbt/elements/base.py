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
# The slots' descriptors, one name each: _rebuilt calls them one by one, not in a loop over pairs (a loaded cache
# entry of a large model rebuilds hundreds of thousands of elements; the loop took a third longer).
(_set_id, _set_model, _set_kind, _set_criterion, _set_label, _set_location, _set_span, _set_status, _set_severity,
 _set_weight, _set_feasible, _set_reason, _set_tags) = (Element.__dict__[name].__set__ for name in _FIELDS)
if _FIELDS != ("id", "model", "kind", "criterion", "label", "location", "span", "status", "severity", "weight",
               "feasible", "reason", "tags"):
    raise ImportError("Element's fields changed: update _rebuilt and its setters in mbt/elements/base.py")
_new = object.__new__


def _rebuilt(id_, model, kind, criterion, label, location, span, status, severity, weight, feasible, reason,
             tags) -> Element:
    """An Element of these values (in field order) without validation: how a pickled one is loaded."""
    element = _new(Element)
    _set_id(element, id_)
    _set_model(element, model)
    _set_kind(element, kind)
    _set_criterion(element, criterion)
    _set_label(element, label)
    _set_location(element, location)
    _set_span(element, span)
    _set_status(element, status)
    _set_severity(element, severity)
    _set_weight(element, weight)
    _set_feasible(element, feasible)
    _set_reason(element, reason)
    _set_tags(element, tags)
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
