"""The observed-step model: what every reader turns one run (a trace, a transcript) into."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

StepKind = Literal["user", "assistant", "tool_call", "tool_result"]
# Where a tool argument came from (seed 002's second layer; not in the OpenTelemetry conventions: docs/runs.md).
ARGUMENT_SOURCES = ("user_input", "retrieval", "memory", "model_inference")


@dataclass(slots=True)
class ObservedStep:
    """One thing a run exposed: a user text, an assistant text, a tool call or a tool result."""

    kind: StepKind
    where: str  # "trace T span S", "FILE turn N": what a report names to find the step
    text: str | None = None  # user / assistant
    tool: str | None = None  # tool_call / tool_result
    args: dict[str, Any] | None = None  # tool_call: the arguments; None when the run did not record them
    sources: dict[str, str] = field(default_factory=dict)  # tool_call: argument -> where its value came from
    ok: bool = True  # tool_result: False for an error
    result: Any = None  # tool_result: the decoded result (a mapping when the tool returns an object)
    error: str | None = None  # tool_result: the error type (`error.type`)
    idempotency_key: str | None = None
    state_before: dict[str, Any] | None = None  # business state the run exported around a tool call
    state_after: dict[str, Any] | None = None
    span_id: str | None = None


@dataclass(slots=True)
class ObservedRun:
    """One run: its steps in order, and what it says about itself (suite, expected intent, starting state)."""

    id: str  # trace id, conversation id or session id
    file: str
    where: str  # file (and line) the run was read from
    steps: list[ObservedStep] = field(default_factory=list)
    model: str | None = None  # `mbt.model`: the model the run is judged on (None: every loaded FSM)
    suite: str | None = None
    expected_intent: str | None = None
    intent: str | None = None  # the intent the agent exposed, if it did
    precondition: dict[str, Any] = field(default_factory=dict)
    format: str = ""  # otlp | otlp-spans | messages | session


@dataclass(frozen=True, slots=True)
class InvalidRun:
    """A run, a line or a file no reader could use: reported with its location, never skipped silently."""

    where: str
    message: str

    def render(self) -> str:
        return f"{self.where}: invalid run: {self.message}"


@dataclass
class RunSet:
    runs: list[ObservedRun] = field(default_factory=list)
    invalid: list[InvalidRun] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
