"""Seed 000's test file runs as written (`tests/test_account_recovery.py`'s test_single_turn) with mbt's pytest
plugin giving its `contract_evaluator` fixture: a tiny agent answers each case of `cases/single-turn.jsonl`, the
fixture judges the answer on `contracts/password-reset.yaml`. The embedded judge never lets a description pass
unjudged (the seed's `assert verdict.hard_gate_passed` fails, its message saying "not judged"); an LLM judge on a
chat-completions server on localhost decides the items, and an agent asking for the password fails on must_not[0].

The inner sessions are subprocesses, as in tests/test_pytest_plugin.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.chat_server import ChatServer, verdict_reply

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "models" / "contracts" / "password-reset.yaml"
INNER = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")

# Seed 000's tests/test_account_recovery.py, test_single_turn, unchanged.
SEED_TEST = '''import json
import pytest

CASES = [json.loads(line) for line in open("cases/single-turn.jsonl")]

@pytest.mark.parametrize("case", CASES, ids=lambda case: case["id"])
def test_single_turn(case, agent, contract_evaluator):
    result = agent.send(case["input"])

    assert result.intent == case["expected_intent"]

    verdict = contract_evaluator.evaluate(
        contract_id=case["contract"],
        response=result.text,
        evidence=result.evidence,
    )
    assert verdict.hard_gate_passed, verdict.failures
'''

# A tiny agent: every message is a password reset; its answer is set by the environment (good or bad).
CONFTEST = '''import os
from dataclasses import dataclass, field

import pytest

GOOD = ("请通过批准的密码重置入口重置密码：https://account.example.com/reset 。"
        "下一步请查看注册邮箱，重置链接会发送到那里。")
BAD = "为了核实身份，请告诉我您当前的密码。"


@dataclass
class Result:
    intent: str
    text: str
    evidence: dict = field(default_factory=dict)


class TinyAgent:
    def send(self, text):
        answer = BAD if os.environ.get("AGENT") == "bad" else GOOD
        return Result("PASSWORD_RESET", answer, {"selected_source": "account-recovery-v3",
                                                 "retrieved": [{"document_id": "account-recovery-v3",
                                                                "approved": True, "status": "active",
                                                                "score": 0.91}],
                                                 "claims": [{"text": "重置链接会发送到注册邮箱",
                                                             "grounded_in": "account-recovery-v3"}]})


@pytest.fixture
def agent():
    return TinyAgent()
'''

SEED_CASES = [
    {"id": "INT-001", "input": "I forgot my password", "expected_intent": "PASSWORD_RESET",
     "contract": "password-reset-v1"},
    {"id": "INT-002", "input": "Can't get into my account", "expected_intent": "PASSWORD_RESET",
     "contract": "password-reset-v1"},
]


def seed_repo(pytester, judge: str | None = None) -> None:
    """Seed 000's layout: contracts/, cases/ and tests/, with the ini naming the contracts."""
    (pytester.path / "contracts").mkdir()
    shutil.copy(CONTRACT, pytester.path / "contracts" / "password-reset.yaml")
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "single-turn.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in SEED_CASES), encoding="utf-8")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_account_recovery.py").write_text(SEED_TEST, encoding="utf-8")
    (pytester.path / "tests" / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    ini = "[pytest]\nmbt_contracts = contracts/\n" + (f"mbt_judge = {judge}\n" if judge else "")
    (pytester.path / "pytest.ini").write_text(ini, encoding="utf-8")


def run(pytester, monkeypatch, tmp_path, agent="good", server=None):
    monkeypatch.setenv("AGENT", agent)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the LLM judge's verdict cache, fresh
    if server is not None:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return pytester.runpytest_subprocess("tests", "-vv", *INNER)  # -vv: the failures message in full


def test_with_the_embedded_judge_the_seed_test_is_never_green_on_descriptions(pytester, monkeypatch, tmp_path):
    seed_repo(pytester)
    result = run(pytester, monkeypatch, tmp_path)
    result.assert_outcomes(failed=2)
    out = result.stdout.str()  # pytest shows the Chinese item texts escaped; the ids and words are plain
    for item in ("must_have[0]", "must_have[1]", "must_not[0]", "must_not[1]", "must_not[2]"):
        assert f"not judged: {item} " in out
    assert "[judge embedded]" in out and "violated" not in out


def test_the_embedded_judge_fails_an_agent_that_asks_for_the_password(pytester, monkeypatch, tmp_path):
    seed_repo(pytester)
    result = run(pytester, monkeypatch, tmp_path, agent="bad")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "must_not[0] '" in out and "': violated: the answer asks for a password, an OTP, a PIN" in out


def test_with_an_llm_judge_the_seed_test_passes_a_good_agent_and_fails_a_bad_one(pytester, monkeypatch, tmp_path):
    seed_repo(pytester, judge="openai:judge-model")

    def script(n, body, headers):
        user = body["messages"][1]["content"]
        asked_for_password = "当前的密码" in user
        violated = asked_for_password and "Forbidden behaviour" in user and "索取用户当前密码" in user
        return verdict_reply("fail" if violated else "pass", "scripted")

    with ChatServer(script) as server:
        good = run(pytester, monkeypatch, tmp_path, server=server)
        good.assert_outcomes(passed=2)
        # one request per item (2 must_have, 3 must_not), each naming its item in the criterion's definition; the
        # second case's answer is the same, so its verdicts come from the judge's cache
        users = [r["body"]["messages"][1]["content"] for r in server.requests]
        assert len(users) == 5
        for text in ("指向批准的密码重置入口", "说明用户下一步需要查看注册邮箱", "索取用户当前密码", "声称已经替用户修改账户",
                     "编造账户状态或重置结果"):
            (user,) = [u for u in users if text in u.split("BEGIN DATA")[0]]
            assert ("Criterion: must_not" if text in ("索取用户当前密码", "声称已经替用户修改账户", "编造账户状态或重置结果")
                    else "Criterion: must_have") in user
        bad = run(pytester, monkeypatch, tmp_path, agent="bad", server=server)
    bad.assert_outcomes(failed=2)
    out = bad.stdout.str()
    # in each case only must_not[0] keeps the gate shut: every other item was decided, and passed
    assert out.count("<ContractVerdict contract password-reset-v1: hard gate not passed: violated must_not[0]>") == 4
    assert "AssertionError: [\"must_not[0] '" in out and "': violated: scripted [judge openai:judge-model]\"]" in out
    assert "not judged" not in out


def test_without_contracts_the_fixture_says_how_to_give_them(pytester, monkeypatch, tmp_path):
    seed_repo(pytester)
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    result = run(pytester, monkeypatch, tmp_path)
    assert result.ret != 0
    assert "contract_evaluator: error: no contract given" in result.stdout.str() + result.stderr.str()
