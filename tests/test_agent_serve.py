"""`mbt serve`: the reference machine of a model as an OpenAI-compatible chat endpoint (OpenAI's own client talks to
it), `mbt eval --agent openai-chat:URL` driving it over HTTP in a real process — every shipped golden passing, and
each injected fault failing the cases it should — two saved result sets compared, and `--retry-errors NAME` running
a stored set's errored cases again in place (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from mbt.agents.reference import FAULTS, ReferenceAgent
from mbt.agents.serve import AgentServer
from mbt.parsing.loader import load_paths
from tests.chat_server import ChatServer, Reply, completion
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "recovery.fsm"
GOLDENS = ROOT / "models" / "answers" / "agent"
CASES = ["AGENT-RESET-001", "AGENT-START-001", "AGENT-EMAIL-FIRST-001", "AGENT-CORRECT-001", "AGENT-OFFTOPIC-001",
         "AGENT-REJECT-001"]
# What each fault breaks in the shipped goldens: the cases whose agent calls the reset tool (a wrong address), enters
# the confirmation (confirmed on the user's behalf), or calls the tool (a reset link claimed before it answered).
FAILING = {None: set(), "wrong-argument": {"AGENT-RESET-001", "AGENT-EMAIL-FIRST-001", "AGENT-CORRECT-001"},
           "skipped-confirmation": {"AGENT-RESET-001", "AGENT-EMAIL-FIRST-001", "AGENT-CORRECT-001",
                                    "AGENT-REJECT-001"},
           "premature-success": {"AGENT-RESET-001", "AGENT-EMAIL-FIRST-001", "AGENT-CORRECT-001"}}


def recovery():
    return next(m for f in load_paths([str(MODEL)]) for m in f.models)


def post(url: str, body, headers=None):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_the_endpoint_answers_as_openai_shapes_a_chat_completion_with_tool_calls():
    with AgentServer([ReferenceAgent(recovery())]) as server:
        url = server.url + "/chat/completions"
        conversation = [{"role": "user", "content": "I forgot my password"}]
        status, first = post(url, {"model": "anything", "messages": conversation})
        assert status == 200 and first["object"] == "chat.completion" and first["model"] == "recovery"
        assert first["system_fingerprint"] == "mbt-reference recovery"
        assert first["choices"][0]["message"] == {"role": "assistant", "content": "The assistant starts a password reset."}
        assert first["choices"][0]["finish_reason"] == "stop"
        conversation += [first["choices"][0]["message"], {"role": "user", "content": "li@example.com"},
                         {"role": "assistant", "content": "..."}, {"role": "user", "content": "yes"}]
        status, third = post(url, {"messages": conversation})
        choice = third["choices"][0]
        assert choice["finish_reason"] == "tool_calls"
        call = choice["message"]["tool_calls"][0]
        assert call["type"] == "function" and call["function"]["name"] == "start_password_reset"
        assert json.loads(call["function"]["arguments"]) == {"channel": "EMAIL", "recovery_email": "li@example.com"}
        assert "Calling start_password_reset with recovery_email li@example.com, channel EMAIL." in \
            choice["message"]["content"]
        assert post(url, {"messages": []})[0] == 400
        assert post(url, {"messages": conversation, "stream": True})[0] == 400
        assert post(server.url + "/completions", {"prompt": "x"})[0] == 404
        assert post(url, {"messages": [{"role": "narrator", "content": "x"}]})[0] == 400
        # OpenAI's own client, as any user of the endpoint would call it
        import openai

        client = openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0)
        made = client.chat.completions.create(model="recovery", messages=conversation)
        assert made.choices[0].message.tool_calls[0].function.name == "start_password_reset"
        assert [m.id for m in client.models.list().data] == ["recovery"]


def test_a_key_is_required_when_one_is_given():
    with AgentServer([ReferenceAgent(recovery())], api_key="sk-serve-1234") as server:
        url = server.url + "/chat/completions"
        hello = {"messages": [{"role": "user", "content": "I forgot my password"}]}
        assert post(url, hello)[0] == 401
        assert post(url, hello, {"Authorization": "Bearer sk-serve-12345"})[0] == 401
        assert post(url, hello, {"Authorization": "Bearer sk-serve-1234"})[0] == 200


def test_orders_with_a_precondition_tool_results_move_the_machine_and_the_claim_is_said():
    orders = next(m for f in load_paths([str(ROOT / "models" / "orders.fsm")]) for m in f.models)
    assert ReferenceAgent(orders).reply([{"role": "user", "content": "It is SO-10042"}]).content == \
        "I cannot help with that now."  # nobody is signed in: the model refuses
    agent = ReferenceAgent(orders, precondition={"customer_id": "C-1001"})
    conversation: list[dict] = [{"role": "user", "content": "It is SO-10042"}]

    def step(*added):
        reply = agent.reply(conversation)
        conversation.append({"role": "assistant", "content": reply.content, "tool_calls": reply.tool_calls})
        conversation.extend(added)
        return reply

    looked_up = step({"role": "tool", "name": "get_order", "content": '{"owner": "C-1001", "status": "paid"}'})
    assert [c["function"]["name"] for c in looked_up.tool_calls] == ["get_order"]
    confirming = step({"role": "user", "content": "yes"})
    assert confirming.content == "Repeats the order number and asks the customer to confirm. order_owner: C-1001. " \
                                 "order_status: paid."
    cancelling = step({"role": "tool", "name": "cancel_order", "content": "{}"})
    assert cancelling.content == "Only after the customer confirms does the assistant call `cancel_order`. " \
                                 "Calling cancel_order with order_id SO-10042."
    verifying = step({"role": "tool", "name": "get_order", "content": '{"status": "cancelled"}'})
    assert [c["function"]["name"] for c in verifying.tool_calls] == ["get_order"]
    done = agent.reply(conversation)
    assert done.content == "Only after that second lookup shows the status `cancelled`. order_status: cancelled. " \
                           "Is cancelled."  # the claim of the state entered
    early = ReferenceAgent(orders, "premature-success", {"customer_id": "C-1001"}).reply(conversation[:5])
    assert early.content.endswith("Calling cancel_order with order_id SO-10042. Is cancelled.")  # before any lookup
    with pytest.raises(ValueError, match="unknown variable `customer`"):
        ReferenceAgent(orders, precondition={"customer": "C-1"})


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_changes_what_the_agent_does(fault):
    model = recovery()
    plain, faulty = ReferenceAgent(model), ReferenceAgent(model, fault)
    conversation = [{"role": "user", "content": "I forgot my password"},
                    {"role": "user", "content": "li@example.com"}]
    if fault != "skipped-confirmation":
        conversation.append({"role": "user", "content": "yes"})
    assert plain.reply(conversation) != faulty.reply(conversation)
    assert faulty.version == f"mbt-reference recovery fault={fault}"


@pytest.fixture
def served(tmp_path):
    """`mbt serve` in a process of its own, on a free port: (its base URL, the process)."""
    started = []

    def start(*args: str):
        url_file = tmp_path / f"url-{len(started)}"
        process = subprocess.Popen([sys.executable, "-m", "mbt", "serve", "--model", str(MODEL), "--port", "0",
                                    "--url-file", str(url_file), *args], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=ROOT)
        started.append(process)
        deadline = time.monotonic() + 60
        while not url_file.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"mbt serve did not start: {process.communicate(timeout=5)}")
            time.sleep(0.05)
        return url_file.read_text().strip(), process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("fault", [None, *FAULTS])
def test_eval_drives_mbt_serve_over_http_every_golden_passes_and_a_fault_fails_its_cases(served, fault):
    url, process = served(*(["--fault", fault] if fault else []))
    assert url.startswith("http://127.0.0.1:")  # listening on the loopback address unless told otherwise
    done = run_mbt("eval", "--goldens", GOLDENS, "--agent", f"openai-chat:{url}", "--format", "json")
    report = json.loads(done.stdout)
    failed = {c["id"] for c in report["cases"] if c["overall"]["verdict"] == "fail"}
    assert [c["id"] for c in report["cases"]] == CASES
    assert failed == FAILING[fault], failed
    assert done.returncode == (1 if fault else 0)
    assert report["passed"] == len(CASES) - len(failed) and report["agent_errors"] == 0
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0
    assert "mbt serve: http://127.0.0.1:" in process.stdout.read()


def test_mbt_serve_refuses_what_it_cannot_serve(tmp_path):
    done = run_mbt("serve", "--model", ROOT / "models" / "refund.dt", "--port", "0")
    assert done.returncode == 2 and "no state machine (`fsm`) model" in done.stderr
    done = run_mbt("serve", "--model", MODEL, "--fault", "slow")
    assert done.returncode == 2 and "wrong-argument" in done.stderr
    done = run_mbt("serve", "--model", MODEL, "--api-key-env", "MBT_TEST_NO_SUCH_VARIABLE")
    assert done.returncode == 2 and "is not set" in done.stderr


def test_two_saved_sets_the_second_with_a_fault_and_their_comparison(store_url):
    model = recovery()
    with AgentServer([ReferenceAgent(model)]) as good, AgentServer([ReferenceAgent(model, "wrong-argument")]) as bad:
        first = run_mbt("eval", "--goldens", GOLDENS, "--agent", f"openai-chat:{good.url}", "--save", "release-1",
                        "--store", store_url)
        second = run_mbt("eval", "--goldens", GOLDENS, "--agent", f"openai-chat:{bad.url}", "--save", "release-2",
                         "--store", store_url, "--baseline-set", "release-1")
    assert first.returncode == 0 and second.returncode == 1
    assert "passed in the baseline set `release-1` and is fail now" in second.stdout
    compared = run_mbt("results", "compare", "release-1", "release-2", "--store", store_url, "--format", "json")
    assert compared.returncode == 0, compared.stderr
    comparison = json.loads(compared.stdout)
    flips = {(f["key"], f["before"], f["after"]) for f in comparison["flips"]}
    assert flips == {(f"password-reset/{c}", "pass", "fail") for c in FAILING["wrong-argument"]}
    shown = json.loads(run_mbt("results", "show", "release-2", "--store", store_url, "--format", "json").stdout)
    assert shown["set"]["agent_version"] == "mbt-reference recovery fault=wrong-argument"
    case = json.loads(run_mbt("results", "show", "release-2", "--case", "password-reset/AGENT-RESET-001",
                              "--store", store_url, "--format", "json").stdout)
    history = case["doc"]["transcript"]  # the agent's history of the case: each turn, its answer, its tool calls
    assert [t["prompt"] for t in history] == ["I forgot my password", "my address is li@example.com", "yes"]
    assert history[2]["calls"] == ['start_password_reset(channel="EMAIL", recovery_email="wrong-li@example.com")']


def test_retry_errors_runs_the_errored_cases_again_in_place(store_url, tmp_path):
    goldens = tmp_path / "qna.yaml"
    goldens.write_text("""\
