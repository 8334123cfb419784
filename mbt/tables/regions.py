"""The domain of each input column cut into elementary regions, and the table indexed by them.

Every constant an entry of a column mentions (and the domain's bounds) cuts the column's domain: the regions are
the points and the open intervals between consecutive cuts (for integers, dates and numbers with a precision only
those holding a value of the lattice), each listed string and "other" when the strings are not enumerated, and
`none` for optional columns. Every unary test is either true on a whole region or false on all of it, so a rule is
exactly a product of region sets: gaps, overlaps and masking become set operations (tables/analysis.py), partitions
are the coverage elements of the `partition` criterion, and a value is matched by looking up its region.
"""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

from mbt.engine.table import TableEvaluator, entry_predicate
from mbt.model.table import ColumnType, InputColumn, TableModel, interval_text, value_text

DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Region:
    """One elementary region of a column: its bounds (None = unbounded), a value inside it, a readable label."""

    kind: str  # point | between | below | above | value | other | null | all
    rep: Any  # a value inside the region (the witness value)
    label: str
    lo: Any = None
    hi: Any = None
    lo_closed: bool = True
    hi_closed: bool = True


class Lattice:
    """The values an ordered column can take: integers, days, multiples of a precision, or (None) all reals."""

    def __init__(self, ctype: ColumnType):
        self.kind = ctype.kind
        self.precision = ctype.precision
        self.step: int | dt.timedelta | Decimal | None = (1 if ctype.kind == "integer" else DAY if ctype.kind == "date"
                                                          else ctype.precision)

    @property
    def discrete(self) -> bool:
        return self.step is not None

    def on(self, x) -> bool:
        if self.kind != "number" or self.precision is None:  # a number's step is its precision
            return True
        return Decimal(x) % self.precision == 0

    def above(self, x):
        """The smallest lattice value greater than x."""
        if self.kind in ("integer", "date"):
            return x + self.step
        if self.precision is None:
            return None
        return ((Decimal(x) / self.precision).to_integral_value(rounding=ROUND_FLOOR) + 1) * self.precision

    def below(self, x):
        """The largest lattice value smaller than x."""
        if self.kind in ("integer", "date"):
            return x - self.step
        if self.precision is None:
            return None
        return ((Decimal(x) / self.precision).to_integral_value(rounding=ROUND_CEILING) - 1) * self.precision


def boundary_step(column: InputColumn, constants: list) -> Any:
    """The step of two-value boundary analysis: the declared precision, else the finest decimal the column uses."""
    ctype = column.type
    if ctype.kind == "integer":
        return 1
    if ctype.kind == "date":
        return DAY
    if ctype.precision is not None:
        return ctype.precision
    # A finite Decimal's exponent is an int (NaN and the infinities, which no literal writes, have a letter).
    exponents = [c.as_tuple().exponent for c in constants if isinstance(c, Decimal)]
    places = max((-e for e in exponents if isinstance(e, int)), default=0)
    return Decimal(1).scaleb(-max(places, 0))


