"""Answers and the model meet (issue 34, item 6): golden replay decides which forbid or claim a golden's `must_not` /
`must_have` phrase names through the judges (mbt.judges.sayings) — phrases folded, a `say` forbid's description by the
embedded judge — and a `must_have` naming a claim before its state contradicts the model (a premature success)."""

from __future__ import annotations

import pytest

from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.measure.run import measure
from mbt.parsing.loader import load_file

CARD = '''fsm card {
  state idle initial
  state paying
  state done final
  event buy
  event pay
  bind text "buy" -> buy
  bind text "pay" -> pay
  idle -> paying on buy
  paying -> done on pay
  claim done matching "is paid"
  forbid any on * effect say "asks for the card PIN" matching "pin code", "mã pin" id ask_pin
  forbid paying on pay effect say "unlocks the card unasked" matching "mở khoá thẻ" id unlock_card
  forbid any on * effect say "reveals the card number" id reveal_number
}
'''


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    path = tmp_path_factory.mktemp("card") / "card.fsm"
    path.write_text(CARD, encoding="utf-8")
    (model,) = load_file(path).models
    return model


def replay(model, *turns, **final):
    case = parse_case({"id": "G", "turns": list(turns), **({"assertions": final} if final else {})}, "g.jsonl", 1)
    report = measure([model], GoldenSet([case]))
    (mc,) = report.models
    verified = {ec.element.id for ec in mc.elements if ec.verified}
    return report, verified


# ---------------------------------------------------------------- golden replay


def test_golden_phrases_name_forbids_folded(card):
    report, verified = replay(card, {"event": "buy", "must_not": ["ＰＩＮ ＣＯＤＥ"]},
                              {"event": "pay", "must_not": ["chưa MỞ KHÓA THẺ"]})
    assert "forbidden:ask_pin" in verified and "forbidden:unlock_card" in verified
    assert not [n.message for n in report.notes if "names no" in n.message]


def test_a_golden_phrase_names_a_say_forbid_by_its_description(card):
    report, verified = replay(card, {"event": "buy", "must_not": ["reveal the card number"]})
    assert "forbidden:reveal_number" in verified and not report.notes


def test_a_golden_expecting_a_forbidden_saying_in_other_words_is_found(card):
    report, _ = replay(card, {"event": "buy", "must_have": ["Vui lòng cho biết ＭÃ ＰＩＮ"]})
    assert [f.element for f in report.forbidden_expected] == ["forbidden:ask_pin"]


def test_a_must_have_naming_a_claim_before_its_state_contradicts_the_model(card):
    report, verified = replay(card, {"event": "buy", "must_have": ["Your order IS PAID"]})
    (c,) = report.contradictions
    assert (c.turn, c.path, c.expected, c.actual) == (1, "must_have", "done", "paying")
    assert "premature success" in c.message and not verified and not report.notes


def test_a_must_have_naming_a_claim_in_its_state_agrees_and_is_no_note(card):
    report, _ = replay(card, {"event": "buy"}, {"event": "pay", "must_have": ["It is paid."]})
    assert not report.contradictions and not report.notes


def test_a_final_must_have_claims_the_state_after_the_last_turn(card):
    report, _ = replay(card, {"event": "buy"}, must_have=["Your order is paid"])
    (c,) = report.contradictions
    assert (c.turn, c.expected, c.actual) == (None, "done", "paying")


def test_a_phrase_naming_nothing_is_still_a_note(card):
    report, _ = replay(card, {"event": "buy", "must_not": ["swear"]})
    assert [n.message for n in report.notes] == [
        "turn 1: `must_not` \"swear\" names no forbid or claim of the model (not checked)"]
