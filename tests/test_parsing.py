"""Parser tests as data: valid models with the facts they must yield, malformed snippets with the error they must give."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import yaml

from mbt.errors import LocatedError
from mbt.model.fsm import FsmModel, action_text
from mbt.parsing.grammar import grammar_dir, parser
from mbt.parsing.loader import expand_paths, load_file, load_paths, model_suffixes, parse_text

CASES = Path(__file__).parent / "cases" / "parse"
VALID = sorted((CASES / "valid").glob("*.fsm"))
INVALID = yaml.safe_load((CASES / "invalid.yaml").read_text(encoding="utf-8"))
REFERENCE = Path(__file__).parents[1] / "docs" / "dsl-reference.md"


# ---------------------------------------------------------------- valid models

def expectations(path: Path) -> dict:
    """The `#|` comment lines of a case file, read as YAML: model name -> facts."""
    lines = [line[3:] for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#|")]
    return yaml.safe_load("\n".join(lines)) or {}


def element(model: FsmModel, ref: str):
    """`model`, `state NAME`, `var NAME`, `event NAME`, `transition KEY` or `forbid KEY`."""
    if ref == "model":
        return model
    kind, _, name = ref.partition(" ")
    table = {"state": model.states, "var": model.variables, "event": model.events,
             "transition": {t.key: t for t in model.transitions}, "forbid": {f.key: f for f in model.forbids}}[kind]
    return table[name]


def transitions(model: FsmModel) -> dict:
    return {t.key: t for t in model.transitions}


# Each fact a case file may state, and how to read it off the parsed model.
FACTS = {
    "states": lambda m: len(m.states),
    "initial": lambda m: m.initial_state,
    "final": lambda m: [s.name for s in m.states.values() if s.final],
    "transitions": lambda m: [t.key for t in m.transitions],
    "forbids": lambda m: [f.key for f in m.forbids],
    "variables": lambda m: {n: v.type.text() for n, v in m.variables.items()},
    "initial_values": lambda m: {n: v.initial for n, v in m.variables.items()},
    "guards": lambda m: {k: t.guard.text() for k, t in transitions(m).items() if t.guard is not None},
    "actions": lambda m: {k: [action_text(a) for a in t.actions] for k, t in transitions(m).items() if t.actions},
    "params": lambda m: {k: t.params for k, t in transitions(m).items()},
    "discardable": lambda m: m.discardable,
    "bindings": lambda m: [[b.how, b.pattern, b.event] for b in m.bindings],
    "tool_bindings": lambda m: [[b.tool, b.outcome, b.fields, b.codes, b.event, b.params] for b in m.tool_bindings],
    "claims": lambda m: {c.state: c.phrases for c in m.claims},
    "escalations": lambda m: m.escalations,
    "matching": lambda m: {f.key: f.effect.matching for f in m.forbids if f.effect is not None and f.effect.matching},
    "title": lambda m: m.title,
    "contracts": lambda m: m.contracts,
    "complete": lambda m: m.complete,
}
PER_ELEMENT = {
    "status": lambda e: e.status.value,
    "reason": lambda e: e.status_reason,
    "severity": lambda e: e.severity.value if e.severity is not None else None,
    "span": lambda e: e.span.describe() if e.span is not None else None,
    "tags": lambda e: e.tags,
}


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_model_parses_with_expected_facts(path: Path):
    expected = expectations(path)
    assert expected, f"{path.name} states no `#|` expectations"
    models = {m.name: m for m in load_file(path).models}
    assert sorted(models) == sorted(expected)
    for name, facts in expected.items():
        model = models[name]
        for fact, want in facts.items():
            if fact in FACTS:
                got = FACTS[fact](model)
                if isinstance(want, dict) and isinstance(got, dict):
                    got = {k: got.get(k) for k in want}  # only the entries the case names
            else:
                got = {ref: PER_ELEMENT[fact](element(model, ref)) for ref in want}
            assert got == want, f"{path.name}: model {name}, fact {fact}"


# Decimal literals parse (decision tables will need them) but no fsm expression accepts one.
NOT_IN_FSM = {"decimal_lit", "neg_decimal_lit"}


def names_in(grammar_file: str) -> set[str]:
    """The rule and alias names one grammar file defines."""
    text = (grammar_dir() / grammar_file).read_text(encoding="utf-8")
    return set(re.findall(r"^\??(\w+):", text, re.M)) | set(re.findall(r"->\s*(\w+)", text))


# The table kind's rules are covered by its own valid cases (tests/test_table_parsing.py).
NOT_IN_FSM |= names_in("table.lark") - names_in("common.lark") - names_in("fsm.lark")
# The policy kind's rules likewise (tests/test_policy_parsing.py).
NOT_IN_FSM |= names_in("policy.lark") - names_in("common.lark") - names_in("fsm.lark")
# The invariant kind's rules likewise (tests/test_invariant_parsing.py).
NOT_IN_FSM |= names_in("invariant.lark") - names_in("common.lark") - names_in("fsm.lark")


def tree_names() -> set[str]:
    """Every name a parse tree node can carry: rule aliases, and rules that are not inlined by `?`."""
    names = set()
    for rule in parser().rules:
        kept = [s for s in rule.expansion if not (s.is_term and s.filter_out)]
        if rule.alias:
            names.add(str(rule.alias))
        elif not (rule.options.expand1 and len(kept) == 1):
            names.add(str(rule.origin.name))
    return {n for n in names if not n.startswith("_")}


def test_valid_cases_cover_every_construct():
    """The valid cases, together, use every rule of the grammar (so a new rule needs a new case)."""
    used = set()
    for path in VALID:
        used |= {t.data for t in parser().parse(path.read_text(encoding="utf-8")).iter_subtrees()}
    missing = sorted(tree_names() - NOT_IN_FSM - used)
    assert not missing, f"no valid case uses: {missing}"


def test_crlf_line_endings_and_a_byte_order_mark_are_accepted(tmp_path: Path):
    text = (CASES / "valid" / "actions.fsm").read_text(encoding="utf-8")
    path = tmp_path / "crlf.fsm"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    model = load_file(path).models[0]
    assert [t.key for t in model.transitions] == [t.key for t in load_file(CASES / "valid" / "actions.fsm").models[0].transitions]


def test_every_model_suffix_is_read_from_a_folder(tmp_path: Path):
    minimal = (CASES / "valid" / "minimal.fsm").read_text(encoding="utf-8")
    for i, suffix in enumerate(model_suffixes()):
        (tmp_path / f"m{i}{suffix}").write_text(minimal.replace("fsm door", f"fsm door{i}"), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a model", encoding="utf-8")
    found = expand_paths([str(tmp_path)])
    assert sorted(p.suffix for p in found) == sorted(model_suffixes())
    assert sorted(m.name for f in load_paths([str(tmp_path)]) for m in f.models) == [f"door{i}" for i in range(5)]


def test_a_file_with_another_suffix_is_refused(tmp_path: Path):
    path = tmp_path / "model.txt"
    path.write_text((CASES / "valid" / "minimal.fsm").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        load_paths([str(path)])
    assert "not a model file" in err.value.problems[0].message


# ---------------------------------------------------------------- malformed input

def write_case(case: dict, tmp_path: Path) -> Path:
    """The file a case describes: `text` (UTF-8), `bytes` (each character one byte), a folder, or nothing."""
    path = tmp_path / case.get("file", "model.fsm")
    if "text" in case:
        path.write_bytes(case["text"].encode("utf-8"))
    elif "bytes" in case:
        path.write_bytes(case["bytes"].encode("latin-1"))
    elif case.get("kind") == "folder":
        path.mkdir()
    else:
        assert case.get("kind") == "missing", case["name"]
    return path


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c["name"])
def test_malformed_input_gives_one_clear_located_error(case: dict, tmp_path: Path):
    path = write_case(case, tmp_path)
    with pytest.raises(LocatedError) as err:
        load_file(path)
    first = err.value.problems[0]
    assert (first.line, first.column) == (case["line"], case["column"]), err.value.render()
    assert case["message_contains"] in first.message, err.value.render()
    if "hint_contains" in case:
        assert case["hint_contains"] in (first.hint or ""), err.value.render()
    rendered = err.value.render()
    assert rendered.startswith(f"{path}:{case['line']}:{case['column']}: error: ")
    assert_plain_words(rendered)


def assert_plain_words(rendered: str) -> None:
    """No traceback, no lark internals (terminal names like __ANON_3 or $END, token reprs)."""
    for internal in ("Traceback", "__ANON", "$END", "Token(", "lark", "RSQB", "LBRACE", "LPAR", "CMP_OP"):
        assert internal not in rendered, rendered


def test_invalid_cases_have_unique_names():
    names = [c["name"] for c in INVALID]
    assert len(names) == len(set(names))


def mutations(text: str, seed: int, count: int):
    """Every prefix that ends a line, plus seeded single-character deletions, insertions and replacements."""
    yield from (text[:i] for i, ch in enumerate(text) if ch == "\n")
    rnd = random.Random(seed)
    for _ in range(count):
        i = rnd.randrange(len(text))
        ch = rnd.choice('{}[]()"\'=<>-:,/@#&|!.?*x9 \n')
        yield rnd.choice([text[:i] + text[i + 1:], text[:i] + ch + text[i:], text[:i] + ch + text[i + 1:]])


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_damaged_models_never_crash_and_always_point_inside_the_file(path: Path):
    text = path.read_text(encoding="utf-8")
    failures = 0
    for damaged in mutations(text, seed=len(text), count=150):
        try:
            parse_text(damaged, "x.fsm")
        except LocatedError as err:
            failures += 1
            lines = damaged.splitlines() or [""]
            for p in err.problems:
                assert 1 <= p.line <= len(lines), err.render()
                assert 1 <= p.column <= len(lines[p.line - 1]) + 1, err.render()
                assert_plain_words(err.render())
    assert failures > 0  # the damage did break something, so the loop checked real errors


# ---------------------------------------------------------------- reserved words and the reference

NOT_RESERVED = {
    # type names, binding kinds and severity words: only keywords right after `:`, `bind`, `severity`
    "bool", "string", "int", "enum", "intent", "text", "regex", "low", "medium", "high", "critical",
    # observed runs: `tool` only after `bind`, `ok` / `error` only after `bind tool NAME`
    "tool", "ok", "error",
    # keywords that cannot be confused with a name where they appear (a state so named cannot start a
    # transition line, which the syntax error says)
    "source", "title", "contract", "complete", "initial", "final", "on", "effect", "say", "matching", "claim",
    "escalation",
    # `when args.NAME from SOURCE` (a forbid's call effect): keywords only after a call effect's `when`
    "args", "from",
    "stated", "inferred", "unspecified", "severity", "id", "tag",
    # decision tables: keywords only inside a `table` body, where names never start an item
    "table", "hit", "mcdc", "input", "output", "number", "integer", "boolean", "date", "precision", "default",
    "rule", "note",
    # policies: keywords only inside a `policy` body, where every item starts with one (policy.lark keeps its
    # expressions apart from the fsm's, so none of them becomes a keyword after an fsm expression)
    "policy", "combining", "subject", "resource", "action", "environment", "permit", "deny", "target", "when",
    "assert", "never", "always", "enforce", "indeterminate",
    # invariants: keywords only inside an `invariants` body (invariant.lark keeps its propositions apart from the
    # fsm's expressions), where every item starts with `NAME:` and then a pattern or scope keyword
    "invariants", "for", "eventually", "at", "most", "every", "precedes", "leads", "to", "before", "after",
    "until", "between",
}


def reserved_words() -> set[str]:
    pattern = parser().get_terminal("NAME").pattern.value
    return set(re.search(r"\(\?:([a-z|]+)\)", pattern).group(1).split("|"))


def keywords() -> set[str]:
    words = set()
    for terminal in parser().terminals:
        value = terminal.pattern.value
        words |= set(re.findall(r"[a-z]+", value)) if re.fullmatch(r"\(\?:[a-z|]+\)|[a-z]+", value) else set()
    return words


def test_every_keyword_is_either_reserved_or_known_to_be_safe_as_a_name():
    assert keywords() == reserved_words() | NOT_RESERVED


@pytest.mark.parametrize("word", sorted(reserved_words()))
def test_a_reserved_word_cannot_name_a_state(word: str):
    with pytest.raises(LocatedError) as err:
        parse_text(f"fsm m {{\n  state {word} initial\n}}\n", "x.fsm")
    assert err.value.problems[0].message == f"syntax error: `{word}` is a reserved word and cannot be used as a name"
    assert (err.value.problems[0].line, err.value.problems[0].column) == (2, 9)


def reference_section(title: str) -> str:
    text = REFERENCE.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"docs/dsl-reference.md has no section `## {title}`"
    return match.group(1)


def test_the_reference_lists_exactly_the_reserved_words():
    paragraph = re.search(r"^\*\*Reserved everywhere:\*\*(.*?)\n\n", reference_section("Reserved words"), re.S | re.M)
    listed = set(re.findall(r"`([a-z]+)`", paragraph.group(1)))
    assert listed == reserved_words()


def test_every_example_in_the_reference_parses():
    """```mbt blocks are whole files; ```mbt-items blocks are model items, read inside the first whole file."""
    text = REFERENCE.read_text(encoding="utf-8")
    files = re.findall(r"```mbt\n(.*?)```", text, re.S)
    items = re.findall(r"```mbt-items\n(.*?)```", text, re.S)
    assert files and len(items) >= 3
    for block in files:
        assert parse_text(block, "dsl-reference.md").models
    base = files[0].rstrip()
    assert base.endswith("}")
    for block in items:
        model = parse_text(base[:-1] + block + "}\n", "dsl-reference.md").models[0]
        assert model.name == "recovery"
