"""`mbt eval --agent SPEC` against real processes and servers: each adapter (openai-chat, http, python, cmd), one
session per case with the whole conversation each turn, time-outs (a server that never answers, a command that
hangs), agent errors kept apart from judge errors, the cases in flight bounded by --concurrency, secrets from the
environment never in any output or the recorded transcripts, and --record read back offline."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.chat_server import ChatServer, Reply, completion
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def goldens(tmp_path: Path) -> Path:
    """Three cases: two single-turn, one of two turns; the expected answers say what the scripted agents answer."""
    return write(tmp_path / "qna.yaml", """\
        - id: Q1
          turns:
            - user: "When do refunds arrive?"
              expected_answer: "Refunds arrive within 5 business days."
        - id: Q2
          turns:
            - user: "Can I pay by card?"
              expected_answer: "Yes, by card."
        - id: Q3
          turns:
            - user: "I want to block my card"
              expected_answer: "Your card is blocked."
            - user: "thanks"
              expected_answer: "You are welcome."
        """)


ANSWERS = {"When do refunds arrive?": "Refunds arrive within 5 business days.", "Can I pay by card?": "Yes, by card.",
           "I want to block my card": "Your card is blocked.", "thanks": "You are welcome."}


def answer_last(body: dict) -> str:
    return ANSWERS[body["messages"][-1]["content"]]


def eval_json(*args, cwd=None, env=None):
    done = run_mbt("eval", *args, "--format", "json", cwd=cwd, env=env)
    report = json.loads(done.stdout) if done.stdout.startswith("{") else None
    return done, report


def by_id(report: dict) -> dict[str, dict]:
    return {c["id"]: c for c in report["cases"]}


# ---- openai-chat ---------------------------------------------------------------------------------------------------


def test_openai_chat_sends_the_whole_conversation_each_turn_in_one_session_per_case(tmp_path):
    def script(n, body, headers):
        reply = completion(answer_last(body))
        reply.body["system_fingerprint"] = "bank-agent 2.1"
        reply.body["model"] = "bank-llm"
        return reply

    with ChatServer(script) as server:
        done, report = eval_json("--goldens", goldens(tmp_path), "--agent", f"openai-chat:{server.base_url}",
                                 "--record", tmp_path / "sessions", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["agent"] == f"openai-chat:{server.base_url}/chat/completions"
    assert report["passed"] == 3 and report["agent_errors"] == 0
    paths = {r["path"] for r in server.requests}
    assert paths == {"/v1/chat/completions"}
    sessions: dict[str, list[dict]] = {}
    for r in server.requests:
        sessions.setdefault(r["headers"]["x-session-id"], []).append(r["body"])
    assert len(sessions) == 3  # a session per case
    two = next(bodies for bodies in sessions.values() if len(bodies) == 2)
    second = sorted(two, key=lambda b: len(b["messages"]))[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]  # the conversation so far, each turn
    assert second[1]["content"] == "Your card is blocked."
    recorded = json.loads((tmp_path / "sessions" / "qna" / "Q3.json").read_text())
    assert recorded["case_id"] == "qna/Q3" and recorded["id"] in sessions
    assert recorded["agent_version"] == "bank-agent 2.1" and recorded["model_name"] == "bank-llm"
    assert recorded["input_tokens"] == 20 and recorded["output_tokens"] == 10  # summed over the two turns
    assert [m["role"] for m in recorded["messages"]] == ["user", "assistant", "user", "assistant"]


def test_tool_calls_in_a_reply_are_recorded_and_sent_back_with_the_conversation(tmp_path):
    call = {"id": "call_9", "type": "function", "function": {"name": "block_card", "arguments": "{\"card\": \"*1234\"}"}}

    def script(n, body, headers):
        reply = completion(answer_last(body))
        if body["messages"][-1]["content"] == "I want to block my card":
            reply.body["choices"][0]["message"]["tool_calls"] = [call]
            reply.body["choices"][0]["finish_reason"] = "tool_calls"
        return reply

    with ChatServer(script) as server:
        done, report = eval_json("--goldens", goldens(tmp_path), "--agent", f"openai-chat:{server.base_url}",
                                 "--record", tmp_path / "rec", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    recorded = json.loads((tmp_path / "rec" / "qna" / "Q3.json").read_text())
    assert recorded["messages"][1]["tool_calls"] == [call]
    later = [r["body"]["messages"] for r in server.requests if len(r["body"]["messages"]) == 3]
    assert later and later[0][1]["tool_calls"] == [call]
    # the recorded session as `mbt runs` reads it: the tool call is a step of the run
    from mbt.runs.reader import read_runs

    run = next(r for r in read_runs([str(tmp_path / "rec")]).runs if r.case_id == "qna/Q3")
    assert [(s.kind, s.tool) for s in run.steps if s.kind == "tool_call"] == [("tool_call", "block_card")]


# ---- http -----------------------------------------------------------------------------------------------------------


def test_http_builds_the_body_from_data_and_reads_the_answer_at_its_path(tmp_path):
    write(tmp_path / "mbt.yaml", """\
        agent:
          request:
            session: "${session_id}"
            input: {text: "${message}", turn: "${turn}", history: "${messages}"}
            note: "case ${case_id}, turn ${turn}"
          response:
            answer: data.reply.0.text
            agent_version: meta.version
        """)
    tricky = 'He said "stop" \\ ${session_id} </script>'
    write(tmp_path / "one.yaml", f"""\
        - id: T1
          turns:
            - user: {json.dumps(tricky)}
              expected_answer: "Noted."
        """)

    def script(n, body, headers):
        return Reply(200, {"data": {"reply": [{"text": "Noted."}]}, "meta": {"version": "v7"}})

    with ChatServer(script) as server:
        done, report = eval_json("--goldens", tmp_path / "one.yaml", "--agent", f"http:{server.base_url}/ask",
                                 cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/ask"
    assert body["input"]["text"] == tricky  # escaped as data: quotes, backslash and a placeholder's look-alike intact
    assert body["input"]["turn"] == 1 and body["input"]["history"] == [{"role": "user", "content": tricky}]
    assert body["session"].startswith("mbt-") and body["note"] == "case one/T1, turn 1"
    assert report["cases"][0]["overall"]["verdict"] == "pass"


def test_http_without_a_request_template_or_with_an_unknown_placeholder_is_exit_2(tmp_path):
    write(tmp_path / "g.yaml", "- id: A\n  turns:\n    - user: hi\n      expected_answer: hello\n")
    done = run_mbt("eval", "--goldens", "g.yaml", "--agent", "http://example.test/x", cwd=tmp_path)
    assert done.returncode == 2 and "expected KIND:TARGET" in done.stderr
    done = run_mbt("eval", "--goldens", "g.yaml", "--agent", "http:http://127.0.0.1:9/x", cwd=tmp_path)
    assert done.returncode == 2 and "request template" in done.stderr
    write(tmp_path / "mbt.yaml", "agent:\n  request: {q: '${mesage}'}\n  response: {answer: a}\n")
    done = run_mbt("eval", "--goldens", "g.yaml", "--agent", "http:http://127.0.0.1:9/x", cwd=tmp_path)
    assert done.returncode == 2 and "unknown placeholder `${mesage}`" in done.stderr and "message" in done.stderr
    write(tmp_path / "mbt.yaml", "agent:\n  headers: {Authorization: Bearer sk-written-here}\n")
    done = run_mbt("eval", "--goldens", "g.yaml", "--agent", "openai-chat:http://127.0.0.1:9/v1", cwd=tmp_path)
    assert done.returncode == 2 and "mbt.yaml:1:1: error: `agent`" in done.stderr and "${env:NAME}" in done.stderr
    assert "sk-written-here" not in done.stderr


# ---- python and cmd -------------------------------------------------------------------------------------------------


def test_python_callable_answers_and_its_exception_is_an_agent_error(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # the adapter puts the working folder on it: undone after
    write(tmp_path / "agent_py_answers.py", f"""\
        ANSWERS = {ANSWERS!r}

        def reply(messages, session_id):
            text = messages[-1]["content"]
            if text == "Can I pay by card?":
                raise RuntimeError("the card service is down")
            return {{"content": ANSWERS[text], "tool_calls": [{{"name": "lookup", "arguments": {{"q": text}}}}]}}
        """)
    done, report = eval_json("--goldens", goldens(tmp_path), "--agent", "python:agent_py_answers:reply",
                             "--record", tmp_path / "rec", cwd=tmp_path)
    assert done.returncode == 1
    cases = by_id(report)
    assert cases["Q1"]["overall"]["verdict"] == "pass" and cases["Q3"]["overall"]["verdict"] == "pass"
    assert cases["Q2"]["overall"]["verdict"] == "error"
    assert cases["Q2"]["agent_error"] == "turn 1: RuntimeError: the card service is down"
    recorded = json.loads((tmp_path / "rec" / "qna" / "Q1.json").read_text())
    assert recorded["messages"][1]["tool_calls"][0]["function"] == {"name": "lookup",
                                                                    "arguments": "{\"q\": \"When do refunds arrive?\"}"}
    bad = run_mbt("eval", "--goldens", "qna.yaml", "--agent", "python:no_such_agent_module:reply", cwd=tmp_path)
    assert bad.returncode == 2 and "cannot import `no_such_agent_module`" in bad.stderr


def test_cmd_speaks_json_lines_one_process_per_case_and_a_crash_is_an_agent_error(tmp_path):
    write(tmp_path / "agent_cmd.py", f"""\
        import json, os, sys
        ANSWERS = {ANSWERS!r}
        for line in sys.stdin:
            asked = json.loads(line)
            if asked["message"] == "thanks":
                print("the agent fell over", file=sys.stderr)
                sys.exit(3)
            print(json.dumps({{"content": ANSWERS[asked["message"]], "agent_version": f"pid {{os.getpid()}}",
                              "turn": asked["turn"]}}), flush=True)
        """)
    command = f"cmd:{sys.executable} agent_cmd.py"
    done, report = eval_json("--goldens", goldens(tmp_path), "--agent", command, "--record", tmp_path / "rec",
                             cwd=tmp_path)
    assert done.returncode == 1
    cases = by_id(report)
    assert cases["Q1"]["overall"]["verdict"] == "pass"
    error = cases["Q3"]["agent_error"]
    assert error.startswith("turn 2: `") and "exited with code 3 before answering turn 2" in error
    assert error.endswith(": the agent fell over")
    versions = {json.loads(p.read_text()).get("agent_version") for p in (tmp_path / "rec").rglob("*.json")}
    assert len(versions) == 3  # a process of its own per case
    assert cases["Q3"]["turns"][0]["actual"] == "Your card is blocked." and cases["Q3"]["turns"][1]["actual"] is None


# ---- time-outs, errors, concurrency -------------------------------------------------------------------------------


def test_a_server_that_never_answers_is_an_agent_error_after_the_timeout(tmp_path):
    def script(n, body, headers):
        if body["messages"][-1]["content"] == "Can I pay by card?":
            return Reply(200, completion("late").body, delay=30)
        return completion(answer_last(body))

    with ChatServer(script) as server:
        started = time.monotonic()
        done, report = eval_json("--goldens", goldens(tmp_path), "--agent", f"openai-chat:{server.base_url}",
                                 "--timeout", "1", cwd=tmp_path)
        took = time.monotonic() - started
    assert done.returncode == 1 and took < 15
    case = by_id(report)["Q2"]
    assert case["overall"]["verdict"] == "error" and "within 1 s" in case["agent_error"]
    assert case["overall"]["reason"].startswith("agent error: turn 1: no answer")
    assert report["agent_errors"] == 1 and report["judge_errors"] == 0 and report["errors"] == 1
    assert report["cases_ok"] == 2 and report["pass_rate"] == 100.0  # seed 001: the rate over the cases run
    checks = {c["key"]: c for c in report["gate"]["checks"]}
    assert checks["agent_errors"]["actual"] == 1 and not checks["agent_errors"]["passed"]
    assert checks["judge_errors"]["passed"]


def test_a_command_that_hangs_is_killed_at_the_timeout(tmp_path):
    write(tmp_path / "hang.py", "import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
    write(tmp_path / "g.yaml", "- id: A\n  turns:\n    - user: hi\n      expected_answer: hello\n")
    started = time.monotonic()
    done, report = eval_json("--goldens", "g.yaml", "--agent", f"cmd:{sys.executable} hang.py", "--timeout", "1",
                             cwd=tmp_path)
    assert time.monotonic() - started < 15
    assert done.returncode == 1 and report["cases"][0]["agent_error"] == "turn 1: no answer to turn 1 within 1 s"


def test_agent_errors_and_judge_errors_are_counted_apart(tmp_path):
    write(tmp_path / "g.yaml", """\
        - id: AGENT-FAILS
          turns:
            - user: "When do refunds arrive?"
              expected_answer: "Refunds arrive within 5 business days."
        - id: JUDGE-FAILS
          turns:
            - user: "Can I pay by card?"
              assert: [{type: regex, value: "("}]
        - id: FINE
          turns:
            - user: "thanks"
              expected_answer: "You are welcome."
        """)

    def script(n, body, headers):
        if body["messages"][-1]["content"] == "When do refunds arrive?":
            return Reply(503, {"error": {"message": "overloaded"}})
        return completion(answer_last(body))

    with ChatServer(script) as server:
        done, report = eval_json("--goldens", "g.yaml", "--agent", f"openai-chat:{server.base_url}", cwd=tmp_path)
        text = run_mbt("eval", "--goldens", "g.yaml", "--agent", f"openai-chat:{server.base_url}", cwd=tmp_path)
    cases = by_id(report)
    assert cases["AGENT-FAILS"]["overall"]["verdict"] == "error"
    assert cases["AGENT-FAILS"]["agent_error"].startswith("turn 1: HTTP 503 Service Unavailable from http://127.0.0.1")
    assert cases["AGENT-FAILS"]["criteria"]["accuracy"]["verdict"] == "not_judged"  # never sent to a judge
    assert cases["JUDGE-FAILS"]["overall"]["verdict"] == "error" and cases["JUDGE-FAILS"]["agent_error"] is None
    assert cases["JUDGE-FAILS"]["criteria"]["accuracy"]["verdict"] == "error"
    assert (report["agent_errors"], report["judge_errors"], report["cases_with_errors"]) == (1, 1, 2)
    failures = "\n".join(report["gate"]["failures"])
    assert "agent_errors is 1 (case `AGENT-FAILS`: turn 1: HTTP 503" in failures
    assert "judge_errors is 1 (case `JUDGE-FAILS` accuracy)" in failures
    assert text.returncode == 1 and "with errors: 2 (agent errors: 1, judge errors: 1)" in text.stdout
    assert "  agent error: turn 1: HTTP 503" in text.stdout and "ok     judge_errors" not in text.stdout


@pytest.mark.parametrize("limit", [1, 3])
def test_at_most_concurrency_cases_are_in_flight(tmp_path, limit):
    cases = "".join(f"- id: C{n}\n  turns:\n    - user: \"Can I pay by card?\"\n      expected_answer: \"Yes, by card.\"\n"
                    for n in range(8))
    write(tmp_path / "g.yaml", cases)

    def script(n, body, headers):
        return Reply(200, completion(answer_last(body)).body, delay=0.3)

    with ChatServer(script) as server:
        done, report = eval_json("--goldens", "g.yaml", "--agent", f"openai-chat:{server.base_url}",
                                 "--concurrency", str(limit), cwd=tmp_path)
    assert done.returncode == 0 and report["passed"] == 8
    assert server.most_in_flight == limit


# ---- secrets, recording ---------------------------------------------------------------------------------------------


def test_the_api_key_from_the_environment_is_sent_and_never_written(tmp_path):
    key = "sk-agent-SECRET-4242"

    def script(n, body, headers):
        text = body["messages"][-1]["content"]
        if text == "Can I pay by card?":  # a server that echoes the credentials in an error
            return Reply(401, {"error": {"message": f"bad token {headers.get('authorization')}"}})
        return completion(f"{answer_last(body)} (you sent {headers.get('authorization')})")

    store = tmp_path / "results.db"
    with ChatServer(script) as server:
        url = f"openai-chat:http://user:{key}@127.0.0.1:{server.httpd.server_address[1]}/v1?api_key={key}"
        done = run_mbt("eval", "--goldens", goldens(tmp_path), "--agent", url, "--record", tmp_path / "rec",
                       "--save", "run-1", "--store", store, "--format", "json", "--format", f"xlsx:{tmp_path}/e.xlsx",
                       cwd=tmp_path, env={"MBT_AGENT_API_KEY": key})
    assert all(r["headers"]["authorization"] == f"Bearer {key}" for r in server.requests)
    report = json.loads(done.stdout)
    assert "bad token Bearer ***" in by_id(report)["Q2"]["agent_error"]
    outputs = [done.stdout, done.stderr, store.read_bytes().decode("latin-1"),
               (tmp_path / "e.xlsx").read_bytes().decode("latin-1"),
               *(p.read_text() for p in (tmp_path / "rec").rglob("*.json"))]
    assert not [o for o in outputs if key in o]
    shown = run_mbt("results", "show", "run-1", "--store", store, "--format", "json")
    assert key not in shown.stdout and json.loads(shown.stdout)["set"]["name"] == "run-1"
    listed = run_mbt("results", "export", "run-1", "--store", store, "--format", "json")
    assert key not in listed.stdout and "openai-chat:http://***@127.0.0.1" in listed.stdout


def test_recorded_sessions_are_judged_the_same_offline(tmp_path):
    def script(n, body, headers):
        if body["messages"][-1]["content"] == "thanks":
            return Reply(500, {"error": {"message": "boom"}})
        return completion(answer_last(body))

    with ChatServer(script) as server:
        live, first = eval_json("--goldens", goldens(tmp_path), "--agent", f"openai-chat:{server.base_url}",
                                "--record", "rec", cwd=tmp_path)
    offline, again = eval_json("--goldens", goldens(tmp_path), "--runs", "rec", cwd=tmp_path)
    assert live.returncode == offline.returncode == 1
    verdicts = [(c["id"], c["overall"]["verdict"], c["agent_error"]) for c in first["cases"]]
    assert verdicts == [(c["id"], c["overall"]["verdict"], c["agent_error"]) for c in again["cases"]]
    assert ("Q3", "error", "turn 2: HTTP 500 Internal Server Error from "
            f"{server.base_url}/chat/completions: {{\"error\": {{\"message\": \"boom\"}}}}") in verdicts
    assert again["agent"] is None and again["agent_errors"] == 1
    refused = run_mbt("eval", "--goldens", goldens(tmp_path), "--agent", f"openai-chat:{server.base_url}",
                      "--record", "rec", cwd=tmp_path)
    assert refused.returncode == 2 and "holds files already" in refused.stderr


def test_options_that_do_not_go_together_are_exit_2(tmp_path):
    write(tmp_path / "g.yaml", "- id: A\n  turns:\n    - user: hi\n      expected_answer: hello\n")
    for args, words in ((["--agent", "cmd:true", "--runs", "x"], "one of the two"),
                        ([], "no answers to judge"),
                        (["--runs", "g.yaml", "--timeout", "3"], "go with --agent"),
                        (["--agent", "cmd:true", "--show-prompt", "accuracy"], "record the agent first"),
                        (["--agent", "grpc:host"], "one of openai-chat, http, python, cmd")):
        done = run_mbt("eval", "--goldens", "g.yaml", *args, cwd=tmp_path)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_a_case_with_a_turn_no_user_says_is_not_sent_and_said_so(tmp_path):
    write(tmp_path / "g.yaml", """\
        - id: EVENT-TURN
          turns:
            - user: "Can I pay by card?"
              expected_answer: "Yes, by card."
            - event: tool_succeeded
              expected_answer: "Done."
        - id: FINE
          turns:
            - user: "Can I pay by card?"
              expected_answer: "Yes, by card."
        """)
    with ChatServer(lambda n, body, headers: completion(answer_last(body))) as server:
        done, report = eval_json("--goldens", "g.yaml", "--agent", f"openai-chat:{server.base_url}", cwd=tmp_path)
    assert len(server.requests) == 1
    assert by_id(report)["EVENT-TURN"]["overall"]["verdict"] == "not_judged"
    assert any("`EVENT-TURN` was not sent to the agent: turn 2 has no user text" in n["message"]
               for n in report["notes"])


def test_an_interrupted_run_stops_at_once_and_its_set_is_cancelled_never_done(tmp_path):
    """Ctrl-C while the agent is slow: mbt stops waiting for it (no time-out to sit out), exits 130, and the result
    set it was writing is `cancelled`."""
    import signal
    import subprocess

    def script(n, body, headers):
        return Reply(200, completion(answer_last(body)).body, delay=20)

    store = tmp_path / "r.db"
    with ChatServer(script) as server:
        process = subprocess.Popen([sys.executable, "-m", "mbt", "eval", "--goldens", str(goldens(tmp_path)),
                                    "--agent", f"openai-chat:{server.base_url}", "--timeout", "60", "--save", "slow",
                                    "--store", str(store)], cwd=ROOT, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert server.requests, process.communicate(timeout=5)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
        took = time.monotonic() - started
    assert code == 130 and took < 10, (code, took, process.stderr.read())
    listed = json.loads(run_mbt("results", "list", "--store", store, "--format", "json").stdout)
    assert [(s["name"], s["status"]) for s in listed["sets"]] == [("slow", "cancelled")]


def test_the_configuration_files_agent_is_the_default_and_the_command_line_wins(tmp_path):
    cases = "".join(f"- id: C{n}\n  turns:\n    - user: \"Can I pay by card?\"\n      expected_answer: \"Yes, by card.\"\n"
                    for n in range(6))
    write(tmp_path / "g.yaml", cases)

    def script(n, body, headers):
        return Reply(200, completion(answer_last(body)).body, delay=0.3)

    with ChatServer(script) as server:
        write(tmp_path / "mbt.yaml", f"agent:\n  spec: openai-chat:{server.base_url}\n  concurrency: 2\n"
                                     f"  model: bank-bot\n")
        done, report = eval_json("--goldens", "g.yaml", cwd=tmp_path)
        assert done.returncode == 0 and report["agent"].startswith("openai-chat:") and server.most_in_flight == 2
        assert {r["body"]["model"] for r in server.requests} == {"bank-bot"}
        server.most_in_flight = 0
        done, report = eval_json("--goldens", "g.yaml", "--concurrency", "1", cwd=tmp_path)
        assert done.returncode == 0 and server.most_in_flight == 1
