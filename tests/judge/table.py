"""The decision-table judge: docs/coverage-rules/table.md implemented a second time, plainly and slowly.

It shares no code with mbt's table replay, region index or evaluator: a golden's values are read and typed here
(exact decimals; a string is not a number), every rule's unary tests are evaluated here (FEEL's three-valued null),
the hit policy and aggregation are applied here, and each element's status is decided from the written rule. It
reads the typed model (the generator's own DSL text, also when mbt measures the table through its DMN import) and
the element ids of `mbt.elements.table` (which point or interval a partition or boundary element stands for is read
from its id).
"""

from __future__ import annotations

import datetime as dt
import json
import random
import tempfile
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from mbt.api import import_dmn, load_models, measure
from mbt.elements.table import enumerate_table
from mbt.goldens.cases import GoldenCase, parse_case
from mbt.goldens.loader import load_goldens
from tests.judge.common import EXERCISED, VERIFIED, Campaign

# ------------------------------------------------------------------ reading a golden's values


class Invalid(Exception):
    """A value its input cannot take: the case is invalid."""


class Unequal:
    """An expected value its output cannot take (or for a name that is not an output): equal to nothing."""

    def __init__(self, raw: Any):
        self.raw = raw

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def number_of(raw: Any) -> Decimal | None:
    """A JSON number as an exact decimal; None for anything else (a bool, a string "18", a list)."""
    if isinstance(raw, bool) or not isinstance(raw, (int, Decimal)):
        return None
    number = Decimal(raw)
    return number if number.is_finite() else None


def read_input(raw: Any, ctype) -> Any:
    """A golden's input value, typed for its column; null (or missing, the caller's None) is FEEL's null."""
    if raw is None:
        return None
    kind = ctype.kind
    if kind in ("integer", "number"):
        number = number_of(raw)
        if number is None:
            raise Invalid(f"{raw!r} is not a number")
        if kind == "integer":
            if number != int(number):
                raise Invalid(f"{raw} is not a whole number")
            value: Any = int(number)
        else:
            value = number
            if ctype.precision is not None and number % ctype.precision != 0:
                raise Invalid(f"{raw} is finer than {ctype.precision}")
    elif kind == "string":
        if not isinstance(raw, str):
            raise Invalid(f"{raw!r} is not a string")
        value = raw
    elif kind == "boolean":
        if not isinstance(raw, bool):
            raise Invalid(f"{raw!r} is not true/false")
        value = raw
    elif kind == "date":
        try:
            value = dt.date.fromisoformat(raw)
        except (TypeError, ValueError):
            raise Invalid(f"{raw!r} is not a date") from None
    else:
        raise NotImplementedError(kind)
    if ctype.values is not None and value not in ctype.values:
        raise Invalid(f"{raw!r} is not an allowed value")
    if ctype.lo is not None and (value < ctype.lo or (value == ctype.lo and not ctype.lo_closed)):
        raise Invalid(f"{raw!r} is below the domain")
    if ctype.hi is not None and (value > ctype.hi or (value == ctype.hi and not ctype.hi_closed)):
        raise Invalid(f"{raw!r} is above the domain")
    return value


def read_output(raw: Any, kind: str) -> Any:
    """An expected output value, typed by the output's kind only (no domain: a wrong value simply differs)."""
    if raw is None:
        return None
    if kind in ("integer", "number"):
        number = number_of(raw)
        if number is None or (kind == "integer" and number != int(number)):
            return Unequal(raw)
        return int(number) if kind == "integer" else number
    if kind == "string":
        return raw if isinstance(raw, str) else Unequal(raw)
    if kind == "boolean":
        return raw if isinstance(raw, bool) else Unequal(raw)
    try:
        return dt.date.fromisoformat(raw)
    except (TypeError, ValueError):
        return Unequal(raw)


# ------------------------------------------------------------------ FEEL unary tests and the hit policies


