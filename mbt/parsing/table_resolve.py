"""Resolves a written decision table: column types and domains, hit policy, typed rule entries, stable rule keys."""

from __future__ import annotations

import difflib
from decimal import Decimal
from typing import Any

from mbt.errors import Problem
from mbt.model.common import Location
from mbt.model.table import ColumnType, Entry, InputColumn, OutputColumn, Rule, TableModel, UnaryTest, value_text
from mbt.parsing.common import annotation_fields
from mbt.parsing.table_rules import RawColumn, RawEntry, RawInterval, RawTable, RawTest
from mbt.tables.values import ValueProblem, literal_value

# Accepted spellings of each hit policy (compared ignoring case).
HIT_WORDS = {
    "unique": "UNIQUE", "u": "UNIQUE", "any": "ANY", "a": "ANY", "priority": "PRIORITY", "p": "PRIORITY",
    "first": "FIRST", "f": "FIRST", "rule_order": "RULE ORDER", "r": "RULE ORDER",
    "output_order": "OUTPUT ORDER", "o": "OUTPUT ORDER", "collect": "COLLECT", "c": "COLLECT",
}
AGGREGATION_WORDS = {"sum": "SUM", "min": "MIN", "max": "MAX", "count": "COUNT"}


class Skip(Exception):
    """Raised after a problem was recorded: the element is left out and resolution goes on."""


