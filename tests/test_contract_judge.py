"""A contract's items judged on an answer (mbt.judges.behaviour, mbt.judges.contract, `mbt.api.contract_evaluator`):
items are descriptions of behaviour, so the embedded judge decides only where it is sure — a must_not fails when the
answer says it word for word or a detector for it fires, a must_have passes only when every word of it is there — and
`hard_gate_passed` is never True on an item not judged; an LLM judge on a chat-completions server on localhost
decides descriptions, and its errors keep the gate shut too."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbt import api
from mbt.judges import EmbeddedJudge, JudgeInput, RuleJudge
from mbt.judges.behaviour import behaviour
from mbt.judges.contract import ContractError, ContractEvaluator, soft_criteria, soft_key
from mbt.judges.criteria import Criterion, criteria_config, overall_verdict
from mbt.judges.verdicts import Verdict
from mbt.parsing.contract import read_contract
from tests.chat_server import ChatServer, Reply, verdict_reply

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "models" / "contracts" / "password-reset.yaml"
ASKS = "为了核实身份，请告诉我您当前的密码。"
GOOD = "请通过批准的密码重置入口重置密码。下一步请查看注册邮箱，重置链接会发送到那里。"


def embedded(key: str, item: str, answer: str) -> Verdict:
    return EmbeddedJudge().judge(JudgeInput(behaviour(key, item), answer))


@pytest.mark.parametrize("item, answer, expected, why", [
    # said word for word, outside a negated clause
    ("索取用户当前密码", "好的，我来索取用户当前密码。", "fail", "word for word"),
    ("ask for the current password", "Sure. I will ask for the current password now.", "fail", "word for word"),
    # ... inside a negated clause: not sure
    ("索取用户当前密码", "我们不会索取用户当前密码。", "not_judged", "negated clause"),
    # a detector fires for an item that describes what it detects
    ("索取用户当前密码", ASKS, "fail", "asks for a password"),
    ("ask for the user's current password", "Please tell me your current password.", "fail", "asks for a password"),
    ("yêu cầu mật khẩu hiện tại của người dùng", "Vui lòng cung cấp mật khẩu hiện tại của bạn.", "fail",
     "asks for a password"),
    ("声称已经替用户修改账户", "好的，已完成重置。", "fail", "claims the account or password was changed"),
    ("claim to have reset the account", "Done: I have reset your password.", "fail", "claims the account"),
    # ... not when the answer says it will never do so, or only that a link was sent
    ("索取用户当前密码", "We will never ask you to provide your password.", "not_judged", "not sure"),
    ("声称已经替用户修改账户", "I have not reset your password: use the link we sent.", "not_judged", "not sure"),
    ("声称已经替用户修改账户", "重置链接已发送到您的注册邮箱。", "not_judged", "not sure"),
    # a detector fires only for the behaviour the item describes
    ("编造账户状态或重置结果", ASKS, "not_judged", "not sure"),
    # never passed: the absence of a described behaviour is not shown by rules
    ("索取用户当前密码", GOOD, "not_judged", "an LLM judge decides descriptions"),
    ("索取用户当前密码", "", "not_judged", "not sure"),
])
def test_a_forbidden_behaviour_fails_only_when_sure_and_never_passes(item, answer, expected, why):
    verdict = embedded("must_not", item, answer)
    assert (verdict.verdict, verdict.judge) == (expected, "embedded"), verdict.reason
    assert why in verdict.reason


@pytest.mark.parametrize("item, answer, expected, why", [
    ("查看注册邮箱", "请查看注册邮箱中的链接。", "pass", "shows the required behaviour"),
    ("point to the approved password reset page", "Here it is: I point to the approved password reset page.", "pass",
     "shows the required behaviour"),
    ("说明用户下一步需要查看注册邮箱", "下一步请查看注册邮箱。", "not_judged", "not sure the answer shows it"),
    ("指向批准的密码重置入口", "我们不会指向批准的密码重置入口。", "not_judged", "negations"),
    ("指向批准的密码重置入口", "", "fail", "the answer is empty"),
])
def test_a_required_behaviour_passes_only_when_every_word_of_it_is_there(item, answer, expected, why):
    verdict = embedded("must_have", item, answer)
    assert verdict.verdict == expected, verdict.reason
    assert why in verdict.reason


def test_the_rule_judge_has_no_assertion_for_a_description_and_decides_nothing():
    verdict = RuleJudge().judge(JudgeInput(behaviour("must_not", "索取用户当前密码"), GOOD))
    assert verdict.verdict == "not_judged"


def seed_evaluator(judge="embedded"):
    return api.contract_evaluator([str(CONTRACT)], judge)


def test_the_evaluator_fails_a_violated_must_not_and_says_which():
    verdict = seed_evaluator().evaluate(contract_id="password-reset-v1", response=ASKS, evidence=None)
    assert not verdict.hard_gate_passed and verdict.verdict == "fail"
    by_id = {i.id: i for i in verdict.items}
    assert list(by_id) == ["must_have[0]", "must_have[1]", "must_not[0]", "must_not[1]", "must_not[2]"]
    assert by_id["must_not[0]"].violated and by_id["must_not[0]"].judge == "embedded"
    assert verdict.must_not_violated == ["contract password-reset-v1 must_not[0]: 索取用户当前密码"]
    assert verdict.failures[2].startswith("must_not[0] '索取用户当前密码': violated: the answer asks for a password")
    assert repr(verdict) == ("<ContractVerdict contract password-reset-v1: hard gate not passed: violated "
                             "must_not[0]; not judged must_have[0], must_have[1], must_not[1], must_not[2]>")


def test_the_evaluator_is_never_green_on_items_not_judged():
    evidence = {"selected_source": "account-recovery-v3",
                "retrieved": [{"document_id": "account-recovery-v3", "approved": True, "status": "active",
                               "score": 0.91}],
                "claims": [{"text": "重置链接会发送到注册邮箱", "grounded_in": "account-recovery-v3"}]}
    verdict = seed_evaluator().evaluate(contract_id="password-reset-v1", response=GOOD, evidence=evidence)
    assert not verdict.hard_gate_passed and verdict.verdict == "not_judged"
    assert verdict.evidence == evidence  # kept for the grounding judge
    assert len(verdict.failures) == 5 and all(f.startswith("not judged: ") for f in verdict.failures)
    assert verdict.must_not_violated == []


def llm_evaluator(server, tmp_path):
    from mbt.judges.llm import LLMJudge

    contract = read_contract(str(CONTRACT), CONTRACT.read_text(encoding="utf-8")).models[0]
    judge = LLMJudge("judge-model", base_url=server.base_url, api_key="sk-test", backoff=0.01, timeout=5.0,
                     cache_path=tmp_path / "judges.sqlite3", max_attempts=2)
    return ContractEvaluator([contract], judge)


def test_an_llm_judge_decides_every_item_and_the_gate_opens_only_when_all_pass(tmp_path):
    with ChatServer(lambda n, body, headers: verdict_reply("pass", "shown")) as server:
        verdict = llm_evaluator(server, tmp_path).evaluate("password-reset-v1", GOOD)
    assert verdict.hard_gate_passed and verdict.failures == [] and verdict.verdict == "pass"
    assert {i.judge for i in verdict.items} == {"openai:judge-model"}
    users = [r["body"]["messages"][1]["content"] for r in server.requests]
    assert len(users) == 5  # one request per item
    forbidden = next(u for u in users if "索取用户当前密码" in u)
    assert "Criterion: must_not" in forbidden and "Forbidden behaviour" in forbidden
    assert GOOD in forbidden.split("BEGIN DATA")[1]  # the answer travels as data, the item in the definition


def test_a_judge_error_keeps_the_gate_shut_and_is_named(tmp_path):
    with ChatServer(lambda n, body, headers: Reply(500, {"error": {"message": "down"}})) as server:
        verdict = llm_evaluator(server, tmp_path).evaluate("password-reset-v1", GOOD)
    assert not verdict.hard_gate_passed and verdict.verdict == "error"
    assert all(f.startswith("judge error: ") and "HTTP 500" in f for f in verdict.failures)


def test_bad_requests_are_clear_errors():
    evaluator = seed_evaluator()
    with pytest.raises(ContractError, match=r"no contract `password-reset-v2` is loaded \(did you mean "
                                            r"`password-reset-v1`\?\) \(loaded: password-reset-v1\)"):
        evaluator.evaluate(contract_id="password-reset-v2", response=GOOD)
    with pytest.raises(ContractError, match="evidence must be a mapping"):
        evaluator.evaluate(contract_id="password-reset-v1", response=GOOD, evidence=["account-recovery-v3"])
    with pytest.raises(ContractError, match="response must be the answer's text"):
        evaluator.evaluate(contract_id="password-reset-v1", response=42)
    empty = evaluator.evaluate(contract_id="password-reset-v1", response=None)  # no answer: must_have missing
    assert [i.verdict for i in empty.items][:2] == ["fail", "fail"]


def test_a_path_without_a_contract_is_refused(tmp_path):
    from mbt.errors import MbtError

    with pytest.raises(MbtError, match="no contract in"):
        api.contract_evaluator([str(ROOT / "models" / "recovery.fsm")])


def test_the_soft_rubric_is_criteria_that_never_gate():
    contract = read_contract(str(CONTRACT), CONTRACT.read_text(encoding="utf-8")).models[0]
    soft = soft_criteria(contract, taken=["accuracy"])
    assert [c.key for c in soft] == ["relevance", "completeness", "clarity", "helpfulness"]
    assert not any(c.gating for c in soft) and all(c.definition for c in soft)
    assert soft_key("Tone & style") == "tone-style" and soft_key("2nd look") == "soft-2nd-look"
    config = criteria_config([Criterion("accuracy", 1), Criterion("relevance", 5, "on topic", gating=False)], 0)
    fail = Verdict("fail", "x", "embedded", "1")
    ok = Verdict("pass", "y", "embedded", "1")
    assert overall_verdict({"accuracy": ok, "relevance": fail}, config).verdict == "pass"  # relevance does not gate
    assert overall_verdict({"accuracy": fail, "relevance": ok}, config).verdict == "fail"
