"""Transformer rules for table.lark: build a raw table from its parse tree (types and values are checked afterwards)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lark import v_args

from mbt.model.common import Location
from mbt.model.expr import Lit
from mbt.parsing.common import Annotations, pos, unquote
from mbt.tables.values import DateText


@dataclass
class RawInterval:
    lo_closed: bool
    lo: Lit
    hi: Lit
    hi_closed: bool


@dataclass
class RawTest:
    op: str  # "=", one of CMP_OP, or "range"
    value: Any  # a Lit, or a RawInterval for "range"
    loc: Location


@dataclass
class RawEntry:
    tests: list[RawTest]
    negated: bool
    loc: Location


@dataclass
class RawColumn:
    name: str
    loc: Location
    kind: str
    optional: bool
    precision: Lit | None
    domain: tuple[str, Any] | None  # ("range", RawInterval) or ("values", [Lit, ...])
    notes: Annotations
    default: Any = None  # a Lit, for outputs
    has_default: bool = False


@dataclass
class RawRule:
    name: str | None
    name_loc: Location | None
    entries: list[RawEntry]
    outputs: list[tuple[Lit | None, Location]]
    notes: list[str]
    annotations: Annotations
    loc: Location


@dataclass
class RawTable:
    """A table as written, before its types, values and hit policy are checked (see table_resolve)."""

    name: str
    loc: Location
    notes: Annotations
    items: dict[str, list] = field(default_factory=dict)


class TableRules:
    """Mixin for the file transformer (see CommonRules for `self.loc`)."""

    # ---- settings
    def table_title(self, children):
        return ("title", unquote(children[0]))

    def table_contract(self, children):
        return ("contract", unquote(children[0]))

    def hit_word(self, children):
        (tok,) = children
        return (str(tok), self.loc(tok))

    @v_args(meta=True)
    def hit_any(self, meta, children):
        return ("any", self.loc(meta))

    def table_hit(self, children):
        (word, where), aggregation = children
        return ("hit", (word, where, (str(aggregation), self.loc(aggregation)) if aggregation is not None else None))

    def table_mcdc(self, children):
        return ("mcdc", True)

    # ---- columns
    def kind_number(self, children):
        return "number"

    def kind_integer(self, children):
        return "integer"

    def kind_string(self, children):
        return "string"

    def kind_boolean(self, children):
        return "boolean"

    def kind_date(self, children):
        return "date"

    def closed_bound(self, children):
        return True

    def open_bound(self, children):
        return False

    def interval(self, children):
        lo_closed, lo, hi, hi_closed = children
        return RawInterval(lo_closed, lo, hi, hi_closed)

    def domain_range(self, children):
        return ("range", children[0])

    def domain_values(self, children):
        return ("values", list(children))

    def column_type(self, children):
        kind, optional, precision, domain = children
        return {"kind": kind, "optional": optional is not None, "precision": precision, "domain": domain}

    def input_decl(self, children):
        name, ctype, notes = children
        return ("input", RawColumn(name=str(name), loc=self.loc(name), notes=notes, **ctype))

    def output_decl(self, children):
        name, ctype, default, notes = children
        return ("output", RawColumn(name=str(name), loc=self.loc(name), notes=notes, default=default,
                                    has_default=default is not None, **ctype))

    @v_args(meta=True)
    def date_lit(self, meta, children):
        return Lit(DateText(unquote(children[0])), **pos(meta))

    # ---- rules
    @v_args(meta=True)
    def equal_test(self, meta, children):
        return RawTest("=", children[0], self.loc(meta))

    @v_args(meta=True)
    def compare_test(self, meta, children):
        op, value = children
        return RawTest(str(op), value, self.loc(meta))

    @v_args(meta=True)
    def range_test(self, meta, children):
        return RawTest("range", children[0], self.loc(meta))

    def positive_tests(self, children):
        return list(children)

    @v_args(meta=True)
    def any_entry(self, meta, children):
        return RawEntry([], False, self.loc(meta))

    @v_args(meta=True)
    def negated_entry(self, meta, children):
        return RawEntry(children[0], True, self.loc(meta))

    @v_args(meta=True)
    def tests_entry(self, meta, children):
        return RawEntry(children[0], False, self.loc(meta))

    @v_args(meta=True)
    def null_output(self, meta, children):
        return (None, self.loc(meta))

    @v_args(meta=True)
    def value_output(self, meta, children):
        return (children[0], self.loc(meta))

    def rule_note(self, children):
        return ("note", unquote(children[0]))

    def rule_annotations(self, children):
        notes, found = [], Annotations()
        for key, value in children:
            if key == "note":
                notes.append(value)
            else:
                found[key] = value
        return notes, found

    @v_args(meta=True)
    def rule_decl(self, meta, children):
        name, *cells, (notes, annotations) = children
        entries = [c for c in cells if isinstance(c, RawEntry)]
        outputs = [c for c in cells if isinstance(c, tuple)]
        return ("rule", RawRule(name=str(name) if name is not None else None,
                                name_loc=self.loc(name) if name is not None else None, entries=entries,
                                outputs=outputs, notes=notes, annotations=annotations, loc=self.loc(meta)))

    # ---- the model
    @v_args(meta=True)
    def table_model(self, meta, children):
        name, notes, *items = children
        raw = RawTable(name=str(name), loc=self.loc(name), notes=notes)
        for kind, value in items:
            raw.items.setdefault(kind, []).append(value)
        return raw
