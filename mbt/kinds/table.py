"""The `table` kind: DMN decision tables, from mbt/parsing/table_*.py, mbt/tables/, elements/table.py, replay_table."""

from __future__ import annotations

from mbt.analysis.table_checks import check_table
from mbt.elements.table import CRITERIA, enumerate_table
from mbt.goldens.replay_table import CompiledTable, TableReplayer, accepts
from mbt.kinds import KindSupport, MutationSupport, register
from mbt.kinds.views import ELEMENT_TABLE
from mbt.mutate import table as mutate_table
from mbt.parsing.grammar import grammar_dir
from mbt.parsing.table_resolve import resolve_table
from mbt.parsing.table_rules import RawTable, TableRules

register(KindSupport(
    kind="table", keyword="table", grammar=grammar_dir() / "table.lark", rule="table_model", rules=TableRules,
    raw=RawTable, resolve=resolve_table, suffixes=(".dt",),
    criteria=CRITERIA, enumerate=enumerate_table,
    replayer=lambda model, elements: TableReplayer(CompiledTable(model, elements)), accepts=accepts,
    check=check_table, view=ELEMENT_TABLE,
    mutation=MutationSupport(mutate_table.OPERATORS, mutate_table.table_mutants, mutate_table.mutant_replayer,
                             mutate_table.distinguish)))
