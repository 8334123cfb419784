"""The invariant judge (tests/judge/invariant.py) against `mbt coverage`: the hand-computed examples of
docs/coverage-rules/invariant.md judged by both, then a bounded random campaign."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbt.goldens.cases import parse_case
from mbt.parsing.loader import parse_text
from tests.judge.common import mbt_statuses
from tests.judge.invariant import campaign, judge, run_of

SHOP = (Path(__file__).parent / "cases" / "invariants" / "shop.fsm").read_text(encoding="utf-8")
FOUND = {"event": "found", "args": {"who": "c-1", "amt": 5}}

# (label, turns, final assertions, precondition or None, invariant, expected status or None), computed by hand.
EXAMPLES = [
    ("args only", [FOUND, {"event": "confirm", "tool_arguments": {"refund": {"amount": 5}}}], None, None,
     "own", "exercised"),
    ("both variables", [FOUND, {"event": "confirm", "assert_state": {"owner": "c-1", "customer": "c-1"}}], None,
     None, "own", "verified"),
    ("one turn early", [{**FOUND, "assert_state": {"owner": "c-1", "customer": "c-1"}}, {"event": "confirm"}], None,
     None, "own", "exercised"),
    ("changed after the call", [FOUND, {"event": "confirm", "tool_arguments": {"refund": {"amount": 5}},
                                        "assert_state": {"amount": 0}}], None, None, "paid_amount", "exercised"),
    ("part of P", [FOUND, {"event": "confirm", "assert_state": {"confirmed": True}}], None, None,
     "confirmed_pays", "exercised"),
    ("all of P", [FOUND, {"event": "confirm", "assert_state": {"confirmed": True, "amount": 0}}], None, None,
     "confirmed_pays", "verified"),
    ("phrase on a never", [FOUND, {"event": "confirm"}, {"event": "paid", "must_not": ["Notify someone else"]}],
     None, None, "fair_notice", "verified"),
    ("phrase on an every", [FOUND, {"event": "confirm"}, {"event": "paid", "must_not": ["notify someone else"]}],
     None, None, "phrased", "exercised"),
    ("pinned call", [FOUND, {"event": "confirm"}, {"event": "paid", "tool_arguments": {"notify": {"to": "c-1"}},
                                                    "assert_state": {"customer": "c-1"}}], None, None,
     "fair_notice", "verified"),
    ("before: must_not_call", [{**FOUND, "must_not_call": ["refund"]}, {"event": "confirm"}], None, None,
     "quiet_until_confirmed", "verified"),
    ("before: mid-run", [{"event": "twice", "must_not_call": ["refund"]}, {"event": "confirm"}], None,
     {"state": "confirming", "customer": "c-1", "owner": "c-1", "amount": 5}, "quiet_until_confirmed", None),
    ("between: closed", [FOUND, {"event": "confirm", "must_not_call": ["notify"]}, {"event": "paid"}], None, None,
     "quiet_while_open", "verified"),
    ("between: never closed", [FOUND, {"event": "confirm", "must_not_call": ["notify"]}], None, None,
     "quiet_while_open", None),
    ("after-until: open at the end", [FOUND, {"event": "confirm", "assert_state": {"owner": "c-1"}}], None, None,
     "owner_known", "verified"),
    ("response: state only", [FOUND, {"event": "confirm"}, {"event": "paid", "assert_state": {"state": "done"}}],
     None, None, "answered", "exercised"),
    ("response: handed off, quiet", [FOUND, {"event": "confirm"}, {"event": "failed", "must_not_call": ["notify"],
                                                                   "assert_state": {"state": "handed_off"}}],
     None, None, "answered", "verified"),
    ("precedes: the trigger only", [FOUND, {"event": "confirm", "tool_arguments": {"refund": {"amount": 5}}}], None,
     None, "looked_up", "exercised"),
    ("precedes: the cause", [{**FOUND, "tool_arguments": {"get_order": {"order": "o-1"}}}, {"event": "confirm"}],
     None, None, "looked_up", "verified"),
    ("precedes: two calls", [FOUND, {"event": "twice", "tool_arguments": {"get_order": {}}}, {"event": "confirm"}],
     None, None, "looked_up", "exercised"),
    ("final: the latest call", [FOUND, {"event": "twice"}, {"event": "confirm"}],
     {"tool_arguments": {"get_order": {"order": "o-2"}}}, None, "looked_up", "exercised"),
    ("eventually: all of P", [FOUND, {"event": "confirm"}, {"event": "paid", "assert_state": {"state": "done",
                                                                                              "amount": 0}}],
     None, None, "settles", "verified"),
    ("at most: one occurrence", [FOUND, {"event": "confirm"}, {"event": "paid", "tool_arguments": {"notify": {}}}],
     None, None, "one_notice", "exercised"),
    ("at most: counted", [{**FOUND, "must_not_call": ["notify"]}, {"event": "confirm", "must_not_call": ["notify"]},
                          {"event": "paid", "tool_arguments": {"notify": {}}}], None, None, "one_notice", "verified"),
    ("contradicts the fsm", [FOUND, {"event": "confirm", "assert_state": {"owner": "c-1", "customer": "c-1"}},
                             {"event": "paid", "assert_state": {"state": "handed_off"}}], None, None,
     "own", "exercised"),
    ("breaks an invariant", [{"event": "found", "args": {"who": "c-2", "amt": 5}},
                             {"event": "confirm", "assert_state": {"confirmed": True, "amount": 0}}], None, None,
     "confirmed_pays", "exercised"),
]


def both(text: str, raw: dict) -> tuple[dict, dict]:
    fsm, inv = parse_text(text, "m.fsm").models
    case = parse_case(raw, "g.yaml", 1)
    return judge(inv, fsm, case, run_of(fsm, case)), mbt_statuses(inv, case)


@pytest.mark.parametrize("label, turns, final, pre, name, expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_the_worked_examples_of_the_rules_page(label, turns, final, pre, name, expected):
    raw = {"id": "G", "precondition": pre or {"customer": "c-1"}, "turns": turns}
    if final:
        raw["assertions"] = final
    judged, measured = both(SHOP, raw)
    assert judged.get(f"trigger:{name}") == expected
    assert judged == measured


RESTART = """\
fsm m {
  state x initial
  event q
  event r
  event s
  event p
  x -> x on q
  x -> x on r
  x -> x on s
  x -> x on p
}
invariants for m {
  ordered: on s precedes on p between on q and on r
}
"""


@pytest.mark.parametrize("second_s_checked, expected", [(False, "exercised"), (True, "verified")])
def test_a_q_inside_the_interval_restarts_what_precedes_owes(second_s_checked, expected):
    # q s q s p r: the S that answers for the P is the one after the second Q.
    checked = {"assert_state": {"state": "x"}}
    turns = [{"event": "q"}, {"event": "s", **checked}, {"event": "q"},
             {"event": "s", **(checked if second_s_checked else {})}, {"event": "p"}, {"event": "r"}]
    judged, measured = both(RESTART, {"id": "G", "turns": turns})
    assert judged == measured == {"trigger:ordered": expected}


def test_judge_and_mbt_agree_on_random_models_and_goldens():
    result = campaign(2000, seed=20261201)
    assert result.cases == 2000 and result.elements > 3000
    assert result.disagreements == [], "\n".join(result.disagreements[:20])
