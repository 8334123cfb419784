"""Decision-table elements per criterion: rule (hit-policy aware), partition, boundary and the opt-in mcdc."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mbt.elements.base import Element, element_from
from mbt.model.common import Annotated
from mbt.model.table import Rule, TableModel, UnaryTest, value_text
from mbt.tables.analysis import analyse
from mbt.tables.regions import DAY, ColumnPartition, Lattice, boundary_step

CRITERIA = ("rule", "partition", "boundary", "mcdc")


def rule_id(rule: Rule) -> str:
    return f"rule:{rule.name}"


def partition_id(column: str, label: str) -> str:
    return f"partition:{column}:{label}"


def boundary_id(column: str, value: Any) -> str:
    return f"boundary:{column}={value_text(value)}"


def mcdc_id(rule: Rule, column: str | None = None) -> str:
    return f"mcdc:{rule.name}" if column is None else f"mcdc:{rule.name}:{column}=false"


@dataclass
class BoundaryPoint:
    value: Any
    rule: Rule
    test: UnaryTest
    side: str  # "inside" | "outside": whether the value satisfies the test it comes from


class _Step:
    """Lattice arithmetic at the boundary step (the declared precision, or the finest decimal the column uses)."""

    def __init__(self, partition: ColumnPartition, step: Any):
        self.lattice = Lattice(partition.ctype)
        if self.lattice.step is None:
            self.lattice.step = step

    def below(self, x):
        return self.lattice.below(x)

    def above(self, x):
        return self.lattice.above(x)

    def on(self, x) -> bool:
        return self.lattice.step == DAY or self.lattice.kind == "integer" or self.lattice.on(x)


def boundary_points(model: TableModel, partitions: list[ColumnPartition]) -> list[dict[Any, BoundaryPoint]]:
    """Per input column, the two-value boundary points of every test (value -> where it first comes from).

    A test cuts the domain at a value; the two points are the last value on one side and the first on the other,
    at the declared precision: `> 100` at 0.01 gives 100 and 100.01, an integer `[18..65]` gives 17, 18, 65, 66.
    Points outside the declared domain are not values a test can use, so they are not elements.
    """
    out: list[dict[Any, BoundaryPoint]] = []
    for k, (column, part) in enumerate(zip(model.inputs, partitions)):
        points: dict[Any, BoundaryPoint] = {}
        out.append(points)
        ctype = column.type
        if not ctype.ordered or ctype.values is not None:
            continue
        constants = [c for r in model.rules for c in r.entries[k].constants()]
        step = _Step(part, boundary_step(column, constants))
        for rule in model.rules:
            for test in rule.entries[k].tests:
                for value, inside in _cut_points(test, step):
                    if value is not None and ctype.in_range(value) and ctype.on_lattice(value) and value not in points:
                        points[value] = BoundaryPoint(value, rule, test, "inside" if inside else "outside")
        out[-1] = dict(sorted(points.items()))
    return out


def _cut_points(test: UnaryTest, step: _Step) -> list[tuple[Any, bool]]:
    def lower_cut(c, satisfied_above: bool):
        # the cut just below c: (largest value < c, smallest value >= c)
        return [(step.below(c), not satisfied_above), (c if step.on(c) else step.above(c), satisfied_above)]

    def upper_cut(c, satisfied_below: bool):
        # the cut just above c: (largest value <= c, smallest value > c)
        return [(c if step.on(c) else step.below(c), satisfied_below), (step.above(c), not satisfied_below)]

    op = test.op
    if op == "<":
        return lower_cut(test.value, False)
    if op == ">=":
        return lower_cut(test.value, True)
    if op == "<=":
        return upper_cut(test.value, True)
    if op == ">":
        return upper_cut(test.value, False)
    if op == "=":
        return lower_cut(test.value, True) + upper_cut(test.value, True)
    if op == "range":
        low = lower_cut(test.lo, True) if test.lo_closed else upper_cut(test.lo, False)
        high = upper_cut(test.hi, True) if test.hi_closed else lower_cut(test.hi, False)
        return low + high
    return []


def enumerate_table(model: TableModel) -> list[Element]:
    """Every element of the table, in a stable order; rules no input can make contribute are infeasible."""
    analysis = analyse(model)
    partition = analysis.partition
    infeasible = analysis.infeasible_rules()
    name, out = model.name, []
    for rule in model.rules:
        e = element_from(name, "table", "rule", rule_id(rule), f"rule {rule.name}: {rule.text()}", rule)
        if rule.index in infeasible:
            e.feasible, e.reason = False, infeasible[rule.index]
        out.append(e)
    for column, part in zip(model.inputs, partition.columns):
        for region in part.regions:
            out.append(element_from(name, "table", "partition", partition_id(column.name, region.label),
                                    f"{column.name}: {_region_words(region)}", column))
    for column, points in zip(model.inputs, boundary_points(model, partition.columns)):
        for value, bp in points.items():
            where = "satisfies" if bp.side == "inside" else "just misses"
            e = element_from(name, "table", "boundary", boundary_id(column.name, value),
                             f"{column.name} = {value_text(value)} ({where} `{bp.test.text()}` of rule {bp.rule.name})",
                             _at(bp.rule, bp.test))
            out.append(e)
    if model.mcdc:
        out.extend(_mcdc(model, analysis))
    return out


def _region_words(region) -> str:
    if region.kind == "other":
        return "any other value"
    if region.kind == "all":
        return "any value"
    return region.label


def _at(rule: Rule, test: UnaryTest) -> Annotated:
    """The rule's annotations, located at the test."""
    if test.loc is None:
        return rule
    return rule.model_copy(update={"loc": test.loc})


def _mcdc(model: TableModel, analysis) -> list[Element]:
    """Unique-cause MC/DC on each rule: it matches (every condition true), and for each condition an input where
    only that condition is false (so that condition alone decides whether the rule matches)."""
    out, p = [], analysis.partition
    for rule in model.rules:
        never = rule.index in analysis.never_matches
        e = element_from(model.name, "table", "mcdc", mcdc_id(rule), f"rule {rule.name} matches: every condition true",
                         rule)
        if never:
            e.feasible, e.reason = False, "the rule never matches"
        out.append(e)
        for k, (column, entry) in enumerate(zip(model.inputs, rule.entries)):
            if entry.is_any:
                continue
            e = element_from(model.name, "table", "mcdc", mcdc_id(rule, column.name),
                             f"rule {rule.name}: only `{column.name}` fails `{entry.text()}`, "
                             "every other condition true",
                             rule)
            if never:
                e.feasible, e.reason = False, "the rule never matches"
            elif p.rule_masks[rule.index][k] == p.columns[k].all_mask:
                e.feasible, e.reason = False, f"`{entry.text()}` holds for every value of `{column.name}`"
            out.append(e)
    return out