- id: Q1
  turns:
    - {user: "When do refunds arrive?", expected_answer: "Refunds arrive within 5 business days."}
- id: Q2
  turns:
    - {user: "Can I pay by card?", expected_answer: "Yes, by card."}
    - {user: "thanks", expected_answer: "You are welcome."}
""", encoding="utf-8")
    answers = {"When do refunds arrive?": "Refunds arrive within 5 business days.", "Can I pay by card?": "Yes, by card.",
               "thanks": "You are welcome."}
    down = {"on": True}

    def script(n, body, headers):
        text = body["messages"][-1]["content"]
        if text == "thanks" and down["on"]:
            return Reply(502, {"error": {"message": "bad gateway"}})
        return completion(answers[text])

    with ChatServer(script) as server:
        agent = f"openai-chat:{server.base_url}"
        first = run_mbt("eval", "--goldens", goldens, "--agent", agent, "--save", "qna-1", "--store", store_url)
        assert first.returncode == 1
        before = json.loads(run_mbt("results", "show", "qna-1", "--store", store_url, "--format", "json").stdout)
        assert (before["set"]["passed"], before["set"]["errors"]) == (1, 1)
        assert before["overview"]["cases_with_errors"] == 1
        errored = next(c for c in before["cases"] if c["id"] == "Q2")
        assert errored["error"].startswith("agent: turn 2: HTTP 502")
        refused = run_mbt("eval", "--goldens", goldens, "--agent", agent, "--retry-errors", "qna-1",
                          "--criteria", "accuracy=2", "--store", store_url)
        assert refused.returncode == 2 and "give the same" in refused.stderr
        down["on"] = False
        sent = len(server.requests)
        retried = run_mbt("eval", "--goldens", goldens, "--agent", agent, "--retry-errors", "qna-1",
                          "--store", store_url)
        asked = [r["body"]["messages"][-1]["content"] for r in server.requests[sent:]]
    assert asked == ["Can I pay by card?", "thanks"]  # the errored case alone, from its first turn
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert "1 errored case(s) run again, 0 case(s) in error now" in retried.stderr
    assert "overall: 2 pass, 0 fail, 0 not judged, 0 error" in retried.stdout  # the whole set summed up again
    listed = json.loads(run_mbt("results", "list", "--store", store_url, "--format", "json").stdout)
    assert [s["name"] for s in listed["sets"]] == ["qna-1"]  # in place: no new set
    after = json.loads(run_mbt("results", "show", "qna-1", "--store", store_url, "--format", "json").stdout)
    assert (after["set"]["passed"], after["set"]["errors"], after["set"]["status"]) == (2, 0, "done")
    assert [c["key"] for c in after["cases"]] == ["qna/Q1", "qna/Q2"]  # each case at its place
    assert after["overview"]["cases_with_errors"] == 0 and after["cases"][1]["error"] is None
    again = run_mbt("eval", "--goldens", goldens, "--agent", agent, "--retry-errors", "qna-1", "--store", store_url)
    assert again.returncode == 0 and "0 errored case(s) run again" in again.stderr
    assert run_mbt("eval", "--goldens", goldens, "--agent", agent, "--retry-errors", "qna-1", "--save",
                   "--store", store_url).returncode == 2


def test_a_recorded_agent_error_is_read_and_a_bad_one_is_an_invalid_run(tmp_path):
    from mbt.runs.reader import read_runs

    good = {"id": "s1", "case_id": "qna/Q1", "agent_error": "turn 1: timed out", "wall_ms": 12.5,
            "messages": [{"role": "user", "content": "hi"}]}
    (tmp_path / "a.json").write_text(json.dumps(good))
    (tmp_path / "b.json").write_text(json.dumps({**good, "agent_error": 7}))
    found = read_runs([str(tmp_path)])
    assert [(r.agent_error, r.context.wall_ms) for r in found.runs] == [("turn 1: timed out", 12.5)]
    assert [i.message for i in found.invalid] == ["`agent_error` must be text saying why the agent did not answer"]
    assert not found.unread


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_serve_and_eval_from_the_command_line_as_the_demo_runs_them(served, tmp_path):
    url, process = served()
    store = tmp_path / "r.db"
    done = run_mbt("eval", "--goldens", GOLDENS, "--agent", f"openai-chat:{url}", "--save", "--store", store,
                   "--record", tmp_path / "sessions")
    assert done.returncode == 0 and "result set `agent_TestResult_" in done.stderr
    assert sorted(p.name for p in (tmp_path / "sessions" / "password-reset").iterdir()) == sorted(
        f"{c}.json" for c in CASES)
    process.terminate()
    assert process.wait(timeout=20) == 0


def test_retry_errors_with_runs_judges_the_judge_errored_cases_again_in_place(tmp_path):
    """A flaky LLM judge: the case it failed on is judged again from the same runs, the others left as they were."""
    from tests.chat_server import verdict_reply

    goldens = tmp_path / "qna.yaml"
    goldens.write_text("- id: A\n  turns:\n    - {user: hi, expected_answer: Hello.}\n"
                       "- id: B\n  turns:\n    - {user: bye, expected_answer: Goodbye.}\n", encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    for case, (question, answer) in {"A": ("hi", "Hello."), "B": ("bye", "Goodbye.")}.items():
        (runs / f"{case}.json").write_text(json.dumps({"case_id": case, "messages": [
            {"role": "user", "content": question}, {"role": "assistant", "content": answer}]}), encoding="utf-8")
    broken = {"on": True}

    def script(n, body, headers):
        if broken["on"] and "Goodbye" in body["messages"][1]["content"]:
            return Reply(500, {"error": {"message": "down"}})
        return verdict_reply("pass")

    store = tmp_path / "r.db"
    with ChatServer(script) as server:
        judged = ["--goldens", goldens, "--runs", runs, "--judge", "openai:judge-model", "--llm",
                  f"base_url={server.base_url}", "--llm", "retries=0", "--llm", f"cache={tmp_path / 'cache'}",
                  "--store", store]
        first = run_mbt("eval", *judged, "--save", "flaky", env={"OPENAI_API_KEY": "sk-test"})
        assert first.returncode == 1 and "judge_errors is 1" in first.stdout
        broken["on"] = False
        sent = len(server.requests)
        retried = run_mbt("eval", *judged, "--retry-errors", "flaky", env={"OPENAI_API_KEY": "sk-test"})
        asked = server.requests[sent:]
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert len(asked) == 1 and "Goodbye" in asked[0]["body"]["messages"][1]["content"]  # B alone, A not re-asked
    shown = json.loads(run_mbt("results", "show", "flaky", "--store", store, "--format", "json").stdout)
    assert [(c["id"], c["overall"]) for c in shown["cases"]] == [("A", "pass"), ("B", "pass")]
    assert shown["set"]["errors"] == 0


def test_retry_errors_without_a_name_still_asks_the_llm_judge_again(tmp_path):
    """`--retry-errors` alone keeps its meaning for recorded runs (the LLM judge's cached errors), wherever it stands."""
    done = run_mbt("eval", "--goldens", "models/answers/goldens/", "--runs", "models/answers/runs/", "--retry-errors",
                   "--format", "json", cwd=ROOT)
    assert done.returncode == 1 and json.loads(done.stdout)["cases_total"] == 5
    done = run_mbt("eval", "--retry-errors", "--goldens", "models/answers/goldens/", "--runs", "models/answers/runs/",
                   cwd=ROOT)
    assert done.returncode == 1 and "mbt eval: 5 case(s)" in done.stdout
