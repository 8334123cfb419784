"""Trigger coverage by goldens: a trigger is verified only when the golden checks EVERY variable, control state, tool
call and call argument its consequent reads, at the position where the consequent is evaluated, and agrees with
the model (docs/coverage-rules/invariant.md). One hand-computed case per pattern and per hole."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbt.goldens.cases import parse_case
from mbt.kind import support
from mbt.parsing.loader import parse_text

SHOP = (Path(__file__).parent / "cases" / "invariants" / "shop.fsm").read_text(encoding="utf-8")

FOUND = {"event": "found", "args": {"who": "c-1", "amt": 5}}


def statuses(*turns: dict, final: dict | None = None, precondition: dict | None = None) -> dict[str, str]:
    """Element id -> "verified" / "exercised" for one golden (customer c-1 signed in) on the SHOP invariants."""
    _, inv = parse_text(SHOP, "shop.fsm").models
    elements = support("invariant").enumerate(inv)
    raw = {"id": "G", "precondition": precondition or {"customer": "c-1"}, "turns": list(turns)}
    if final:
        raw["assertions"] = final
    run = support("invariant").replayer(inv, elements).replay(parse_case(raw, "g.yaml", 1))
    assert run.invalid is None
    out = {elements[i].id[len("trigger:"):]: "exercised" for i in run.exercised}
    out.update({elements[i].id[len("trigger:"):]: "verified" for i in run.verified})
    return out


def turn(event: str, **checks) -> dict:
    return {**(FOUND if event == "found" else {"event": event}), **checks}


# ---------------------------------------------------------------- every call T [C] (universality, antecedent call T)

def test_checking_only_an_argument_the_condition_does_not_read_verifies_nothing():
    # The defect: a check of refund.amount made `every call refund [owner == customer]` verified.
    found = statuses(turn("found"), turn("confirm", tool_arguments={"refund": {"amount": 5}}), turn("paid"))
    assert found["own"] == "exercised"


def test_every_variable_the_condition_reads_must_be_checked_at_the_call():
    only_owner = statuses(turn("found"), turn("confirm", assert_state={"owner": "c-1"}))
    both = statuses(turn("found"), turn("confirm", assert_state={"owner": "c-1", "customer": "c-1"}))
    wrong_place = statuses(turn("found", assert_state={"owner": "c-1", "customer": "c-1"}), turn("confirm"))
    assert (only_owner["own"], both["own"], wrong_place["own"]) == ("exercised", "verified", "exercised")


def test_a_variable_the_step_changes_after_the_call_cannot_be_checked_after_it():
    # refund reads amount = 5 at the call; the same step then sets amount := 0, which is all a golden can see.
    found = statuses(turn("found"), turn("confirm", tool_arguments={"refund": {"amount": 5}},
                                         assert_state={"amount": 0}))
    assert found["paid_amount"] == "exercised"


# ---------------------------------------------------------------- always A -> P

def test_always_needs_every_variable_of_the_consequent_where_the_antecedent_holds():
    part = statuses(turn("found"), turn("confirm", assert_state={"confirmed": True}))
    whole = statuses(turn("found"), turn("confirm", assert_state={"confirmed": True, "amount": 0}))
    elsewhere = statuses(turn("found"), turn("confirm"), turn("paid", assert_state={"confirmed": True, "amount": 0}))
    assert (part["confirmed_pays"], whole["confirmed_pays"], elsewhere["confirmed_pays"]) == (
        "exercised", "verified", "exercised")


# ---------------------------------------------------------------- never P

def test_an_absence_of_a_call_is_checked_by_must_not_call_or_a_matching_phrase_only():
    other_tool = statuses(turn("found", tool_arguments={"get_order": {"order": "o-1"}}), turn("confirm"))
    not_called = statuses(turn("found", must_not_call=["refund"]), turn("confirm"))
    assert (other_tool["quiet_until_confirmed"], not_called["quiet_until_confirmed"]) == ("exercised", "verified")


def test_a_made_call_is_shown_harmless_only_by_pinning_what_its_condition_reads():
    call_only = statuses(turn("found"), turn("confirm"), turn("paid", tool_arguments={"notify": {}}))
    half = statuses(turn("found"), turn("confirm"), turn("paid", tool_arguments={"notify": {"to": "c-1"}}))
    pinned = statuses(turn("found"), turn("confirm"),
                      turn("paid", tool_arguments={"notify": {"to": "c-1"}}, assert_state={"customer": "c-1"}))
    phrase = statuses(turn("found"), turn("confirm"), turn("paid", must_not=["Notify someone else"]))
    assert [g["fair_notice"] for g in (call_only, half, pinned, phrase)] == [
        "exercised", "exercised", "verified", "verified"]


def test_a_matching_phrase_asserts_only_an_absence():
    # `phrased` is the same rule as `fair_notice`, written as `every call`: a phrase is not a check of its condition.
    found = statuses(turn("found"), turn("confirm"), turn("paid", must_not=["notify someone else"]))
    assert found["phrased"] == "exercised"


# ---------------------------------------------------------------- scopes

def test_a_between_interval_counts_once_r_closes_it_and_only_its_own_checks():
    # quiet_while_open: the interval runs from `found` (included) to `paid` (excluded).
    closed = statuses(turn("found"), turn("confirm", must_not_call=["notify"]), turn("paid"))
    open_ = statuses(turn("found"), turn("confirm", must_not_call=["notify"]))
    outside = statuses(turn("found"), turn("confirm"), turn("paid"), final={"state": "done"})
    assert (closed["quiet_while_open"], "quiet_while_open" in open_, outside["quiet_while_open"]) == (
        "verified", False, "exercised")


def test_an_after_until_interval_counts_without_its_r():
    # owner_known: from `found` on; `failed` never comes here, and the interval still counts.
    found = statuses(turn("found"), turn("confirm", assert_state={"owner": "c-1"}))
    before = statuses(turn("twice", rejected=True, assert_state={"owner": None}), turn("found"))
    assert found["owner_known"] == "verified"
    assert before["owner_known"] == "exercised"  # the refused `twice` checks position 0, outside the scope


# ---------------------------------------------------------------- S leads to P

def test_a_response_needs_every_part_of_the_answer_checked_where_it_holds():
    state_only = statuses(turn("found"), turn("confirm"), turn("paid", assert_state={"state": "done"}))
    both = statuses(turn("found"), turn("confirm"),
                    turn("paid", assert_state={"state": "done"}, tool_arguments={"notify": {"to": "c-1"}}))
    # handed off: the notify call is not made, which only must_not_call says
    handed_off = statuses(turn("found"), turn("confirm"), turn("failed", assert_state={"state": "handed_off"}))
    handed_off_quiet = statuses(turn("found"), turn("confirm"),
                                turn("failed", assert_state={"state": "handed_off"}, must_not_call=["notify"]))
    assert [g["answered"] for g in (state_only, both, handed_off, handed_off_quiet)] == [
        "exercised", "verified", "exercised", "verified"]


# ---------------------------------------------------------------- S precedes P

def test_precedence_is_verified_by_checking_the_precondition_where_it_held():
    trigger_only = statuses(turn("found"), turn("confirm", tool_arguments={"refund": {"amount": 5}}))
    cause = statuses(turn("found", tool_arguments={"get_order": {"order": "o-1"}}), turn("confirm"))
    assert (trigger_only["looked_up"], cause["looked_up"]) == ("exercised", "verified")


def test_a_step_with_two_calls_of_the_tool_cannot_be_pinned_by_one_check():
    # `twice` calls get_order two times, and a tool_arguments check speaks of the latest call only.
    twice = statuses(turn("found"), turn("twice", tool_arguments={"get_order": {}}), turn("confirm"))
    once = statuses(turn("found", tool_arguments={"get_order": {}}), turn("twice"), turn("confirm"))
    assert (twice["looked_up"], once["looked_up"]) == ("exercised", "verified")


# ---------------------------------------------------------------- eventually P

def test_existence_needs_every_variable_of_p_checked_where_p_holds():
    state_only = statuses(turn("found"), turn("confirm"), turn("paid", assert_state={"state": "done"}))
    both = statuses(turn("found"), turn("confirm"), turn("paid", assert_state={"state": "done", "amount": 0}))
    assert (state_only["settles"], both["settles"]) == ("exercised", "verified")


# ---------------------------------------------------------------- at most N P

def test_bounded_existence_needs_p_checked_at_every_step_of_the_interval():
    occurrence_only = statuses(turn("found"), turn("confirm"), turn("paid", tool_arguments={"notify": {}}))
    counted = statuses(turn("found", must_not_call=["notify"]), turn("confirm", must_not_call=["notify"]),
                       turn("paid", tool_arguments={"notify": {}}))
    assert (occurrence_only["one_notice"], counted["one_notice"]) == ("exercised", "verified")


def test_a_precondition_mid_run_hides_earlier_occurrences_so_a_bound_is_never_verified():
    found = statuses(turn("confirm", must_not_call=["notify"]), turn("paid", tool_arguments={"notify": {}}),
                     precondition={"state": "confirming", "customer": "c-1", "owner": "c-1", "amount": 5})
    assert found["one_notice"] == "exercised"


def test_a_before_scope_is_not_judged_from_a_precondition_mid_run():
    # Whether `confirm` already happened before the precondition is hidden, so is the scope: no trigger at all.
    found = statuses(turn("twice", must_not_call=["refund"]), turn("confirm"),
                     precondition={"state": "confirming", "customer": "c-1", "owner": "c-1", "amount": 5})
    assert "quiet_until_confirmed" not in found


# ---------------------------------------------------------------- final assertions, contradictions

def test_a_final_tool_arguments_check_speaks_of_the_latest_call_only():
    # The latest get_order call is made by `twice`, not by `found`: the final check does not reach the first one.
    latest = statuses(turn("found"), turn("confirm"), final={"tool_arguments": {"get_order": {"order": "o-1"}}})
    first_and_only = statuses(turn("found"), turn("twice"), turn("confirm"),
                              final={"tool_arguments": {"get_order": {"order": "o-2"}}})
    assert latest["looked_up"] == "verified"
    assert first_and_only["looked_up"] == "exercised"  # `twice` made two calls: one check pins neither


def test_a_golden_contradicting_the_fsm_verifies_no_trigger():
    good = turn("confirm", assert_state={"owner": "c-1", "customer": "c-1"})
    found = statuses(turn("found"), good, turn("paid", assert_state={"state": "handed_off"}))
    assert found["own"] == "exercised"


@pytest.mark.parametrize("owner", ["c-2"])
def test_a_golden_breaking_an_invariant_verifies_nothing_on_the_block(owner):
    found = statuses({"event": "found", "args": {"who": owner, "amt": 5}},
                     turn("confirm", assert_state={"owner": owner, "customer": "c-1", "confirmed": True,
                                                   "amount": 0}))
    assert found["own"] == "exercised" and found["confirmed_pays"] == "exercised"
