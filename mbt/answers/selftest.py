"""Judge the judge from the command line (`mbt judge calibrate`, `mbt judge sensitivity`; issue 34, item 7): the
reports (JSON schemas `calibration` and `sensitivity`) and what builds them on mbt.judges.calibration and
mbt.judges.sensitivity.

Calibration reads a labels file (JSON Lines: `actual`, `expected`, `label` pass | fail, optional `criterion`,
`question`, `judge`), has the chosen judge of each row's criterion judge the row (or, with `recorded`, takes the
verdict the row records) and compares with the human label: per criterion the labelled answers, the decided ones and
their share, the agreement and Cohen's kappa on those, and the confusion table. Sensitivity mutates the expected
answers of golden cases into wrong answers and counts per operator what the accuracy judge catches.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from mbt.answers.evaluate import load_answer_goldens
from mbt.answers.results import Located
from mbt.errors import LocatedError, Problem
from mbt.judges import (
    BUILTIN_CRITERIA,
    Criterion,
    JudgeInput,
    Label,
    calibrate,
    criteria_config,
    sensitivity,
)
from mbt.judges.calibration import HUMAN, read_labelled
from mbt.judges.choice import JudgeChoice, JudgeSet, make_judges
from mbt.judges.usage import EvalBudget, JudgeUsage, judge_usage
from mbt.judges.verdicts import VERDICTS, Judge

if TYPE_CHECKING:  # annotations only: the LLM judge's module loads when such a judge is made
    from mbt.judges.llm import LLMSettings

RECORDED = "recorded"  # `--judge recorded`: the verdicts the labels file records


class CalibrationCriterion(BaseModel):
    """One criterion's agreement with the human labels; agreement and kappa count the decided answers only."""

    criterion: str
    judge: str
    labelled: int
    decided: int
    decided_share: float | None = Field(description="decided / labelled; None without labels.")
    agreement: float | None = Field(description="Share of the decided answers where judge and human agree.")
    kappa: float | None = Field(description="Cohen's kappa on the decided answers; None when undefined.")
    confusion: dict[str, dict[str, int]] = Field(description="human label (pass, fail) -> judge verdict -> count.")


class CalibrationReport(BaseModel):
    schema_version: Literal["1.0"] = "1.0"
    labels: str = Field(description="The labels file read.")
    criteria: list[CalibrationCriterion]
    judge_usage: list[JudgeUsage] = Field(default_factory=list, description=(
        "What each LLM judge cost: requests, tokens, cost, cache hits (empty without an LLM judge)."))
    budget: EvalBudget | None = Field(default=None, description="The LLM judges' budget, when one was given.")


class OperatorResult(BaseModel):
    operator: str
    mutants: int
    caught: int = Field(description="Judged fail: the wrong answer was caught.")
    missed: int = Field(description="Judged pass: the wrong answer got through.")
    undecided: int = Field(description="not_judged or error.")
    missed_examples: list[str]


class SensitivityReport(BaseModel):
    schema_version: Literal["1.0"] = "1.0"
    judge: str
    expected_answers: int = Field(description="Expected answers mutated (one per judged turn that has one).")
    mutants: int
    caught: int
    operators: list[OperatorResult]
    controls: dict[str, int] = Field(description="Verdict -> count: each expected answer judged against itself, "
                                                 "which a sound judge passes.")
    invalid_cases: list[Located]
    judge_usage: list[JudgeUsage] = Field(default_factory=list, description=(
        "What the LLM judge cost: requests, tokens, cost, cache hits (empty without an LLM judge)."))
    budget: EvalBudget | None = Field(default=None, description="The LLM judge's budget, when one was given.")


def _close(judges: JudgeSet | None) -> None:
    if judges is not None:
        judges.close()


