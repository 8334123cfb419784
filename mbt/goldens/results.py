"""What replaying goldens finds besides coverage: contradictions, divergences, unbound turns, unchecked assertions."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


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
    """Something in a golden that was not checked against the model (never dropped silently)."""

    case: str
    where: str
    model: str
    turn: int | None
    message: str
