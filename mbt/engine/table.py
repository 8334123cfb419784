"""The reference evaluator of a decision table: DMN's unary-test semantics and every hit policy, rule by rule.

This is the meaning of a table. Everything else is checked against it: the region index used for fast replay
(tables/regions.py) is tested to agree with it, and every witness of the analysis is replayed on it before it is
reported.

Unary tests follow FEEL's three-valued logic on null (`none`): `none` matches only `-` and the test `none`; an
equality test against a value is false for null, a comparison or range is null (unknown), so `not(< 18)` does not
match null while `not("EU")` does. An entry matches when its value is true.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mbt.model.table import Entry, Rule, TableModel, UnaryTest, value_text


def test_value(t: UnaryTest, v: Any) -> bool | None:
    """One positive unary test on a typed value: True, False, or None (unknown, FEEL's null)."""
    op = t.op
    if op == "null":
        return v is None
    if v is None:
        return False if op == "=" else None
    if op == "=":
        return v == t.value
    if op == "<":
        return v < t.value
    if op == "<=":
        return v <= t.value
    if op == ">":
        return v > t.value
    if op == ">=":
        return v >= t.value
    # range
    above = v > t.lo or (t.lo_closed and v == t.lo)
    below = v < t.hi or (t.hi_closed and v == t.hi)
    return above and below


def entry_value(entry: Entry, v: Any) -> bool | None:
    """The three-valued result of an input entry: a list of tests holds when one holds; not() negates."""
    if not entry.tests:
        return True
    result: bool | None = False
    for t in entry.tests:
        r = test_value(t, v)
        if r is True:
            result = True
            break
        if r is None:
            result = None
    if entry.negated:
        return None if result is None else not result
    return result


def entry_matches(entry: Entry, v: Any) -> bool:
    return entry_value(entry, v) is True


def entry_predicate(entry: Entry) -> Callable[[Any], bool] | None:
    """A fast closure equivalent to entry_matches; None for `-` (always matches)."""
    if not entry.tests:
        return None
    tests = entry.tests
    if all(t.op == "=" for t in tests):
        values = frozenset(t.value for t in tests)
        if entry.negated:
            return lambda v: v not in values  # an equality is false for null, so its negation holds there
        if len(values) == 1:
            (only,) = values
            return lambda v: v is not None and v == only
        return lambda v: v is not None and v in values
    if len(tests) == 1 and not entry.negated:
        # One comparison or range, the commonest entry of a large table: test_value's expressions without its
        # dispatch on the operator (null makes them unknown, so they do not match it).
        t = tests[0]
        c, lo, hi, lo_closed, hi_closed = t.value, t.lo, t.hi, t.lo_closed, t.hi_closed
        if t.op == "<":
            return lambda v: v is not None and v < c
        if t.op == "<=":
            return lambda v: v is not None and v <= c
        if t.op == ">":
            return lambda v: v is not None and v > c
        if t.op == ">=":
            return lambda v: v is not None and v >= c
        if t.op == "range":
            return lambda v: (v is not None and (v > lo or (lo_closed and v == lo))
                              and (v < hi or (hi_closed and v == hi)))
    return lambda v: entry_value(entry, v) is True


@dataclass
class Decision:
    """What a table computes for one input: the matched and contributing rules, the result or the error."""

    matched: tuple[int, ...]  # indices of the rules whose entries all match, in rule order
    contributing: tuple[int, ...]  # the rules the hit policy takes the result from (empty on an error)
    result: Any = None  # single hit / aggregation: {output: value} (or None); rule/output order, collect: [{...}]
    error: str | None = None  # UNIQUE with several matches, ANY with different outputs
    default_used: bool = False  # no rule matched and the outputs' defaults were taken

    def describe(self, rules: list[Rule]) -> str:
        if self.error:
            return f"error: {self.error}"
        return value_plain_text(self.result)


def value_plain_text(result: Any) -> str:
    if result is None:
        return "none"
    if isinstance(result, list):
        return "[" + ", ".join(value_plain_text(r) for r in result) + "]"
    if isinstance(result, dict):
        return "{" + ", ".join(f"{k}: {value_text(v)}" for k, v in result.items()) + "}"
    return value_text(result)


class TableEvaluator:
    """Evaluates a table the plain way: every rule, every entry (tables/regions.py has the indexed version)."""

    def __init__(self, model: TableModel):
        self.model = model
        self.names = [o.name for o in model.outputs]
        self.rows = [[entry_predicate(e) for e in r.entries] for r in model.rules]
        self.outputs = [dict(zip(self.names, r.outputs)) for r in model.rules]
        # Priority of each rule's outputs: the position of each output value in its allowed values (lower wins).
        self.priority = [priority_key(model, r) for r in model.rules]

    def matches(self, values: tuple) -> tuple[int, ...]:
        out = []
        for i, row in enumerate(self.rows):
            for pred, v in zip(row, values):
                if pred is not None and not pred(v):
                    break
            else:
                out.append(i)
        return tuple(out)

    def rule_matches(self, i: int, values: tuple) -> bool:
        """Whether rule i matches (every entry holds), by its entries alone."""
        return all(pred is None or pred(v) for pred, v in zip(self.rows[i], values))

    def decide(self, values: tuple) -> Decision:
        return self.combine(self.matches(values))

    def decide_named(self, inputs: dict[str, Any]) -> Decision:
        return self.decide(tuple(inputs.get(c.name) for c in self.model.inputs))

    def combine(self, matched: tuple[int, ...]) -> Decision:
        """Apply the hit policy to the matched rules (DMN 1.3, 8.2.11)."""
        m, hit = self.model, self.model.hit
        rules = m.rules
        if not matched:
            # DMN 1.3, 8.2.11 / 8.3.2: no match gives the outputs' defaults where they are declared, for every hit
            # policy, aggregations included; else no result (COUNT of nothing is 0, a list policy an empty list).
            if m.defaults_when_nothing_matches:
                return Decision(matched, (), {o.name: o.default for o in m.outputs}, default_used=True)
            if m.aggregation is not None:
                return Decision(matched, (), {self.names[0]: 0 if m.aggregation == "COUNT" else None})
            if not m.single_hit:
                return Decision(matched, (), [])
            return Decision(matched, (), None)
        if hit == "UNIQUE":
            if len(matched) > 1:
                return Decision(matched, (), None, f"hit policy UNIQUE violated: rules {_names(rules, matched)} "
                                                   f"{'both' if len(matched) == 2 else 'all'} match")
            return Decision(matched, matched, dict(self.outputs[matched[0]]))
        if hit == "ANY":
            first = self.outputs[matched[0]]
            for i in matched[1:]:
                if self.outputs[i] != first:
                    return Decision(matched, (), None, f"hit policy ANY violated: matching rules "
                                                       f"{rules[matched[0]].name} and {rules[i].name} "
                                                       "give different outputs")
            return Decision(matched, matched, dict(first))
        if hit == "FIRST":
            return Decision(matched, matched[:1], dict(self.outputs[matched[0]]))
        if hit == "PRIORITY":
            winner = min(matched, key=lambda i: (self.priority[i], i))
            return Decision(matched, (winner,), dict(self.outputs[winner]))
        if hit == "OUTPUT ORDER":
            ordered = tuple(sorted(matched, key=lambda i: (self.priority[i], i)))
            return Decision(matched, ordered, [dict(self.outputs[i]) for i in ordered])
        # RULE ORDER and COLLECT: every match, in rule order (COLLECT's order is arbitrary; rule order is one).
        if m.aggregation is None:
            return Decision(matched, matched, [dict(self.outputs[i]) for i in matched])
        name = self.names[0]
        values = [self.outputs[i][name] for i in matched]
        return Decision(matched, matched, {name: aggregate(m.aggregation, values)})


def aggregate(aggregation: str, values: list) -> Any:
    """FEEL's sum/min/max/count over the collected outputs: count counts every output; a null makes the others null."""
    if aggregation == "COUNT":
        return len(values)
    if not values or any(v is None for v in values):
        return None
    if aggregation == "SUM":
        return sum(values[1:], values[0])
    return min(values) if aggregation == "MIN" else max(values)


def priority_key(model: TableModel, rule: Rule) -> tuple[int, ...]:
    """Lower is higher priority: per output (in column order), the position of the value in the allowed values."""
    key = []
    for column, value in zip(model.outputs, rule.outputs):
        values = column.type.values or ()
        key.append(values.index(value) if value in values else len(values))
    return tuple(key)


def _names(rules: list[Rule], indices) -> str:
    names = [rules[i].name for i in indices]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


__all__ = ["TableEvaluator", "Decision", "entry_matches", "entry_value", "test_value", "aggregate", "priority_key"]
