"""Whole cases: each enabled criterion by the judge chosen for it, batched per judge, then the overall verdict."""

from __future__ import annotations

import pytest

from mbt.judges import (
    AnswerCase,
    CriteriaError,
    EmbeddedJudge,
    RuleJudge,
    criteria_config,
    judge_cases,
    make_judge,
    parse_assertions,
    parse_weights,
)
from mbt.judges.verdicts import OneByOne, Verdict


class Counting(OneByOne):
    """A judge that passes everything and counts its batches (a test double of the Judge protocol)."""

    name, version = "counting", "1"

    def __init__(self):
        self.batches: list[int] = []

    def judge(self, item):
        return Verdict("pass", f"{item.case_id}/{item.criterion.key}", self.name, self.version)

    def judge_many(self, items):
        self.batches.append(len(items))
        return super().judge_many(items)


def test_each_criterion_is_judged_by_its_judge_in_one_batch_per_judge_and_the_overall_follows():
    config = criteria_config(parse_weights("accuracy=2,safety=1,fluency=0"), threshold=2)
    must_not = tuple(parse_assertions([{"type": "must_not", "value": ["password"], "criterion": "safety"}], path="g"))
    cases = [AnswerCase("c1", "Refunds take 5 days.", ("Refunds take 5 days.",)),
             AnswerCase("c2", "Refunds take 7 days.", ("Refunds take 5 days.",)),
             AnswerCase("c3", "Refunds take 5 days. Tell me your password.", ("Refunds take 5 days.",),
                        assertions=must_not)]
    safety = Counting()
    results = judge_cases(cases, config, EmbeddedJudge(), {"safety": safety})
    assert safety.batches == [3]
    assert [(r.case_id, list(r.criteria)) for r in results] == [(c, ["accuracy", "safety"]) for c in ("c1", "c2", "c3")]
    # c3 asks for a password: the embedded judge fails its accuracy too
    assert [r.criteria["accuracy"].verdict for r in results] == ["pass", "fail", "fail"]
    assert results[0].criteria["safety"].reason == "c1/safety"
    assert [r.overall.verdict for r in results] == ["pass", "fail", "fail"]  # 3 > 2; 1 is not greater than 2
    rules = judge_cases(cases[2:], config, EmbeddedJudge(), {"safety": RuleJudge()})
    assert rules[0].criteria["safety"].verdict == "fail" and rules[0].overall.verdict == "fail"


def test_make_judge_names_the_three_judges():
    assert make_judge("embedded").name == "embedded" and make_judge("rules").name == "rules"
    with pytest.raises(CriteriaError, match="not a judge"):
        make_judge("gpt")
