"""Decision-table mutation operators, and equivalence by every elementary region of the inputs.

A table's rules test each input against constants, so the inputs fall into regions (mbt/tables/regions.py) on which
every rule of the original and of the mutant is constant: one value per region of each column, built from the
constants of both tables, decides every input. When the product of the regions is at most MAX_POINTS, the check is
exhaustive and a mutant deciding every point like the original is equivalent; beyond it, a seeded sample is tried.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import random
import zlib
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from mbt.engine.table import TableEvaluator
from mbt.goldens.replay_table import CompiledTable, TableReplayer
from mbt.kind import narrow, support
from mbt.model.table import ColumnType, TableModel, UnaryTest, value_text
from mbt.mutate.mutant import Distinction, Mutant, Operators
from mbt.tables.regions import ColumnPartition, boundary_step, constants_by_column

OPERATORS = {
    "TOC": "rule output changed: one output of a rule becomes another value of its type",
    "TEB": "input entry boundary shifted: a compared value or range bound moves by the column's precision",
    "TRD": "rule dropped",
    "THP": "hit policy changed (UNIQUE <-> FIRST, ANY/PRIORITY -> FIRST, RULE ORDER <-> OUTPUT ORDER)",
}
_HIT = {"UNIQUE": "FIRST", "FIRST": "UNIQUE", "ANY": "FIRST", "PRIORITY": "FIRST", "RULE ORDER": "OUTPUT ORDER",
        "OUTPUT ORDER": "RULE ORDER"}
MAX_POINTS = 20_000


def _copy(model: TableModel, **update) -> TableModel:
    m = model.model_copy(update=update)
    m._cache = {}  # the analysis cache belongs to the original's rules
    return m


def table_mutants(model: TableModel) -> list[Mutant]:
    ops = Operators(OPERATORS)
    constants = constants_by_column(model)
    for i, rule in enumerate(model.rules):
        el = f"rule:{rule.name}"

        def with_rule(new, i=i):
            def build() -> TableModel:
                rules = list(model.rules)
                if new is None:
                    del rules[i]
                    rules = [r.model_copy(update={"index": k}) for k, r in enumerate(rules)]
                else:
                    rules[i] = new
                return _copy(model, rules=rules)
            return build

        for k, column in enumerate(model.outputs):
            other = _other_output(column.type, rule.outputs[k])
            if other is not _NONE:
                outputs = list(rule.outputs)
                outputs[k] = other
                ops.add("TOC", el, rule.loc, f"rule {rule.name}: {column.name} {_text(rule.outputs[k])} -> "
                                             f"{_text(other)}", with_rule(rule.model_copy(update={"outputs": outputs})))
        for k, entry in enumerate(rule.entries):
            input_column = model.inputs[k]
            if not input_column.type.ordered:
                continue
            step = boundary_step(input_column, constants[k])
            for j, test in enumerate(entry.tests):
                for shifted, what in _shifts(test, step):
                    tests = list(entry.tests)
                    tests[j] = shifted
                    entries = list(rule.entries)
                    entries[k] = dataclasses.replace(entry, tests=tuple(tests))
                    ops.add("TEB", el, test.loc or entry.loc or rule.loc,
                            f"rule {rule.name}: {column.name} `{test.text()}` -> `{shifted.text()}` ({what})",
                            with_rule(rule.model_copy(update={"entries": entries})))
        ops.add("TRD", el, rule.loc, f"rule {rule.name} dropped", with_rule(None))
    other_hit = _HIT.get(model.hit)
    if other_hit is not None and not (other_hit == "PRIORITY" and not all(o.type.values for o in model.outputs)):
        ops.add("THP", "table", model.loc, f"hit policy {model.hit} -> {other_hit}",
                lambda: _copy(model, hit=other_hit), name=f"{model.name}:{other_hit}")
    return ops.found


_NONE = object()


def _shifts(test: UnaryTest, step) -> list[tuple[UnaryTest, str]]:
    out = []
    if test.op in ("<", "<=", ">", ">=", "=") and test.value is not None:
        out += [(dataclasses.replace(test, value=test.value - step), f"-{step}"),
                (dataclasses.replace(test, value=test.value + step), f"+{step}")]
    elif test.op == "range":
        for side in ("lo", "hi"):
            bound = getattr(test, side)
            if bound is not None:
                out += [(dataclasses.replace(test, **{side: bound - step}), f"{side} -{step}"),
                        (dataclasses.replace(test, **{side: bound + step}), f"{side} +{step}")]
    return out


def _other_output(ctype: ColumnType, value: Any) -> Any:
    if ctype.values:
        others = [v for v in ctype.values if v != value]
        return others[0] if others else _NONE
    if ctype.kind == "boolean":
        return (not value) if isinstance(value, bool) else True
    if ctype.kind in ("number", "integer") and value is not None:
        return value + (ctype.precision or 1)
    if ctype.kind == "string":
        return "mbt-other" if value != "mbt-other" else "mbt-other-2"
    return _NONE


def _text(value: Any) -> str:
    return value_text(value)


def mutant_replayer(base: TableReplayer, mutant: Mutant) -> TableReplayer:
    """The mutant's replayer: the table kind's, over the mutant's own elements."""
    model = narrow(mutant.model, TableModel, "table")
    return TableReplayer(CompiledTable(model, support("table").elements(model)))


def distinguish(base: TableReplayer, replayer: TableReplayer, mutant: Mutant) -> Distinction:
    original = base.model
    mutated = narrow(mutant.model, TableModel, "table")
    consts = [a + b for a, b in zip(constants_by_column(original), constants_by_column(mutated))]
    pools = [[r.rep for r in ColumnPartition(c, k).regions] for c, k in zip(original.inputs, consts)]
    total = 1
    for p in pools:
        total *= len(p)
    exhaustive = total <= MAX_POINTS
    points: Iterable[tuple[Any, ...]]
    if exhaustive:
        points = itertools.product(*pools)
    else:
        rng = random.Random(zlib.crc32(mutant.id.encode()))
        points = (tuple(rng.choice(p) for p in pools) for _ in range(MAX_POINTS))
    ours, theirs = TableEvaluator(original), TableEvaluator(mutated)
    tried = 0
    for values in points:
        tried += 1
        a, b = ours.decide(values), theirs.decide(values)
        if a.error == b.error and a.result == b.result:
            continue
        inputs = {c.name: _plain(v) for c, v in zip(original.inputs, values)}
        witness = None
        if a.error is None:
            witness = {"id": f"kill:{original.name}:{mutant.id}", "table": original.name, "inputs": inputs,
                       "expect": _plain(a.result)}
        return Distinction(False, f"differs at {_shown(inputs)}: {a.describe(original.rules)} vs "
                                  f"{b.describe(mutated.rules)}", witness)
    if exhaustive:
        return Distinction(True, f"every one of the {tried} elementary input regions gets the same decision")
    return Distinction(False, f"no difference on {tried} sampled inputs of {total} regions (not proven equivalent)",
                       exhaustive=False)


def _shown(inputs: dict) -> str:
    return ", ".join(f"{k} = {v!r}" for k, v in inputs.items())


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return value
