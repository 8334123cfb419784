"""The observed-step model: what every reader turns one run (a trace, a transcript, a session) into.

Besides its steps, a run carries what it says about itself (suite, intent, precondition), its context (versions,
model, environment, conversation, token usage and time per segment: seed 002's first layer), the turn records of a
turn loop (seed 003), its retrieval evidence (seed 000's RAG trace: what was retrieved, which source was selected,
what the answer claimed and what grounds each claim), and what its reader knows it could not see (`gaps`): the
evidence contract of docs/runs.md starts from these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from mbt.model.fsm import ARGUMENT_SOURCES

StepKind = Literal["user", "assistant", "tool_call", "tool_result"]
__all__ = ["ARGUMENT_SOURCES", "Claim", "InvalidRun", "ObservedRun", "ObservedStep", "RetrievedDocument", "Retrieval",
           "RunContext", "RunSet", "TurnRecord"]


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
class TurnRecord:
    """One turn of a turn loop as seed 003's `TurnResult` records it: what the router matched (candidates, not
    calls), how the turn stopped, what it cost. `step` is the index (0-based) of the turn's first observed step."""

    where: str
    step: int
    prompt: str
    output: str | None = None
    matched_commands: tuple[str, ...] | None = None
    matched_tools: tuple[str, ...] | None = None
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(slots=True)
class RunContext:
    """Seed 002's first layer: which release, model and prompt produced the run, where, and what it cost.
    A field is None when the run does not say (docs/runs.md names the attribute each is read from)."""

    service_name: str | None = None
    service_version: str | None = None  # the agent's version (`service.version`)
    request_model: str | None = None
    response_model: str | None = None
    prompt_version: str | None = None
    tool_schema_version: str | None = None
    environment: str | None = None
    conversation_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    wall_ms: float | None = None  # first start to last end
    model_ms: float | None = None  # model calls (chat spans)
    tool_ms: float | None = None  # tool executions
    retries: int = 0  # tool calls repeated after an error result of the same tool
    retry_ms: float | None = None  # time spent in those repeated calls


@dataclass(slots=True)
class RetrievedDocument:
    """A document a retrieval returned. A field is None when the run does not record it: the grounding judge then
    says what it could not judge (docs/runs.md, "Grounding")."""

    id: str
    where: str
    score: float | None = None
    approved: bool | None = None
    status: str | None = None  # its lifecycle, as written: active, expired, retired, ...
    content: str | None = None  # its text, when the run records it (a claim's facts are then checked against it)


@dataclass(slots=True)
class Claim:
    """A statement the answer made, and the documents the run says ground it: None when the run does not say, an
    empty tuple when it says "nothing"."""

    text: str
    where: str
    grounded_in: tuple[str, ...] | None = None


@dataclass(slots=True)
class Retrieval:
    """A run's retrieval evidence, from every retrieval it recorded. `documents_recorded`: the run records what its
    retrievals returned (an empty list then means they returned nothing); `selected` and `claims` are None when the
    run does not record them. `must_not`: the trace's own forbidden items (seed 000's RAG trace)."""

    where: str
    queries: list[str] = field(default_factory=list)
    documents: list[RetrievedDocument] = field(default_factory=list)
    documents_recorded: bool = False
    selected: tuple[str, ...] | None = None
    claims: list[Claim] | None = None
    route: str | None = None
    must_not: list[tuple[str, str]] = field(default_factory=list)  # (where, text)


# `mbt runs --group-by KEY`: the context field each key names (`suite` is the run's own field).
GROUP_KEYS: dict[str, str | None] = {"version": "service_version", "model": "response_model",
                                     "request_model": "request_model", "prompt": "prompt_version",
                                     "tool_schema": "tool_schema_version", "environment": "environment",
                                     "service": "service_name", "suite": None}


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
    precondition_recorded: bool = False  # the run says where it starts (an empty precondition included)
    case_id: str | None = None  # the golden case the run answers, when it says (`mbt eval`; a transcript's case_id)
    format: str = ""  # otlp | otlp-spans | messages | session | turns
    context: RunContext = field(default_factory=RunContext)
    turns: list[TurnRecord] = field(default_factory=list)  # seed 003's per-turn records, when the run has them
    # What the run's format cannot show, as its reader knows it (e.g. a session store records no tool calls):
    # the judge reports a criterion that needs it as not judged.
    records_tool_calls: bool = True
    records_assistant_texts: bool = True
    structured_output: bool | None = None  # the run says its outputs must be JSON (seed 003's `structured_output`)
    max_turns: int | None = None  # budgets the run's own configuration declares (seed 003's QueryEngineConfig)
    max_budget_tokens: int | None = None
    notes: list[str] = field(default_factory=list)  # what the reader read as nothing, said once per run
    retrieval: Retrieval | None = None  # what the run retrieved and grounded its answer in, when it records any
    tags: tuple[str, ...] = ()  # the run's own tags (mbt.runs.marks): `incident`, `adversarial` mark it
    # Why the agent stopped answering, as the driver that recorded the run says (`mbt eval --agent`: a time-out, an
    # HTTP error, a crashed command): the run is cut short there, and its case is an agent error, not a judged one.
    agent_error: str | None = None

    def __post_init__(self) -> None:
        if self.precondition:  # a run made with a starting configuration records one
            self.precondition_recorded = True


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
    unread: list[str] = field(default_factory=list)  # per file: telemetry attributes no mapping reads (loud renames)
