"""Seed 001's criteria and its overall verdict: weights (0 disables), the sum of passed weights compared with the
threshold ("lớn hơn ngưỡng": strictly greater), and criteria that were not judged or broke never counted as passed."""

from __future__ import annotations

from decimal import Decimal

import pytest

from mbt.judges.criteria import (
    CriteriaError,
    Criterion,
    criteria_config,
    default_config,
    overall_verdict,
    parse_weights,
)
from mbt.judges.verdicts import Verdict


def v(value: str) -> Verdict:
    return Verdict(value, f"{value} because", "test", "1")  # type: ignore[arg-type]


SEED_EXAMPLE = criteria_config(parse_weights("accuracy=2,safety=1,fluency=1"), threshold="2")


def test_the_default_is_accuracy_alone():
    config = default_config()
    assert [c.key for c in config.enabled] == ["accuracy"]
    assert overall_verdict({"accuracy": v("pass")}, config).verdict == "pass"
    assert overall_verdict({"accuracy": v("fail")}, config).verdict == "fail"


def test_the_sum_must_be_strictly_greater_than_the_threshold():
    # accuracy alone weighs 2, which is not greater than 2
    result = overall_verdict({"accuracy": v("pass"), "safety": v("fail"), "fluency": v("fail")}, SEED_EXAMPLE)
    assert result.verdict == "fail"
    assert result.passed_weight == Decimal(2)
    assert "not greater than" in result.reason
    result = overall_verdict({"accuracy": v("pass"), "safety": v("pass"), "fluency": v("fail")}, SEED_EXAMPLE)
    assert result.verdict == "pass" and result.passed_weight == Decimal(3)
    # safety and fluency together weigh 2: not enough without accuracy
    assert overall_verdict({"accuracy": v("fail"), "safety": v("pass"), "fluency": v("pass")},
                           SEED_EXAMPLE).verdict == "fail"


def test_a_criterion_not_judged_or_in_error_is_never_counted_as_passed():
    # accuracy passed (2), safety unknown: 2 is not > 2, and safety could make it 3 -> undecided
    result = overall_verdict({"accuracy": v("pass"), "safety": v("not_judged"), "fluency": v("fail")}, SEED_EXAMPLE)
    assert result.verdict == "not_judged"
    assert result.undecided == ("safety",)
    assert overall_verdict({"accuracy": v("pass"), "safety": v("error"), "fluency": v("not_judged")},
                           SEED_EXAMPLE).verdict == "error"
    # a missing verdict is not judged
    assert overall_verdict({"accuracy": v("pass")}, SEED_EXAMPLE).verdict == "not_judged"


def test_unknown_criteria_do_not_matter_when_they_cannot_change_the_outcome():
    # passed already: 3 > 2 whatever fluency is
    assert overall_verdict({"accuracy": v("pass"), "safety": v("pass"), "fluency": v("error")},
                           SEED_EXAMPLE).verdict == "pass"
    # failed already: even if fluency passed, 0 + 1 is not > 2
    assert overall_verdict({"accuracy": v("fail"), "safety": v("fail"), "fluency": v("not_judged")},
                           SEED_EXAMPLE).verdict == "fail"


def test_weight_zero_disables_a_criterion():
    config = criteria_config(parse_weights("accuracy=1,safety=0,fluency=0"), threshold=0)
    assert [c.key for c in config.enabled] == ["accuracy"]
    assert overall_verdict({"accuracy": v("pass"), "safety": v("error")}, config).verdict == "pass"


def test_decimal_weights_add_up_exactly():
    config = criteria_config(parse_weights("accuracy=0.1,safety=0.2,fluency=0.1"), threshold="0.3")
    # 0.1 + 0.2 is exactly 0.3, which is not greater than 0.3 (binary floats would say it is)
    assert overall_verdict({"accuracy": v("pass"), "safety": v("pass"), "fluency": v("fail")}, config).verdict == "fail"
    assert 0.1 + 0.2 > 0.3


def test_custom_criteria_need_a_rubric():
    custom = Criterion("politeness", weight=1, rubric="The answer greets the user and thanks them.")
    config = criteria_config([Criterion("accuracy", 1), custom], threshold=1)
    assert [c.key for c in config.enabled] == ["accuracy", "politeness"]
    with pytest.raises(CriteriaError, match="politeness.*rubric"):
        criteria_config([Criterion("politeness", 1)], threshold=0)


@pytest.mark.parametrize("text, message", [
    ("accuracy=two", "weight of `accuracy`"),
    ("accuracy=-1", "negative"),
    ("accuracy", "KEY=WEIGHT"),
    ("accuracy=1,accuracy=2", "twice"),
    ("accurcy=1", "did you mean `accuracy`"),
    ("Bad Key=1", "criterion key"),
])
def test_bad_weights_are_one_clear_message(text, message):
    with pytest.raises(CriteriaError, match=message):
        criteria_config(parse_weights(text), threshold=0)


def test_configs_that_can_never_pass_or_judge_nothing_are_refused():
    with pytest.raises(CriteriaError, match="at least one criterion"):
        criteria_config(parse_weights("accuracy=0"), threshold=0)
    with pytest.raises(CriteriaError, match="no case can ever pass"):
        criteria_config(parse_weights("accuracy=2,safety=1"), threshold=3)
    with pytest.raises(CriteriaError, match="threshold"):
        criteria_config(parse_weights("accuracy=1"), threshold=-1)