class TableResolver:
    def __init__(self, raw: RawTable, path: str, text: str, sources: dict):
        self.raw, self.path, self.text = raw, path, text
        self.problems: list[Problem] = []
        self.column_failed = False
        self.mapped = False
        self.model = TableModel(name=raw.name, file=path, loc=raw.loc, sources=sources,
                                **annotation_fields(raw.notes))

    def problem(self, loc: Location, message: str, hint: str | None = None) -> None:
        lines = self.text.splitlines()
        source_line = lines[loc.line - 1] if 1 <= loc.line <= len(lines) else None
        self.problems.append(Problem(loc.file, loc.line, loc.column, message, source_line, hint))

    # ---- resolution
    def resolve(self) -> TableModel:
        m, items = self.model, self.raw.items
        m.title = (items.get("title") or [None])[-1]
        m.contracts = items.get("contract", [])
        m.mcdc = bool(items.get("mcdc"))
        self.hit_policy()
        m.inputs = self.columns("input", InputColumn)
        m.outputs = self.columns("output", OutputColumn)
        if self.column_failed:
            return m  # the rules' entries cannot be matched to columns that failed; fix those first
        if not m.inputs:
            self.problem(m.loc, f"table `{m.name}` declares no inputs", "add `input NAME: TYPE`")
        if not m.outputs:
            self.problem(m.loc, f"table `{m.name}` declares no outputs", "add `output NAME: TYPE`")
        self.check_policy_needs()
        m.rules = self.rules()
        return m

    def hit_policy(self) -> None:
        m = self.model
        hits = self.raw.items.get("hit", [])
        if not hits:
            return  # DMN's default: UNIQUE
        word, where, aggregation = hits[-1]
        policy = HIT_WORDS.get(word.lower())
        if policy is None:
            close = difflib.get_close_matches(word.lower(), [w for w in HIT_WORDS if len(w) > 1], n=1)
            self.problem(where, f"unknown hit policy `{word}`",
                         f"did you mean `{close[0]}`?" if close else
                         "write unique, any, priority, first, rule_order, output_order or collect [sum|min|max|count]")
            return
        m.hit = policy
        if aggregation is not None:
            agg_word, agg_where = aggregation
            agg = AGGREGATION_WORDS.get(agg_word.lower())
            if policy != "COLLECT":
                self.problem(agg_where, f"only the collect hit policy takes an aggregation, not {policy.lower()}")
            elif agg is None:
                self.problem(agg_where, f"unknown aggregation `{agg_word}`", "write sum, min, max or count")
            else:
                m.aggregation = agg

    def check_policy_needs(self) -> None:
        m = self.model
        if m.aggregation is not None and m.outputs:
            if len(m.outputs) != 1:
                self.problem(m.loc, f"collect {m.aggregation.lower()} needs exactly one output, the table has "
                                    f"{len(m.outputs)}")
            else:
                out = m.outputs[0]
                allowed = ("number", "integer") if m.aggregation == "SUM" else ("number", "integer", "date")
                if m.aggregation != "COUNT" and out.type.kind not in allowed:
                    self.problem(out.loc, f"collect {m.aggregation.lower()} needs a {' or '.join(allowed)} output, "
                                          f"`{out.name}` is {out.type.kind}")
        # Only the outputs that list allowed values rank the results (DMN: an output without them does not take
        # part in the order); a table none of whose outputs lists them has no order at all.
        if m.hit in ("PRIORITY", "OUTPUT ORDER") and m.outputs and all(out.type.values is None for out in m.outputs):
            out = m.outputs[0]
            self.problem(out.loc, f"hit policy {m.hit.lower()} orders results by the output's allowed values, "
                                  "but no output lists them",
                         "list them in priority order, e.g. {\"reject\", \"review\", \"approve\"}")

    # ---- columns
    def columns(self, role: str, cls) -> list:
        out = []
        seen: dict[str, Location] = {}
        for raw in self.raw.items.get(role, []):
            if raw.name in seen:
                self.problem(raw.loc, f"{role} `{raw.name}` is declared twice (first at line {seen[raw.name].line})")
                continue
            seen[raw.name] = raw.loc
            try:
                ctype = self.column_type(raw)
            except Skip:
                self.column_failed = True
                continue
            extra: dict[str, Any] = {}
            if role == "output" and raw.has_default:
                try:
                    extra = {"default": self.value(raw.default, ctype, raw.loc, f"default of `{raw.name}`"),
                             "has_default": True}
                except Skip:
                    pass  # reported; the column itself is fine, so its rules are still checked
            out.append(cls(name=raw.name, type=ctype, loc=raw.loc, **annotation_fields(raw.notes), **extra))
        return out

    def column_type(self, raw: RawColumn) -> ColumnType:
        kind = raw.kind
        fields: dict[str, Any] = {"kind": kind, "optional": raw.optional}
        if raw.precision is not None:
            if kind != "number":
                self.problem(raw.loc, f"only number columns take a precision, `{raw.name}` is {kind}")
                raise Skip
            step = Decimal(raw.precision.value)
            if step <= 0:
                self.problem(raw.loc, f"the precision of `{raw.name}` must be greater than 0")
                raise Skip
            fields["precision"] = step
        if raw.domain is not None:
            how, spec = raw.domain
            if how == "range":
                if kind not in ("number", "integer", "date"):
                    self.problem(raw.loc, "a range domain needs a number, integer or date column, "
                                          f"`{raw.name}` is {kind}",
                                 'list the allowed values instead: {"a", "b"}')
                    raise Skip
                lo = self.literal(spec.lo, kind, raw.loc)
                hi = self.literal(spec.hi, kind, raw.loc)
                if lo is None or hi is None or self.empty_interval(lo, hi, spec.lo_closed, spec.hi_closed):
                    self.problem(raw.loc, f"the domain of `{raw.name}` is empty")
                    raise Skip
                fields.update(lo=lo, hi=hi, lo_closed=spec.lo_closed, hi_closed=spec.hi_closed)
            else:
                values = []
                for lit in spec:
                    value = self.literal(lit, kind, raw.loc)
                    if value is None:
                        self.problem(raw.loc, "`none` is not an allowed value; add ? to the type to admit none")
                        raise Skip
                    if value in values:
                        self.problem(raw.loc, f"allowed value {value_text(value)} of `{raw.name}` is listed twice")
                        raise Skip
                    values.append(value)
                fields["values"] = tuple(values)
        if kind == "boolean" and "values" not in fields:
            fields["values"] = (True, False)
        ctype = ColumnType(**fields)
        if ctype.values is not None and ctype.precision is not None:
            for value in ctype.values:
                if not ctype.on_lattice(value):
                    self.problem(raw.loc, f"allowed value {value_text(value)} is finer than the precision "
                                          f"{ctype.precision}")
                    raise Skip
        return ctype

    @staticmethod
    def empty_interval(lo, hi, lo_closed: bool, hi_closed: bool) -> bool:
        return lo > hi or (lo == hi and not (lo_closed and hi_closed))

    def literal(self, lit, kind: str, where: Location) -> Any:
        try:
            return literal_value(lit.value, kind)
        except ValueProblem as err:
            self.problem(self.at(lit, where), str(err))
            raise Skip from None

    def at(self, lit, fallback: Location) -> Location:
        """The location of a literal inside an entry (generated DSL keeps the entry's own location)."""
        if getattr(lit, "line", 0) and not self.mapped:
            return Location(file=fallback.file, line=lit.line, column=lit.column)
        return fallback

    def value(self, lit, ctype: ColumnType, where: Location, what: str) -> Any:
        """A literal that must be a value of the column's domain (outputs, defaults)."""
        value = self.literal(lit, ctype.kind, where)
        if value is None:
            if not ctype.optional and what.startswith("default"):
                self.problem(where, f"{what} is none, but the column does not admit none (declare it with ?)")
                raise Skip
            return None
        self.in_domain(value, ctype, self.at(lit, where), what)
        return value

    def in_domain(self, value: Any, ctype: ColumnType, where: Location, what: str) -> None:
        if ctype.values is not None and value not in ctype.values:
            hint = difflib.get_close_matches(str(value), [str(v) for v in ctype.values], n=1)
            self.problem(where, f"{value_text(value)} is not an allowed value of {what} "
                                f"({', '.join(value_text(v) for v in ctype.values)})",
                         f"did you mean {value_text(hint[0])}?" if hint else None)
            raise Skip
        if ctype.ordered and not ctype.in_range(value):
            self.problem(where, f"{value_text(value)} is outside the domain of {what} ({ctype.text()})")
            raise Skip

    # ---- rules
    def rules(self) -> list[Rule]:
        m = self.model
        out: list[Rule] = []
        names: dict[str, Location] = {}
        raw_rules = self.raw.items.get("rule", [])
        if m.inputs and m.outputs and not raw_rules:
            self.problem(m.loc, f"table `{m.name}` has no rules", "add `rule NAME: ENTRY | ... -> OUTPUT`")
        for index, raw in enumerate(raw_rules):
            fields = annotation_fields(raw.annotations)
            name = raw.name or fields.get("explicit_id") or f"r{index + 1}"
            where = raw.name_loc or raw.loc
            if name in names:
                hint = "unnamed rules are named r1, r2, ... by position; name this one" if raw.name is None else None
                self.problem(where, f"rule `{name}` is declared twice (first at line {names[name].line})", hint)
                continue
            names[name] = raw.loc
            if not m.inputs or not m.outputs:
                continue
            if len(raw.entries) != len(m.inputs):
                self.problem(raw.loc, f"rule `{name}` has {len(raw.entries)} input entries, the table has "
                                      f"{len(m.inputs)} inputs ({', '.join(c.name for c in m.inputs)})")
                continue
            if len(raw.outputs) != len(m.outputs):
                self.problem(raw.loc, f"rule `{name}` has {len(raw.outputs)} output entries, the table has "
                                      f"{len(m.outputs)} outputs ({', '.join(c.name for c in m.outputs)})")
                continue
            entries, outputs, failed = [], [], False
            for e, input_column in zip(raw.entries, m.inputs):  # every bad entry is reported, not just the first
                try:
                    entries.append(self.entry(e, input_column))
                except Skip:
                    failed = True
            for (lit, loc), output_column in zip(raw.outputs, m.outputs):
                try:
                    outputs.append(self.output_entry(lit, loc, output_column))
                except Skip:
                    failed = True
            if failed:
                continue
            out.append(Rule(name=name, index=len(out), entries=entries, outputs=outputs, notes=raw.notes,
                            loc=raw.loc, **fields))
        return out

    def output_entry(self, lit, loc: Location, column: OutputColumn) -> Any:
        if lit is None:
            return None
        return self.value(lit, column.type, loc, f"output `{column.name}`")

    def entry(self, raw: RawEntry, column: InputColumn) -> Entry:
        tests = tuple(self.test(t, column) for t in raw.tests)
        return Entry(tests=tests, negated=raw.negated, loc=raw.loc)

    def test(self, raw: RawTest, column: InputColumn) -> UnaryTest:
        ctype, kind = column.type, column.type.kind
        what = f"input `{column.name}`"
        if raw.op == "range":
            spec: RawInterval = raw.value
            if not ctype.ordered:
                self.problem(raw.loc, f"a range needs a number, integer or date column; {what} is {kind}")
                raise Skip
            lo = self.literal(spec.lo, kind, raw.loc)
            hi = self.literal(spec.hi, kind, raw.loc)
            if lo is None or hi is None:
                self.problem(raw.loc, "a range cannot have none as an end")
                raise Skip
            if self.empty_interval(lo, hi, spec.lo_closed, spec.hi_closed):
                empty = UnaryTest("range", lo=lo, hi=hi, lo_closed=spec.lo_closed, hi_closed=spec.hi_closed)
                self.problem(raw.loc, f"the range {empty.text()} is empty")
                raise Skip
            return UnaryTest("range", lo=lo, hi=hi, lo_closed=spec.lo_closed, hi_closed=spec.hi_closed, loc=raw.loc)
        if raw.op in ("==", "!="):
            self.problem(raw.loc, f"`{raw.op}` is not a unary test",
                         "write the value alone for equality (`\"EU\"`), or not(...) for inequality")
            raise Skip
        value = self.literal(raw.value, kind, raw.loc)
        if raw.op == "=":
            if value is None:
                if not ctype.optional:
                    self.problem(raw.loc, f"{what} does not admit none, so this test never holds",
                                 "declare the input with ? (e.g. `integer?`) when it may be missing")
                    raise Skip
                return UnaryTest("null", loc=raw.loc)
            if ctype.values is not None:
                self.in_domain(value, ctype, self.at(raw.value, raw.loc), what)
            return UnaryTest("=", value=value, loc=raw.loc)
        if value is None:
            self.problem(raw.loc, "`none` can only be tested on its own (`none`), not compared with `<`, `>`")
            raise Skip
        if not ctype.ordered:
            self.problem(raw.loc, f"`{raw.op}` needs a number, integer or date column; {what} is {kind}")
            raise Skip
        return UnaryTest(raw.op, value=value, loc=raw.loc)


def resolve_table(raw: RawTable, path: str, text: str, sources: dict,
                  mapped: bool = False) -> tuple[TableModel, list[Problem]]:
    """The typed table and the problems found; `mapped` when locations point into another file (DMN XML)."""
    resolver = TableResolver(raw, path, text, sources)
    resolver.mapped = mapped
    model = resolver.resolve()
    return model, resolver.problems
