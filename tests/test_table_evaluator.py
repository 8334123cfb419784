"""The decision-table evaluator against hand-computed expectations: every hit policy, its error outcomes, the
aggregations, FEEL's null semantics; and the region index used for replay against the plain evaluator."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

import pytest

from mbt.engine.table import TableEvaluator, entry_matches, entry_predicate
from mbt.parsing.loader import parse_text
from mbt.tables.regions import IndexedTable


def table(hit: str, rules: str, outputs: str = 'output o: string {"high", "mid", "low"}', extra: str = "") -> object:
    text = (f"table t {{\n  hit {hit}\n  input age: integer [0..120]\n  input region: string {{\"EU\", \"US\"}}\n"
            f"  {outputs}\n{extra}{rules}}}\n")
    return parse_text(text, "t.dt").models[0]


# Rules used by most policies: r1 age < 18; r2 age in [16..65] and EU; r3 age >= 60; r4 US.
OVERLAPPING = """\
  rule r1: < 18 | - -> "low"
  rule r2: [16..65] | "EU" -> "mid"
  rule r3: >= 60 | - -> "high"
  rule r4: - | "US" -> "mid"
"""


def decide(model, age, region):
    return TableEvaluator(model).decide((age, region))


# (hit, age, region) -> (matched rule names, contributing rule names, result, error fragment or None)
CASES = [
    # UNIQUE: one match gives its outputs; two matches are an error; none gives null (no default)
    ("unique", 10, "EU", ["r1"], ["r1"], {"o": "low"}, None),
    ("unique", 17, "EU", ["r1", "r2"], [], None, "UNIQUE violated: rules r1 and r2 both match"),
    ("unique", 62, "US", ["r3", "r4"], [], None, "UNIQUE violated"),
    ("unique", 17, "US", ["r1", "r4"], [], None, "rules r1 and r4 both match"),
    ("unique", 70, "EU", ["r3"], ["r3"], {"o": "high"}, None),
    # FIRST: the first match in rule order
    ("first", 17, "EU", ["r1", "r2"], ["r1"], {"o": "low"}, None),
    ("first", 62, "US", ["r3", "r4"], ["r3"], {"o": "high"}, None),
    ("first", 30, "EU", ["r2"], ["r2"], {"o": "mid"}, None),
    # PRIORITY: the output listed first wins (high > mid > low), whatever the rule order
    ("priority", 17, "EU", ["r1", "r2"], ["r2"], {"o": "mid"}, None),
    ("priority", 62, "EU", ["r2", "r3"], ["r3"], {"o": "high"}, None),
    ("priority", 17, "US", ["r1", "r4"], ["r4"], {"o": "mid"}, None),
    # RULE ORDER: every match, in rule order
    ("rule_order", 17, "EU", ["r1", "r2"], ["r1", "r2"], [{"o": "low"}, {"o": "mid"}], None),
    ("rule_order", 62, "US", ["r3", "r4"], ["r3", "r4"], [{"o": "high"}, {"o": "mid"}], None),
    ("rule_order", 30, "US", ["r4"], ["r4"], [{"o": "mid"}], None),
    # OUTPUT ORDER: every match, by output priority
    ("output_order", 17, "EU", ["r1", "r2"], ["r2", "r1"], [{"o": "mid"}, {"o": "low"}], None),
    ("output_order", 17, "US", ["r1", "r4"], ["r4", "r1"], [{"o": "mid"}, {"o": "low"}], None),
    # COLLECT without aggregation: the list of every match
    ("collect", 62, "EU", ["r2", "r3"], ["r2", "r3"], [{"o": "mid"}, {"o": "high"}], None),
    # no match: single hit gives null, multiple hit an empty list
    ("first", 30, "ZZ", [], [], None, None),
    ("rule_order", 30, "ZZ", [], [], [], None),
]


@pytest.mark.parametrize("hit, age, region, matched, contributing, result, error", CASES)
def test_hit_policy(hit, age, region, matched, contributing, result, error):
    model = table(hit, OVERLAPPING)
    names = [r.name for r in model.rules]
    d = TableEvaluator(model).decide((age, region))
    assert [names[i] for i in d.matched] == matched
    assert [names[i] for i in d.contributing] == contributing
    assert d.result == result
    if error is None:
        assert d.error is None
    else:
        assert error in d.error


def test_any_agrees_when_outputs_are_equal_and_fails_when_they_differ():
    model = table("any", OVERLAPPING)
    same = decide(model, 30, "US")  # r4 only
    assert same.result == {"o": "mid"} and same.error is None
    both_mid = TableEvaluator(model).decide((30, "EU"))  # r2 only
    assert both_mid.result == {"o": "mid"}
    agree = table("any", '  rule a: < 50 | - -> "mid"\n  rule b: - | "EU" -> "mid"\n')
    d = TableEvaluator(agree).decide((10, "EU"))
    assert (d.result, d.error, d.contributing) == ({"o": "mid"}, None, (0, 1))
    differ = decide(model, 17, "EU")  # r1 low, r2 mid
    assert d.error is None and differ.result is None
    assert differ.error == "hit policy ANY violated: matching rules r1 and r2 give different outputs"
    assert differ.contributing == ()


AGG_RULES = """\
  rule a: < 18 | - -> 10
  rule b: < 65 | "EU" -> 25
  rule c: - | "EU" -> 5
