"""Rule assertions with promptfoo's names (contains, icontains, regex, not-contains, equals, starts-with, is-json,
json-schema…), numbers within a tolerance, seed 000's must_have / must_not; a malformed assertion is a located error,
never a crash and never a pass."""

from __future__ import annotations

import pytest

from mbt.judges.assertions import RuleJudge, check_assertions, contract_phrases, parse_assertions, problems
from mbt.judges.criteria import Criterion
from mbt.judges.verdicts import JudgeInput


def verdict(spec, actual):
    (assertion,) = parse_assertions([spec], path="cases.jsonl", line=7)
    return check_assertions([assertion], actual)


@pytest.mark.parametrize("spec, actual, expected", [
    ({"type": "contains", "value": "5 business days"}, "Refunds take 5 business days.", "pass"),
    ({"type": "contains", "value": "5 Business Days"}, "Refunds take 5 business days.", "fail"),
    ({"type": "icontains", "value": "5 Business Days"}, "Refunds take 5 business days.", "pass"),
    ({"type": "icontains", "value": "MỞ KHÓA THẺ"}, "Chọn Mở khoá thẻ.", "pass"),  # tone mark placed either way
    ({"type": "contains", "value": "khóa"}, "khóa", "pass"),
    ({"type": "not-contains", "value": "password"}, "Check your email.", "pass"),
    ({"type": "not-contains", "value": "password"}, "Tell me your password.", "fail"),
    ({"type": "not-icontains", "value": "PASSWORD"}, "Tell me your password.", "fail"),
    ({"type": "contains-all", "value": ["email", "link"]}, "A link goes to your email.", "pass"),
    ({"type": "contains-all", "value": ["email", "link"]}, "A code goes to your email.", "fail"),
    ({"type": "contains-any", "value": ["email", "SMS"]}, "We send an SMS.", "pass"),
    ({"type": "icontains-any", "value": ["EMAIL", "SMS"]}, "We call you.", "fail"),
    ({"type": "regex", "value": r"\d{3}-\d{4}"}, "Call 555-1234.", "pass"),
    ({"type": "regex", "value": r"^\d+$"}, "Call 555-1234.", "fail"),
    ({"type": "not-regex", "value": r"已完成重置"}, "重置链接已发送", "pass"),
    ({"type": "equals", "value": "OK"}, "OK\n", "pass"),
    ({"type": "equals", "value": "OK"}, "ok", "fail"),
    ({"type": "equals", "value": {"status": "LOCKED"}}, '{"status": "LOCKED"}', "pass"),
    ({"type": "equals", "value": {"status": "LOCKED"}}, '{"status": "ACTIVE"}', "fail"),
    ({"type": "starts-with", "value": "Yes"}, "  Yes, you can.", "pass"),
    ({"type": "starts-with", "value": "Yes"}, "No.", "fail"),
    ({"type": "is-json"}, '{"a": 1}', "pass"),
    ({"type": "is-json"}, "{'a': 1}", "fail"),
    ({"type": "is-json", "value": {"type": "object", "required": ["a"]}}, '{"b": 1}', "fail"),
    ({"type": "json-schema", "value": {"type": "object", "required": ["channel"]}}, '{"channel": "EMAIL"}', "pass"),
    ({"type": "json-schema", "value": {"type": "object", "required": ["channel"]}}, '{"chan": "EMAIL"}', "fail"),
    ({"type": "json-schema", "value": {"type": "object"}}, "not json", "fail"),
    ({"type": "number", "value": 1500000}, "Phí là 1.500.000 đồng.", "pass"),
    ({"type": "number", "value": 1500000}, "The fee is 1,500,000 VND.", "pass"),
    ({"type": "number", "value": 1500000}, "Phí là 1,5 triệu đồng.", "pass"),
    ({"type": "number", "value": 1500000}, "Phí là 1.600.000 đồng.", "fail"),
    ({"type": "number", "value": 4.5, "tolerance": 0.1}, "The rate is 4.55% a year.", "pass"),
    ({"type": "number", "value": 4.5, "tolerance": "1%"}, "The rate is 4.6% a year.", "fail"),
    ({"type": "number", "value": 4.5, "tolerance": "3%"}, "The rate is 4.6% a year.", "pass"),
    ({"type": "number", "value": 30000}, "手续费为3万元。", "pass"),
    ({"type": "number", "value": 5}, "No number here.", "fail"),
    ({"type": "not-number", "value": 5}, "It takes 7 days.", "pass"),
    ({"type": "must_have", "value": ["查看注册邮箱"]}, "请查看注册邮箱中的链接。", "pass"),
    ({"type": "must_have", "value": ["查看注册邮箱", "批准的重置入口"]}, "请查看注册邮箱中的链接。", "fail"),
    ({"type": "must_not", "value": ["已完成重置"]}, "我已完成重置。", "fail"),
    ({"type": "must_not", "value": ["已完成重置"]}, "重置链接已发送到您的邮箱。", "pass"),
])
def test_each_assertion_passes_and_fails_where_it_should(spec, actual, expected):
    result = verdict(spec, actual)
    assert result.verdict == expected, result.reason
    assert result.judge == "rules"


