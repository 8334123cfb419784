"""The `mbt eval` report (JSON schema `eval`, docs/schemas/eval.schema.json): every figure is computed here or in
mbt.answers.evaluate, never by a reporter."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# What an LLM judge cost: the models every report an LLM judge serves carries (eval, runs, calibrate, sensitivity).
from mbt.judges.usage import EvalBudget, JudgeUsage

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
    must_not_violated: list[str] = Field(default_factory=list, description=(
        "The forbidden behaviour the answers show: the must_not phrases they say (the golden's `must_not` "
        "assertions that failed, each the phrase) and the contract items violated (`contract ID must_not[i]: "
        "text`); the gate's `must_not_violated` counts them."))
    agent_error: str | None = Field(default=None, description=(
        "Why the agent did not answer (mbt eval --agent: a time-out, an HTTP error, a crashed command), as its run "
        "records it: the case's overall verdict is then `error`, apart from the judges' errors."))

    @property
    def judge_errors(self) -> int:
        """The verdicts in error: its criteria's (soft rubric included) and its contract items'."""
        return (sum(v.verdict == "error" for v in self.criteria.values())
                + (sum(i.verdict == "error" for i in self.contract.items) if self.contract is not None else 0))

    @property
    def run_successfully(self) -> bool:
        """Seed 001's "run successfully": the agent answered and no verdict of the case is in error."""
        return self.agent_error is None and self.judge_errors == 0


class Located(BaseModel):
    """Something that could not be used, with where it is."""

    where: str
    message: str


class CriterionSummary(BaseModel):
    """One criterion over every case: its verdicts counted, and seed 001's pass count and rate over the cases run
    successfully (no criterion in error)."""

    key: str
    weight: str
    judge: str = Field(default="", description="The judge that decides this criterion (the default one or its own).")
    passed: int
    failed: int
    not_judged: int
    errors: int
    passed_ok: int = Field(default=0, description="Cases run successfully that pass this criterion.")
    pass_rate: float | None = Field(description="passed_ok / cases run successfully, in percent; None without such "
                                                "cases.")
    gating: bool = Field(default=True, description="False: a contract's soft rubric criterion, judged on the cases "
                                                   "naming the contract (its pass rate is over those) and not gating.")


class GateCheck(BaseModel):
    """One rule of the gate on answers, with what was measured (None: nothing to measure it on, which fails)."""

    key: str = Field(description="answers.pass_rate, answers.CRITERION.pass_rate, must_not_violated, judge_errors, "
                                 "agent_errors, invalid_cases.")
    expected: str = Field(description="The condition, e.g. `>= 0.9` or `<= 0`.")
    actual: float | None
    passed: bool
    default: bool = Field(description="A default rule (not written in the gate file).")


class EvalGate(BaseModel):
    """The gate on answers (mbt.answers.gate): its rules, and every failure as a line. Without a gate file every
    case must pass overall (`answers.pass_rate >= 1`), with no judge error, no must_not phrase said and no invalid
    case; with --model a case whose run did not pass on the model fails it too."""

    passed: bool
    failures: list[str]
    source: str | None = Field(default=None, description="The gate file read, or None: the default gate.")
    checks: list[GateCheck] = Field(default_factory=list)


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
    errors: int = Field(default=0, description="Cases whose overall verdict is error.")
    passed_ok: int = Field(default=0, description="Cases run successfully that pass overall.")
    pass_rate: float | None = Field(description="passed_ok / cases run successfully (seed 001's rate), in percent; "
                                                "None without such cases.")
    judge_errors: int = Field(default=0, description="Verdicts in error, over every case and criterion.")
    must_not_violated: int = Field(default=0, description="must_not phrases said, over every case.")
    agent_errors: int = Field(default=0, description="Cases the agent did not answer (a time-out, an HTTP error...): "
                                                     "their overall verdict is error; judge errors are counted apart.")
    agent: str | None = Field(default=None, description="mbt eval --agent: the agent driven (its SPEC, without "
                                                        "credentials); None: recorded runs were judged.")
    cases: list[CaseResult]
    runs_without_case: list[Located]
    invalid_cases: list[Located]
    invalid_runs: list[Located]
    models: list[str] = Field(default_factory=list, description="The behaviour models the runs were judged on.")
    sayings: list[ModelSayings] = Field(
        default_factory=list, description="With --model: each model's say and claim elements verified by judged "
                                          "answers, and the golden phrases judged (issue 34, item 6).")
    notes: list[Located] = Field(default_factory=list, description="What was not judged and why (a contract no "
                                                                   "--model gives), never dropped silently.")
    gate: EvalGate
    judge_usage: list[JudgeUsage] = Field(default_factory=list, description=(
        "What each LLM judge of the run cost: requests, tokens, cost, cache hits (empty without an LLM judge)."))
    budget: EvalBudget | None = Field(default=None, description="The LLM judges' budget, when one was given.")
