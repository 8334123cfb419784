"""Issue 16, typed decoding: a JSON line of the usual shape is decoded by msgspec straight into structs
(mbt.goldens.decode); it must give exactly the case the general way gives (json, cases.normalise), and leave to the
general way every line it would refuse, so messages never change."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mbt.goldens.cases import parse_case
from mbt.goldens.decode import decode_case
from mbt.goldens.loader import _json_value

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "bench"))
import synth  # noqa: E402


def general(line: str) -> object:
    """The case the general way makes of a line, or the message it refuses it with."""
    try:
        raw, end = _json_value(line)
        if line[end:].strip():
            return "extra data"
        return parse_case(raw, "g.jsonl", 7)
    except ValueError as err:
        return str(err)


def test_every_synthetic_golden_takes_the_typed_way_and_gives_the_same_case():
    model = synth.generate_model(60, 400, seed=3)
    lines = [json.dumps(case, separators=(",", ":")) for case in synth.generate_goldens(model, 400, seed=4)]
    for line in lines:
        fast = decode_case(line, "g.jsonl", 7)
        assert fast is not None, line
        assert fast == general(line), line


def test_the_shipped_goldens_give_the_same_cases_either_way():
    lines = [line for path in sorted((ROOT / "models" / "goldens").rglob("*.jsonl"))
             for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    taken = 0
    for line in lines:
        fast = decode_case(line.strip(), "g.jsonl", 7)
        if fast is not None:
            taken += 1
            assert fast == general(line.strip()), line
    assert taken >= 5  # the plain conversations among them (the others have fields of their own, or are broken)


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "s1", "yes", "1.5"]),
                    st.decimals(allow_nan=False, allow_infinity=False, places=2))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=2)
                      | st.dictionaries(st.sampled_from(["state", "n", "discarded", "x"]), inner, max_size=2),
                      max_leaves=6)
NAMES = st.sampled_from(["s1", "s2", "hello", "ev1"])
MAPS = st.dictionaries(st.sampled_from(["state", "n", "x", "discarded.x", "discarded"]),
                       st.one_of(NAMES, st.integers(0, 3), st.booleans(), st.none()), max_size=3)


def mostly(good, bad=VALUES):
    """Values of the right type most of the time, anything at all otherwise."""
    return st.one_of(*[good] * 12, bad)


TURN = {"user": mostly(NAMES), "event": mostly(NAMES), "intent": mostly(NAMES), "args": mostly(MAPS),
        "rejected": mostly(st.booleans(), st.sampled_from(["yes", "TRUE", 1, 2, "maybe"])),
        "assert_state": mostly(st.one_of(NAMES, MAPS)), "must_not": mostly(st.lists(NAMES, max_size=2)),
        "must_not_call": mostly(st.lists(NAMES, max_size=2)), "must_have": mostly(st.lists(NAMES, max_size=2)),
        "tool_arguments": mostly(st.dictionaries(NAMES, MAPS, max_size=2)), "discarded": mostly(MAPS),
        "decision": VALUES, "other": VALUES}
CASE = {"id": mostly(st.sampled_from(["C1", "x y"]), st.sampled_from(["", 5, None])), "case_id": NAMES,
        "severity": mostly(NAMES), "contract": mostly(NAMES), "model": mostly(NAMES), "precondition": mostly(MAPS),
        "assertions": mostly(st.one_of(MAPS, st.fixed_dictionaries({"state": MAPS}))),
        "final_assertions": mostly(MAPS), "input": NAMES, "other": VALUES}


def some(fields: dict, rare: tuple[str, ...]):
    """A mapping of a few of `fields`, the `rare` ones seldom."""
    common = [k for k in fields if k not in rare]
    return st.tuples(st.lists(st.sampled_from(common), max_size=5, unique=True),
                     st.lists(st.sampled_from(list(rare)), max_size=1)).flatmap(
        lambda keys: st.fixed_dictionaries({k: fields[k] for k in keys[0] + keys[1]}))


@st.composite
def lines(draw) -> str:
    turns = draw(st.lists(some(TURN, ("decision", "other")), max_size=3))
    case = draw(some(CASE, ("case_id", "input", "other", "final_assertions")))
    if draw(st.integers(0, 9)):
        case["turns"] = turns
    if draw(st.integers(0, 9)):
        case.setdefault("id", "C1")
    text = json.dumps(case, default=str, separators=draw(st.sampled_from([(",", ":"), (", ", ": "), (",", " :")])))
    if not draw(st.integers(0, 9)) and '"turns":' in text:  # a repeated key: which one counts is not said
        text = text.replace('"turns":', '"turns":[],"turns":', 1)
    return text


@settings(max_examples=400, deadline=None)
@given(lines())
def test_the_typed_way_agrees_with_the_general_way_or_leaves_the_line_to_it(line):
    fast = decode_case(line, "g.jsonl", 7)
    if fast is not None:
        assert fast == general(line)


def test_lines_the_typed_way_cannot_judge_are_left_to_the_general_way():
    nested = '{"id": "D", "turns": [{"user": "x", "args": {"a": ' + "[" * 70 + "]" * 70 + "}}]}"
    for line in ['{"id": "K", "turns": [{"user": "x", "user": "y"}]}',  # msgspec would keep the last `user`
                 '{"id": "K", "id": "L", "turns": [{"user": "x"}]}',
                 '{"id": "Q", "turns": [{"user": "say \\"hi\\": now"}]}',  # a `":` inside a string: left, yet valid
                 nested, '{"id": "S", "turns": [{"user": "\\ud800"}]}', '{"id": "T", "turns": 5}',
                 '{"id": "R", "turns": [{"user": "x", "rejected": "yes"}]}', '{"id": "E", "turns": [], "x": 1}']:
        assert decode_case(line, "g.jsonl", 7) is None, line
    assert "duplicate key `user`" in general('{"id": "K", "turns": [{"user": "x", "user": "y"}]}')
    assert "nested more than 64" in general(nested)
    assert general('{"id": "Q", "turns": [{"user": "say \\"hi\\": now"}]}').turns[0].user == 'say "hi": now'