def test_holds(t, v) -> bool | None:
    """One positive unary test: true, false, or None (FEEL's null: a comparison with null is unknown)."""
    if t.op == "null":
        return v is None
    if v is None:
        return False if t.op == "=" else None  # null = "EU" is false; null < 18 is null
    if t.op == "range":
        low = v > t.lo or (t.lo_closed and v == t.lo)
        high = v < t.hi or (t.hi_closed and v == t.hi)
        return low and high
    return {"=": v == t.value, "<": v < t.value, "<=": v <= t.value, ">": v > t.value, ">=": v >= t.value}[t.op]


def entry_holds(entry, v) -> bool:
    """`-` matches anything (null too); a list of tests holds when one is true; not(...) negates, null stays null."""
    if not entry.tests:
        return True
    results = [test_holds(t, v) for t in entry.tests]
    value = True if True in results else None if None in results else False
    if entry.negated:
        value = None if value is None else not value
    return value is True


@dataclass
class Outcome:
    matched: list[int]
    contributing: list[int] = field(default_factory=list)
    result: Any = None  # {output: value}, None, or a list of {output: value}
    error: bool = False


def decide(model, values: list) -> Outcome:
    """DMN 1.3, 8.2.11: the hit policy over the matching rules."""
    matched = [r.index for r in model.rules if all(entry_holds(e, v) for e, v in zip(r.entries, values))]
    names = [o.name for o in model.outputs]
    rows = {i: dict(zip(names, model.rules[i].outputs)) for i in matched}
    hit, agg = model.hit, model.aggregation
    if not matched:
        if any(o.has_default for o in model.outputs):
            return Outcome([], [], {o.name: o.default for o in model.outputs})
        if agg is not None:
            return Outcome([], [], {names[0]: 0 if agg == "COUNT" else None})
        return Outcome([], [], None if hit in ("UNIQUE", "ANY", "PRIORITY", "FIRST") else [])
    if hit == "UNIQUE":
        return Outcome(matched, matched, rows[matched[0]]) if len(matched) == 1 else Outcome(matched, error=True)
    if hit == "ANY":
        if all(rows[i] == rows[matched[0]] for i in matched):
            return Outcome(matched, matched, rows[matched[0]])
        return Outcome(matched, error=True)
    if hit == "FIRST":
        return Outcome(matched, [matched[0]], rows[matched[0]])
    rank = {i: priority(model, i) for i in matched}
    if hit == "PRIORITY":
        best = min(matched, key=lambda i: (rank[i], i))
        return Outcome(matched, [best], rows[best])
    if hit == "OUTPUT ORDER":
        ordered = sorted(matched, key=lambda i: (rank[i], i))
        return Outcome(matched, matched, [rows[i] for i in ordered])
    if agg is None:
        return Outcome(matched, matched, [rows[i] for i in matched])  # RULE ORDER, COLLECT
    got = [rows[i][names[0]] for i in matched]
    if agg == "COUNT":
        total: Any = len(got)
    elif None in got:
        total = None
    else:
        total = {"SUM": sum, "MIN": min, "MAX": max}[agg](got)
    return Outcome(matched, matched, {names[0]: total})


def priority(model, i: int) -> tuple:
    """Output by output, the position of the rule's value among the allowed values; outputs without them don't rank."""
    key = []
    for column, value in zip(model.outputs, model.rules[i].outputs):
        allowed = list(column.type.values or ())
        key.append(allowed.index(value) if value in allowed else len(allowed))
    return tuple(key)


# ------------------------------------------------------------------ which point or interval an element stands for


def parse_point(text: str, kind: str) -> Any:
    if text.startswith('"'):
        return json.loads(text)
    if text in ("true", "false"):
        return text == "true"
    if text.startswith("date("):
        return dt.date.fromisoformat(json.loads(text[5:-1]))
    return int(text) if kind == "integer" else Decimal(text)


