"""The table judge (tests/judge/table.py) against hand-computed FEEL and hit-policy results and the worked examples of
docs/coverage-rules/table.md, then against `mbt coverage` in a bounded random campaign."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from mbt.api import coverage, import_dmn, load_models
from mbt.goldens.cases import parse_case
from mbt.parsing.loader import parse_text
from tests.judge.common import mbt_statuses
from tests.judge.table import campaign, decide, dmn_text, entry_holds, judgement

CASES = Path(__file__).parent / "cases" / "tables"
WORKED, WORKED_GOLDENS = CASES / "worked.dt", CASES / "worked.jsonl"
V, E = "verified", "exercised"


def table(text: str):
    return parse_text(text, "t.dt").models[0]


# ---------------------------------------------------------------- the judge's own evaluator, by hand

NULLS = [("-", True), ("none", True), ("not(none)", False), ("< 5", False), ("not(< 5)", False), ("[1..3]", False),
         ("5", False), ("not(5)", True), ("5, < 3", False), ("not(5, 6)", True)]


@pytest.mark.parametrize("entry, holds", NULLS, ids=[e for e, _ in NULLS])
def test_the_judge_gives_null_feel_s_three_valued_answer(entry, holds):
    model = table(f"table t {{\n  input a: integer? [0..9]\n  output o: string\n  rule r: {entry} -> \"x\"\n}}\n")
    assert entry_holds(model.rules[0].entries[0], None) is holds


HIT = """table t {{
  hit {hit}
  input a: integer [0..9]
  output o: {out}
  output n: string
  rule r1: < 5 -> {v1} | "p"
  rule r2: < 3 -> {v2} | "q"
}}
"""


def test_the_judge_applies_each_hit_policy_by_hand():
    def outcome(hit, v1='"low"', v2='"high"', out='string {"high", "low"}', a=1):
        o = decide(table(HIT.format(hit=hit, v1=v1, v2=v2, out=out)), [a])
        return o.contributing, o.result, o.error

    assert outcome("unique") == ([], None, True)  # r1 and r2 both match
    assert outcome("unique", a=4) == ([0], {"o": "low", "n": "p"}, False)
    assert outcome("any") == ([], None, True)  # different outputs
    assert outcome("any", v2='"low"') == ([], None, True)  # `n` differs ("p", "q")
    same = table('table t {\n  hit any\n  input a: integer [0..9]\n  output o: string\n'
                 '  rule r1: < 5 -> "x"\n  rule r2: < 3 -> "x"\n}\n')
    assert (decide(same, [1]).contributing, decide(same, [1]).result) == ([0, 1], {"o": "x"})
    # priority ranks by `o` (listed "high" first); `n` lists no values and does not rank
    assert outcome("priority") == ([1], {"o": "high", "n": "q"}, False)
    assert outcome("first") == ([0], {"o": "low", "n": "p"}, False)
    assert outcome("output_order")[1] == [{"o": "high", "n": "q"}, {"o": "low", "n": "p"}]
    assert outcome("rule_order")[1] == [{"o": "low", "n": "p"}, {"o": "high", "n": "q"}]
    assert outcome("first", a=7) == ([], None, False)
    assert outcome("collect", a=7) == ([], [], False)


def test_the_judge_aggregates_and_takes_the_default_when_nothing_matches():
    text = ("table t {\n  hit collect AGG\n  input a: integer [0..9]\n  output o: integer DEFAULT\n"
            "  rule r1: < 5 -> 4\n  rule r2: < 3 -> 1\n}\n")
    results = {agg: decide(table(text.replace("AGG", agg).replace("DEFAULT", "")), [1]).result["o"]
               for agg in ("sum", "min", "max", "count")}
    assert results == {"sum": 5, "min": 1, "max": 4, "count": 2}
    assert decide(table(text.replace("AGG", "count").replace("DEFAULT", "")), [8]).result == {"o": 0}
    assert decide(table(text.replace("AGG", "sum").replace("DEFAULT", "")), [8]).result == {"o": None}
    assert decide(table(text.replace("AGG", "sum").replace("DEFAULT", "default 7")), [8]).result == {"o": 7}


# ---------------------------------------------------------------- the worked examples of the rules page

DISCOUNT_D1 = {"rule:senior": V, "partition:age:[66..120]": V, "partition:amount:[0..499.99]": V,
               'partition:tier:"basic"': V, "mcdc:senior": V, "mcdc:big:amount=false": V}
WORKED_STATUSES: dict[str, dict[str, str]] = {
    "D1": DISCOUNT_D1,
    "D2": {"rule:senior": V, "partition:age:65": V, "partition:amount:[500.01..1000]": V, 'partition:tier:"gold"': V,
           "boundary:age=65": V, "mcdc:senior": V, "mcdc:big_gold": V, "mcdc:big": V},
    "D3": {"rule:big_gold": E, "partition:age:[0..64]": E, "partition:amount:[500.01..1000]": E,
           'partition:tier:"gold"': E, "boundary:amount=500.01": E, "mcdc:big_gold": E, "mcdc:big": E,
           "mcdc:senior:age=false": E},
    "D4": {"partition:age:[0..64]": V, "partition:amount:500": V, "partition:tier:none": V, "boundary:age=64": V,
           "boundary:amount=500": V, "mcdc:senior:age=false": V, "mcdc:big:amount=false": V},
    "D5": {"rule:big": E, "partition:age:[0..64]": E, "partition:amount:[500.01..1000]": E, "partition:tier:none": E,
           "mcdc:big": E, "mcdc:big_gold:tier=false": E, "mcdc:senior:age=false": E},
    "D6": {}, "D7": {},
    "U1": {'partition:intent:"refund"': V, "partition:amount:[1001..10000]": V},
    "U2": {'partition:intent:"refund"': E, "partition:amount:[1001..10000]": E},
    "U3": {"rule:cancels": V, 'partition:intent:"cancel"': V, "partition:amount:1000": V, "boundary:amount=1000": V},
    "U4": {'partition:intent:"other"': V, "partition:amount:[0..999]": V},
    "U5": {"rule:cancels": E, 'partition:intent:"cancel"': E, "partition:amount:1000": E, "boundary:amount=1000": E},
    "F1": {"rule:base": V, "rule:large": V, "rule:fast": V, "partition:amount:[501..1000]": V,
           "partition:express:true": V},
    "F2": {"partition:amount:0": V, "partition:express:false": V, "boundary:amount=0": V},
    "F3": {"rule:base": E, "rule:large": E, "partition:amount:[501..1000]": E, "partition:express:false": E,
           "boundary:amount=501": E},
}
C1 = {"fees": {"rule:base": V, "partition:amount:[1..499]": V, "partition:express:false": V, "boundary:amount=1": V},
      "discount": {k: E for k in DISCOUNT_D1}}
CONTRADICTING, INVALID = {"D3", "U2", "F3"}, {"D6", "D7"}


def worked():
    models = {m.name: m for m in load_models([str(WORKED)])[1]}
    lines = WORKED_GOLDENS.read_text(encoding="utf-8").splitlines()
    cases = {}
    for number, line in enumerate(lines, start=1):
        case = parse_case(json.loads(line, parse_float=Decimal), str(WORKED_GOLDENS), number)
        cases[case.id] = case
    return models, cases


@pytest.mark.parametrize("name", sorted(WORKED_STATUSES))
def test_the_worked_examples_of_the_rules_page(name):
    models, cases = worked()
    case = cases[name]
    model = models[case.decisions[0].table]
    j = judgement(model, case)
    assert j.statuses == WORKED_STATUSES[name] == mbt_statuses(model, case)
    assert (j.contradicted, j.invalid) == (name in CONTRADICTING, name in INVALID)


def test_the_worked_conversation_verifies_one_table_and_contradicts_the_other():
    models, cases = worked()
    for name, statuses in C1.items():
        assert judgement(models[name], cases["C1"]).statuses == statuses == mbt_statuses(models[name], cases["C1"])
    assert judgement(models["discount"], cases["C1"]).contradicted


def test_the_ratios_the_rules_page_gives():
    report = coverage([str(WORKED)], [str(WORKED_GOLDENS)], use_gate=False)
    ratios = {(m.model, c.criterion): (c.verified.covered, c.verified.total) for m in report.models for c in m.criteria}
    assert {k: v for k, v in ratios.items() if v[1]} == {
        ("discount", "rule"): (1, 3), ("discount", "partition"): (9, 9), ("discount", "boundary"): (3, 4),
        ("discount", "mcdc"): (5, 7), ("routing", "rule"): (1, 3), ("routing", "partition"): (6, 6),
        ("routing", "boundary"): (1, 2), ("fees", "rule"): (3, 3), ("fees", "partition"): (5, 6),
        ("fees", "boundary"): (2, 4)}
    assert report.goldens.invalid == 2 and len(report.contradictions) == 4


# ---------------------------------------------------------------- the round's defects, by hand

def test_the_judge_and_mbt_on_a_dmn_table_with_item_definitions_beside_an_unsupported_one(tmp_path):
    rules = [(["< 5", ">= 2.5", '"a", "b"'], '"y" | "p"'), (["-", "-", 'not("a")'], '"x" | "q"')]
    dsl = ('table t {\n  hit priority\n  input i: integer [0..20]\n  input d: number [0..10]\n'
           '  input s: string {"a", "b", "c"}\n  output o: string {"x", "y", "z"} default "z"\n  output n: string\n'
           + "".join(f"  rule r{k}: {' | '.join(e)} -> {o}\n" for k, (e, o) in enumerate(rules)) + "}\n")
    path = tmp_path / "t.dmn"
    path.write_text(dmn_text("priority", None, True, True, rules, partial=True), encoding="utf-8")
    imported = import_dmn(str(path))
    assert imported.tables == ["t"] and imported.not_imported[0].startswith("fancy (line ")
    mbt_model = parse_text(imported.text, "t.dt").models[0]
    judge_model = table(dsl)
    case = parse_case({"id": "K", "table": "t", "inputs": {"i": 1, "d": Decimal("2.5"), "s": "b"},
                       "expect": {"o": "x", "n": "q"}}, "g.jsonl", 1)
    # Both match; priority ranks by `o` alone ("x" before "y"): r1 wins.
    statuses = judgement(judge_model, case).statuses
    assert statuses["rule:r1"] == V and "rule:r0" not in statuses and 'partition:s:"b"' in statuses
    assert statuses == mbt_statuses(mbt_model, case)


# ---------------------------------------------------------------- the bounded campaign

def test_judge_and_mbt_agree_on_random_tables_and_goldens():
    tally: dict = {}
    result = campaign(1500, seed=20261202, tally=tally)
    assert result.cases == 1500 and result.elements > 7000
    assert result.disagreements == [], "\n".join(result.disagreements[:20])
    # The generator reached every path the rule describes, the round's defects included.
    for feature in ("contradicted", "invalid", "verified", "null input", "missing input", "string for a number",
                    "inexact decimal", "inexact expect", "vacuous expect", "several decisions", "aggregation default",
                    "unranked output", "dmn", "dmn partial", "mcdc", "partial expect", "wrong expect"):
        assert tally.get(feature, 0) >= 10, (feature, tally)
