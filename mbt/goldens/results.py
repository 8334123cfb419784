"""What replaying goldens finds besides coverage: contradictions, divergences, unbound turns, unchecked assertions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:  # annotations only: a case's run names the engine's snapshots, a floor below goldens
    from mbt.engine.fsm import Snapshot
    from mbt.goldens.cases import GoldenCase


class Contradiction(BaseModel):
    """The golden expects one thing, the model computes another: one of them is wrong, a human decides which."""

    case: str
    where: str  # file:line of the case
    model: str
    turn: int | None  # 1-based; None for the final assertions
    path: str  # what was compared, e.g. state, variables.recovery_email, tool_arguments.start_password_reset.recovery_email
    expected: Any
    actual: Any
    message: str


class ForbiddenExpected(BaseModel):
    """A golden expects behaviour a `forbid` declares the system must never show. It never verifies that forbid
    (nor anything else on the model), and the default gate fails on it."""

    case: str
    where: str  # file:line of the case
    model: str
    turn: int | None  # 1-based; None for the final assertions
    element: str  # the forbidden element's id
    severity: str  # the forbid's severity
    forbid_at: str  # file:line:col of the forbid in the model
    expected: str  # what the golden expects, in words
    message: str


class Divergence(BaseModel):
    """The golden fires an event the model does not allow there, without treating it as a refusal."""

    case: str
    where: str
    model: str
    turn: int
    state: str
    event: str
    message: str


class UnboundTurn(BaseModel):
    case: str
    where: str
    model: str
    turn: int
    user: str | None
    reason: str


class Note(BaseModel):
    """Something in a golden that was not checked against the model (never dropped silently), or, `compared`, how
    a value of it was read where its outcome is compared all the same (a missing input read as null)."""

    case: str
    where: str
    model: str
    turn: int | None
    message: str
    compared: bool = False


# ------------------------------------------------------------------ replay of one case


@dataclass(slots=True)
class CaseRun:
    """What replaying one golden case on one model found: the one result type every kind's replayer returns (the
    FSM-only fields, snapshots onwards, keep their defaults elsewhere)."""

    case: GoldenCase
    exercised: set[int] = field(default_factory=set)
    verified: set[int] = field(default_factory=set)
    contradictions: list[Contradiction] = field(default_factory=list)
    divergences: list[Divergence] = field(default_factory=list)
    unbound: list[UnboundTurn] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    invalid: str | None = None  # the case cannot be replayed on this model (bad precondition, ...)
    forbidden_expected: list[ForbiddenExpected] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    step_elements: dict[int, tuple[int, ...] | list[int]] = field(default_factory=dict)  # turn -> what its step exercised
    out_of_range: bool = False  # some variable left its range: every variable is re-checked after each step
    start: Snapshot | None = None  # with keep_snapshots: the configuration the case starts from
    # The golden contradicts the FSM this model is judged with (an invariant block's, an enforced policy's): as with
    # a contradiction here, none of its checks on this model can be trusted (it verifies and kills nothing).
    contradicts_fsm: bool = False


def disagrees(run: CaseRun) -> bool:
    """Whether the golden disagrees with the model it was replayed on: a contradiction, forbidden behaviour expected,
    or a contradiction of the FSM the model is judged with. Such a golden verifies nothing there (coverage) and kills
    no mutant of it (mbt mutate): one of the two is wrong, and a human decides which."""
    return bool(run.contradictions or run.forbidden_expected or run.contradicts_fsm)
