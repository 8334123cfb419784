"""Closing the loop: generated tests' driver in observable-only mode, and the transcripts it records read back by
`mbt runs` (mbt_support.Driver over the reference adapter, and a fake LLM agent whose tools the test fakes)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mbt.api import load_models
from mbt.generate.adapter import ReferenceAdapter
from mbt.generate.support import Driver
from mbt.kinds import support
from mbt.runs.judge import RunJudge
from mbt.runs.reader import read_runs

ROOT = Path(__file__).resolve().parents[1]
ORDERS = str(ROOT / "models" / "orders.fsm")


@pytest.fixture(scope="module")
def judge():
    _, models = load_models([ORDERS])
    return RunJudge(models[0], support("fsm").enumerate(models[0]))


def happy_path(driver: Driver) -> None:
    driver.start({"customer_id": "C-1"})
    driver.step("give_order_number", {"number": "SO-1007"}, {"state": "looking_up"}, user="cancel SO-1007")
    driver.step("order_found", {"owner": "C-1", "status": "paid"}, {"state": "confirming"})
    driver.step("confirm", {}, {"calls": [("cancel_order", {"order_id": "SO-1007"})]}, user="yes")
    driver.step("cancel_succeeded", {}, {"calls": [("get_order", {"order_id": "SO-1007"})]})
    driver.step("status_checked", {"status": "cancelled"}, {"state": "cancelled"})


def test_reference_run_recorded_as_a_transcript_reads_back_and_passes(tmp_path, judge):
    driver = Driver(ReferenceAdapter.from_file(ORDERS, "orders"))
    happy_path(driver)
    path = driver.save_transcript(str(tmp_path), "tests/test_x.py::test_happy[1]", "orders")
    found = read_runs([str(path)])
    assert found.invalid == []
    [run] = found.runs
    assert [(s.kind, s.tool or s.text) for s in run.steps] == [
        ("user", "cancel SO-1007"), ("tool_call", "get_order"), ("tool_result", "get_order"), ("user", "yes"),
        ("tool_call", "cancel_order"), ("tool_result", "cancel_order"), ("tool_call", "get_order"),
        ("tool_result", "get_order")]
    verdict = judge.judge(run)
    assert verdict.deviation is None and verdict.completed


class FakeAgent:
    """A stand-in for an LLM agent under test: it calls the tools the test fakes, and its words are observed.
    The adapter protocol of mbt_support (docs/runs.md, "Closing the loop")."""

    observable_only = True

    def __init__(self, wrong_order: bool = False):
        self.wrong_order = wrong_order

    def reset(self, state, variables, discarded):
        self.order, self.customer, self.turn = None, variables.get("customer_id"), {}

    def send(self, event, args, user):
        calls, results, outputs = [], [], []
        if event == "give_order_number":  # the user's words reach the agent; it looks the order up
            self.order = "SO-1001" if self.wrong_order else args["number"]
            calls.append(("get_order", {"order_id": self.order}))
        elif event == "order_found":  # the test's fake get_order answers
            results.append(("get_order", {"ok": True, "result": {"owner": args["owner"], "status": args["status"]}}))
            outputs.append(f"{self.order} is {args['status']}. Cancel it?")
        self.turn = {"state": None, "accepted": None, "variables": {"order_id": "not what the model says"},
                     "discarded": None, "calls": calls, "outputs": outputs, "results": results}

    def observe(self):
        return self.turn


def test_observable_only_mode_asserts_calls_not_variables(tmp_path, judge):
    driver = Driver(FakeAgent())
    assert driver.observable_only
    driver.start({"customer_id": "C-1"})
    driver.step("give_order_number", {"number": "SO-1007"},
                {"variables": {"order_id": "SO-1007"}, "calls": [("get_order", {"order_id": "SO-1007"})]}, user="cancel SO-1007")
    driver.observable_only = False  # every model variable asserted: the agent's internals now fail the step
    with pytest.raises(AssertionError, match="variables `order_owner` is not observed"):
        driver.step("order_found", {"owner": "C-1", "status": "paid"}, {"variables": {"order_owner": "C-1"}})
    wrong = Driver(FakeAgent(wrong_order=True))
    wrong.start({"customer_id": "C-1"})
    with pytest.raises(AssertionError, match="tool calls were"):  # what it calls is still checked
        wrong.step("give_order_number", {"number": "SO-1007"}, {"calls": [("get_order", {"order_id": "SO-1007"})]},
                   user="cancel SO-1007")
    # Its transcript, read back, shows the deviation with the observed argument.
    path = wrong.save_transcript(str(tmp_path), "agent wrong order", "orders")
    [run] = read_runs([str(path)]).runs
    d = judge.judge(run).deviation
    assert (d.type, d.argument, d.expected, d.actual) == ("wrong_argument", "order_id", "SO-1007", "SO-1001")


def test_generated_tests_record_transcripts_that_read_back(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "models", copy / "models")
    shutil.copytree(ROOT / "generated", copy / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "MBT_ADAPTER": "reference", "MBT_OBSERVABLE_ONLY": "1", "MBT_TRANSCRIPTS": "transcripts",
           "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "generated/tests"]
    result = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    found = read_runs([str(copy / "transcripts")])
    assert found.invalid == [] and len(found.runs) == 33  # one transcript per generated test
    assert all(r.model == "recovery" for r in found.runs)