def in_partition(label: str, v: Any, kind: str, listed: list) -> bool:
    """Whether value v is in the region a `partition:INPUT:LABEL` element names."""
    if label == "none":
        return v is None
    if v is None:
        return False
    if label == "any":
        return True
    if label == "other":
        return v not in listed
    for op in ("<=", ">=", "<", ">"):
        if label.startswith(op):
            c = parse_point(label[len(op):], kind)
            return {"<=": v <= c, ">=": v >= c, "<": v < c, ">": v > c}[op]
    if label[0] in "[(" and ".." in label:
        lo, hi = (parse_point(x, kind) for x in label[1:-1].split(".."))
        return (v > lo or (label[0] == "[" and v == lo)) and (v < hi or (label[-1] == "]" and v == hi))
    return v == parse_point(label, kind)


# ------------------------------------------------------------------ the rule


@dataclass
class Judgement:
    statuses: dict[str, str]
    contradicted: bool = False
    invalid: bool = False


def judgement(model, case: GoldenCase, elements: list[str] | None = None) -> Judgement:
    """Statuses (element id -> verified / exercised), and whether the golden contradicts the table or is invalid;
    statuses only for `elements` when they are given (all of the table's by default)."""
    if elements is None:
        elements = [e.id for e in enumerate_table(model)]
    exercised: set[str] = set()
    verified: set[str] = set()
    contradicted = False
    for check in case.decisions:
        if check.table != model.name:
            continue
        try:
            values = [read_input(check.inputs.get(c.name), c.type) for c in model.inputs]
        except Invalid:
            return Judgement({}, invalid=True)  # invalid: it counts nowhere, its other decisions neither
        outcome = decide(model, values)
        reached = reached_elements(model, elements, values, outcome)
        exercised |= reached
        agrees = agreement(model, check, outcome) if check.expect_given or check.expect_error else None
        if agrees is False:
            contradicted = True
        elif agrees:
            verified |= reached
    if contradicted:
        verified = set()  # a golden contradicting the table verifies nothing of it
    return Judgement({e: VERIFIED if e in verified else EXERCISED for e in exercised}, contradicted)


def judge(model, case: GoldenCase) -> dict[str, str]:
    return judgement(model, case).statuses


def reached_elements(model, elements: list[str], values: list, outcome: Outcome) -> set[str]:
    out = {f"rule:{model.rules[i].name}" for i in outcome.contributing}
    for column, v in zip(model.inputs, values):
        prefix = f"partition:{column.name}:"
        labels = [e[len(prefix):] for e in elements if e.startswith(prefix)]
        listed = [parse_point(label, column.type.kind) for label in labels if label.startswith('"')]
        out |= {prefix + label for label in labels if in_partition(label, v, column.type.kind, listed)}
        prefix = f"boundary:{column.name}="
        out |= {e for e in elements if e.startswith(prefix) and v is not None
                and v == parse_point(e[len(prefix):], column.type.kind)}
    for rule in model.rules:
        holds = [entry_holds(e, v) for e, v in zip(rule.entries, values)]
        if all(holds):
            out.add(f"mcdc:{rule.name}")
        for k, column in enumerate(model.inputs):
            if not holds[k] and all(h for j, h in enumerate(holds) if j != k):
                out.add(f"mcdc:{rule.name}:{column.name}=false")
    return out & set(elements)


def agreement(model, check, outcome: Outcome) -> bool | None:
    """True: the check agrees; False: it contradicts the table; None: it checks nothing (neither)."""
    if check.expect_error:
        return outcome.error
    if outcome.error:
        return False
    expect, result = check.expect, outcome.result
    kinds = {o.name: o.type.kind for o in model.outputs}
    if isinstance(result, list):
        if not isinstance(expect, list):
            return None
        if any(not isinstance(item, dict) for item in expect) and len(model.outputs) != 1:
            return None
        rows = [item if isinstance(item, dict) else {model.outputs[0].name: item} for item in expect]
        wanted = [{k: read_output(v, kinds[k]) if k in kinds else Unequal(v) for k, v in row.items()} for row in rows]
        if model.hit == "COLLECT":
            rest = list(result)
            for row in wanted:
                if row not in rest:
                    return False
                rest.remove(row)
            return not rest
        return wanted == result
    if expect is None:
        return result is None or all(v is None for v in result.values())
    if not isinstance(expect, dict):
        if len(model.outputs) != 1:
            return None
        expect = {model.outputs[0].name: expect}
    named = [name for name in expect if name in kinds]
    if any(read_output(expect[name], kinds[name]) != (None if result is None else result[name]) for name in named):
        return False
    return True if named else None


