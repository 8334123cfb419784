"""Judging whole cases: every enabled criterion of a case by the judge chosen for it, then seed 001's overall verdict.

Judges are asked in batches (one `judge_many` per judge over every case), so an LLM judge works concurrently across
cases; verdicts come back in case order. A judge is chosen per criterion (`judges` maps a criterion key to a judge,
`default` judges the rest).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mbt.judges.assertions import Assertion
from mbt.judges.criteria import CriteriaConfig, Overall, overall_verdict
from mbt.judges.verdicts import Judge, JudgeInput, Verdict


@dataclass(frozen=True)
class AnswerCase:
    """One case's answer to judge: the agent's actual answer, the expected answer(s), the question, the assertions."""

    case_id: str
    actual: str
    expected: tuple[str, ...] = ()
    question: str = ""
    assertions: tuple[Assertion, ...] = ()


@dataclass(frozen=True)
class CaseVerdicts:
    """A case's verdict per enabled criterion (in the configuration's order) and its overall verdict."""

    case_id: str
    criteria: Mapping[str, Verdict]
    overall: Overall


def judge_cases(cases: Sequence[AnswerCase], config: CriteriaConfig, default: Judge,
                judges: Mapping[str, Judge] | None = None) -> list[CaseVerdicts]:
    """Every enabled criterion of every case judged, then each case's overall verdict."""
    chosen = dict(judges or {})
    batches: dict[int, tuple[Judge, list[tuple[int, str, JudgeInput]]]] = {}
    for index, case in enumerate(cases):
        for criterion in config.enabled:
            judge = chosen.get(criterion.key, default)
            item = JudgeInput(criterion, case.actual, case.expected, case.question, case.assertions, case.case_id)
            batches.setdefault(id(judge), (judge, []))[1].append((index, criterion.key, item))
    found: list[dict[str, Verdict]] = [{} for _ in cases]
    for judge, entries in batches.values():
        for (index, key, _), verdict in zip(entries, judge.judge_many([item for _, _, item in entries])):
            found[index][key] = verdict
    out = []
    for case, verdicts in zip(cases, found):
        ordered = {c.key: verdicts[c.key] for c in config.enabled}
        out.append(CaseVerdicts(case.case_id, ordered, overall_verdict(ordered, config)))
    return out
