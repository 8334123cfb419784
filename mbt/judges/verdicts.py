"""What every answer judge takes and gives: a JudgeInput (one answer, one criterion) in, a Verdict out.

A verdict is `pass`, `fail`, `not_judged` (the judge could not decide: it lacked what it needs or was not sure) or
`error` (the judge broke: a server that did not answer, a malformed assertion). Only `pass` is ever counted as passed.
Every verdict names the judge and the judge's version, so a stored result says who decided it and by which rules or
prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:  # annotations only
    from mbt.judges.assertions import Assertion
    from mbt.judges.criteria import Criterion

VerdictValue = Literal["pass", "fail", "not_judged", "error"]
VERDICTS: tuple[VerdictValue, ...] = ("pass", "fail", "not_judged", "error")


@dataclass(frozen=True)
class Verdict:
    """One judge's decision on one answer for one criterion."""

    verdict: VerdictValue
    reason: str
    judge: str
    judge_version: str

    @property
    def decided(self) -> bool:
        """pass or fail: the judge said something about the answer (not_judged and error say nothing)."""
        return self.verdict in ("pass", "fail")


@dataclass(frozen=True)
class JudgeInput:
    """One answer to judge on one criterion.

    `expected`: the expected answer(s) — exact text, a description of the expected behaviour, or both (seed 001); an
    answer matching any one of them is right. `assertions`: the case's rule assertions (contains, regex, must_have,
    must_not…); each names the criterion it decides, and a judge uses those of the criterion it judges (the rule
    judge decides by them; the embedded judge honours them as facts; the LLM judge shows must_have / must_not).
    `question`: what the user asked (context for an LLM judge; never judged itself). `case_id`: for reports only.
    """

    criterion: Criterion
    actual: str
    expected: tuple[str, ...] = ()
    question: str = ""
    assertions: tuple[Assertion, ...] = ()
    case_id: str = ""


@dataclass(frozen=True)
class JudgedItem:
    """A JudgeInput with its verdict (what judge_many returns, in input order)."""

    item: JudgeInput
    verdict: Verdict


class Judge(Protocol):
    """Every answer judge: a name and a version (in each verdict), and `judge` for one answer on one criterion.

    `judge_many` judges a batch in input order; a judge that can work concurrently (the LLM judge) does so there."""

    name: str
    version: str

    def judge(self, item: JudgeInput) -> Verdict: ...

    def judge_many(self, items: Sequence[JudgeInput]) -> list[Verdict]: ...


class OneByOne:
    """judge_many for judges that have nothing to gain from batching: each item in turn."""

    def judge(self, item: JudgeInput) -> Verdict:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def judge_many(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        return [self.judge(item) for item in items]