# ------------------------------------------------------------------ random tables


@dataclass
class Table:
    """A random table: its DSL text, and the DMN it is also written as (measured through `mbt import dmn`)."""

    dsl: str
    dmn: str | None = None
    features: set[str] = field(default_factory=set)


HITS = ["unique", "any", "priority", "first", "rule_order", "output_order", "collect",
        "collect sum", "collect min", "collect max", "collect count"]
DMN_HITS = {"unique": "UNIQUE", "any": "ANY", "priority": "PRIORITY", "first": "FIRST", "rule_order": "RULE ORDER",
            "output_order": "OUTPUT ORDER", "collect": "COLLECT"}


def random_entry(rng: random.Random, kind: str, optional: bool) -> str:
    if rng.random() < 0.3:
        return "-"
    if kind == "integer":
        a = rng.randint(0, 20)
        return rng.choice([f"< {a}", f"<= {a}", f"> {a}", f">= {a}", f"{a}", f"[{a}..{min(a + rng.randint(0, 6), 20)}]",
                           f"not({a})", f"{a}, {rng.randint(0, 20)}", f"not(< {a})"])
    if kind == "number":
        a = Decimal(rng.randint(0, 16)) / 2
        choices = [f"< {a}", f">= {a}", f"]{a}..{a + 2}]", f"{a}", f"> {a}", f"not(<= {a})"]
        return rng.choice(choices + (["none", "not(none)"] if optional else []))
    return rng.choice(['"a"', '"b"', '"a", "b"', 'not("a")', '"c"'] + (["none"] if optional else []))


def random_table(rng: random.Random) -> Table:
    dmn = rng.random() < 0.2  # measured through `mbt import dmn`: what DMN can say (no precision, no `?`)
    hit = rng.choice(HITS)
    agg = hit.split()[1] if " " in hit else None
    features = {f"hit {hit}"} | ({"dmn"} if dmn else set())
    d_optional = not dmn and rng.random() < 0.5
    precision = not dmn and rng.random() < 0.7
    s_optional = not dmn and rng.random() < 0.2
    d_type = f"number{'?' if d_optional else ''}{' precision 0.5' if precision else ''} [0..10]"
    s_type = f"string{'?' if s_optional else ''} {{\"a\", \"b\", \"c\"}}"
    mcdc = not dmn and rng.random() < 0.3  # DMN has no word for it
    lines = ["table t {", f"  hit {hit}"] + (["  mcdc"] if mcdc else []) + [
        "  input i: integer [0..20]", f"  input d: {d_type}", f"  input s: {s_type}"]
    default = rng.random() < 0.3
    second = agg is None and rng.random() < 0.3  # an output without allowed values (it does not rank)
    if agg:
        lines.append("  output o: integer [0..9]" + (" default 0" if default else ""))
    else:
        lines.append('  output o: string {"x", "y", "z"}' + (' default "z"' if default else ""))
    if second:
        lines.append("  output n: string")
        features.add("unranked output" if hit in ("priority", "output_order") else "second output")
    if default and agg:
        features.add("aggregation default")
    if mcdc:
        features.add("mcdc")
    rules = []
    for k in range(rng.randint(1, 5)):
        out = str(rng.randint(0, 9)) if agg else rng.choice(['"x"', '"y"', '"z"'])
        if second:
            out += " | " + rng.choice(['"p"', '"q"'])
        entries = [random_entry(rng, "integer", False), random_entry(rng, "number", d_optional),
                   random_entry(rng, "string", s_optional)]
        rules.append((entries, out))
        lines.append(f"  rule r{k}: {' | '.join(entries)} -> {out}")
    lines.append("}")
    dsl = "\n".join(lines) + "\n"
    if not dmn:
        return Table(dsl, None, features)
    partial = rng.random() < 0.5
    if partial:
        features.add("dmn partial")
    return Table(dsl, dmn_text(hit, agg, default, second, rules, partial), features)


