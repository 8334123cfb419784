"""The toy kind's stage modules in one file: typed model, transformer rules, resolver, elements, replayer, checks."""

from __future__ import annotations

from dataclasses import dataclass

from lark import v_args

from mbt.analysis.findings import Finding
from mbt.elements.base import Element, element_from
from mbt.errors import problem_at
from mbt.goldens.cases import GoldenCase
from mbt.goldens.results import CaseRun, Contradiction
from mbt.kind import Criterion
from mbt.model.common import Annotated, ModelBase
from mbt.parsing.common import unquote

CRITERIA = (Criterion("item"),)


class Item(Annotated):
    name: str
    text: str = ""


class ChecklistModel(ModelBase):
    kind: str = "checklist"
    items: list[Item] = []


@dataclass
class RawChecklist:
    name: str
    loc: object
    items: list[Item]


class ChecklistRules:
    @v_args(meta=True)
    def checklist_model(self, meta, children):
        name, *items = children
        return RawChecklist(str(name), self.loc(name), list(items))

    @v_args(meta=True)
    def checklist_item(self, meta, children):
        name, text = children
        return Item(name=str(name), text=unquote(text) if text is not None else "", loc=self.loc(name))


def resolve_checklist(raw: RawChecklist, path: str, text: str, sources: dict):
    problems, seen = [], set()
    for item in raw.items:
        if item.name in seen:
            problems.append(problem_at(path, text, item.loc.line, item.loc.column, f"item `{item.name}` twice"))
        seen.add(item.name)
    return ChecklistModel(name=raw.name, file=path, loc=raw.loc, sources=sources, items=raw.items), problems


def enumerate_checklist(model: ChecklistModel) -> list[Element]:
    return [element_from(model.name, "checklist", "item", f"item:{i.name}", i.text or i.name, i) for i in model.items]


class ChecklistReplayer:
    """A case `{checklist: NAME, ticked: [ITEM...], untouched: [ITEM...]}`: ticked items are verified, items it
    names as untouched only exercised; naming an item the checklist lacks contradicts it."""

    def __init__(self, model: ChecklistModel, elements: list[Element]):
        self.model = model
        self.index = {e.id: i for i, e in enumerate(elements)}

    def replay(self, case: GoldenCase) -> CaseRun:
        shape = checklist_case(case)
        run = CaseRun(case)  # the one result type every replayer returns
        if shape is None:
            return run
        for key, into in (("ticked", run.verified), ("untouched", run.exercised)):
            for name in getattr(shape, key):
                i = self.index.get(f"item:{name}")
                if i is None:
                    run.contradictions.append(Contradiction(
                        case=case.id, where=case.where, model=self.model.name, turn=None, path=f"{key}.{name}",
                        expected=name, actual=None, message=f"the checklist has no item `{name}`"))
                    continue
                into.add(i)
                run.exercised.add(i)
        if run.contradictions:
            run.verified.clear()
        return run


@dataclass(frozen=True)
class ChecklistCase:
    """A case of the kind, typed: `{checklist: NAME, ticked: [ITEM...], untouched: [ITEM...]}`."""

    checklist: str
    ticked: tuple[str, ...] = ()
    untouched: tuple[str, ...] = ()


def checklist_case(case: GoldenCase) -> ChecklistCase | None:
    """The kind's case shape (KindSupport.case_shape): the case typed, None when it names no checklist."""
    extra = case.model_extra or {}
    if "checklist" not in extra:
        return None
    if not isinstance(extra["checklist"], str):
        raise ValueError("`checklist` names a checklist (text)")
    lists = {}
    for key in ("ticked", "untouched"):
        value = extra.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"`{key}` is a list of item names")
        lists[key] = tuple(value)
    return ChecklistCase(extra["checklist"], **lists)


def accepts(model: ChecklistModel, case: GoldenCase) -> bool:
    shape = checklist_case(case)
    return shape is not None and shape.checklist == model.name


def check_checklist(model: ChecklistModel, options: object = None) -> list[Finding]:
    return [Finding(code="CHK001", name="empty-item", severity="warning", location=i.loc,
                    message=f"item `{i.name}` says nothing") for i in model.items if not i.text]