def test_a_failing_assertion_says_which_one_and_why():
    result = verdict({"type": "must_not", "value": ["索取当前密码", "已完成重置"]}, "我已完成重置。")
    assert "must_not" in result.reason and "已完成重置" in result.reason


@pytest.mark.parametrize("spec, message", [
    ({"type": "regex", "value": "(unclosed"}, "bad regular expression"),
    ({"type": "json-schema", "value": {"type": "objekt"}}, "bad JSON Schema"),
    ({"type": "json-schema"}, "needs a `value`"),
    ({"type": "containz", "value": "x"}, "did you mean `contains`"),
    ({"type": "contains"}, "needs a `value`"),
    ({"type": "contains-all", "value": "x"}, "a list"),
    ({"type": "number", "value": "many"}, "a number"),
    ({"type": "number", "value": 5, "tolerance": "-1"}, "tolerance"),
    ({"value": "x"}, "`type`"),
    ("contains", "a mapping"),
    ({"type": "contains", "value": "x", "criterion": "Bad Key"}, "criterion"),
])
def test_a_malformed_assertion_is_a_located_error_and_never_a_pass(spec, message):
    (assertion,) = parse_assertions([spec], path="cases.jsonl", line=7, column=3)
    (problem,) = problems([assertion])
    assert (problem.path, problem.line, problem.column) == ("cases.jsonl", 7, 3)
    assert "assert[0]" in problem.message and message in problem.message
    result = check_assertions([assertion], "anything at all")
    assert result.verdict == "error"
    assert "cases.jsonl:7:3" in result.reason


def test_one_malformed_assertion_among_good_ones_still_makes_an_error():
    listed = parse_assertions([{"type": "contains", "value": "a"}, {"type": "regex", "value": "["}], path="g.yaml", line=2)
    assert [p.message.split(":")[0] for p in problems(listed)] == ["assert[1] (regex)"]
    assert check_assertions(listed, "a").verdict == "error"


def test_seed_000_contract_phrases():
    listed = contract_phrases(must_have=["批准的重置入口", "查看注册邮箱"], must_not=["索取当前密码", "声称已经重置"],
                              path="golden.jsonl", line=1)
    assert [(a.type, a.negated) for a in listed] == [("must_have", False), ("must_not", False)]
    assert check_assertions(listed, "请通过批准的重置入口操作，并查看注册邮箱。").verdict == "pass"
    assert check_assertions(listed, "我已经声称已经重置").verdict == "fail"


def test_the_rule_judge_judges_the_assertions_of_the_criterion_and_not_judged_without_any():
    judge = RuleJudge()
    listed = tuple(parse_assertions([{"type": "contains", "value": "email"},
                                     {"type": "must_not", "value": ["password"], "criterion": "safety"}],
                                    path="g.yaml", line=1))
    accuracy = judge.judge(JudgeInput(Criterion("accuracy"), "check your email, password", assertions=listed))
    safety = judge.judge(JudgeInput(Criterion("safety"), "check your email, password", assertions=listed))
    fluency = judge.judge(JudgeInput(Criterion("fluency"), "check your email, password", assertions=listed))
    assert (accuracy.verdict, safety.verdict, fluency.verdict) == ("pass", "fail", "not_judged")
    assert judge.judge_many([JudgeInput(Criterion("safety"), "hi", assertions=listed)])[0].verdict == "pass"
