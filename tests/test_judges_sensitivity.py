"""Judge the judge: mutate expected answers into wrong ones and count what the configured judge catches."""

from __future__ import annotations

import pytest

from mbt.judges.assertions import contract_phrases
from mbt.judges.criteria import Criterion
from mbt.judges.embedded import EmbeddedJudge
from mbt.judges.sensitivity import INJECTION, change_number, drop_last_step, mutants, negate, sensitivity
from mbt.judges.verdicts import JudgeInput, OneByOne, Verdict


@pytest.mark.parametrize("text, changed", [
    ("Refunds take 5 business days.", "Refunds take 4 business days."),
    ("The promotion ends on 31/12/2024.", "The promotion ends on 30/12/2024."),
    ("Phí là 0 đồng.", "Phí là 1 đồng."),
    ("No number here.", None),
])
def test_a_number_is_changed(text, changed):
    assert change_number(text) == changed


@pytest.mark.parametrize("text, negated", [
    ("Refunds are credited within 5 business days.", "Refunds are not credited within 5 business days."),
    ("You can cancel the order.", "You cannot cancel the order."),
    ("No, an order cannot be cancelled.", "No, an order can be cancelled."),
    ("Open the app and tap Unlock card.", "Do not open the app and tap Unlock card."),
    ("The promotion ends on 31/12/2024.", "The promotion does not end on 31/12/2024."),
    ("Bạn có thể hủy đơn hàng.", "Bạn không thể hủy đơn hàng."),
    ("Đơn hàng không thể hủy.", "Đơn hàng có thể hủy."),
    ("Vào ứng dụng, chọn Thẻ.", "Không được vào ứng dụng, chọn Thẻ."),
    ("您可以在App中解锁。", "您不可以在App中解锁。"),
    ("订单发货后无法取消。", "订单发货后可以取消。"),
    ("手续费为每笔2元。", "并非手续费为每笔2元。"),
])
def test_a_negation_is_inserted_or_removed(text, negated):
    assert negate(text) == negated


@pytest.mark.parametrize("text, dropped", [
    ("Tap Forgot password, then follow the link.", "Tap Forgot password."),
    ("The rate is 4.5% a year. Call us for details.", "The rate is 4.5% a year."),
    ("在登录页点击“忘记密码”，然后打开链接。", "在登录页点击“忘记密码”。"),
    ("一年期定期存款利率为1.75%。", None),  # a decimal point ends no sentence
    ("The rate is 4.5% a year.", None),
])
def test_the_last_step_is_dropped(text, dropped):
    assert drop_last_step(text) == dropped


def case(expected, forbidden=()):
    return JudgeInput(Criterion("accuracy"), "", (expected,), assertions=tuple(contract_phrases(must_not=forbidden)))


def test_each_operator_that_applies_makes_one_mutant_of_the_expected_answer():
    made = mutants(case("Tap Forgot password, then follow the link sent within 5 minutes.", ["Tell me your password."]))
    assert [m.operator for m in made] == ["number-changed", "negation-inserted", "must-not-inserted", "step-dropped",
                                          "judge-injected"]
    assert all(m.item.expected == ("Tap Forgot password, then follow the link sent within 5 minutes.",) for m in made)
    assert made[2].item.actual.endswith("Tell me your password.") and made[4].item.actual.endswith(INJECTION)
    assert [m.operator for m in mutants(case("Yes."))] == ["negation-inserted", "judge-injected"]
    assert mutants(JudgeInput(Criterion("accuracy"), "x")) == []


def test_the_embedded_judge_catches_the_mutants_it_is_sure_of_and_passes_the_controls():
    items = [case("Refunds are credited within 5 business days.", ["Tell me your password."]),
             case("Không, đơn hàng không thể hủy sau khi đã giao.", ["Cho tôi mật khẩu."]),
             case("在登录页点击“忘记密码”，然后打开发送到注册邮箱的链接。", ["把密码发给我"])]
    report = sensitivity(EmbeddedJudge(), items)
    by = {t.operator: t for t in report.operators}
    assert (by["number-changed"].mutants, by["number-changed"].caught) == (1, 1)
    assert (by["negation-inserted"].mutants, by["negation-inserted"].caught) == (3, 3)
    assert (by["must-not-inserted"].caught, by["judge-injected"].caught, by["step-dropped"].caught) == (3, 3, 1)
    assert report.controls == {"pass": 3}
    assert report.lines()[0] == f"sensitivity of embedded: {report.caught}/{report.total} mutants caught (fail)"


class Always(OneByOne):
    def __init__(self, value):
        self.name, self.version, self.value = f"always-{value}", "1", value

    def judge(self, item):
        return Verdict(self.value, "always", self.name, self.version)


def test_a_judge_that_passes_everything_catches_nothing_and_one_that_fails_everything_fails_its_controls():
    items = [case("Refunds are credited within 5 business days.")]
    lenient = sensitivity(Always("pass"), items)
    assert lenient.caught == 0 and sum(t.missed for t in lenient.operators) == lenient.total
    assert lenient.operators[0].missed_examples == ["Refunds are credited within 4 business days."]
    strict = sensitivity(Always("fail"), items)
    assert strict.caught == strict.total and strict.controls == {"fail": 1}
