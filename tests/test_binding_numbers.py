"""Regex captures bound to int (and number) event parameters, with the parameter's declared domain checked (issue
36, item 6b): seed 004's refund request "我要退款 100 元" binds to `request_refund(amount: 100)` without an explicit
`event`/`args`; a captured value outside the domain, or not a number at all, is reported at the golden's file:line.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from mbt.elements.fsm import enumerate_fsm
from mbt.engine.fsm import CompiledFsm
from mbt.generate.words import Words
from mbt.goldens.binding import Binder
from mbt.goldens.cases import Turn, parse_case
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.model.types import ValueType
from mbt.parsing.loader import parse_text
from tests.cli_runner import run_mbt

REFUND = """fsm refund {
  var amount: int[0..1000] = 0
  state idle initial
  state requested
  event request_refund(amount: int[0..1000])
  event ask(what: string)
  bind regex "退款\\\\s*(?P<amount>\\\\d+)\\\\s*元" -> request_refund
  bind regex "退(?P<amount>[一二三四五六七八九十百千]+)元" -> request_refund
  bind regex "问(?P<what>\\\\d+)" -> ask
  idle -> requested on request_refund(a) / amount := a
  idle -> idle on ask(w)
}
"""


def refund_model():
    (model,) = parse_text(REFUND, "refund.fsm").models
    return model


def test_the_seed_sentence_binds_its_amount_as_an_int():
    """"我要退款 100 元": the first regex finds "退款 100 元" and captures "100"; `amount` is declared
    `int[0..1000]`, so the argument is the int 100 (before: the string "100", which no int parameter admits)."""
    bound = Binder(refund_model()).bind(Turn(user="我要退款 100 元"))
    assert not isinstance(bound, str), bound
    assert (bound.event, bound.args, bound.how) == ("request_refund", {"amount": 100}, "regex")
    assert type(bound.args["amount"]) is int
    # Full-width digits are digits to `\d` and to int(): "１００" is 100 too.
    full_width = Binder(refund_model()).bind(Turn(user="我要退款 １００ 元"))
    assert not isinstance(full_width, str) and full_width.args == {"amount": 100}
    # A string parameter keeps the captured text as it is.
    asked = Binder(refund_model()).bind(Turn(user="问007"))
    assert not isinstance(asked, str) and asked.args == {"what": "007"}


def test_the_seed_golden_replays_and_verifies_the_refund_request():
    model = refund_model()
    run = FsmReplayer(CompiledFsm(model, enumerate_fsm(model))).replay(parse_case(
        {"id": "R1", "model": "refund",
         "turns": [{"user": "我要退款 100 元", "assert_state": {"state": "requested", "amount": 100}}]},
        "refund.jsonl", 1))
    assert not run.unbound and not run.contradictions
    assert "transition:idle.request_refund->requested" in {enumerate_fsm(model)[i].id for i in run.verified}


def test_a_capture_outside_the_domain_or_not_a_number_is_reported_at_the_golden_line(tmp_path):
    """5000 is a whole number outside int[0..1000]; "一百" is captured by the second binding but is not written in
    digits: each turn is unbound with the reason, at the golden's file:line, and verifies nothing."""
    (tmp_path / "refund.fsm").write_text(REFUND, encoding="utf-8")
    (tmp_path / "g.jsonl").write_text(
        '{"id": "R1", "model": "refund", "turns": [{"user": "我要退款 100 元", "assert_state": {"amount": 100}}]}\n'
        '{"id": "R2", "model": "refund", "turns": [{"user": "我要退款 5000 元", "assert_state": {"amount": 5000}}]}\n'
        '{"id": "R3", "model": "refund", "turns": [{"user": "我要退一百元", "assert_state": {"amount": 100}}]}\n',
        encoding="utf-8")
    r = run_mbt("coverage", "--model", tmp_path / "refund.fsm", "--goldens", tmp_path / "g.jsonl", "--no-gate")
    assert r.returncode == 0, r.stderr
    assert "1 bound, 2 with unbound turns" in r.stdout
    assert ('g.jsonl:2) turn 1 "我要退款 5000 元": the regex binding of event `request_refund` captured `5000` for `amount`, which is '
            "not a value of int[0..1000]") in r.stdout
    assert ('g.jsonl:3) turn 1 "我要退一百元": the regex binding of event `request_refund` captured `一百` for `amount`, which is '
            "not a whole number (int[0..1000])") in r.stdout
    assert "g.jsonl:1)" not in r.stdout  # the seed sentence binds


def test_captured_values_for_numbers_follow_the_precision():
    """A `number precision 0.01 [0..1000]` parameter: "12.50" is Decimal 12.50; "12.505" is off the 0.01 grid and
    "1e3" is not written as a decimal: both are reasons, not values."""
    from mbt.goldens.binding import CaptureError, captured_value

    cents = ValueType("number", lo=Decimal(0), hi=Decimal(1000), scale=2)
    assert captured_value("12.50", cents) == Decimal("12.50")
    with pytest.raises(CaptureError, match=r"^which is not a value of number precision 0.01 \[0..1000\]$"):
        captured_value("12.505", cents)
    with pytest.raises(CaptureError, match=r"^which is not a decimal number \(number precision 0.01 \[0..1000\]\)$"):
        captured_value("1e3", cents)
    assert captured_value("-3", ValueType("int", lo=-5, hi=5)) == -3


def test_generated_words_say_an_int_argument_in_digits():
    """mbt generate's user words: the refund request with amount 100 is written through the first binding, with the
    group written as the digits and `\\s*` as nothing, and binds back to exactly that argument."""
    assert Words(refund_model()).text("request_refund", {"amount": 100}) == "退款100元"