class ColumnPartition:
    """The elementary regions of one input column, in ascending order (then other, then none)."""

    def __init__(self, column: InputColumn, constants: list):
        self.column = column
        self.ctype = ctype = column.type
        self.regions: list[Region] = []
        self.value_index: dict | None = None  # listed columns: value -> region
        self.other_index: int | None = None
        if ctype.ordered and ctype.values is None:
            self._ordered(constants)
        else:
            self._listed(constants)
        self.null_index = None
        if ctype.optional:
            self.null_index = len(self.regions)
            self.regions.append(Region("null", None, "none"))
        self.all_mask = (1 << len(self.regions)) - 1
        self._reps = [region.rep for region in self.regions]
        self._masks: dict[tuple, int] = {}  # an entry's tests -> its mask (mask_of)

    # ---- building
    def _ordered(self, constants: list) -> None:
        ctype, lat = self.ctype, Lattice(self.ctype)
        self.lattice = lat
        # The cuts are the constants the entries use; the domain's bounds only clip the first and last region.
        self.cuts = sorted({c for c in constants if c is not None and ctype.in_range(c)})
        n = len(self.cuts)
        self.point_index: list[int | None] = [None] * n
        self.gap_index: list[int | None] = [None] * (n + 1)  # gap_index[i]: the open interval before cuts[i]
        bounds = [(ctype.lo, ctype.lo_closed)] + [(c, False) for c in self.cuts]
        uppers = [(c, False) for c in self.cuts] + [(ctype.hi, ctype.hi_closed)]
        for i, ((a, a_closed), (b, b_closed)) in enumerate(zip(bounds, uppers)):
            if i > 0:
                cut = self.cuts[i - 1]
                if lat.on(cut):
                    self.point_index[i - 1] = self._add(Region("point", cut, value_text(cut), cut, cut))
            region = self._between(a, a_closed, b, b_closed)
            if region is not None:
                self.gap_index[i] = self._add(region)

    def _between(self, a, a_closed: bool, b, b_closed: bool) -> Region | None:
        """The values between two bounds (None: unbounded), or None when no value of the lattice lies there."""
        lat = self.lattice
        kind = "all" if a is None and b is None else "between"
        if lat.discrete:
            first = None if a is None else a if a_closed and lat.on(a) else lat.above(a)
            last = None if b is None else b if b_closed and lat.on(b) else lat.below(b)
            if first is not None and last is not None and first > last:
                return None
            if first is not None or last is not None:
                rep = first if first is not None else last
            else:
                kind = self.ctype.kind
                rep = dt.date(2000, 1, 1) if kind == "date" else 0 if kind == "integer" else Decimal(0)
            label = ("any" if kind == "all" else value_text(first) if first == last
                     else interval_text(first, last, True, True))
            return Region(kind, rep, label.replace(" ", ""), a, b, a_closed, b_closed)
        if a is not None and b is not None and a == b and not (a_closed and b_closed):
            return None
        if a is None and b is None:
            rep = Decimal(0)
        elif a is None:
            rep = b - 1
        elif b is None:
            rep = a + 1
        else:
            rep = (a + b) / 2
        label = "any" if kind == "all" else interval_text(a, b, a_closed, b_closed)
        return Region(kind, rep, label.replace(" ", ""), a, b, a_closed, b_closed)

    def _listed(self, constants: list) -> None:
        ctype = self.ctype
        self.cuts = []
        if ctype.values is not None:
            values = list(ctype.values)
        else:
            values = sorted({c for c in constants if c is not None}, key=lambda v: (str(type(v)), v))
        self.value_index = {}
        for v in values:
            self.value_index[v] = self._add(Region("value", v, value_text(v), v, v))
        if ctype.values is None:
            rep = "other"
            while rep in self.value_index:
                rep += "_"
            self.other_index = self._add(Region("other", rep, "other"))

    def _add(self, region: Region) -> int:
        self.regions.append(region)
        return len(self.regions) - 1

    # ---- lookup
    def region_of(self, v: Any) -> int | None:
        """The region holding a typed value, or None when the value is outside the declared domain."""
        if v is None:
            return self.null_index
        if self.value_index is not None:
            found = self.value_index.get(v)
            return found if found is not None else self.other_index
        if not self.ctype.in_range(v):
            return None
        i = bisect.bisect_left(self.cuts, v)
        if i < len(self.cuts) and self.cuts[i] == v:
            return self.point_index[i]
        return self.gap_index[i]

    def mask_of(self, entry) -> int:
        """The regions on which an input entry holds, as a bitmask (decided by the reference evaluator's
        predicate, engine/table.entry_predicate, on each region's representative; an entry written again, as in
        a table grown by copying rules, is decided once)."""
        if not entry.tests:
            return self.all_mask  # `-` holds everywhere, none included
        key = (entry.negated, tuple((t.op, type(t.value), t.value, type(t.lo), t.lo, type(t.hi), t.hi, t.lo_closed,
                                     t.hi_closed) for t in entry.tests))
        found = self._masks.get(key)
        if found is None:
            holds = entry_predicate(entry)
            assert holds is not None  # None only for `-`
            found = 0
            for r, rep in enumerate(self._reps):
                if holds(rep):
                    found |= 1 << r
            self._masks[key] = found
        return found

    # ---- description
    def describe(self, mask: int) -> str:
        """A union of regions in the DSL's words: merged ranges for ordered columns, `-` for everything."""
        if mask == self.all_mask:
            return "-"
        indices = [r for r in range(len(self.regions)) if mask >> r & 1]
        parts: list[str] = []
        if self.ctype.ordered and self.ctype.values is None:
            run: list[int] = []
            for r in indices:
                if self.regions[r].kind == "null":
                    continue
                if run and r != run[-1] + 1:
                    parts.append(self._run_text(run))
                    run = []
                run.append(r)
            if run:
                parts.append(self._run_text(run))
            if self.null_index is not None and mask >> self.null_index & 1:
                parts.append("none")
        else:
            parts = [self.regions[r].label for r in indices]
        return ", ".join(parts)

    def _run_text(self, run: list[int]) -> str:
        first, last = self.regions[run[0]], self.regions[run[-1]]
        if first.kind == "all":
            return "-"
        lo, lo_closed, hi, hi_closed = first.lo, first.lo_closed, last.hi, last.hi_closed
        lat = self.lattice
        if lat.discrete:  # show integer, date and precision ranges with their first and last value
            if lo is not None and not lo_closed:
                lo, lo_closed = lat.above(lo), True
            if hi is not None and not hi_closed:
                hi, hi_closed = lat.below(hi), True
        if lo is not None and lo == hi:
            return value_text(lo)
        return interval_text(lo, hi, lo_closed, hi_closed)


