"""The `mbt eval` report (JSON schema `eval`, docs/schemas/eval.schema.json): every figure is computed here or in
mbt.answers.evaluate, never by a reporter."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

VerdictName = Literal["pass", "fail", "not_judged", "error"]


class CriterionVerdict(BaseModel):
    """One criterion of one case: the verdict, why, and the judge that decided it (`none` when no judge was asked)."""

    verdict: VerdictName
    reason: str
    judge: str
    judge_version: str = ""


class OverallVerdict(BaseModel):
    """A case's overall verdict: the weights of the passed criteria compared with the threshold (strictly greater)."""

    verdict: VerdictName
    reason: str
    passed_weight: str = Field(description="Exact decimal, as text.")
    threshold: str = Field(description="Exact decimal, as text.")


class TurnAnswer(BaseModel):
    """One turn of a case: the question, the expected answer(s), the agent's actual answer (None: none recorded),
    and whether the turn is judged (a turn with no expected answer and no assertion is context only)."""

    question: str
    expected: list[str]
    actual: str | None
    judged: bool


class ModelVerdict(BaseModel):
    """With --model: the answering run judged on the behaviour model as `mbt runs` judges it."""

    verdict: str = Field(description="pass | deviation | not_judged | invalid (mbt runs' verdicts).")
    reason: str


class CaseResult(BaseModel):
    """One golden case: `id` as written (local to its file and sheet), where it is, the run that answered it."""

    id: str
    file: str
    where: str
    run: str | None = Field(description="Where the answering run was read (file, or file:line), or None.")
    matched_by: str | None = Field(description="case_id, file name or conversation id; None without a run.")
    turns: list[TurnAnswer]
    criteria: dict[str, CriterionVerdict]
    overall: OverallVerdict
    model: ModelVerdict | None = Field(default=None, description="With --model: the run on the behaviour model.")


class Located(BaseModel):
    """Something that could not be used, with where it is."""

    where: str
    message: str


class CriterionSummary(BaseModel):
    key: str
    weight: str
    passed: int
    failed: int
    not_judged: int
    errors: int
    pass_rate: float | None = Field(description="passed / cases, in percent; None without cases.")


class EvalGate(BaseModel):
    """The default gate: every valid case passes overall and no golden case is invalid (never green on not_judged)."""

    passed: bool
    failures: list[str]


class ElementAnswer(BaseModel):
    """One answer judged on a say or claim element: the case, where the text is in its run, and the element's verdict
    — a forbid: `pass` not said, `fail` said; a claim: `pass` made in its state, `fail` made before it."""

    case: str
    where: str
    verdict: Literal["pass", "fail"]
    judge: str
    reason: str


class SayingElement(BaseModel):
    """A `say` forbid or a claim of a behaviour model, and whether the cases' answers verified it."""

    id: str = Field(description="The forbid's element id, or `claim:STATE` (claims are no coverage element).")
    kind: Literal["say", "claim"]
    describes: str = Field(description="The forbid's description, or the claim's phrases.")
    phrases: list[str]
    status: Literal["verified", "exercised", "not_reached"] = Field(
        description="verified: an answer was judged on it (pass or fail); exercised: a case's run reached it (the "
                    "forbid in force, the claimed state) but no judge decided an answer; not_reached: no run did.")
    verdict: Literal["pass", "fail"] | None = Field(
        default=None, description="Over its judged answers: fail if one fails, else pass; None unless verified.")
    judged: list[ElementAnswer] = Field(default_factory=list,
                                        description="Per case, its first failing judged answer, else its first.")
    reached_by: list[str] = Field(default_factory=list, description="The cases whose runs reached it.")


class PhraseCheck(BaseModel):
    """A golden turn's `must_have` / `must_not` phrase judged on the turn's answer by the same judges (rules on the
    phrase, then the answer judge on it as a description), and the model elements it names."""

    case: str
    turn: int
    key: Literal["must_have", "must_not"]
    phrase: str
    names: list[str] = Field(description="The model's elements the phrase names, as `mbt coverage` decides it.")
    verdict: VerdictName
    judge: str
    reason: str


class ModelSayings(BaseModel):
    """With --model: one behaviour model's say and claim elements, and the golden phrases, judged on the answers."""

    model: str
    elements: list[SayingElement]
    phrases: list[PhraseCheck]


class EvalReport(BaseModel):
    schema_version: Literal["1.0"] = "1.0"
    judge: str
    threshold: str
    criteria: list[CriterionSummary]
    cases_total: int
    cases_ok: int = Field(description="Cases run successfully: no criterion in error.")
    cases_with_errors: int
    passed: int
    failed: int
    not_judged: int
    pass_rate: float | None = Field(description="Overall passes / cases, in percent; None without cases.")
    cases: list[CaseResult]
    runs_without_case: list[Located]
    invalid_cases: list[Located]
    invalid_runs: list[Located]
    models: list[str] = Field(default_factory=list, description="The behaviour models the runs were judged on.")
    sayings: list[ModelSayings] = Field(
        default_factory=list, description="With --model: each model's say and claim elements verified by judged "
                                          "answers, and the golden phrases judged (issue 34, item 6).")
    gate: EvalGate
