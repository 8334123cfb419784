"""The mutation report: per model, per operator and per mutant (killed by which goldens, equivalent, or surviving)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class MutantResult(BaseModel):
    id: str  # `<operator>@<element id>[~n]`
    operator: str
    element: str  # the element it touches
    at: str  # file:line:col of what it changes
    description: str
    span: str | None = None  # the source-document span the touched element cites
    status: Literal["killed", "survived", "equivalent"]
    killed_by: list[str] = Field(default_factory=list)  # golden ids
    reason: str = ""  # equivalent: why; survived: what differs (or that no difference was found)
    witness: dict[str, Any] | None = None  # survived: a golden case that kills it (agrees with the original)


class OperatorScore(BaseModel):
    operator: str
    doc: str
    mutants: int
    equivalent: int
    killed: int
    survived: int
    score: float | None  # killed / (mutants - equivalent); None when every mutant is equivalent


class ModelMutation(BaseModel):
    model: str
    kind: str
    file: str
    goldens: int  # goldens replayed on the model (valid, applicable)
    clean_goldens: int  # of those, agreeing with the model (only they can kill)
    candidates: int  # mutants the operators made
    sampled: str | None = None  # how the mutants were sampled, when they were
    mutants: int  # mutants judged
    equivalent: int
    killed: int
    survived: int
    score: float | None
    replays: int  # mutant x golden replays run (goldens that cannot differ on a mutant are not replayed)
    operators: list[OperatorScore] = Field(default_factory=list)
    results: list[MutantResult] = Field(default_factory=list)
    note: str | None = None


def score(killed: int, judged: int, equivalent: int) -> float | None:
    """Killed over the mutants that are not equivalent (docs/user-guide.md, "Is my test set good?")."""
    denominator = judged - equivalent
    return None if denominator == 0 else killed / denominator


class Dropped(BaseModel):
    id: str
    reason: str  # duplicate of X / subsumed by X / everything it verifies and kills is kept by others


class Subsumed(BaseModel):
    id: str
    by: str  # a golden that verifies every element and kills every mutant this one does, and more


class Redundancy(BaseModel):
    """Goldens that add nothing to the others, and a smallest subset with the same verified elements and kills."""

    goldens: int  # valid goldens profiled
    idle: list[str] = Field(default_factory=list)  # verify nothing and kill nothing
    duplicates: list[Dropped] = Field(default_factory=list)  # the same non-empty profile as an earlier golden
    subsumed: list[Subsumed] = Field(default_factory=list)
    method: Literal["exact", "greedy"] = "exact"  # how the smallest set was found
    method_note: str = ""
    lower_bound: int = 0  # no equivalent set is smaller than this
    kept: list[str] = Field(default_factory=list)
    dropped: list[Dropped] = Field(default_factory=list)


class CandidateValue(BaseModel):
    """What one candidate golden adds to the baseline set."""

    id: str
    where: str
    new_elements: list[str] = Field(default_factory=list)  # `model:element` it verifies that no baseline golden does
    new_kills: list[str] = Field(default_factory=list)  # `model:mutant` it kills that no baseline golden does
    verdict: Literal["adds coverage", "adds kills", "adds coverage and kills", "adds nothing"]
    duplicate_of: list[str] = Field(default_factory=list)  # baseline goldens with exactly its profile
    covered_by: list[str] = Field(default_factory=list)  # adds nothing: baseline goldens that verify and kill it all
    invalid: str | None = None  # why the case is invalid (it then counts nowhere and adds nothing)
    message: str = ""


class MutationReport(BaseModel):
    models: list[ModelMutation] = Field(default_factory=list)
    kinds: dict[str, float | None] = Field(default_factory=dict)  # kind -> score over its models
    score: float | None = None
    goldens_read: int = 0  # valid + invalid, as mbt coverage counts them
    goldens_valid: int = 0
    goldens_invalid: int = 0  # unreadable, or invalid on a model they apply to: they count nowhere
    invalid_cases: list[str] = Field(default_factory=list)  # file:line: message
    notes: list[str] = Field(default_factory=list)  # files of the golden folders not read as goldens, and why
    redundancy: Redundancy | None = None

    def survivors(self) -> list[tuple[ModelMutation, MutantResult]]:
        return [(m, r) for m in self.models for r in m.results if r.status == "survived"]


class CompareReport(BaseModel):
    baseline: int  # valid baseline goldens
    candidates: list[CandidateValue] = Field(default_factory=list)
    adds_coverage: int = 0
    adds_kills: int = 0
    adds_nothing: int = 0
    duplicates: int = 0  # of those adding nothing, the ones with exactly a baseline golden's profile
    mutation: MutationReport | None = None