def dmn_text(hit: str, agg: str | None, default: bool, second: bool, rules: list, partial: bool) -> str:
    """The same table as DMN 1.3, its types from item definitions (and a second, unsupported decision)."""
    out_type, out_values = ("integer", "[0..9]") if agg else ("tOut", None)
    default_entry = f"<defaultOutputEntry><text>{'0' if agg else '&quot;z&quot;'}</text></defaultOutputEntry>"
    xml = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="j" name="j" namespace="urn:j">',
           '  <itemDefinition name="tI"><typeRef>integer</typeRef><allowedValues><text>[0..20]</text></allowedValues>'
           '</itemDefinition>',
           '  <itemDefinition name="tNum"><typeRef>number</typeRef></itemDefinition>',
           '  <itemDefinition name="tS"><typeRef>string</typeRef>'
           '<allowedValues><text>"a","b","c"</text></allowedValues></itemDefinition>',
           '  <itemDefinition name="tOut"><typeRef>string</typeRef>'
           '<allowedValues><text>"x","y","z"</text></allowedValues></itemDefinition>',
           '  <decision id="t" name="t">',
           f'    <decisionTable id="dt" hitPolicy="{DMN_HITS[hit.split()[0]]}"'
           + (f' aggregation="{agg.upper()}"' if agg else "") + ">",
           '      <input id="in_i"><inputExpression typeRef="tI"><text>i</text></inputExpression></input>',
           '      <input id="in_d"><inputExpression typeRef="tNum"><text>d</text></inputExpression>'
           '<inputValues><text>[0..10]</text></inputValues></input>',
           '      <input id="in_s"><inputExpression typeRef="tS"><text>s</text></inputExpression></input>',
           f'      <output id="out_o" name="o" typeRef="{out_type}">'
           + (f"<outputValues><text>{out_values}</text></outputValues>" if out_values else "")
           + (default_entry if default else "") + "</output>"]
    if second:
        xml.append('      <output id="out_n" name="n" typeRef="string"/>')
    for k, (entries, out) in enumerate(rules):
        cells = "".join(f"<inputEntry><text>{escape(e)}</text></inputEntry>" for e in entries)
        cells += "".join(f"<outputEntry><text>{escape(o.strip())}</text></outputEntry>" for o in out.split("|"))
        xml.append(f'      <rule id="r{k}">{cells}</rule>')
    xml += ["    </decisionTable>", "  </decision>"]
    if partial:
        xml += ['  <decision id="fancy" name="fancy"><decisionTable id="f" hitPolicy="UNIQUE">',
                '    <input id="fi"><inputExpression typeRef="number"><text>x</text></inputExpression></input>',
                '    <output id="fo" name="y" typeRef="number"/>',
                '    <rule id="f1"><inputEntry><text>x * 2 &gt; 1</text></inputEntry>'
                '<outputEntry><text>1</text></outputEntry></rule>',
                "  </decisionTable></decision>"]
    return "\n".join(xml + ["</definitions>"]) + "\n"


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


# ------------------------------------------------------------------ random goldens

INEXACT_INT = Decimal("17.99999999999999999")  # a float reads it as 18.0
INEXACT_D = Decimal("4.50000000000000001")  # a float reads it as 4.5


