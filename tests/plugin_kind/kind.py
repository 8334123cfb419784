"""The toy kind's one registry module: its KindSupport, built from its stage modules."""

from __future__ import annotations

from pathlib import Path

from mbt.kind import KindSupport, register
from mbt.kinds.views import ELEMENT_TABLE
from tests.plugin_kind.stages import (
    CRITERIA,
    ChecklistReplayer,
    ChecklistRules,
    RawChecklist,
    accepts,
    check_checklist,
    enumerate_checklist,
    resolve_checklist,
)

SUPPORT = KindSupport(
    kind="checklist", keyword="checklist", grammar=Path(__file__).with_name("checklist.lark"), rule="checklist_model",
    rules=ChecklistRules, raw=RawChecklist, resolve=resolve_checklist, suffixes=(".chk",),
    criteria=CRITERIA, enumerate=enumerate_checklist, replayer=ChecklistReplayer, accepts=accepts,
    check=check_checklist, view=ELEMENT_TABLE, case_shape=lambda case: "checklist" in (case.model_extra or {}),
    golden_keys=frozenset(("checklist", "ticked", "untouched")))


def install() -> None:
    register(SUPPORT)
