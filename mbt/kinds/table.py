"""The `table` kind: DMN decision tables, from mbt/parsing/table_*.py, mbt/tables/, elements/table.py, replay_table."""

from __future__ import annotations

from mbt.analysis.table_checks import check_table
from mbt.elements.table import CRITERIA, enumerate_table
from mbt.generate.decisions import TableWitnesses
from mbt.generate.generation import DecisionGeneration
from mbt.goldens.replay_table import CompiledTable, TableReplayer, accepts
from mbt.kind import KindSupport, MutationSupport, View, register
from mbt.kinds.views import TABLE_SUFFIXES
from mbt.mutate import table as mutate_table
from mbt.parsing.grammar import grammar_dir
from mbt.parsing.table_resolve import resolve_table
from mbt.parsing.table_rules import RawTable, TableRules
from mbt.render.table import element_table, table_rule_grid

register(KindSupport(
    kind="table", keyword="table", grammar=grammar_dir() / "table.lark", rule="table_model", rules=TableRules,
    raw=RawTable, resolve=resolve_table, suffixes=(".dt",),
    criteria=CRITERIA, enumerate=enumerate_table,
    replayer=lambda model, elements: TableReplayer(CompiledTable(model, elements)), accepts=accepts,
    check=check_table, view=View("table", element_table, TABLE_SUFFIXES, grid=table_rule_grid),
    generation=lambda model, options, out: DecisionGeneration(model, options, out, TableWitnesses),
    mutation=MutationSupport(mutate_table.OPERATORS, mutate_table.table_mutants, mutate_table.mutant_replayer,
                             mutate_table.distinguish)))
