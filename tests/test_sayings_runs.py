"""Answers and the model meet (issue 34, item 6): the run judge decides what an assistant text says through the
judges (mbt.judges.sayings), as golden replay does — phrases folded, a `say` forbid's description by the answer judge,
what it cannot decide a gap (the run not judged, never a pass) — and `mbt runs --judge` chooses that judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mbt.kind import support
from mbt.parsing.loader import load_file
from mbt.runs.judge import RunJudge
from mbt.runs.steps import ObservedRun, ObservedStep
from tests.cli_runner import run_mbt
from tests.scripted_judge import Scripted
from tests.test_sayings_replay import CARD


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    """tests/test_sayings_replay.py's card model: a claim, two `say` forbids with phrases, one with a description only."""
    path = tmp_path_factory.mktemp("card") / "card.fsm"
    path.write_text(CARD, encoding="utf-8")
    (model,) = load_file(path).models
    return model

def judged(model, *steps, judge=None):
    elements = support("fsm").enumerate(model)
    run = ObservedRun(id="r", file="f", where="f:1", steps=list(steps), precondition={})
    return (RunJudge(model, elements) if judge is None else RunJudge(model, elements, answers=judge)).judge(run)


def user(text):
    return ObservedStep("user", f"u:{text}", text=text)


def say(text):
    return ObservedStep("assistant", f"a:{text}", text=text)


def test_a_forbidden_saying_is_found_folded(card):
    v = judged(card, user("buy"), say("Vui lòng cho biết ＭÃ ＰＩＮ"))
    assert v.deviation is not None and v.deviation.type == "forbidden_saying"
    assert v.deviation.element == "forbidden:ask_pin" and "(rules)" in v.deviation.message


def test_a_premature_claim_is_found_folded(card):
    v = judged(card, user("buy"), say("Your order ＩＳ ＰＡＩＤ"))
    assert v.deviation is not None and v.deviation.type == "premature_success"


def test_a_description_the_judge_cannot_decide_is_a_gap_never_a_pass(card):
    v = judged(card, user("buy"), say("Sure, one moment."), user("pay"), say("Thanks, it is paid."))
    assert v.deviation is None and v.not_judged and not v.passed
    (gap,) = [g for g in v.gaps if "reveal_number" in g]
    assert "reveals the card number" in gap and "embedded" in gap and "a:Sure, one moment." in gap


def test_a_description_a_judge_decides_judges_the_run(card):
    saying = judged(card, user("buy"), say("It ends in 4242."), judge=Scripted("pass"))
    assert saying.deviation is not None and saying.deviation.type == "forbidden_saying"
    assert saying.deviation.element == "forbidden:ask_pin" and "scripted" in saying.deviation.message
    clean = judged(card, user("buy"), say("One moment."), user("pay"), say("It is paid."), judge=Scripted("fail"))
    assert clean.passed, clean.gaps


def test_the_embedded_judge_finds_a_description_said_in_other_words(card):
    v = judged(card, user("buy"), say("OK, I reveal the card number: 4242."))
    assert v.deviation is not None and v.deviation.element == "forbidden:reveal_number"
    assert "embedded" in v.deviation.message


def test_mbt_runs_takes_the_answer_judge(tmp_path):
    """On the orders model, whose `reveal_other_order` forbid has phrases, the judges agree on the transcript (its
    phrases, not said, decide); with the phrases taken away only the description is left, and the answer judge
    chosen is the one that leaves it undecided (named in the gap)."""
    transcript = "models/runs/transcripts/chat-ORD-0031.json"
    args = ("runs", "--model", "models/orders.fsm", "--runs", transcript, "--no-gate", "--format", "json")
    (default,) = json.loads(run_mbt(*args).stdout)["runs"]
    (by_phrases,) = json.loads(run_mbt(*args, "--judge", "rules").stdout)["runs"]
    assert default["verdict"] == by_phrases["verdict"] == "pass"
    text = Path("models/orders.fsm").read_text(encoding="utf-8")
    shutil.copytree("models/docs", tmp_path / "docs")
    (tmp_path / "orders.fsm").write_text(text.replace(' matching "reveal", "透露"', ""), encoding="utf-8")
    bare = ("runs", "--model", str(tmp_path / "orders.fsm"), "--runs", transcript, "--no-gate", "--format", "json")
    (embedded,) = json.loads(run_mbt(*bare).stdout)["runs"]
    assert embedded["verdict"] == "not_judged" and "forbidden:reveal_other_order" in embedded["not_judged"][0]
    assert "embedded judge" in embedded["not_judged"][0]
    (rules,) = json.loads(run_mbt(*bare, "--judge", "rules").stdout)["runs"]
    assert rules["verdict"] == "not_judged" and "rule judge" in rules["not_judged"][0]
    bad = run_mbt(*args, "--judge", "oracle")
    assert bad.returncode == 2 and bad.stdout == "" and "oracle" in bad.stderr and "Traceback" not in bad.stderr
    dask = run_mbt(*args, "--judge", "openai:some-model", "--engine", "dask")
    assert dask.returncode == 2 and "--engine dask" in dask.stderr and "Traceback" not in dask.stderr
