"""Replay of goldens on an FSM, checked against hand-computed runs of tests/data/reset.fsm."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbt.elements.fsm import enumerate_fsm
from mbt.engine.fsm import CompiledFsm, run_events
from mbt.goldens.cases import parse_case
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.parsing.loader import load_file

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def model():
    return load_file(DATA / "reset.fsm").models[0]


@pytest.fixture(scope="module")
def elements(model):
    return enumerate_fsm(model)


def replay(model, elements, raw):
    run = FsmReplayer(CompiledFsm(model, elements)).replay(parse_case(raw, "golden.jsonl", 7), keep_snapshots=True)
    return run, {elements[i].id for i in run.exercised}, {elements[i].id for i in run.verified}


CORRECTION = {
    "id": "ACC-REC-001", "contract": "password-reset-v1", "precondition": {"active_task": "password_reset"},
    "turns": [{"user": "forgot pwd，登不上了"}, {"user": "账户邮箱是 li@example.com"},
              {"user": "说错了，是 lin@example.com"}, {"event": "confirm"}],
    "assertions": {"intent": "PASSWORD_RESET", "must_not": ["索取当前密码", "把 li@example.com 发送给重置工具"],
                   "state": {"recovery_email": "lin@example.com"}, "discarded": {"recovery_email": "li@example.com"},
                   "tool_arguments": {"recovery_email": "lin@example.com"}},
}


def test_seed_golden_binds_every_turn_and_reaches_started(model, elements):
    run, exercised, verified = replay(model, elements, CORRECTION)
    assert not run.unbound and not run.contradictions and not run.divergences
    assert [s.state for s in run.snapshots] == ["collecting", "confirming", "confirming", "started"]
    assert [s.transition for s in run.snapshots] == [
        "idle.request_reset->collecting", "collecting.provide_email->confirming",
        "confirming.correct_email->confirming", "confirming.confirm->started"]
    assert run.snapshots[2].variables["recovery_email"] == "lin@example.com"
    assert run.snapshots[2].discarded == {"recovery_email": "li@example.com"}
    assert [(c.tool, c.args) for c in run.snapshots[3].calls] == [
        ("start_password_reset", {"recovery_email": "lin@example.com"})]


def test_exercised_and_verified_elements_of_the_seed_golden(model, elements):
    _, exercised, verified = replay(model, elements, CORRECTION)
    assert {"state:idle", "state:collecting", "state:confirming", "state:started",
            "transition:idle.request_reset->collecting", "transition:collecting.provide_email->confirming",
            "transition:confirming.correct_email->confirming", "transition:confirming.confirm->started",
            "guard:confirming.correct_email->confirming:c1=true", "guard:confirming.confirm->started:c1=true",
            "transition-pair:idle.request_reset->collecting|collecting.provide_email->confirming",
            "transition-pair:confirming.correct_email->confirming|confirming.confirm->started"} <= exercised
    # Only the last turn is checked (final assertions) plus the step that made the checked tool call (the same one).
    assert {"transition:confirming.confirm->started", "state:started", "state:confirming",
            "transition-pair:confirming.correct_email->confirming|confirming.confirm->started"} <= verified
    assert "transition:idle.request_reset->collecting" not in verified
    assert "guard:confirming.confirm->started:c1=false" not in exercised
    # must_not phrases cover the say-forbid and the discarded-email call forbid.
    assert {"forbidden:any.*!say", "forbidden:any.confirm!call:start_password_reset"} <= verified
    # The forbid on confirming/confirm with recovery_email == none: its guard is false here, so not even exercised.
    assert "forbidden:confirming.confirm->started" not in exercised


def test_turn_assertion_that_disagrees_is_a_contradiction_with_both_values(model, elements):
    raw = {"id": "C1", "turns": [{"event": "request_reset", "assert_state": {"state": "confirming"}}]}
    run, _, verified = replay(model, elements, raw)
    assert len(run.contradictions) == 1
    c = run.contradictions[0]
    assert (c.turn, c.path, c.expected, c.actual) == (1, "state", "confirming", "collecting")
    assert c.where == "golden.jsonl:7"
    assert "transition:idle.request_reset->collecting" not in verified


def test_wrong_tool_argument_is_a_contradiction(model, elements):
    raw = dict(CORRECTION, assertions={"tool_arguments": {"recovery_email": "li@example.com"}})
    run, _, verified = replay(model, elements, raw)
    assert [(c.path, c.expected, c.actual) for c in run.contradictions] == [
        ("tool_arguments.recovery_email", "li@example.com", "lin@example.com")]
    assert "transition:confirming.confirm->started" not in verified


def test_missing_tool_call_is_a_contradiction(model, elements):
    raw = {"id": "C2", "turns": [{"event": "request_reset"}],
           "assertions": {"tool_arguments": {"start_password_reset": {"recovery_email": "a@b"}}}}
    run, _, _ = replay(model, elements, raw)
    assert run.contradictions[0].path == "tool_arguments.start_password_reset.recovery_email"
    assert run.contradictions[0].actual is None


def test_event_not_allowed_is_a_divergence_unless_treated_as_refused(model, elements):
    run, exercised, _ = replay(model, elements, {"id": "D", "turns": [{"event": "request_reset"}, {"event": "tool_ok"}]})
    assert [(d.turn, d.state, d.event) for d in run.divergences] == [(2, "collecting", "tool_ok")]
    run, _, verified = replay(model, elements, {"id": "R", "turns": [
        {"event": "request_reset"}, {"event": "tool_ok", "rejected": True}]})
    assert not run.divergences and not run.contradictions
    run, _, _ = replay(model, elements, {"id": "R2", "turns": [
        {"event": "request_reset"}, {"event": "tool_ok", "assert_state": {"state": "collecting"}}]})
    assert not run.divergences and not run.contradictions


def test_rejected_turn_that_the_model_accepts_is_a_contradiction(model, elements):
    run, _, _ = replay(model, elements, {"id": "X", "turns": [{"event": "request_reset", "rejected": True}]})
    assert [c.path for c in run.contradictions] == ["rejected"]


def test_guard_branches_no_branch_and_conditions(model, elements):
    # started on tool_failed: TIMEOUT with retries 0 -> retry; TIMEOUT again -> handed_off (retries >= 1).
    raw = {"id": "T", "precondition": {"state": "started"},
           "turns": [{"event": "tool_failed", "args": {"code": "TIMEOUT"}, "assert_state": {"retries": 1}},
                     {"event": "tool_failed", "args": {"code": "TIMEOUT"}, "assert_state": {"state": "handed_off"}}]}
    run, exercised, verified = replay(model, elements, raw)
    assert not run.contradictions
    assert [s.state for s in run.snapshots] == ["started", "handed_off"]
    assert {"guard:started.tool_failed->started", "guard:started.tool_failed->handed_off",
            "guard:started.tool_failed->started:c1=true", "guard:started.tool_failed->started:c2=true",
            "guard:started.tool_failed->started:c2=false", "guard:started.tool_failed->handed_off:c1=false",
            "guard:started.tool_failed->handed_off:c2=true"} <= verified
    assert "guard:started.tool_failed:none" not in exercised
    # confirm with no e-mail: no branch holds, the event is refused; the forbid on that situation is exercised.
    raw = {"id": "N", "precondition": {"state": "confirming"},
           "turns": [{"event": "confirm", "assert_state": {"state": "confirming"}}]}
    run, exercised, verified = replay(model, elements, raw)
    assert not run.divergences and not run.contradictions
    assert {"guard:confirming.confirm:none", "forbidden:confirming.confirm->started"} <= verified


def test_unbound_turn_stops_the_case_and_is_listed(model, elements):
    raw = {"id": "U", "turns": [{"user": "forgot my password"}, {"user": "what is the weather"}, {"event": "confirm"}]}
    run, exercised, _ = replay(model, elements, raw)
    assert [(u.turn, u.user) for u in run.unbound] == [(2, "what is the weather")]
    assert "transition:idle.request_reset->collecting" in exercised
    assert "guard:confirming.confirm:none" not in exercised


def test_bad_arguments_and_unknown_events_are_unbound_not_guessed(model, elements):
    run, _, _ = replay(model, elements, {"id": "A", "precondition": {"state": "started"},
                                         "turns": [{"event": "tool_failed", "args": {"code": "NOPE"}}]})
    assert "not a value of enum" in run.unbound[0].reason
    run, _, _ = replay(model, elements, {"id": "B", "turns": [{"event": "teleport"}]})
    assert "unknown event `teleport`" in run.unbound[0].reason


def test_invalid_precondition_makes_the_case_unusable(model, elements):
    run, _, _ = replay(model, elements, {"id": "P", "precondition": {"retries": 7}, "turns": [{"event": "confirm"}]})
    assert "not a value of int[0..1]" in run.invalid
    run, _, _ = replay(model, elements, {"id": "Q", "precondition": {"state": "nowhere"}, "turns": [{"event": "confirm"}]})
    assert "unknown state" in run.invalid


def test_assertions_on_unknown_variables_are_noted_not_dropped(model, elements):
    raw = {"id": "V", "turns": [{"event": "request_reset", "assert_state": {"suspended_task": "password_reset"}}]}
    run, _, _ = replay(model, elements, raw)
    assert any("suspended_task" in n.message for n in run.notes)


def test_run_events_gives_the_configuration_after_each_step(model, elements):
    snaps = run_events(model, elements, [("request_reset", {}), ("provide_email", {"email": "a@x"}),
                                         ("correct_email", {"email": "a@x"})])
    # Correcting to the same address: the guard e != recovery_email fails, the event is refused.
    assert [s.state for s in snaps] == ["collecting", "confirming", "confirming"]
    assert snaps[2].transition is None
    assert snaps[2].discarded == {"recovery_email": None}
