"""Replays decision cases on a table: evaluates the inputs under the hit policy, marks rules, partitions, boundaries
(and mcdc obligations) exercised, verified when the golden's expected outputs agree, a contradiction when not."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from mbt.elements import table as ids
from mbt.elements.base import Element
from mbt.engine.table import Decision, entry_matches
from mbt.goldens.cases import GoldenCase
from mbt.goldens.decisions import DecisionCheck
from mbt.goldens.results import CaseRun, Contradiction, Note
from mbt.model.table import TableModel, plain, value_text
from mbt.tables.analysis import analyse
from mbt.tables.regions import IndexedTable
from mbt.tables.values import ValueProblem, coerce

_MISSING = object()


class CompiledTable:
    """A table prepared for replay: the region index, and element indices per rule, region and boundary value."""

    def __init__(self, model: TableModel, elements: list[Element]):
        self.model = model
        idx = {e.id: i for i, e in enumerate(elements)}
        partition = analyse(model).partition
        self.partition = partition
        self.evaluator = IndexedTable(model, partition)
        self.rule_el = [idx[ids.rule_id(r)] for r in model.rules]
        self.region_el = [[idx[ids.partition_id(c.name, region.label)] for region in part.regions]
                          for c, part in zip(model.inputs, partition.columns)]
        self.boundary_el = [{value: idx[ids.boundary_id(c.name, value)] for value in points}
                            for c, points in zip(model.inputs, ids.boundary_points(model, partition.columns))]
        self.mcdc_el: list[int | None] = []
        self.mcdc_false_el: list[dict[int, int]] = []
        if model.mcdc:
            for r in model.rules:
                self.mcdc_el.append(idx.get(ids.mcdc_id(r)))
                self.mcdc_false_el.append({k: idx[ids.mcdc_id(r, c.name)] for k, c in enumerate(model.inputs)
                                           if ids.mcdc_id(r, c.name) in idx})


class TableReplayer:
    def __init__(self, compiled: CompiledTable):
        self.c = compiled
        self.model = compiled.model

    def replay(self, case: GoldenCase) -> CaseRun:
        run = CaseRun(case)
        for number, check in enumerate(case.decisions, start=1):
            if check.table != self.model.name:
                continue
            values = self._inputs(check, case, run)
            if values is None:
                return run
            decision = self.c.evaluator.decide(values)
            exercised = self._exercised(values, decision)
            run.exercised.update(exercised)
            if (check.expect_given or check.expect_error) and self._agrees(check, decision, number, case, run):
                run.verified.update(exercised)
        if run.contradictions:
            run.verified.clear()  # a golden contradicting the table verifies nothing of it, in any of its decisions
        return run

    # ---- inputs
    def _inputs(self, check: DecisionCheck, case: GoldenCase, run: CaseRun) -> tuple | None:
        values: list[Any] = []
        for column in self.model.inputs:
            raw = check.inputs.get(column.name, _MISSING)
            if raw is _MISSING or (raw is None and not column.type.optional):
                # DMN: a missing input is FEEL's null, and so is null for any column: `-` matches it, every other
                # unary test gives no match (engine/table.py). Said, so a forgotten input is never silent.
                # The outcome is still compared when the golden expects one: the note says how it was read.
                run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=check.turn,
                                      message=f"input `{column.name}` is {'missing' if raw is _MISSING else 'null'}"
                                              ": evaluated as null (only `-` matches it)",
                                      compared=bool(check.expect_given or check.expect_error)))
                values.append(None)
                continue
            try:
                values.append(coerce(raw, column.type))
            except ValueProblem as err:
                run.invalid = f"decision on table `{self.model.name}`: input `{column.name}` {err}"
                return None
        for name in check.inputs:
            if self.model.input(name) is None:
                run.notes.append(Note(case=case.id, where=case.where, model=self.model.name, turn=check.turn,
                                      message=f"`{name}` is not an input of table `{self.model.name}` (ignored)"))
        return tuple(values)

    def _exercised(self, values: tuple, decision: Decision) -> list[int]:
        c = self.c
        out = [c.rule_el[i] for i in decision.contributing]
        regions = []
        for k, (col, v) in enumerate(zip(c.partition.columns, values)):
            r = col.region_of(v)
            regions.append(r)
            if r is not None:
                out.append(c.region_el[k][r])
            b = c.boundary_el[k].get(v)
            if b is not None:
                out.append(b)
        if self.model.mcdc:
            out.extend(self._mcdc(values, regions, decision))
        return out

    def _mcdc(self, values: tuple, regions: list[int | None], decision: Decision) -> list[int]:
        c, p = self.c, self.c.partition
        out: list[int] = [el for el in (c.mcdc_el[i] for i in decision.matched) if el is not None]
        # Per column, the rules whose entry holds on the value; a null on a column without `?` has no region, and
        # only the entries that match null (`-`) hold there.
        masks = [p.region_rules[k][r] if r is not None else
                 sum(1 << i for i, rule in enumerate(self.model.rules) if entry_matches(rule.entries[k], values[k]))
                 for k, r in enumerate(regions)]
        n = len(masks)
        prefix, suffix = [p.all_rules] * (n + 1), [p.all_rules] * (n + 1)
        for k in range(n):
            prefix[k + 1] = prefix[k] & masks[k]
        for k in range(n - 1, -1, -1):
            suffix[k] = suffix[k + 1] & masks[k]
        for k in range(n):
            only_k = prefix[k] & suffix[k + 1] & ~masks[k]  # rules failing on column k alone
            while only_k:
                low = only_k & -only_k
                i = low.bit_length() - 1
                el = c.mcdc_false_el[i].get(k)
                if el is not None:
                    out.append(el)
                only_k ^= low
        return out

    # ---- expectations
    def _agrees(self, check: DecisionCheck, decision: Decision, number: int, case: GoldenCase, run: CaseRun) -> bool:
        m = self.model
        label = f"decision {number}" if len(case.decisions) > 1 else "decision"
        winners = ", ".join(m.rules[i].name for i in decision.contributing) or "no rule"

        def contradict(path: str, expected: Any, actual: Any, what: str) -> bool:
            run.contradictions.append(Contradiction(case=case.id, where=case.where, model=m.name, turn=check.turn,
                                                    path=path, expected=plain(expected), actual=plain(actual),
                                                    message=f"{label}: {what}"))
            return False

        def note(message: str) -> bool:
            run.notes.append(Note(case=case.id, where=case.where, model=m.name, turn=check.turn,
                                  message=f"{label}: {message} (not checked)"))
            return False

        if check.expect_error:
            if decision.error:
                return True
            return contradict("error", "an error (the hit policy fails)", decision.result,
                              f"golden expects the hit policy {m.hit} to fail, the table gives "
                              f"{decision.describe(m.rules)} ({winners})")
        if decision.error:
            return contradict("outputs", check.expect, f"error: {decision.error}",
                              f"golden expects {_shown(check.expect)}, the table fails: {decision.error}")
        expect, result = check.expect, decision.result
        if isinstance(result, list):
            if not isinstance(expect, list):
                return note(f"hit policy {m.hit_text} gives a list; `expect` must be a list of results")
            rows = [self._result_row(item) for item in expect]
            if None in rows:
                return note("each item of `expect` must map output names to values"
                            + (" (or be a value of the one output)" if len(m.outputs) == 1 else ""))
            # Compared as typed values, exactly (17.99999999999999999 is not 18); shown as plain data.
            typed = [{k: self._typed(k, v) for k, v in row.items()} for row in rows if row is not None]
            same = _same_multiset(typed, result) if m.hit == "COLLECT" else typed == result
            if same:
                return True
            wanted = [{k: _normal(v) for k, v in row.items()} for row in rows if row is not None]
            got = [self._plain_row(row) for row in result]
            return contradict("outputs", wanted, got, f"golden expects {_shown(wanted)}, the table gives "
                                                      f"{_shown(got)} ({winners})")
        if expect is None:
            if result is None or all(v is None for v in result.values()):
                return True
            return contradict("outputs", None, result, f"golden expects no result, the table gives "
                                                       f"{decision.describe(m.rules)} ({winners})")
        if not isinstance(expect, dict):
            if len(m.outputs) != 1:
                return note("`expect` must map output names to values (the table has several outputs)")
            expect = {m.outputs[0].name: expect}
        agree, compared = True, 0
        for name, wanted in expect.items():
            column = m.output(str(name))
            if column is None:
                note(f"`{name}` is not an output of table `{m.name}`")
                continue
            compared += 1
            actual = None if result is None else result.get(column.name)
            if not _same(wanted, actual, column.type):
                agree = contradict(f"outputs.{column.name}", wanted, actual,
                                   f"golden expects {column.name} = {_shown(wanted)}, the table gives "
                                   f"{_shown(plain(actual))} ({winners}"
                                   f"{', the default' if decision.default_used else ''})")
        if not compared:
            return note("`expect` compares no output")  # `{}` or only unknown names: it checks nothing
        return agree

    def _result_row(self, item: Any) -> dict | None:
        if isinstance(item, dict):
            return {str(k): v for k, v in item.items()}
        if len(self.model.outputs) == 1:
            return {self.model.outputs[0].name: item}
        return None

    def _typed(self, name: str, value: Any) -> Any:
        """A golden's value as the output's typed value; one it cannot be (or an unknown output's) equals nothing."""
        column = self.model.output(name)
        if column is None or value is None:
            return _Unequal(value) if column is None else None
        try:
            return coerce(value, column.type.__class__(column.type.kind, optional=True))
        except ValueProblem:
            return _Unequal(value)

    @staticmethod
    def _plain_row(row: dict) -> dict:
        return {k: plain(v) for k, v in row.items()}


def _normal(value: Any) -> Any:
    """A golden's value in the plain form the table's outputs take (1.50 == 1.5, dates as ISO text)."""
    if isinstance(value, float):
        return plain(Decimal(str(value)))
    return plain(value)


def _same(wanted: Any, actual: Any, ctype) -> bool:
    if wanted is None or actual is None:
        return wanted is None and actual is None
    try:
        return coerce(wanted, ctype.__class__(ctype.kind, optional=True)) == actual
    except ValueProblem:
        return False


class _Unequal:
    """A value no output value equals: a golden's value its output cannot take, or a name that is not an output."""

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: object) -> bool:  # (defining __eq__ alone leaves the class unhashable, as it should be)
        return False


def _same_multiset(wanted: list[dict], got: list[dict]) -> bool:
    """The same rows in any order (COLLECT), compared by value equality (Decimal 1.50 == 1.5)."""
    rest = list(got)
    for row in wanted:
        match = next((i for i, other in enumerate(rest) if row == other), None)
        if match is None:
            return False
        del rest[match]
    return not rest


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value_text(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if value is None:
        return "none"
    return value_text(value) if isinstance(value, bool) else str(value)


def accepts(model: TableModel, case: GoldenCase) -> bool:
    """A case is for a table when it carries a decision on it: a decision case naming the table, or a conversation
    case (of whatever model) with `decisions` on it. Cases with nothing for the table are not replayed on it."""
    return any(check.table == model.name for check in case.decisions)
