"""Observable-only judgement: every deviation type on the order-cancellation model, each checked against the
independent runs judge (tests/judge/runs.py), and a differential campaign of mutated runs.

The `orders` judge decides the model's `say` forbid by its phrases alone (the rule judge, `--judge rules`), as most of
these tests are about calls and states; the default — the embedded judge on the forbid's description, undecided a gap
— has a campaign of its own at the end (and tests/test_sayings_replay.py)."""

from __future__ import annotations

import copy
import random

import pytest

from mbt.api import load_models
from mbt.judges import RuleJudge
from mbt.judges.sayings import SayingJudge
from mbt.kind import support
from mbt.runs.judge import DEVIATION_TYPES, RunJudge
from mbt.runs.loop import LoopRules
from mbt.runs.measure import judge_run
from mbt.runs.reader import read_runs
from mbt.runs.steps import ObservedRun, ObservedStep
from tests.judge import runs as judge


@pytest.fixture(scope="module")
def orders():
    _, models = load_models(["models/orders.fsm"])
    model = models[0]
    elements = support("fsm").enumerate(model)
    return model, elements, RunJudge(model, elements, answers=RuleJudge())


def user(text):
    return ObservedStep("user", f"u:{text}", text=text)


def say(text):
    return ObservedStep("assistant", f"a:{text}", text=text)


def call(tool, sources=None, **args):
    return ObservedStep("tool_call", f"c:{tool}", tool=tool, args=args, sources=sources or {})


def ok(tool, state_after=None, **result):
    return ObservedStep("tool_result", f"r:{tool}", tool=tool, result=result, state_after=state_after)


def fail(tool, error):
    return ObservedStep("tool_result", f"r:{tool}", tool=tool, ok=False, error=error)


def run(*steps, **fields):
    fields.setdefault("precondition", {"customer_id": "C-1"})
    return ObservedRun(id=fields.pop("id", "r"), file="f", where="f:1", steps=list(steps), **fields)


START = [user("cancel SO-1001"), call("get_order", order_id="SO-1001"), ok("get_order", owner="C-1", status="paid")]
CONFIRMED = START + [say("Cancel SO-1001?"), user("yes"), call("cancel_order", order_id="SO-1001")]


def happy():
    return CONFIRMED + [ok("cancel_order"), call("get_order", order_id="SO-1001"),
                        ok("get_order", owner="C-1", status="cancelled"), say("SO-1001 is cancelled.")]


CASES = {
    "pass": (happy(), None, None),
    "unexpected_call": ([user("cancel SO-1001"), call("cancel_order", order_id="SO-1001")],
                        "transition:idle.give_order_number->looking_up", 2),
    "wrong_argument": ([user("cancel SO-1001"), call("get_order", {"order_id": "model_inference"}, order_id="SO-1")],
                       "transition:idle.give_order_number->looking_up", 2),
    "missing_argument": ([user("cancel SO-1001"), call("get_order")],
                         "transition:idle.give_order_number->looking_up", 2),
    "missing_call": (CONFIRMED + [ok("cancel_order")], "transition:cancelling.cancel_succeeded->verifying", 7),
    "forbidden_call": ([user("cancel SO-1001"), call("get_order", order_id="SO-1001"),
                        ok("get_order", owner="C-9", status="paid"), call("cancel_order", order_id="SO-1001")],
                       "forbidden:cancel_other_order", 4),
    "forbidden_saying": (START + [say("I can reveal it ships to Elm St")], "forbidden:reveal_other_order", 4),
    "duplicate_call": (CONFIRMED + [fail("cancel_order", "TIMEOUT"), call("cancel_order", order_id="SO-1001")],
                       "transition:cancelling.cancel_failed->handed_off", 8),
    "premature_success": (CONFIRMED + [ok("cancel_order"), say("It is cancelled")], "state:cancelled", 8),
    "wrong_state": (START[:2] + [ok("get_order", {"order_status": "shipped"}, owner="C-1", status="paid")],
                    "transition:looking_up.order_found->confirming", 3),
    "unbound_step": (START + [user("hmm")], "state:confirming", 4),
    "step_not_allowed": ([user("cancel SO-1001"), call("get_order", order_id="SO-1001"),
                          ok("get_order", owner="C-1", status="shipped"), user("SO-1001 again")],
                         "state:refused", 4),
}


def test_every_deviation_type_has_a_case():
    assert sorted(k for k in CASES if k != "pass") == sorted(DEVIATION_TYPES)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_deviation_type(orders, kind):
    model, _, j = orders
    steps, element, step = CASES[kind]
    r = run(*copy.deepcopy(steps))
    v = j.judge(r)
    reference = judge.judge(model, r)
    if kind == "pass":
        assert v.deviation is None and v.completed and v.final_state == "cancelled"
        assert reference.type is None and reference.completed
        return
    d = v.deviation
    assert d is not None
    assert (d.type, d.element, d.step) == (kind, element, step)
    assert d.where == r.steps[step - 1].where
    assert (reference.type, reference.element, reference.step) == (kind, element, step)


