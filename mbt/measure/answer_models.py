"""What a coverage report holds about judged answers (`mbt coverage --answers EVAL.json`, issue 34 item 6): the
elements an `mbt eval --model` report judged answers on, each *verified by a judged answer* or not, per model and
criterion a figure of its own beside verified and exercised — never added into them: a golden verifies an element by
its assertions, an answer by a judge. mbt.answers.coverage fills it; only pydantic here, so the coverage report's
model loads without the judges."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mbt.measure.numbers import Numbers

AnswerVerdict = Literal["pass", "fail", "not_judged", "error"]
# The pseudo-criterion of a state machine's claims: what the assistant may only say once the model is in a state.
# Claims are no coverage element (docs/coverage-rules/fsm.md), so they have no criterion of their kind.
CLAIM = "claim"
# Level 3 of seed 004's levels (mbt.measure.levels): the answer figures' denominator.
ANSWER_DENOMINATOR = "elements a judged answer can verify"
ANSWERED = " verified by a judged answer"  # the end of those figures' names


class JudgedAnswer(BaseModel):
    """One answer judged on an element, as an eval report gives it."""

    case: str = Field(description="The golden case's id, as the eval report writes it (local to its file).")
    verdict: AnswerVerdict = Field(description="The element's verdict on this answer: a forbid or must_not `pass` "
                                               "not said / not shown, `fail` said; a claim `pass` made in its "
                                               "state, `fail` made before it; a must_have `pass` shown; not_judged "
                                               "and error: no judge decided.")
    judge: str = Field(description="The judge that decided (`rules`, `embedded`, `openai:MODEL`).")
    reason: str
    where: str = Field(description="Where the answer is: the run's text (a state machine's), or the case.")
    report: str = Field(description="The eval report it was read from.")


class ElementAnswers(BaseModel):
    """An element an answer can verify (a `say` forbid, a claim, a contract's must_have / must_not item), and the
    answers the eval reports judged on it."""

    element: str = Field(description="The element's id; `claim:STATE` for a claim.")
    criterion: str = Field(description="The element's criterion; `claim` for a claim (no coverage element).")
    status: Literal["verified", "undecided", "no_answer"] = Field(
        description="verified: a judge decided some answer on it (pass or fail); undecided: answers were judged on it "
                    "(or runs reached it) but no judge decided one; no_answer: no eval report judged an answer on it.")
    verdict: Literal["pass", "fail"] | None = Field(
        default=None, description="Over its decided answers: fail if one fails (a failure found, not coverage "
                                  "lost), else pass; None unless verified.")
    passed: int = 0
    failed: int = 0
    undecided: int = 0
    answers: list[JudgedAnswer] = Field(default_factory=list, description=(
        "Its judged answers, the failing ones first, then the passing, then the undecided; the first ones only "
        "with a covering cap (the rest counted in answers_more)."))
    answers_more: int = 0


class AnswerFigure(BaseModel):
    """One criterion of one model: its elements an answer can verify, and how many a judged answer verified."""

    criterion: str
    verified: Numbers = Field(description="Elements verified by a judged answer, of the feasible elements of the "
                                          "criterion an answer can verify (the weights are their severities').")
    failed: int = Field(description="Verified elements whose verdict is fail.")
    undecided: int = Field(description="Elements judged (or reached) with no answer decided.")


class ModelAnswers(BaseModel):
    """A loaded model with elements an answer can verify: a figure per criterion (claims last), and each element."""

    model: str
    kind: str
    named_by: list[str] = Field(default_factory=list, description=(
        "The eval reports that name this model (judged answers on it); empty: none did, so its figures count no "
        "answer at all."))
    criteria: list[AnswerFigure]
    elements: list[ElementAnswers]

    def figure(self, criterion: str) -> AnswerFigure | None:
        return next((f for f in self.criteria if f.criterion == criterion), None)

    def element(self, element: str) -> ElementAnswers | None:
        return next((e for e in self.elements if e.element == element), None)


class AnswerNote(BaseModel):
    """Something an eval report names that was not counted, and why (never dropped silently)."""

    report: str
    model: str | None = None
    element: str | None = None
    message: str


class AnswersCoverage(BaseModel):
    """The eval reports read (`--answers`) and what they verify on the loaded models."""

    reports: list[str]
    models: list[ModelAnswers] = Field(default_factory=list, description=(
        "Each loaded model that has elements an answer can verify: a state machine's say forbids and claims, a "
        "contract's must_have and must_not items."))
    notes: list[AnswerNote] = Field(default_factory=list)

    def model(self, name: str) -> ModelAnswers | None:
        return next((m for m in self.models if m.model == name), None)
