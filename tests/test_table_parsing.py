"""Parsing decision tables, as data: valid tables with the facts they must yield (tests/cases/tables/valid), malformed
ones with the one located error each must give (tests/cases/tables/invalid.yaml)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from mbt.errors import LocatedError
from mbt.parsing.grammar import grammar_dir, parser
from mbt.parsing.loader import load_file, parse_text

CASES = Path(__file__).parent / "cases" / "tables"
VALID = sorted((CASES / "valid").glob("*.dt"))
INVALID = yaml.safe_load((CASES / "invalid.yaml").read_text(encoding="utf-8"))


def expectations(path: Path) -> dict:
    lines = [line[3:] for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#|")]
    return yaml.safe_load("\n".join(lines)) or {}


FACTS = {
    "hit": lambda m: m.hit_text,
    "inputs": lambda m: {c.name: c.type.text() for c in m.inputs},
    "outputs": lambda m: {c.name: c.type.text() + (f" default {_text(c.default)}" if c.has_default else "")
                          for c in m.outputs},
    "rules": lambda m: [r.name for r in m.rules],
    "notes": lambda m: {r.name: r.notes for r in m.rules if r.notes},
    "entries": lambda m: {r.name: [e.text() for e in r.entries] for r in m.rules},
}


def _text(value):
    from mbt.model.table import value_text

    return value_text(value)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_table_parses_with_expected_facts(path: Path):
    expected = expectations(path)
    assert expected
    models = {m.name: m for m in load_file(path).models}
    for name, facts in expected.items():
        for fact, want in facts.items():
            got = FACTS[fact](models[name])
            if isinstance(want, dict):
                got = {k: got.get(k) for k in want}
            assert got == want, f"{name}: {fact}"


def test_every_rule_of_table_lark_is_used_by_a_valid_case():
    """Every name a node of table.lark can carry (an alias, or a rule that is not inlined) occurs in a valid case."""
    text = re.sub(r"//[^\n]*", "", (grammar_dir() / "table.lark").read_text(encoding="utf-8"))
    defined = set(re.findall(r"^\??(\w+):", text, re.M))
    names = set()
    for rule in parser().rules:
        if str(rule.origin.name) not in defined:
            continue
        kept = [s for s in rule.expansion if not (s.is_term and s.filter_out)]
        if rule.alias:
            names.add(str(rule.alias))
        elif not (rule.options.expand1 and len(kept) == 1):
            names.add(str(rule.origin.name))
    used = set()
    for path in VALID:
        used |= {t.data for t in parser().parse(path.read_text(encoding="utf-8")).iter_subtrees()}
    assert sorted(names - used) == []


def test_annotations_spans_and_status_on_rules_and_columns():
    model = load_file(VALID[0]).models[0]
    kids = model.rules[0]
    assert (kids.span.describe(), kids.status.value, kids.severity.value) == ('policy:3', "stated", "critical")
    assert model.rules[2].status.value == "unspecified" and model.rules[2].status_reason == "the policy is silent"
    assert model.rules[3].explicit_id == "dated_rule"
    assert model.input("age").span.quote == "applicants are 0 to 120"
    assert model.input("region").status.value == "inferred"
    assert model.mcdc and model.contracts == ["loans-v1"] and model.title == "Loan decision"


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c["name"])
def test_invalid_table_gives_one_located_error(case):
    with pytest.raises(LocatedError) as err:
        parse_text(case["text"], "bad.dt")
    problem = err.value.problems[0]
    assert case["message_contains"] in f"{problem.message} {problem.hint or ''}", err.value.render()
    assert (problem.line, problem.column) == (case["line"], case["column"]), err.value.render()
    assert problem.source_line is not None and "Traceback" not in err.value.render()


def test_table_and_fsm_models_share_a_file_and_its_sources(tmp_path: Path):
    (tmp_path / "doc.md").write_text("refunds within 14 days\n", encoding="utf-8")
    path = tmp_path / "both.model"
    path.write_text('source doc "doc.md"\nfsm f {\n  state a initial\n}\ntable t {\n  input d: integer\n'
                    '  output o: boolean\n  rule <= 14 -> true @doc:1 "within 14 days"\n}\n', encoding="utf-8")
    kinds = [m.kind for m in load_file(path).models]
    assert kinds == ["fsm", "table"]


def test_strings_with_quotes_and_backslashes_round_trip_through_their_text():
    model = parse_text('table t {\n  input s: string\n  output o: string\n  rule "a \\"b\\" \\\\ c" -> "x"\n}\n',
                       "t.dt").models[0]
    entry = model.rules[0].entries[0]
    assert entry.tests[0].value == 'a "b" \\ c'
    again = parse_text(f'table t {{\n  input s: string\n  output o: string\n  rule {entry.text()} -> "x"\n}}\n',
                       "t.dt").models[0]
    assert again.rules[0].entries[0].tests[0].value == 'a "b" \\ c'
