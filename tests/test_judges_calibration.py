"""Judge the judge: agreement, Cohen's kappa and the confusion per criterion against human labels."""

from __future__ import annotations

import json

import pytest

from mbt.errors import LocatedError
from mbt.judges.calibration import Label, calibrate, cohen_kappa, judge_labelled, read_labels
from mbt.judges.criteria import Criterion
from mbt.judges.embedded import EmbeddedJudge
from mbt.judges.verdicts import JudgeInput


def table(yes_yes, yes_no, no_yes, no_no):
    return [("y", "y")] * yes_yes + [("y", "n")] * yes_no + [("n", "y")] * no_yes + [("n", "n")] * no_no


@pytest.mark.parametrize("counts, kappa", [
    # Wikipedia, "Cohen's kappa": the worked example (p_o 0.7, p_e 0.5) and the two tables of its paradox section
    ((20, 5, 10, 15), 0.4),
    ((45, 15, 25, 15), 0.1304),
    ((25, 35, 5, 35), 0.2593),
])
def test_kappa_matches_the_published_worked_examples(counts, kappa):
    assert cohen_kappa(table(*counts)) == pytest.approx(kappa, abs=5e-5)


def test_kappa_is_undefined_when_both_raters_always_say_the_same_one_thing():
    assert cohen_kappa([("pass", "pass")] * 4) is None
    assert cohen_kappa([]) is None
    assert cohen_kappa([("pass", "pass"), ("fail", "fail")]) == 1.0
    assert cohen_kappa([("pass", "fail"), ("fail", "pass")]) == -1.0


def test_calibration_counts_undecided_verdicts_apart_and_per_criterion():
    labels = [Label("1", "accuracy", "pass", "pass"), Label("2", "accuracy", "fail", "fail"),
              Label("3", "accuracy", "fail", "pass"), Label("4", "accuracy", "pass", "not_judged"),
              Label("5", "accuracy", "fail", "error"), Label("6", "safety", "fail", "fail")]
    report = calibrate(labels)
    accuracy, safety = report.criteria
    assert (accuracy.criterion, accuracy.total, accuracy.decided) == ("accuracy", 5, 3)
    assert accuracy.agreement == pytest.approx(2 / 3)
    assert accuracy.kappa == pytest.approx(cohen_kappa([("pass", "pass"), ("fail", "fail"), ("fail", "pass")]))
    assert accuracy.confusion[("pass", "not_judged")] == 1 and accuracy.confusion[("fail", "error")] == 1
    assert accuracy.table()[0].split()[-4:] == ["pass", "fail", "not_judged", "error"]
    assert (safety.total, safety.decided, safety.kappa_text) == (1, 1, "undefined")


def test_judge_labelled_runs_the_judge_and_pairs_each_verdict_with_its_label():
    labelled = [(JudgeInput(Criterion("accuracy"), "The fee is $2.", ("The fee is $2.",), case_id="a"), "pass"),
                (JudgeInput(Criterion("accuracy"), "The fee is $3.", ("The fee is $2.",), case_id="b"), "pass")]
    labels = judge_labelled(EmbeddedJudge(), labelled)
    assert [(x.case_id, x.human, x.judge) for x in labels] == [("a", "pass", "pass"), ("b", "pass", "fail")]
    assert calibrate(labels).criteria[0].agreement == 0.5


def test_a_labels_file_with_bad_lines_is_one_located_error(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join([json.dumps({"id": "1", "expected": "a", "actual": "a", "label": "pass"}), "{not json",
                               json.dumps({"id": "3", "label": "maybe"}), json.dumps([1])]) + "\n", encoding="utf-8")
    with pytest.raises(LocatedError) as raised:
        read_labels(path)
    assert [(p.line, p.column) for p in raised.value.problems] == [(2, 1), (3, 1), (4, 1)]
    assert "pass or fail" in raised.value.problems[1].message
    path.write_text(json.dumps({"id": "1", "label": "fail"}) + "\n", encoding="utf-8")
    assert read_labels(path) == [{"id": "1", "label": "fail"}]
