"""The `table` kind: DMN decision tables, from mbt/parsing/table_*.py, mbt/tables/, elements/table.py, replay_table."""

from __future__ import annotations

from mbt.analysis.table_checks import check_table
from mbt.elements.table import CRITERIA, enumerate_table
from mbt.generate.decisions import TableWitnesses
from mbt.generate.drive_table import DRIVER, TableReference
from mbt.generate.generation import DecisionGeneration
from mbt.goldens.replay_table import CompiledTable, TableReplayer, accepts
from mbt.kind import Criterion, KindSupport, MutationSupport, View, narrow, register
from mbt.kinds.views import TABLE_SUFFIXES
from mbt.model.table import TableModel
from mbt.mutate import table as mutate_table
from mbt.parsing import grammar_dir
from mbt.parsing.table_resolve import resolve_table
from mbt.parsing.table_rules import RawTable, TableRules
from mbt.render.table import element_table, table_rule_grid

# Boundary values are listed one by one in the text report.
MEANINGS = {"boundary": Criterion("boundary", findings=True)}


def _table(model: object) -> TableModel:
    return narrow(model, TableModel, "table")


def _replayer(base: object) -> TableReplayer:
    return narrow(base, TableReplayer, "table")


register(KindSupport(
    kind="table", keyword="table", grammar=grammar_dir() / "table.lark", rule="table_model", rules=TableRules,
    raw=RawTable, resolve=lambda raw, path, text, sources: resolve_table(narrow(raw, RawTable, "table"), path, text,
                                                                         sources),
    suffixes=(".dt",),
    criteria=tuple(MEANINGS.get(name, Criterion(name)) for name in CRITERIA),
    enumerate=lambda model: enumerate_table(_table(model)),
    replayer=lambda model, elements: TableReplayer(CompiledTable(_table(model), elements)),
    accepts=lambda model, case: accepts(_table(model), case),
    check=lambda model, options: check_table(_table(model)),
    view=View("table", element_table, TABLE_SUFFIXES, grid=lambda model, cov: table_rule_grid(_table(model), cov)),
    generation=lambda model, options, out: DecisionGeneration(_table(model), options, out, TableWitnesses),
    driver=DRIVER, reference=lambda model: TableReference(_table(model)),
    mutation=MutationSupport(
        mutate_table.OPERATORS, lambda model: mutate_table.table_mutants(_table(model)),
        lambda base, mutant: mutate_table.mutant_replayer(_replayer(base), mutant),
        lambda base, replayer, mutant: mutate_table.distinguish(_replayer(base), _replayer(replayer), mutant))))