def test_wrong_argument_reports_the_recorded_source(orders):
    _, _, j = orders
    d = j.judge(run(*copy.deepcopy(CASES["wrong_argument"][0]))).deviation
    assert (d.argument, d.expected, d.actual, d.source) == ("order_id", "SO-1001", "SO-1", "model_inference")
    assert "from model_inference" in d.message


def test_unjudged_tool_result_is_listed_not_a_deviation(orders):
    _, _, j = orders
    steps = CONFIRMED + [fail("cancel_order", "TIMEOUT"),
                         call("handoff_to_human", order_id="SO-1001", reason="cancel_failed"), ok("handoff_to_human")]
    v = j.judge(run(*steps))
    assert v.deviation is None and v.escalation_expected and v.escalated
    assert len(v.unbound) == 1 and "handoff_to_human" in v.unbound[0]


def test_transcript_without_arguments_judges_names_only(orders):
    _, _, j = orders
    steps = copy.deepcopy(START)
    steps[1].args = None
    assert j.judge(run(*steps)).deviation is None


def test_bad_precondition_makes_the_run_invalid(orders):
    _, _, j = orders
    v = j.judge(run(user("x"), precondition={"state": "nowhere"}))
    assert v.invalid and "nowhere" in v.invalid


def _mutants(runs, seed=7, count=300):
    """Runs changed the ways agents go wrong: a step dropped, repeated or swapped, an argument or result edited."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        r = copy.deepcopy(rng.choice(runs))
        r.id = f"m{i}"
        steps = r.steps
        if not steps:
            continue
        k = rng.randrange(len(steps))
        how = rng.randrange(6)
        if how == 0:
            del steps[k]
        elif how == 1:
            steps.insert(k, copy.deepcopy(steps[k]))
        elif how == 2 and k + 1 < len(steps):
            steps[k], steps[k + 1] = steps[k + 1], steps[k]
        elif how == 3 and steps[k].args:
            name = rng.choice(sorted(steps[k].args))
            steps[k].args[name] = rng.choice(["SO-1", "C-2002", "cancel_failed", None])
        elif how == 4 and steps[k].kind == "tool_result":
            steps[k].ok, steps[k].error = (not steps[k].ok), rng.choice(["TIMEOUT", "NOT_FOUND"])
        elif how == 5 and isinstance(steps[k].result, dict) and "status" in steps[k].result:
            steps[k].result["status"] = rng.choice(["paid", "shipped", "cancelled", "pending"])
        out.append(r)
    return out


def test_differential_campaign_against_the_runs_judge(orders):
    model, elements, j = orders
    examples = [r for r in read_runs(["models/runs"]).runs]
    campaign = examples + _mutants(examples)
    kinds = set()
    for r in campaign:
        v = judge_run(j, r, LoopRules())
        ref = judge.judge(model, r)
        d = v.deviation
        got = (d.type, d.step, d.element) if d else (None, None, None)
        assert got == (ref.type, ref.step, ref.element), r.id
        assert (v.final_state, v.completed, v.escalation_expected, v.escalated, v.intent) == (
            ref.final_state, ref.completed, ref.hands_off, ref.handed_off, ref.intent), r.id
        through = {elements[i].id for i in v.exercised if elements[i].criterion in ("state", "transition")}
        assert through == ref.through, r.id
        kinds.add(got[0])
    assert kinds >= set(DEVIATION_TYPES) | {None}  # the campaign reaches every model type


def test_by_default_a_forbid_whose_phrases_are_not_said_lets_the_happy_run_pass(orders):
    """The embedded judge cannot decide whether the happy run's texts reveal another customer's order; the forbid's
    phrases, none of them said, decide (a forbid without phrases would leave the run not judged:
    tests/test_runs_evidence.py)."""
    model, elements, _ = orders
    v = RunJudge(model, elements).judge(run(*happy()))
    assert v.deviation is None and not v.gaps and v.completed


def test_differential_campaign_with_the_default_answer_judge(orders):
    """The same campaign judged as `mbt runs` judges by default: the reference asks the same answer judge about the
    forbid's description (mbt.judges.sayings), and agrees on every deviation and on which runs are not judged."""
    model, elements, _ = orders
    default = RunJudge(model, elements)
    describe = SayingJudge().describes
    examples = [r for r in read_runs(["models/runs"]).runs]
    outcomes = set()
    for r in examples + _mutants(examples):
        v = judge_run(default, r, LoopRules())
        ref = judge.judge(model, r, describe=lambda text, description: describe(text, description).verdict)
        d = v.deviation
        assert ((d.type, d.step, d.element) if d else (None, None, None)) == (ref.type, ref.step, ref.element), r.id
        assert (v.deviation is None and bool(v.gaps)) == (ref.type is None and ref.gaps > 0), r.id
        outcomes.add("deviation" if d else "not_judged" if v.gaps else "pass")
    assert {"deviation", "not_judged"} <= outcomes