def random_value(rng: random.Random, name: str, features: set[str]) -> Any:
    """An input value: mostly good ones (boundaries come often in [0..20]), some the column cannot take."""
    roll = rng.random()
    if roll < 0.04:
        features.add("missing input")
        return MISSING
    if roll < 0.07:
        features.add("null input")
        return None
    if roll < 0.09:
        features.add("string for a number" if name != "s" else "bad string")
        return {"i": "7", "d": "2.5", "s": "d"}[name]
    if roll < 0.12 and name != "s":
        features.add("inexact decimal")
        return INEXACT_INT if name == "i" else INEXACT_D
    if roll < 0.14 and name != "s":
        return {"i": 25, "d": Decimal("0.25")}[name]  # outside the domain / finer than the precision
    if name == "i":
        return Decimal(f"{rng.randint(0, 20)}.0") if rng.random() < 0.05 else rng.randint(0, 20)  # 4.0 is 4
    if name == "d":
        return Decimal(rng.randint(0, 20)) / 2
    return rng.choice(["a", "b", "c"])


MISSING = object()


def random_expectation(rng: random.Random, model, outcome: Outcome, features: set[str]) -> dict:
    roll = rng.random()
    if roll < 0.12:
        return {"expect_error": True}
    if roll < 0.2:
        return {}  # no expectation: exercises only
    if roll < 0.25:
        features.add("vacuous expect")
        return {"expect": rng.choice([{}, {"zz": "x"}])}
    truth: Any = outcome.result
    if roll < 0.4:
        features.add("wrong expect")
        return {"expect": rng.choice(["x", "y", {"o": "z"}, None, 3, [], ["x"], [{"o": 1}], {"o": "x", "zz": 1}])}
    if isinstance(truth, list):
        rows = [dict(r) for r in truth]
        if rows and rng.random() < 0.15 and isinstance(rows[0]["o"], int):
            rows[0]["o"] = rows[0]["o"] + INEXACT_INT - 18  # 3 -> 2.99999999999999999: not 3
            features.add("inexact expect")
        if model.hit == "COLLECT":
            rng.shuffle(rows)
        if len(model.outputs) == 1 and rng.random() < 0.5:
            return {"expect": [r["o"] for r in rows]}
        return {"expect": rows}
    if truth is None:
        return {"expect": None}
    truth = dict(truth)
    if isinstance(truth.get("o"), int) and rng.random() < 0.15:
        truth["o"] = truth["o"] + INEXACT_INT - 18
        features.add("inexact expect")
    if len(model.outputs) > 1 and rng.random() < 0.4:
        features.add("partial expect")
        return {"expect": {"o": truth["o"]}}
    if len(model.outputs) == 1 and rng.random() < 0.5:
        return {"expect": truth["o"]}
    return {"expect": truth}


def random_decision(rng: random.Random, model, features: set[str]) -> dict:
    inputs = {}
    for name in ("i", "d", "s"):
        value = random_value(rng, name, features)
        if value is not MISSING:
            inputs[name] = value
    try:
        values = [read_input(inputs.get(c.name), c.type) for c in model.inputs]
    except Invalid:
        values = [None] * len(model.inputs)
    outcome = decide(model, values)
    return {"table": "t", "inputs": inputs, **random_expectation(rng, model, outcome, features)}


def random_golden(rng: random.Random, model, number: int, features: set[str]) -> dict:
    if rng.random() < 0.15:
        features.add("several decisions")
        decisions = [random_decision(rng, model, features) for _ in range(rng.randint(2, 3))]
        return {"id": f"c{number}", "turns": [{"user": "hello"}], "decisions": decisions}
    return {"id": f"c{number}", **random_decision(rng, model, features)}


