"""Nested argument paths (issue 32, item 6): a model's call passes a field of a structured argument
(`call handoff(confirmed_fields.recovery_email = ...)`), a golden checks it as a dotted key or as nested mappings
(one meaning), and a contradiction says which path differs: seed 000's `handoff.confirmed_fields.recovery_email`."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbt.api import coverage
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.measure.run import measure
from mbt.parsing.loader import load_file
from tests.cli_runner import run_mbt
from tests.judge.common import statuses_by_case
from tests.judge.fsm import judge

SEED = Path(__file__).parent / "data" / "seed000"
MODEL_PATH = SEED / "recovery.fsm"
TO_HANDOFF = [{"event": "provide_email", "args": {"email": "li@example.com"}},  # explicit: the judge binds no text
              {"event": "correct_email", "args": {"email": "lin@example.com"}},
              {"event": "tool_failed", "args": {"code": "AUTH_EXPIRED"}}]
# The defect of seed 000's report: the hand-off carries the discarded address as the confirmed one.
BUGGY = MODEL_PATH.read_text(encoding="utf-8").replace("confirmed_fields.recovery_email = recovery_email",
                                                       "confirmed_fields.recovery_email = discarded.recovery_email")


@pytest.fixture(scope="module")
def model():
    return load_file(MODEL_PATH).models[0]


@pytest.fixture(scope="module")
def buggy_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("buggy") / "recovery.fsm"
    path.write_text(BUGGY, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def buggy(buggy_path):
    return load_file(buggy_path).models[0]


def outcome(model, raw):
    case = parse_case(raw, "nested.yaml", 3)
    report = measure([model], GoldenSet([case]))
    verdict = judge(model, case)
    assert statuses_by_case(report, [case])[case.id] == verdict.statuses, "mbt and the judge disagree"
    assert bool(report.contradictions) == verdict.contradicted
    assert {(f.turn, f.element) for f in report.forbidden_expected} == verdict.expected_forbidden
    return report


def test_a_call_passes_fields_of_a_structured_argument(model):
    (handoff,) = {tuple(name for name, _ in a.args) for t in model.transitions for a in t.actions
                  if getattr(a, "tool", None) == "handoff"}
    assert handoff == ("user_goal", "confirmed_fields.recovery_email", "discarded_fields.recovery_email",
                       "failed_step", "failure_reason")
    done = run_mbt("check", MODEL_PATH)
    assert done.returncode == 0 and " 0 errors" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("args, message", [
    ("x = 1, x = 2", "argument `x` is given twice in this call"),
    ("a.b = 1, a = 2", "argument `a` is given a value and fields (`a.b`) in this call"),
    ("a = 2, a.b.c = 1", "argument `a` is given a value and fields (`a.b.c`) in this call"),
])
def test_a_field_given_twice_or_beside_its_parent_is_an_error_at_the_call(tmp_path, args, message):
    path = tmp_path / "m.fsm"
    path.write_text(f"fsm m {{\n  state s initial\n  state t final\n  event go\n  s -> t on go / call tool({args})\n}}\n",
                    encoding="utf-8")
    done = run_mbt("check", path)
    assert done.returncode == 2 and f"{path}:5:" in done.stderr and message in done.stderr, done.stderr


def test_a_dotted_key_and_nested_mappings_are_one_expectation():
    spellings = [{"handoff.confirmed_fields.recovery_email": "lin@example.com"},
                 {"handoff": {"confirmed_fields.recovery_email": "lin@example.com"}},
                 {"handoff": {"confirmed_fields": {"recovery_email": "lin@example.com"}}}]
    read = [parse_case({"id": "N", "turns": [{"event": "go", "tool_arguments": s}]}, "g", 1).turns[0].expect
            .tool_arguments for s in spellings]
    assert read == [{"handoff.confirmed_fields.recovery_email": "lin@example.com"}] * 3
    final = parse_case({"id": "N", "turns": [{"event": "go"}], "final_assertions": {"tool_arguments": spellings[2]}},
                       "g", 1).final.tool_arguments
    assert final == read[0]


def test_a_path_written_both_ways_makes_the_case_invalid():
    with pytest.raises(ValueError, match=r"tool_arguments: `handoff\.a` is given twice"):
        parse_case({"id": "N", "turns": [{"event": "go"}],
                    "assertions": {"tool_arguments": {"handoff.a": 1, "handoff": {"a": 2}}}}, "g", 1)


def test_the_nested_spellings_agree_with_the_model(model):
    for tool_arguments in ({"handoff": {"confirmed_fields": {"recovery_email": "lin@example.com"},
                                        "discarded_fields": {"recovery_email": "li@example.com"}}},
                           {"handoff.confirmed_fields.recovery_email": "lin@example.com"},
                           {"confirmed_fields.recovery_email": "lin@example.com"},  # the latest call passing it
                           {"handoff": {"failure_reason": {"in": ["AUTH_EXPIRED", "MALFORMED_JSON"]}}}):
        report = outcome(model, {"id": "OK", "turns": TO_HANDOFF, "final_assertions": {"tool_arguments":
                                                                                       tool_arguments}})
        assert not report.contradictions, tool_arguments
        verified = {e.element.id for m in report.models for e in m.elements if e.verified_by}
        assert "transition:reset_started.tool_failed->handed_off" in verified, tool_arguments


def test_seed_000_failed_assertion_names_the_path_that_differs(buggy):
    report = outcome(buggy, {"id": "ACC-REC-001", "turns": TO_HANDOFF, "final_assertions": {
        "tool_arguments": {"handoff": {"confirmed_fields": {"recovery_email": "lin@example.com"}}}}})
    (c,) = report.contradictions
    assert (c.path, c.expected, c.actual) == ("tool_arguments.handoff.confirmed_fields.recovery_email",
                                              "lin@example.com", "li@example.com")
    assert c.message == ("final assertions: tool_arguments handoff.confirmed_fields.recovery_email: expected "
                         "'lin@example.com', the model passes 'li@example.com'")


def test_a_path_no_call_passes_and_a_set_it_misses_are_contradictions_naming_the_path(model):
    report = outcome(model, {"id": "MISS", "turns": TO_HANDOFF, "final_assertions": {"tool_arguments": {
        "handoff": {"confirmed_fields": {"phone": "123"}, "failure_reason": {"in": ["TIMEOUT"]}}}}})
    assert [(c.path, c.message) for c in report.contradictions] == [
        ("tool_arguments.handoff.confirmed_fields.phone",
         "final assertions: tool_arguments handoff.confirmed_fields.phone: expected '123', the model makes no call "
         "to handoff passing it"),
        ("tool_arguments.handoff.failure_reason",
         "final assertions: tool_arguments handoff.failure_reason: expected 'TIMEOUT', the model passes "
         "'AUTH_EXPIRED'")]


def test_a_forbid_reads_a_field_of_a_structured_argument(buggy, buggy_path, model):
    """`forbid ... effect call handoff [args.confirmed_fields.recovery_email == discarded.recovery_email]`: mbt check
    proves the seed model never does it and finds the buggy one does; a golden expecting the buggy call expects
    forbidden behaviour, and one pinning the correct call verifies the forbid."""
    done = run_mbt("check", buggy_path)
    assert "FSM007" in done.stdout and \
        "forbid `any on * effect call handoff [args.confirmed_fields.recovery_email == discarded.recovery_email]`" \
        in done.stdout, done.stdout
    expects = outcome(buggy, {"id": "F", "turns": TO_HANDOFF, "final_assertions": {"tool_arguments": {
        "handoff": {"confirmed_fields": {"recovery_email": "li@example.com"}}}}})
    assert [f.element for f in expects.forbidden_expected] == ["forbidden:discarded_email_handed_off"]
    pins = outcome(model, {"id": "P", "turns": TO_HANDOFF, "final_assertions": {"tool_arguments": {
        "handoff.confirmed_fields.recovery_email": "lin@example.com"}}})
    assert any(e.verified_by for m in pins.models for e in m.elements
               if e.element.id == "forbidden:discarded_email_handed_off")


def test_the_seed_golden_set_reads_and_agrees_with_nothing_dropped():
    """tests/data/seed000: every case valid; the hand-off goldens (nested paths, sets) agree and add no note."""
    report = coverage([str(MODEL_PATH)], [str(SEED / "goldens")])
    assert (report.goldens.read, report.goldens.valid, report.goldens.invalid) == (5, 5, 0)
    assert not report.contradictions and not report.forbidden_expected
    assert not [n for n in report.notes if n.case.startswith("HANDOFF")]


@pytest.mark.parametrize("path, error", [("args.confirmed_fields.recovery_email", None),
                                         ("args.confirmed_fields", None),
                                         ("args.phone", "tool `handoff` is never called with argument `phone`")])
def test_a_forbid_by_argument_source_names_a_field_of_a_structured_argument(tmp_path, path, error):
    """`when args.PATH from SOURCE` (docs/runs.md) takes the paths a call passes, fields of structured arguments too."""
    model = MODEL_PATH.read_text(encoding="utf-8").replace(
        "    severity critical id discarded_email_handed_off\n",
        f"    severity critical id discarded_email_handed_off\n"
        f"  forbid any on * effect call handoff when {path} from model_inference severity high\n")
    (tmp_path / "m.fsm").write_text(model, encoding="utf-8")
    done = run_mbt("check", tmp_path / "m.fsm")
    if error is None:
        assert done.returncode == 0 and " 0 errors" in done.stdout, done.stdout + done.stderr
    else:
        assert done.returncode == 2 and error in done.stderr, done.stdout + done.stderr
