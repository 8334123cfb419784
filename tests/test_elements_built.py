"""Enumerators build elements without validating them again (mbt.elements.base.built): validation of the same
values must give the same element, field by field and type by type, for every element of every shipped example, of
a model with severities, tags and infeasible elements, and of the benchmark's generated model."""

from __future__ import annotations

import pickle
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from mbt import api
from mbt.elements.base import Element, built
from mbt.kind import elements_of
from mbt.model.common import Location, Severity, Span, Status

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "bench"))
import synth  # noqa: E402

EXAMPLES = sorted(str(p) for p in (ROOT / "models").iterdir() if p.suffix in (".fsm", ".inv", ".dt", ".policy"))
GROUPS = [[p] if not p.endswith(".inv") else [p[:-4] + ".fsm", p] for p in EXAMPLES]

SEVERE = """\
source doc "doc.md"
fsm severe {
  var n: int[0..2] = 0
  state a initial @doc:1 "start"
  state b severity critical
  state c final
  state lost
  event go
  event stop
  a -> b on go [n == 0] / n := n + 1   @doc:2 "go"   severity high
  a -> a on go [n > 0]                 inferred
  b -> c on stop                       severity low
  b -> a on go
  forbid a on stop -> c                severity critical
}
"""


def assert_validated_alike(elements: list[Element]) -> None:
    assert elements
    for element in elements:
        values = {f.name: getattr(element, f.name) for f in fields(Element)}
        validated = Element(**values)
        assert validated == element
        for name, value in values.items():
            assert type(getattr(validated, name)) is type(value), (element.id, name)


@pytest.mark.parametrize("paths", GROUPS, ids=lambda paths: Path(paths[-1]).name)
def test_every_element_of_the_examples_is_what_validation_makes(paths):
    _, models = api.load_models(paths)
    assert_validated_alike([e for model in models for e in elements_of(model)])


def test_severities_status_and_infeasible_elements_are_what_validation_makes(tmp_path):
    (tmp_path / "doc.md").write_text("start\ngo\n")
    (tmp_path / "severe.fsm").write_text(SEVERE)
    _, models = api.load_models([str(tmp_path / "severe.fsm")])
    elements = elements_of(models[0])
    assert {e.severity for e in elements} >= {Severity.critical, Severity.high, Severity.low, Severity.medium}
    assert any(not e.feasible for e in elements)  # state `lost` cannot be reached
    assert any(e.status is Status.inferred for e in elements)
    assert_validated_alike(elements)


def test_the_benchmark_model_is_what_validation_makes(tmp_path):
    model_path, _, _ = synth.write_bench(tmp_path, 40, 200, 1, seed=5)
    _, models = api.load_models([str(model_path)])
    elements = elements_of(models[0])
    assert any(e.criterion == "transition-pair" for e in elements)
    assert_validated_alike(elements)


def test_tags_are_the_callers_list_and_default_to_a_fresh_one():
    where = Location(file="m.fsm", line=1, column=1)
    tags = ["REQ-1"]
    tagged = built("state:a", "m", "fsm", "state", "state a", where, None, Status.inferred, Severity.medium, 1.0, tags)
    assert tagged.tags is tags and tagged.feasible and tagged.reason is None
    first = built("state:a", "m", "fsm", "state", "state a", where, None, Status.inferred, Severity.medium, 1.0)
    second = built("state:b", "m", "fsm", "state", "state b", where, None, Status.inferred, Severity.medium, 1.0)
    first.tags.append("REQ-2")
    assert second.tags == []


def test_a_pickled_element_loads_with_every_field_as_it_was():
    # The compiled-model cache pickles elements and rebuilds them without validation (Element.__reduce__): every
    # field, given a value other than its default, comes back equal and of the same type.
    where = Location(file="m.fsm", line=3, column=7)
    span = Span(source="doc", line_start=1, line_end=2, loc=where)
    element = Element(id="guard:a.go->b", model="m", kind="fsm", criterion="guard", label="guard of a -> b",
                      location=where, span=span, status=Status.stated, severity=Severity.critical, weight=8.0,
                      feasible=False, reason="no run reaches a", tags=["REQ-1", "REQ-2"])
    loaded = pickle.loads(pickle.dumps([element, element]))
    assert loaded[0] == element and loaded[0] is loaded[1]
    for f in fields(Element):
        assert getattr(loaded[0], f.name) == getattr(element, f.name)
        assert type(getattr(loaded[0], f.name)) is type(getattr(element, f.name)), f.name
    defaults = {f.name for f in fields(Element) if getattr(element, f.name) == f.default}
    assert not defaults  # every field differs from its default, so a field set from its neighbour's value fails