def calibration_report(labels_path: str, choice: JudgeChoice, rubrics: Mapping[str, str] | None = None,
                       settings: LLMSettings | None = None) -> CalibrationReport:
    """The chosen judges (or the recorded verdicts, `choice.default == "recorded"`) against the labels file."""
    rows = read_labelled(Path(labels_path), labels_path)
    rubrics = dict(rubrics or {})
    problems: list[Problem] = []
    recorded = choice.default == RECORDED  # every criterion's verdict from the file
    keys: list[str] = []
    for line, row in rows:
        key = str(row.get("criterion", "accuracy"))
        if key not in BUILTIN_CRITERIA and key not in rubrics:
            problems.append(Problem(labels_path, line, 1, f"criterion `{key}` is not built in and has no rubric: "
                                    "give it one under `criteria:` in the configuration file"))
        elif recorded and row.get("judge") not in VERDICTS:
            problems.append(Problem(labels_path, line, 1, "no recorded verdict (`judge`: pass, fail, not_judged or "
                                    "error) for --judge recorded"))
        elif not recorded and not isinstance(row.get("actual"), str):
            problems.append(Problem(labels_path, line, 1, "`actual` (the answer that was labelled) is missing"))
        keys.append(key)
    if recorded and rows and all(row.get("judge") is None for _, row in rows):  # one line, not one per row
        problems = [Problem(labels_path, rows[0][0], 1, "the file records no verdict (`judge`: pass, fail, "
                            "not_judged or error): --judge recorded needs one on every line; name a judge instead")]
    if problems:
        raise LocatedError(problems)
    criteria = [Criterion(k, 1, rubrics.get(k, "")) for k in dict.fromkeys(keys)]
    usage: tuple[list[JudgeUsage], EvalBudget | None] = ([], None)
    if recorded:
        labels = [Label(str(row.get("id", f"line {line}")), key, str(row.get("human", row.get("label"))),
                        row["judge"])  # type: ignore[arg-type]
                  for (line, row), key in zip(rows, keys)]
        judged_by = dict.fromkeys(keys, RECORDED)
    else:
        config = criteria_config(criteria, 0) if criteria else None
        judges = make_judges(choice, config, settings) if config is not None else None
        try:
            by_key = {c.key: c for c in criteria}
            items = [(JudgeInput(by_key[key], str(row["actual"]), _texts(row.get("expected")),
                                 str(row.get("question") or ""), case_id=str(row.get("id", f"line {line}"))),
                      str(row.get("human", row.get("label"))))
                     for (line, row), key in zip(rows, keys)]
            labels = _judged(items, judges)
            judged_by = {key: judges.name_for(key) for key in by_key} if judges is not None else {}
            usage = judge_usage(judges.made if judges is not None else [])
        finally:
            _close(judges)
    out = []
    for c in calibrate(labels).criteria:
        confusion = {human: {verdict: c.confusion.get((human, verdict), 0) for verdict in VERDICTS}
                     for human in HUMAN}
        out.append(CalibrationCriterion(criterion=c.criterion, judge=judged_by.get(c.criterion, ""),
                                        labelled=c.total, decided=c.decided,
                                        decided_share=c.decided / c.total if c.total else None,
                                        agreement=c.agreement, kappa=c.kappa, confusion=confusion))
    return CalibrationReport(labels=labels_path, criteria=out, judge_usage=usage[0], budget=usage[1])


def _texts(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    return tuple(str(v) for v in items if str(v).strip())


def _judged(items: list[tuple[JudgeInput, str]], judges: JudgeSet | None) -> list[Label]:
    """Each labelled input judged by its criterion's judge (one batch per judge), in input order."""
    if judges is None:
        return []
    batches: dict[int, tuple[Judge, list[int]]] = {}
    for index, (item, _) in enumerate(items):
        judge = judges.per_criterion.get(item.criterion.key, judges.default)
        batches.setdefault(id(judge), (judge, []))[1].append(index)
    verdicts: dict[int, str] = {}
    for judge, indexes in batches.values():
        for index, verdict in zip(indexes, judge.judge_many([items[i][0] for i in indexes])):
            verdicts[index] = verdict.verdict
    return [Label(item.case_id, item.criterion.key, human, verdicts[index])  # type: ignore[arg-type]
            for index, (item, human) in enumerate(items)]


def sensitivity_report(golden_paths: list[str], choice: JudgeChoice, rubrics: Mapping[str, str] | None = None,
                       settings: LLMSettings | None = None, examples: int = 3) -> SensitivityReport:
    """The accuracy judge's sensitivity on the goldens' expected answers: every judged turn with an expected answer
    is mutated (its must_not phrases feed the must-not operator) and each mutant and control judged."""
    goldens = load_answer_goldens(golden_paths)
    accuracy = Criterion("accuracy", 1, (rubrics or {}).get("accuracy", ""))
    items = [JudgeInput(accuracy, "", turn.expected, turn.question, turn.assertions, f"{g.case.id} turn {n}")
             for g in goldens.cases for n, turn in enumerate(g.turns, start=1) if turn.expected]
    config = criteria_config([accuracy], 0)
    judges = make_judges(JudgeChoice(choice.name_for("accuracy")), config, settings)
    try:
        found = sensitivity(judges.default, items, examples)
        usage, budget = judge_usage(judges.made)
    finally:
        _close(judges)
    operators = [OperatorResult(operator=t.operator, mutants=t.mutants, caught=t.caught, missed=t.missed,
                                undecided=t.undecided, missed_examples=list(t.missed_examples))
                 for t in found.operators]
    return SensitivityReport(judge=found.judge, expected_answers=len(items), mutants=found.total,
                             caught=found.caught, operators=operators, controls=dict(sorted(found.controls.items())),
                             invalid_cases=goldens.invalid, judge_usage=usage, budget=budget)
