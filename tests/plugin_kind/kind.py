"""The toy kind's one registry module: its KindSupport, built from its stage modules."""

from __future__ import annotations

from pathlib import Path

from mbt.kind import KindSupport, narrow, register
from mbt.kinds.views import ELEMENT_TABLE
from tests.plugin_kind.generation import DRIVER, SUITE_CRITERIA, ChecklistGeneration, ChecklistReference
from tests.plugin_kind.stages import (
    CRITERIA,
    ChecklistModel,
    ChecklistReplayer,
    ChecklistRules,
    RawChecklist,
    accepts,
    check_checklist,
    checklist_case,
    enumerate_checklist,
    resolve_checklist,
)


def _checklist(model: object) -> ChecklistModel:
    return narrow(model, ChecklistModel, "checklist")


SUPPORT = KindSupport(
    kind="checklist", keyword="checklist", grammar=Path(__file__).with_name("checklist.lark"), rule="checklist_model",
    rules=ChecklistRules, raw=RawChecklist,
    resolve=lambda raw, path, text, sources: resolve_checklist(narrow(raw, RawChecklist, "checklist"), path, text,
                                                               sources),
    suffixes=(".chk",), criteria=CRITERIA,
    enumerate=lambda model: enumerate_checklist(_checklist(model)),
    replayer=lambda model, elements: ChecklistReplayer(_checklist(model), elements),
    accepts=lambda model, case: accepts(_checklist(model), case),
    check=lambda model, options: check_checklist(_checklist(model), options), view=ELEMENT_TABLE,
    case_shape=checklist_case,
    golden_keys=frozenset(("checklist", "ticked", "untouched")),
    generation=lambda model, options, out: ChecklistGeneration(_checklist(model), options, out),
    suites=SUITE_CRITERIA, driver=DRIVER, reference=lambda model: ChecklistReference(_checklist(model)))


def install() -> None:
    register(SUPPORT)
