"""The typed decision-table model (OMG DMN): typed input and output columns, a hit policy, rules of unary tests."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from pydantic import ConfigDict, PrivateAttr

from mbt.model.common import Annotated, Location, ModelBase

ColumnKind = Literal["number", "integer", "string", "boolean", "date"]
ORDERED_KINDS = ("number", "integer", "date")  # kinds whose values can be compared with < and ranges

# Hit policies by their DMN names; the DSL also accepts the lower-case word with `_` and the initial letter.
HIT_POLICIES = ("UNIQUE", "ANY", "PRIORITY", "FIRST", "RULE ORDER", "OUTPUT ORDER", "COLLECT")
SINGLE_HIT = ("UNIQUE", "ANY", "PRIORITY", "FIRST")
AGGREGATIONS = ("SUM", "MIN", "MAX", "COUNT")


@dataclass(frozen=True)
class ColumnType:
    """The type of an input or output column, with its declared domain (allowed values or a range)."""

    kind: str  # ColumnKind
    optional: bool = False  # admits null (`none`)
    precision: Decimal | None = None  # for `number`: values are multiples of it
    values: tuple | None = None  # allowed values, in order (their order is the PRIORITY / OUTPUT ORDER)
    lo: Any = None  # range domain; None: unbounded on that side
    hi: Any = None
    lo_closed: bool = True
    hi_closed: bool = True

    @property
    def ordered(self) -> bool:
        return self.kind in ORDERED_KINDS

    def text(self) -> str:
        out = self.kind + ("?" if self.optional else "")
        if self.precision is not None:
            out += f" precision {self.precision}"
        if self.values is not None:
            out += " {" + ", ".join(value_text(v) for v in self.values) + "}"
        elif self.lo is not None or self.hi is not None:
            out += " " + interval_text(self.lo, self.hi, self.lo_closed, self.hi_closed)
        return out

    def in_range(self, value: Any) -> bool:
        if self.lo is not None and (value < self.lo or (value == self.lo and not self.lo_closed)):
            return False
        if self.hi is not None and (value > self.hi or (value == self.hi and not self.hi_closed)):
            return False
        return True

    def on_lattice(self, value: Any) -> bool:
        """True when a number respects the declared precision (always true for other kinds)."""
        if self.kind != "number" or self.precision is None or value is None:
            return True
        return (Decimal(value) % self.precision) == 0

    def admits(self, value: Any) -> bool:
        """True when a typed value (see tables.values.coerce) belongs to the declared domain."""
        if value is None:
            return self.optional
        if self.values is not None and value not in self.values:
            return False
        if self.ordered and not self.in_range(value):
            return False
        return self.on_lattice(value)


@dataclass(frozen=True)
class UnaryTest:
    """One positive unary test: `= v` (a bare value), `< v` ..., a range, or `none` (op "null")."""

    op: str  # "=", "<", "<=", ">", ">=", "range", "null"
    value: Any = None
    lo: Any = None
    hi: Any = None
    lo_closed: bool = True
    hi_closed: bool = True
    loc: Location | None = None

    def text(self) -> str:
        if self.op == "null":
            return "none"
        if self.op == "=":
            return value_text(self.value)
        if self.op == "range":
            return interval_text(self.lo, self.hi, self.lo_closed, self.hi_closed)
        return f"{self.op} {value_text(self.value)}"

    def constants(self) -> tuple:
        if self.op == "range":
            return (self.lo, self.hi)
        if self.op == "null":
            return ()
        return (self.value,)


@dataclass(frozen=True)
class Entry:
    """An input entry: `-` (any), a list of positive tests (any of them), or `not(...)` of such a list."""

    tests: tuple[UnaryTest, ...] = ()
    negated: bool = False
    loc: Location | None = None

    @property
    def is_any(self) -> bool:
        return not self.tests

    def text(self) -> str:
        if not self.tests:
            return "-"
        inner = ", ".join(t.text() for t in self.tests)
        return f"not({inner})" if self.negated else inner

    def constants(self) -> list:
        return [c for t in self.tests for c in t.constants()]


class InputColumn(Annotated):
    name: str
    type: ColumnType


class OutputColumn(Annotated):
    name: str
    type: ColumnType
    default: Any = None
    has_default: bool = False


class Rule(Annotated):
    """One row; `name` is its stable key (written, DMN id, or `r<N>` by position), `index` its 0-based position."""

    name: str
    index: int
    entries: list[Entry]
    outputs: list[Any]
    notes: list[str] = []

    def text(self) -> str:
        inputs = " | ".join(e.text() for e in self.entries)
        outputs = " | ".join("-" if v is None else value_text(v) for v in self.outputs)
        return f"{inputs} -> {outputs}"


class TableModel(ModelBase):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    kind: Literal["table"] = "table"
    inputs: list[InputColumn] = []
    outputs: list[OutputColumn] = []
    hit: str = "UNIQUE"
    aggregation: str | None = None
    rules: list[Rule] = []
    mcdc: bool = False  # opt-in criterion
    # Per-model caches (the analysis is shared by `mbt check` and the element enumeration).
    _cache: dict = PrivateAttr(default_factory=dict)

    @property
    def hit_text(self) -> str:
        return self.hit + (f" {self.aggregation}" if self.aggregation else "")

    @property
    def single_hit(self) -> bool:
        return self.hit in SINGLE_HIT

    @property
    def defaults_when_nothing_matches(self) -> bool:
        """Whether an input no rule matches gives the outputs' defaults: where any is declared, under every hit
        policy, aggregations included (DMN 1.3, 8.2.11 / 8.3.2). The evaluator and the gap check both ask this."""
        return any(o.has_default for o in self.outputs)

    def input(self, name: str) -> InputColumn | None:
        return next((c for c in self.inputs if c.name == name), None)

    def output(self, name: str) -> OutputColumn | None:
        return next((c for c in self.outputs if c.name == name), None)


def value_text(value: Any) -> str:
    """A typed value as DSL text (strings escaped, so any string is safe to write back)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'
    if isinstance(value, dt.date):
        return f'date("{value.isoformat()}")'
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")  # 1000.00 and 1000 are one value, with one text (and one id)
    return str(value)


def interval_text(lo: Any, hi: Any, lo_closed: bool, hi_closed: bool) -> str:
    if lo is None:
        return f"{'<=' if hi_closed else '<'} {value_text(hi)}"
    if hi is None:
        return f"{'>=' if lo_closed else '>'} {value_text(lo)}"
    return f"{'[' if lo_closed else '('}{value_text(lo)}..{value_text(hi)}{']' if hi_closed else ')'}"


def plain(value: Any) -> Any:
    """A typed value as plain JSON data: Decimal -> int or float, date -> ISO text."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


__all__ = ["ColumnType", "UnaryTest", "Entry", "InputColumn", "OutputColumn", "Rule", "TableModel",
           "HIT_POLICIES", "SINGLE_HIT", "AGGREGATIONS", "value_text", "interval_text", "plain"]
