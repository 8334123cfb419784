"""Closing the loop: generated tests' driver in observable-only mode, and the transcripts it records read back by
`mbt runs` (mbt_support.Driver over the reference adapter, and a fake LLM agent whose tools the test fakes; the
generated tests of the order-cancellation model run against tests/loop_agent.py's agent)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from mbt.api import load_models
from mbt.generate.adapter import ReferenceAdapter
from mbt.generate.support import Driver
from mbt.kind import support
from mbt.runs.judge import RunJudge
from mbt.runs.reader import read_runs
from tests.cli_runner import run_mbt

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
    # Every step agrees with the model, but mbt's reference machine says nothing: the model's claims cannot be judged
    # on a run without assistant texts, so the run is not judged (and not completed), never a pass.
    assert verdict.deviation is None and verdict.final_state == "cancelled"
    assert verdict.not_judged and not verdict.passed and not verdict.completed
    assert [g.split(": ", 1)[1] for g in verdict.gaps] == [
        "the run records no assistant text: the model's claims and `say` forbids are not judged"]


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


def run_generated(copy: Path, adapter: str, transcripts: str) -> subprocess.CompletedProcess:
    """The generated tests in `copy` run by pytest with `adapter` (tests/loop_agent.py), their runs recorded."""
    env = {**os.environ, "MBT_ADAPTER": adapter, "MBT_TRANSCRIPTS": transcripts, "PYTHONPATH": str(ROOT),
           "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "gen/tests",
               f"--junitxml={transcripts}.xml"]
    return subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True)


def verdicts(copy: Path, transcripts: str) -> dict[str, tuple[str, str | None]]:
    """`mbt runs` on the recorded transcripts: test name -> (verdict, first deviation's type). The model's `say`
    forbid is decided by its phrases alone (`--judge rules`): by default its description, which the embedded judge
    does not decide on these texts, would leave every run not judged."""
    out = run_mbt("runs", "--model", "models/orders.fsm", "--runs", transcripts, "--no-gate", "--format", "json",
                  "--judge", "rules", cwd=copy)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    report = json.loads(out.stdout)
    assert report["invalid"] == []
    return {r["id"].split("::")[-1]: (r["verdict"], (r["deviation"] or {}).get("type")) for r in report["runs"]}


def failed_tests(copy: Path, transcripts: str) -> set[str]:
    cases = ElementTree.parse(copy / f"{transcripts}.xml").iter("testcase")
    return {c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None}


@pytest.fixture(scope="module")
def orders_suite(tmp_path_factory):
    """The order-cancellation model's transition suite generated into a copy of models/, for a signed-in customer."""
    copy = tmp_path_factory.mktemp("loop")
    shutil.copytree(ROOT / "models", copy / "models")
    made = run_mbt("generate", "--model", "models/orders.fsm", "--all", "--criterion", "transition",
                   "--precondition", '{"customer_id": "C-1"}', "--out", "gen", cwd=copy)
    assert made.returncode == 0, made.stderr
    stubs = [json.loads(line) for line in (copy / "gen" / "goldens" / "orders.suite-transition.jsonl").open()]
    return copy, stubs


def test_generated_tests_drive_an_agent_with_faked_tools_and_mbt_runs_judges_what_they_recorded(orders_suite):
    copy, stubs = orders_suite
    source = (copy / "gen" / "tests" / "test_orders_suite_transition.py").read_text(encoding="utf-8")
    assert "TODO" not in source and "user='yes'" in source  # the user's words come from the model's bindings
    done = run_generated(copy, "tests.loop_agent:make_adapter", "good")
    assert done.returncode == 0, done.stdout + done.stderr  # the agent passes every generated test
    judged = verdicts(copy, "good")
    assert len(judged) == len(stubs) >= 5
    for n, stub in enumerate(stubs, start=1):
        events = [turn["event"] for turn in stub["turns"]]
        # A run passes unless its test steps through `signed_in`, which no transcript shows (the generated test
        # says so): read back, the run then asks for a cancellation before anyone is signed in.
        expected = ("deviation", "step_not_allowed") if "signed_in" in events else ("pass", None)
        assert judged[f"test_suite_transition_{n:03d}"] == expected, (n, events)
    assert "is neither said by a user nor a tool result" in source
    assert sum(v == ("pass", None) for v in judged.values()) >= 4


def test_an_agent_that_claims_success_too_early_fails_the_generated_tests_and_its_runs_deviate(orders_suite):
    copy, _ = orders_suite
    done = run_generated(copy, "tests.loop_agent:make_hasty_adapter", "hasty")
    assert done.returncode == 1 and "which the model forbids here ('has been cancelled')" in done.stdout
    failed = failed_tests(copy, "hasty")
    judged = verdicts(copy, "hasty")
    premature = {name for name, (_, kind) in judged.items() if kind == "premature_success"}
    assert premature and premature <= failed  # each run mbt runs finds claiming too early failed its test
    # ... and each failed test's run deviates (a first deviation before the claim, where the test had one).
    assert all(judged[name][0] == "deviation" for name in failed)


def test_said_expectations(tmp_path):
    class Speaker:
        def __init__(self):
            self.outputs = []

        def reset(self, state, variables, discarded):
            pass

        def send(self, event, args, user):
            pass

        def observe(self):
            return {"calls": [], "outputs": self.outputs}

    speaker = Speaker()
    driver = Driver(speaker)
    driver.start({})
    said = {"must_not": ["Current Password"], "must_have": ["is cancelled", "已取消"]}
    speaker.outputs = ["Your order is cancelled."]
    driver.step("e", {}, {"said": said})
    speaker.outputs = []  # a turn that says nothing is not held to `must_have`
    driver.step("e", {}, {"said": said})
    speaker.outputs = ["Done."]
    with pytest.raises(AssertionError, match="the model expects one of"):
        driver.step("e", {}, {"said": said})
    speaker.outputs = ["Please type your current password."]
    with pytest.raises(AssertionError, match="which the model forbids here"):
        driver.step("e", {}, {"said": said})
    speaker.outputs = None  # not observed: not asserted
    driver.step("e", {}, {"said": said})