def json_text(value: Any) -> str:
    """JSON with decimals written exactly (the golden a person would type)."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(json_text(v) for v in value) + "]"
    return json.dumps(value)


# ------------------------------------------------------------------ the campaign


def campaign(cases: int, seed: int, per_table: int = 12, tally: dict | None = None,
             blame: dict | None = None) -> Campaign:
    """Random tables and goldens: the judge's statuses against `mbt coverage`'s, golden by golden. `tally` counts
    the goldens showing each feature (a table's features count for each of its goldens); `blame` counts, per
    feature, the goldens on which judge and mbt disagree."""
    rng = random.Random(seed)
    result = Campaign("table")
    tally = {} if tally is None else tally
    blame = {} if blame is None else blame
    with tempfile.TemporaryDirectory() as folder:
        number = 0
        while result.cases < cases:
            number += 1
            table = random_table(rng)
            path = Path(folder) / f"t{number}.dt"
            path.write_text(table.dsl, encoding="utf-8")
            count = min(per_table, cases - result.cases)
            try:
                (model,) = load_models([str(path)])[1]  # the judge's model: the DSL as written (parsed, typed)
            except Exception as err:  # noqa: BLE001 - every generated table is valid: mbt refusing one disagrees
                refused(result, [f"c{number * 100 + k}" for k in range(count)], path, err, table.features, tally, blame)
                continue
            tags = [set(table.features) for _ in range(count)]
            goldens = [random_golden(rng, model, number * 100 + k, tags[k]) for k in range(count)]
            lines = [json_text(g) for g in goldens]
            golden_path = Path(folder) / f"g{number}.jsonl"
            golden_path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            # The judge reads the goldens itself: JSON numbers as exact decimals.
            mine = [parse_case(json.loads(line, parse_float=Decimal), str(golden_path), k + 1)
                    for k, line in enumerate(lines)]
            try:
                measured, contradicted, invalid = mbt_side(table, path, golden_path)
            except Exception as err:  # noqa: BLE001 - mbt refusing a table the judge reads is a disagreement
                refused(result, [case.id for case in mine], path, err, table.features, tally, blame)
                continue
            for case, tag in zip(mine, tags):
                j = judgement(model, case)
                statuses = dict(j.statuses, contradicted=str(j.contradicted), invalid=str(j.invalid))
                got = dict(measured.get(case.id, {}), contradicted=str(case.id in contradicted),
                           invalid=str(case.id in invalid))
                before = len(result.disagreements)
                result.compare(f"{path.name} {case.id}", statuses, got)
                tag |= {name for name, flag in (("contradicted", j.contradicted), ("invalid", j.invalid),
                                                ("verified", VERIFIED in j.statuses.values())) if flag}
                for name in tag:
                    tally[name] = tally.get(name, 0) + 1
                    if len(result.disagreements) > before:
                        blame[name] = blame.get(name, 0) + 1
    return result


def refused(result: Campaign, ids: list[str], path: Path, err: Exception, features: set[str], tally: dict,
            blame: dict) -> None:
    for case_id in ids:
        refusal = f"no: {str(err).splitlines()[0]}"
        result.compare(f"{path.name} {case_id}", {"table read": "yes"}, {"table read": refusal})
        for name in features | {"table refused"}:
            blame[name] = blame.get(name, 0) + 1
            tally[name] = tally.get(name, 0) + 1


def mbt_side(table: Table, path: Path, golden_path: Path) -> tuple[dict[str, dict[str, str]], set[str], set[str]]:
    """`mbt coverage` of the goldens file on the table (read from its DMN through `mbt import dmn` when it has one)."""
    if table.dmn is not None:
        dmn = path.with_suffix(".dmn")
        dmn.write_text(table.dmn, encoding="utf-8")
        path = path.with_name(path.stem + "-imported.dt")
        path.write_text(import_dmn(str(dmn)).text, encoding="utf-8")
    (model,) = load_models([str(path)])[1]
    report = measure([model], load_goldens([str(golden_path)]))
    out: dict[str, dict[str, str]] = {}
    for row in report.models[0].elements:
        for case_id in row.exercised_by:
            out.setdefault(case_id, {})[row.element.id] = EXERCISED
        for case_id in row.verified_by:
            out.setdefault(case_id, {})[row.element.id] = VERIFIED
    contradicted = {c.case for c in report.contradictions}
    invalid = {i.message.split("`")[1] for i in report.invalid_cases}
    return out, contradicted, invalid
