"""The toy kind's generation (`mbt generate`), built only from the registry's seams: a test and a golden stub per
uncovered item (gaps) or per item (`--all --criterion item`), the driver method its tests call (`has_item`) and the
reference that answers them under `MBT_ADAPTER=reference` (the checklist's own items)."""

from __future__ import annotations

from mbt.elements.base import Element
from mbt.generate.driver import Driver
from mbt.generate.files import OutputFile
from mbt.generate.generation import GenerateOptions, model_files
from mbt.generate.report import GeneratedTest, ModelGeneration
from mbt.generate.skeleton import test_name
from mbt.generate.writers import GeneratedFunction
from mbt.kind import DriverPart
from mbt.measure.coverage import ElementCoverage
from tests.plugin_kind.stages import ChecklistModel, enumerate_checklist

SUITE_CRITERIA = ("item",)


class ChecklistDriver(Driver):
    """The driver's method for checklists (copied into the generated tests' mbt_support.py)."""

    def has_item(self, checklist: str, item: str) -> None:
        """The system's checklist must hold `item`."""
        items = list(self.adapter.items(checklist))
        if item not in items:
            raise AssertionError(f"checklist `{checklist}` has no item `{item}` (the system's: {items!r})")


DRIVER = DriverPart(ChecklistDriver, "    items(checklist)                    # a checklist: the names of its items\n")


class ChecklistReference:
    """The model as the system: its checklist holds the model's items."""

    def __init__(self, model: ChecklistModel):
        self.model = model

    def items(self, checklist: str) -> list[str]:
        if checklist != self.model.name:
            raise ValueError(f"this adapter runs checklist `{self.model.name}`, not `{checklist}`")
        return [i.name for i in self.model.items]


class ChecklistGeneration:
    """A SuiteGenerator for one checklist: each test asks the system for one item; its stub ticks that item."""

    def __init__(self, model: ChecklistModel, options: GenerateOptions, out: str):
        self.model, self.options, self.out = model, options, out
        self.tests: list[GeneratedFunction] = []
        self.stubs: list[dict[str, object]] = []
        self.names: set[str] = set()

    def gaps(self, rows: list[ElementCoverage]) -> ModelGeneration:
        wanted = [r.element for r in rows if not r.verified
                  and (not self.options.criteria or r.element.criterion in self.options.criteria)]
        return self._generation("gaps", wanted)

    def full_suite(self, criterion: str) -> ModelGeneration:
        return self._generation(f"suite-{criterion}", enumerate_checklist(self.model))

    def files(self, mode: str) -> list[OutputFile]:
        return model_files(self.model, self.out, mode, self.tests, self.stubs)

    def _generation(self, mode: str, elements: list[Element]) -> ModelGeneration:
        result = ModelGeneration(model=self.model.name, kind="checklist", file=self.model.file, mode=mode,
                                 uncovered=len(elements))
        for e in elements:
            item = e.id.removeprefix("item:")
            name, case_id = test_name(e.id, self.names), f"gen:{self.model.name}:{e.id}"
            self.stubs.append({"id": case_id, "checklist": self.model.name, "ticked": [item]})
            self.tests.append({"name": name, "doc": f"Covers {e.id}: {e.label}.", "calls": [
                {"method": "has_item", "args": [self.model.name, item], "kwargs": [], "comment": None}]})
            result.tests.append(GeneratedTest(name=name, case_id=case_id, elements=[e.id], steps=1,
                                              events=[f"has_item({self.model.name!r}, {item!r})"]))
        return result
