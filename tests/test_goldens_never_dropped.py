"""Nothing in a golden is dropped without a word (issue 32, item 6), checked from the raw files rather than from mbt's
own list: every key of a case, a turn or its final assertions is one the golden format reads, or a "Not checked"
note of that case names it; every `must_not` / `must_have` phrase names a forbid of the model, or a note names it.
Checked on the seed-000-shaped goldens of tests/data/seed000 and on random keys at every level, read as JSON Lines
(the fast decoder and the general way) and as YAML."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbt.api import coverage
from mbt.goldens.loader import GoldenStream
from mbt.measure.run import measure
from mbt.parsing.loader import load_file

SEED = Path(__file__).parent / "data" / "seed000"
MODEL = SEED / "recovery.fsm"

# What the golden format reads (docs/user-guide.md, "Golden cases"), written out here once more on purpose.
CASE_KEYS = {"id", "case_id", "severity", "contract", "model", "precondition", "turns", "assertions",
             "final_assertions", "input", "expected_intent"}
DESCRIBING = {"element", "also_covers", "source"}  # `mbt generate`'s words about a stub
TURN_KEYS = {"user", "event", "args", "intent", "rejected", "assert_state", "must_not", "must_not_call", "must_have",
             "tool_arguments", "discarded"}
FINAL_KEYS = {"state", "discarded", "tool_arguments", "must_not", "must_not_call", "must_have", "intent"}


def raw_cases(folder: Path) -> list[tuple[dict, str]]:
    """Each case as written, with its file:line."""
    out = []
    for path in sorted(folder.iterdir()):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            out += [(json.loads(line), f"{path}:{n}") for n, line in enumerate(text.split("\n"), 1) if line.strip()]
        else:  # one case or a list of them, each located where its node starts
            root = yaml.compose(text)
            for node in root.value if isinstance(root, yaml.SequenceNode) else [root]:
                out.append((yaml.safe_load(yaml.serialize(node)), f"{path}:{node.start_mark.line + 1}"))
    return out


def unread(raw: dict) -> list[tuple[int | None, str]]:
    """(turn or None, key) of every key of the raw case that the golden format does not read."""
    found = [(None, key) for key in raw if key not in CASE_KEYS | DESCRIBING]
    for number, turn in enumerate(raw.get("turns") or [], 1):
        found += [(number, key) for key in turn if key not in TURN_KEYS]
    final = raw.get("assertions") or raw.get("final_assertions") or {}
    found += [(None, key) for key in final if key not in FINAL_KEYS]
    return found


def phrases(raw: dict) -> list[tuple[int | None, str]]:
    out = [(n, p) for n, t in enumerate(raw.get("turns") or [], 1) for k in ("must_not", "must_have") for p in t.get(k, [])]
    final = raw.get("assertions") or raw.get("final_assertions") or {}
    return out + [(None, p) for k in ("must_not", "must_have") for p in final.get(k, [])]


def forbid_phrases() -> list[str]:
    (model,) = load_file(MODEL).models
    return [p.casefold() for f in model.forbids if f.effect is not None for p in f.effect.matching]


def test_every_key_and_phrase_of_the_seed_goldens_is_read_or_noted():
    report = coverage([str(MODEL)], [str(SEED / "goldens")])
    cases = raw_cases(SEED / "goldens")
    assert len(cases) == report.goldens.read == report.goldens.valid == 5
    said = forbid_phrases()
    noted = 0
    for raw, where in cases:
        mine = [n for n in report.notes if n.case == raw["id"]]
        assert all(n.where == where for n in mine), (where, mine)
        for turn, key in unread(raw):
            assert any(f"`{key}`" in n.message and n.turn == turn for n in mine), (raw["id"], turn, key)
            noted += 1
        for turn, phrase in phrases(raw):
            if not any(p in phrase.casefold() for p in said):
                assert any(f'"{phrase}"' in n.message and n.turn == turn for n in mine), (raw["id"], phrase)
                noted += 1
    assert noted == len(report.notes) == 11  # and no note that names nothing of the goldens


KEY = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True).filter(
    lambda k: k not in CASE_KEYS | DESCRIBING | TURN_KEYS | FINAL_KEYS | {"in", "table", "inputs", "expect",
                                                                         "decisions", "decision", "policy", "request",
                                                                         "reason", "expect_reason", "expect_error"})
VALUE = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=5), st.lists(st.integers(), max_size=2))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case_keys=st.dictionaries(KEY, VALUE, max_size=3), turn_keys=st.dictionaries(KEY, VALUE, max_size=2),
       final_keys=st.dictionaries(KEY, VALUE, max_size=2), final_name=st.sampled_from(["assertions", "final_assertions"]),
       yaml_file=st.booleans())
def test_any_unread_key_at_any_level_is_a_note(tmp_path_factory, case_keys, turn_keys, final_keys, final_name,
                                               yaml_file):
    raw = {"id": "R-1", **case_keys,
           "turns": [{"event": "provide_email", "args": {"email": "li@example.com"}},
                     {"event": "correct_email", "args": {"email": "lin@example.com"}, **turn_keys}],
           final_name: {"state": {"recovery_email": "lin@example.com"}, **final_keys}}
    folder = tmp_path_factory.mktemp("g")
    path = folder / ("g.yaml" if yaml_file else "g.jsonl")
    path.write_text(yaml.safe_dump(raw, allow_unicode=True) if yaml_file else json.dumps(raw) + "\n", encoding="utf-8")
    (model,) = load_file(MODEL).models
    report = measure([model], GoldenStream([str(path)]))
    assert report.goldens.valid == 1, report.invalid_cases
    expected = sorted([(None, f"`{k}`") for k in case_keys] + [(2, f"`{k}`") for k in turn_keys]
                      + [(None, f"final assertions: `{k}`") for k in final_keys], key=str)
    got = sorted(((n.turn, n.message.split(" is not checked")[0].split(" outside")[0].removeprefix("turn 2: "))
                  for n in report.notes), key=str)
    assert got == expected
    assert all(n.where == f"{path}:1" and n.case == "R-1" for n in report.notes)
