"""Set-valued expectations (issue 32, item 6): `state: [a, b]` and `{in: [...]}` accept any of the listed values,
in mbt's replay and in the independent judge (tests/judge/fsm.py) alike; a value outside the set is a contradiction
that names the set."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbt.api import coverage
from mbt.goldens import cases
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.measure.run import measure
from mbt.parsing.loader import load_file
from tests.judge.common import statuses_by_case
from tests.judge.fsm import judge

SEED = Path(__file__).parent / "data" / "seed000"
MODEL_PATH = SEED / "recovery.fsm"
TO_RESET = [{"event": "provide_email", "args": {"email": "li@example.com"}},
            {"event": "correct_email", "args": {"email": "lin@example.com"}}]


@pytest.fixture(scope="module")
def model():
    return load_file(MODEL_PATH).models[0]


def outcome(model, raw):
    case = parse_case(raw, "sets.jsonl", 1)
    report = measure([model], GoldenSet([case]))
    verdict = judge(model, case)
    mine = statuses_by_case(report, [case])[case.id]
    assert mine == verdict.statuses, "mbt and the judge disagree"  # the second implementation agrees
    assert bool(report.contradictions) == verdict.contradicted
    return report


def test_the_control_state_may_be_any_of_a_list(model):
    fine = outcome(model, {"id": "S1", "turns": [*TO_RESET[:1], {**TO_RESET[1],
                                                                  "assert_state": {"state": ["reset_started",
                                                                                             "handed_off"]}}]})
    assert not fine.contradictions
    assert any(e.verified_by == ["S1"] for m in fine.models for e in m.elements
               if e.element.id == "transition:confirming.correct_email->reset_started")
    wrong = outcome(model, {"id": "S2", "turns": TO_RESET, "assertions": {"state": ["link_sent", "handed_off"]}})
    (c,) = wrong.contradictions
    assert (c.path, c.expected, c.actual) == ("state", {"in": ["link_sent", "handed_off"]}, "reset_started")
    assert c.message == ("final assertions: golden expects state one of `link_sent`, `handed_off`, the model is in "
                         "`reset_started`")


def test_a_list_of_states_in_assert_state_itself_and_in_a_map_with_in(model):
    for expect in (["confirming", "suspended"], {"in": ["confirming", "suspended"]},
                   {"state": {"in": ["confirming", "suspended"]}}):
        case = parse_case({"id": "S3", "turns": [{**TO_RESET[0], "assert_state": expect}]}, "g", 1)
        assert case.turns[0].expect.state == cases.OneOf(("confirming", "suspended"))
        assert not outcome(model, {"id": "S3", "turns": [{**TO_RESET[0], "assert_state": expect}]}).contradictions


def test_seed_000_recovery_action_in_retry_or_handoff(model):
    """test_recovery_tool_failure: `assert result.recovery_action in {"RETRY", "HANDOFF"}` as a golden."""
    for code, expected in (("TIMEOUT", "RETRY"), ("AUTH_EXPIRED", "HANDOFF")):
        raw = {"id": f"F-{code}", "turns": [*TO_RESET, {"event": "tool_failed", "args": {"code": code}}],
               "assertions": {"state": {"recovery_action": {"in": ["RETRY", "HANDOFF"]}}}}
        assert not outcome(model, raw).contradictions, code
        raw["assertions"]["state"]["recovery_action"] = expected  # the model's value is this one of the two
        assert not outcome(model, raw).contradictions, code
    done = outcome(model, {"id": "F-OK", "turns": [*TO_RESET, {"event": "tool_succeeded"}],
                           "assertions": {"state": {"recovery_action": {"in": ["RETRY", "HANDOFF"]}}}})
    (c,) = done.contradictions
    assert (c.path, c.expected, c.actual) == ("variables.recovery_action", {"in": ["RETRY", "HANDOFF"]}, None)
    assert c.message == ("final assertions: golden expects recovery_action one of 'RETRY', 'HANDOFF', the model has "
                         "None")


def test_a_discarded_value_may_be_a_set_too(model):
    raw = {"id": "D1", "turns": TO_RESET,
           "assertions": {"discarded": {"recovery_email": {"in": ["li@example.com", "l@example.com"]}}}}
    assert not outcome(model, raw).contradictions
    raw["assertions"]["discarded"]["recovery_email"] = {"in": ["x@example.com"]}
    assert [c.path for c in outcome(model, raw).contradictions] == ["discarded.recovery_email"]


def test_a_forbidden_target_among_the_accepted_states_is_expected_forbidden(tmp_path):
    (tmp_path / "m.fsm").write_text("fsm m {\n  state a initial\n  state b\n  state c\n  event go\n"
                                    "  a -> b on go\n  forbid a on go -> c\n}\n", encoding="utf-8")
    (model,) = load_file(tmp_path / "m.fsm").models
    accepts_c = outcome(model, {"id": "X", "turns": [{"event": "go", "assert_state": {"state": ["b", "c"]}}]})
    assert [f.expected for f in accepts_c.forbidden_expected] == ["the move to `c` (among the states it accepts)"]
    excludes_c = outcome(model, {"id": "Y", "turns": [{"event": "go", "assert_state": ["a", "b"]}]})
    assert not excludes_c.forbidden_expected
    assert any(e.verified_by == ["Y"] for m in excludes_c.models for e in m.elements if e.element.id.startswith("forb"))


@pytest.mark.parametrize("expect, message", [
    ({"state": []}, "`state` lists no state: write one, or several in a list"),
    ({"state": ["a", 3]}, "`state` must list state names, not a number"),
    ({"state": {"n": {"in": []}}}, "`n: {in: []}` lists no value"),
    ({"state": {"n": {"in": "a"}}}, "`n: {in: ...}` must be a list of values, not text"),
])
def test_a_set_that_means_nothing_makes_the_case_invalid(expect, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("{", r"\{")
                       .replace("}", r"\}").replace(".", r"\.")):
        parse_case({"id": "B", "turns": [{"event": "go"}], "assertions": expect}, "g", 1)


def test_the_seed_golden_with_a_set_passes_through_the_cli_reports(tmp_path):
    path = tmp_path / "tool-failures.jsonl"
    path.write_text('{"id":"TOOL-FAIL-SET","turns":[{"event":"provide_email","args":{"email":"li@example.com"}},'
                    '{"event":"correct_email","args":{"email":"lin@example.com"}},'
                    '{"event":"tool_failed","args":{"code":"TIMEOUT"}}],'
                    '"assertions":{"state":{"state":["reset_started","handed_off"],'
                    '"recovery_action":{"in":["RETRY","HANDOFF"]}}}}\n', encoding="utf-8")
    report = coverage([str(MODEL_PATH)], [str(path)])
    assert report.goldens.valid == 1 and not report.contradictions and not report.notes


def test_a_set_pins_no_value_an_invariant_reads(tmp_path):
    """An invariant's trigger is verified when the golden checks every value its consequent reads: one of several
    accepted values checks none (the consequent may read another), a single value does."""
    (tmp_path / "m.fsm").write_text(
        "fsm m {\n  var mode: enum{a, b, c}? = none\n  state idle initial\n  state done final\n"
        "  event go(x: enum{a, b, c})\n  idle -> done on go(x) / mode := x\n}\n"
        "invariants for m {\n  reads_mode: always state == done -> mode != none\n"
        "  reads_state: always mode != none -> state == done\n}\n", encoding="utf-8")
    models = load_file(tmp_path / "m.fsm").models
    turns = [{"event": "go", "args": {"x": "a"}}]

    def verified(expect):
        report = measure(models, GoldenSet([parse_case({"id": "I", "turns": turns, "assertions": expect}, "g", 1)]))
        assert not report.contradictions
        rows = [e for m in report.models if m.kind == "invariant" for e in m.elements]
        assert all(row.exercised_by for row in rows)
        return sorted(row.element.id for row in rows if row.verified_by)

    assert verified({"state": {"state": "done", "mode": "a"}}) == ["trigger:reads_mode", "trigger:reads_state"]
    assert verified({"state": {"state": "done", "mode": {"in": ["a", "b"]}}}) == ["trigger:reads_state"]
    assert verified({"state": {"state": ["done", "idle"], "mode": "a"}}) == ["trigger:reads_mode"]
