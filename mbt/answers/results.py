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
    gating: bool = Field(default=True, description="False: reported beside the overall verdict, never counted in it "
                                                   "(a contract's soft rubric).")


class ContractItemResult(BaseModel):
    """One must_have / must_not item of the case's contract on its last answer: pass means the required behaviour is
    shown (must_have) or the forbidden one is not (must_not)."""

    id: str = Field(description="The item's key path: must_have[0], must_not[2].")
    criterion: Literal["must_have", "must_not"]
    text: str
    verdict: VerdictName
    reason: str
    judge: str
    judge_version: str = ""


class ContractResult(BaseModel):
    """The case's last answer against the contract it names (given with --model): its hard gate — no must_not
    violated and every must_have present, every item decided — and each item's verdict."""

    id: str
    hard_gate_passed: bool
    verdict: VerdictName = Field(description="fail if an item failed, else error, else not_judged, else pass.")
    items: list[ContractItemResult]


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
    contract: ContractResult | None = Field(default=None, description="The contract the case names, when --model "
                                                                       "gives it: its items on the last answer.")
    must_not_violated: list[str] = Field(default_factory=list, description="The forbidden behaviour the answers "
                                         "show: `contract ID must_not[i]: text` (or a golden's must_not phrase).")


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
    gating: bool = Field(default=True, description="False: a contract's soft rubric criterion, judged on the cases "
                                                   "naming the contract (its pass rate is over those) and not gating.")


class EvalGate(BaseModel):
    """The default gate: every valid case passes overall and no golden case is invalid (never green on not_judged)."""

    passed: bool
    failures: list[str]


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
    notes: list[Located] = Field(default_factory=list, description="What was not judged and why (a contract no "
                                                                   "--model gives), never dropped silently.")
    gate: EvalGate