def constants_by_column(model: TableModel) -> list[list]:
    out: list[list] = [[] for _ in model.inputs]
    for rule in model.rules:
        for k, entry in enumerate(rule.entries):
            out[k].extend(entry.constants())
    return out


class TablePartition:
    """All columns' regions, each rule as per-column region masks, and per region the mask of rules allowing it."""

    def __init__(self, model: TableModel):
        self.model = model
        consts = constants_by_column(model)
        self.columns = [ColumnPartition(c, k) for c, k in zip(model.inputs, consts)]
        self.rule_masks: list[tuple[int, ...]] = [
            tuple(col.mask_of(e) for col, e in zip(self.columns, rule.entries)) for rule in model.rules]
        self.region_rules: list[list[int]] = []  # [column][region] -> bitmask of rules
        for k, col in enumerate(self.columns):
            # Rules grouped by their entry's mask first: most entries of a real table are `-` or repeated, and each
            # distinct mask then sets its regions once instead of once per rule.
            rules_with: dict[int, int] = {}
            for i, masks in enumerate(self.rule_masks):
                rules_with[masks[k]] = rules_with.get(masks[k], 0) | 1 << i
            per_region = [0] * len(col.regions)
            for m, rules in rules_with.items():
                while m:
                    low = m & -m
                    per_region[low.bit_length() - 1] |= rules
                    m ^= low
            self.region_rules.append(per_region)
        self.all_rules = (1 << len(model.rules)) - 1

    def point(self, masks: tuple[int, ...]) -> tuple:
        """A concrete input inside a product of region sets: the first region's value per column."""
        return tuple(col.regions[(m & -m).bit_length() - 1].rep for col, m in zip(self.columns, masks))

    def describe(self, masks: tuple[int, ...]) -> str:
        parts = []
        for col, m in zip(self.columns, masks):
            text = col.describe(m)
            if text != "-":
                parts.append(f"{col.column.name}: {text}")
        return ", ".join(parts) if parts else "every input"


class IndexedTable(TableEvaluator):
    """The evaluator with matching by region lookup: one bisect and one AND of rule masks per column."""

    def __init__(self, model: TableModel, partition: TablePartition | None = None):
        super().__init__(model)
        self.partition = partition or TablePartition(model)

    def matches(self, values: tuple) -> tuple[int, ...]:
        p = self.partition
        mask = p.all_rules
        for col, per_region, v in zip(p.columns, p.region_rules, values):
            r = col.region_of(v)
            if r is None:  # outside the declared domain: no region; ask the plain evaluator
                return TableEvaluator.matches(self, values)
            mask &= per_region[r]
            if not mask:
                return ()
        out = []
        while mask:
            low = mask & -mask
            out.append(low.bit_length() - 1)
            mask ^= low
        return tuple(out)
