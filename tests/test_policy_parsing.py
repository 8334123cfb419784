"""Policy parsing as data: the valid case with the facts it must yield and every construct of policy.lark used,
malformed policies with the one located error each must give, and FSMs unaffected by the policy keywords."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from mbt.errors import LocatedError
from mbt.model.policy import PolicyModel
from mbt.parsing.grammar import grammar_dir, parser
from mbt.parsing.loader import load_file, parse_text

CASES = Path(__file__).parent / "cases" / "parse" / "policy"
INVALID = yaml.safe_load((CASES / "invalid.yaml").read_text(encoding="utf-8"))


def policy_tree_names() -> set[str]:
    """Every name a tree node built by a rule of policy.lark can carry (its aliases, and rules not inlined)."""
    text = (grammar_dir() / "policy.lark").read_text(encoding="utf-8")
    defined = set(re.findall(r"^\??([a-z_]\w*):", text, re.M))
    names = set()
    for rule in parser().rules:
        if rule.origin.name not in defined:
            continue
        kept = [s for s in rule.expansion if not (s.is_term and s.filter_out)]
        if rule.alias:
            names.add(str(rule.alias))
        elif not (rule.options.expand1 and len(kept) == 1):
            names.add(str(rule.origin.name))
    return names


def test_the_valid_case_uses_every_policy_construct():
    used = {t.data for t in parser().parse((CASES / "valid.policy").read_text(encoding="utf-8")).iter_subtrees()}
    assert not sorted(policy_tree_names() - used)


def test_the_valid_case_yields_its_model():
    model = load_file(CASES / "valid.policy").models[0]
    assert isinstance(model, PolicyModel)
    assert (model.name, model.title, model.contracts, model.algorithm) == \
        ("access", "Who may do what", ["access-v1", "access-v2"], "first-applicable")
    types = {name: a.type.text() for name, a in model.attributes.items()}
    assert types["subject.limit"] == "number precision 0.01 [0..1000.50]"
    assert types["subject.discount"] == "number precision 0.1 [-5..]"
    assert types["subject.factor"] == "number precision 1 [..-1]"
    assert types["resource.amount"] == "number precision 0.01?"
    assert types["resource.tag"] == "string?" and types["environment.night"] == "bool?"
    assert model.attributes["subject.limit"].type.hi == Decimal("1000.50")
    assert model.attributes["subject.role"].category == "subject"
    assert [(r.effect, r.name) for r in model.rules] == [
        ("permit", "owners"), ("deny", "blocked"), ("permit", "within"), ("permit", "tagged"),
        ("deny", "negative"), ("permit", "always_true"), ("deny", "everything")]
    rules = {r.name: r for r in model.rules}
    assert rules["owners"].target.text() == "action.id == read"
    assert rules["owners"].condition.text() == "subject.id == resource.owner"
    assert rules["within"].condition.text() == "resource.amount <= subject.limit - 0.50 + 1"
    assert rules["everything"].target is None and rules["everything"].condition is None
    assert rules["owners"].span.describe() == 'doc:4 "owners read"'
    assert (rules["blocked"].status.value, rules["blocked"].status_reason, rules["blocked"].severity.value) == \
        ("unspecified", "the document is silent", "critical")
    assert model.combining[0].severity.value == "high"
    assert [a.text() for a in model.assertions] == [
        "assert never permit when subject.blocked",
        "assert always deny when subject.role == user and action.id == write",
        "assert never not-applicable",
        "assert never indeterminate when subject.id == \"x\""]
    assert [(e.tool, e.fsm, [m.attribute for m in e.mappings]) for e in model.enforcements] == [
        ("issue_refund", "chat", ["subject.id", "resource.amount", "action.id"]), ("lookup", "chat", [])]
    assert not any(e.linked for e in model.enforcements)  # no fsm `chat` in the file


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c["name"])
def test_malformed_policy_gives_one_clear_located_error(case: dict, tmp_path: Path):
    path = tmp_path / "model.policy"
    path.write_text(case["text"], encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        load_file(path)
    first = err.value.problems[0]
    assert (first.line, first.column) == (case["line"], case["column"]), err.value.render()
    assert case["message_contains"] in first.message, err.value.render()
    if "hint_contains" in case:
        assert case["hint_contains"] in (first.hint or ""), err.value.render()
    rendered = err.value.render()
    assert rendered.startswith(f"{path}:{case['line']}:{case['column']}: error: ")
    for internal in ("Traceback", "__ANON", "$END", "Token(", "POLICY_ALGORITHM"):
        assert internal not in rendered


def test_invalid_case_names_are_unique():
    names = [c["name"] for c in INVALID]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("word", ["permit", "deny", "subject", "resource", "action", "environment", "target",
                                  "when", "assert", "never", "always", "enforce", "combining", "number"])
def test_policy_keywords_stay_fsm_state_names_even_after_an_expression(word: str):
    """policy.lark has expression rules of its own, so its item words are not keywords after an fsm expression."""
    text = (f"fsm m {{\n  var x: int[0..3] = 0\n  state a initial\n  state {word}\n  event e\n"
            f"  a -> {word} on e / x := x + 1\n  {word} -> a on e [x == 1]\n  {word} -> a on e [x > 1] / x := 0\n}}\n")
    model = parse_text(text, "m.fsm").models[0]
    assert [t.source for t in model.transitions] == ["a", word, word]


def test_policy_words_can_name_attributes_and_enum_values():
    model = parse_text("policy p {\n  combining deny-overrides\n  subject.permit: bool\n"
                       "  action.id: enum{permit, deny, when}\n  permit r target action.id == deny when subject.permit\n"
                       "}\n", "p.policy").models[0]
    assert model.rules[0].target.text() == "action.id == deny"


def test_damaged_policies_never_crash_and_always_point_inside_the_file():
    import random

    text = (CASES / "valid.policy").read_text(encoding="utf-8")
    rnd = random.Random(len(text))
    damaged = [text[:i] for i, ch in enumerate(text) if ch == "\n"]
    for _ in range(300):
        i = rnd.randrange(len(text))
        ch = rnd.choice('{}[]()"\'=<>-:,/@#&|!.?*x9 \n')
        damaged.append(rnd.choice([text[:i] + text[i + 1:], text[:i] + ch + text[i:], text[:i] + ch + text[i + 1:]]))
    failures = 0
    for version in damaged:
        try:
            parse_text(version, "x.policy")
        except LocatedError as err:
            failures += 1
            lines = version.splitlines() or [""]
            for p in err.problems:
                assert 1 <= p.line <= len(lines), err.render()
                assert 1 <= p.column <= len(lines[p.line - 1]) + 1, err.render()
                assert "Traceback" not in err.render() and "__ANON" not in err.render()
    assert failures > 100