"""


@pytest.mark.parametrize("aggregation, age, region, expected", [
    ("sum", 10, "EU", 40), ("sum", 10, "US", 10), ("sum", 70, "US", None),
    ("min", 10, "EU", 5), ("min", 30, "EU", 5), ("min", 70, "US", None),
    ("max", 10, "EU", 25), ("max", 70, "EU", 5),
    ("count", 10, "EU", 3), ("count", 30, "US", 0), ("count", 70, "EU", 1),
])
def test_collect_aggregations(aggregation, age, region, expected):
    model = table(f"collect {aggregation}", AGG_RULES, outputs="output points: integer")
    d = TableEvaluator(model).decide((age, region))
    assert d.result == {"points": expected}
    assert d.error is None


def test_sum_of_decimal_outputs_is_exact_and_a_null_output_makes_the_sum_null():
    model = table("collect sum", '  rule a: - | - -> 0.1\n  rule b: - | - -> 0.2\n  rule c: > 100 | - -> -\n',
                  outputs="output fee: number precision 0.01")
    assert TableEvaluator(model).decide((10, "EU")).result == {"fee": Decimal("0.3")}
    assert TableEvaluator(model).decide((110, "EU")).result == {"fee": None}


def test_default_output_applies_only_when_no_rule_matches():
    model = table("unique", '  rule a: < 18 | - -> "low"\n',
                  outputs='output o: string {"high", "mid", "low"} default "mid"')
    miss = TableEvaluator(model).decide((30, "EU"))
    assert (miss.result, miss.default_used, miss.matched) == ({"o": "mid"}, True, ())
    hit = TableEvaluator(model).decide((10, "EU"))
    assert (hit.result, hit.default_used) == ({"o": "low"}, False)


def test_multiple_outputs_and_priority_over_compound_outputs():
    outputs = 'output o: string {"high", "low"}\n  output route: string {"desk", "bot"}'
    model = table("priority", '  rule a: - | - -> "low" | "desk"\n  rule b: - | "EU" -> "low" | "bot"\n'
                              '  rule c: > 100 | - -> "high" | "bot"\n', outputs=outputs)
    ev = TableEvaluator(model)
    # a and b tie on the first output; the second output decides: desk before bot.
    assert ev.decide((10, "EU")).result == {"o": "low", "route": "desk"}
    assert ev.decide((110, "EU")).result == {"o": "high", "route": "bot"}
    rule_order = table("rule_order", '  rule a: - | - -> "low" | "desk"\n  rule b: - | "EU" -> "high" | -\n',
                       outputs=outputs)
    assert TableEvaluator(rule_order).decide((1, "EU")).result == [{"o": "low", "route": "desk"},
                                                                   {"o": "high", "route": None}]


def test_null_follows_feel_three_valued_logic():
    text = """table n {
  hit rule_order
  input x: integer?
  input s: string?
  output o: string
  rule lt: < 18 | - -> "lt"
  rule not_lt: not(< 18) | - -> "not_lt"
  rule eq: - | "a" -> "eq"
  rule not_eq: - | not("a") -> "not_eq"
  rule is_null: none | - -> "is_null"
  rule not_null: not(none) | - -> "not_null"
  rule always: - | - -> "always"
}
"""
    model = parse_text(text, "n.dt").models[0]
    ev = TableEvaluator(model)

    def outs(x, s):
        return [row["o"] for row in ev.decide((x, s)).result]

    # null: a comparison is unknown (neither it nor its negation matches); an equality is false (its negation holds)
    assert outs(None, None) == ["not_eq", "is_null", "always"]
    assert outs(10, "a") == ["lt", "eq", "not_null", "always"]
    assert outs(20, "b") == ["not_lt", "not_eq", "not_null", "always"]


def test_ranges_with_open_and_closed_ends_and_dates():
    text = """table d {
  hit rule_order
  input n: number precision 0.01
  input day: date
  output o: string
  rule closed: [18..65] | - -> "closed"
  rule left_open: (18..65] | - -> "left_open"
  rule right_open: [18..65) | - -> "right_open"
  rule reversed_brackets: ]18..65[ | - -> "open"
  rule after: - | > date("2024-02-28") -> "after"
  rule leap: - | [date("2024-02-29")..date("2024-02-29")] -> "leap"
}
"""
    model = parse_text(text, "d.dt").models[0]
    ev = TableEvaluator(model)

    def outs(n, day):
        return [row["o"] for row in ev.decide((Decimal(n), day)).result]

    d0, d1 = dt.date(2024, 2, 28), dt.date(2024, 2, 29)
    assert outs("18", d0) == ["closed", "right_open"]
    assert outs("18.01", d1) == ["closed", "left_open", "right_open", "open", "after", "leap"]
    assert outs("65", d0) == ["closed", "left_open"]
    assert outs("65.01", d0) == []


def test_region_index_agrees_with_the_plain_evaluator_on_random_inputs():
    """The index used for replay is a different implementation of the same semantics: a differential test."""
    rng = random.Random(3)
    text = """table r {
  hit collect
  input a: integer [0..50]
  input b: number precision 0.5 [0..20]
  input c: string?
  output o: integer
"""
    for i in range(60):
        x, y = sorted(rng.randint(0, 50) for _ in range(2))
        p, q = sorted(Decimal(rng.randint(0, 40)) / 2 for _ in range(2))
        a = rng.choice(["-", f"< {x}", f">= {y}", f"[{x}..{y}]", f"not({x}, {y})", f"({x}..{y}]"])
        b = rng.choice(["-", f"<= {p}", f"> {q}", f"]{p}..{q}]" if p < q else "-", f"{p}"])
        c = rng.choice(["-", '"k"', '"k", "l"', 'not("k")', "none", "not(none)"])
        text += f"  rule r{i}: {a} | {b} | {c} -> {i}\n"
    model = parse_text(text + "}\n", "r.dt").models[0]
    plain, indexed = TableEvaluator(model), IndexedTable(model)
    for _ in range(3000):
        values = (rng.randint(0, 50), Decimal(rng.randint(0, 40)) / 2, rng.choice([None, "k", "l", "m"]))
        assert indexed.matches(values) == plain.matches(values), values


def test_the_fast_entry_predicates_agree_with_the_unary_test_semantics():
    """entry_predicate's closures (equalities, their negation, one comparison or range) against entry_matches,
    the semantics written out, on random entries and on values at, beside and between their bounds, and null."""
    rng = random.Random(5)
    text = "table p {\n  hit collect\n  input n: number?\n  input s: string?\n  output o: integer\n"
    for i in range(300):
        x, y = sorted(Decimal(k) / 2 for k in rng.sample(range(21), 2))  # x < y: no empty range
        n = rng.choice(["-", f"< {x}", f"<= {x}", f"> {x}", f">= {x}", f"{x}", f"{x}, {y}", f"not({x}, {y})",
                        f"[{x}..{y}]", f"({x}..{y}]", f"[{x}..{y})", f"({x}..{y})", f"not([{x}..{y}])",
                        f"< {x}, > {y}", "none", "not(none)", f"not(< {x})"])
        s = rng.choice(["-", '"k"', '"k", "l"', 'not("k")', 'not("k", "l")', "none", "not(none)", '"k", none'])
        text += f"  rule r{i}: {n} | {s} -> {i}\n"
    model = parse_text(text + "}\n", "p.dt").models[0]
    numbers = [None] + [Decimal(k) / 4 for k in range(-2, 45)]
    strings = [None, "k", "l", "m"]
    for rule in model.rules:
        for entry, values in zip(rule.entries, (numbers, strings)):
            holds = entry_predicate(entry)
            for v in values:
                assert (holds is None or holds(v)) == entry_matches(entry, v), (entry, v)
