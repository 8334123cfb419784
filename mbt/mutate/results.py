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


class MutationReport(BaseModel):
    models: list[ModelMutation] = Field(default_factory=list)
    kinds: dict[str, float | None] = Field(default_factory=dict)  # kind -> score over its models
    score: float | None = None
    goldens_read: int = 0
    goldens_invalid: int = 0
    invalid_cases: list[str] = Field(default_factory=list)  # file:line: message

    def survivors(self) -> list[tuple[ModelMutation, MutantResult]]:
        return [(m, r) for m in self.models for r in m.results if r.status == "survived"]


def score(killed: int, judged: int, equivalent: int) -> float | None:
    """Killed over the mutants that are not equivalent (docs/user-guide.md, "Is my test set good?")."""
    denominator = judged - equivalent
    return None if denominator == 0 else killed / denominator
