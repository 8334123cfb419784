"""Golden case schema: seed 000's single-turn, multi-turn and golden formats, normalised into one GoldenCase."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mbt.goldens.decisions import DecisionCheck, normalise_decisions
from mbt.goldens.requests import PolicyRequest, normalise_request


class Assertions(BaseModel):
    """What a golden expects of the configuration after a turn (or after the last turn)."""

    model_config = ConfigDict(extra="allow")

    # Mutable defaults are factories: a literal `{}` default is deep-copied by pydantic for every instance, which
    # dominated loading 100,000 cases (tests/bench).
    state: str | None = None  # the control state
    variables: dict[str, Any] = Field(default_factory=dict)
    discarded: dict[str, Any] = Field(default_factory=dict)
    tool_arguments: dict[str, Any] = Field(default_factory=dict)
    must_not: list[str] = Field(default_factory=list)
    # Tools the golden asserts were NOT called (at this turn; in the final assertions: anywhere in the case).
    must_not_call: list[str] = Field(default_factory=list)
    must_have: list[str] = Field(default_factory=list)
    intent: str | None = None

    def checks_outcome(self) -> bool:
        """Checks the model can compute and contradict: only these verify a step's elements (a `must_not`
        phrase speaks of what is said, which an FSM does not compute: it verifies forbids only)."""
        return bool(self.state is not None or self.variables or self.discarded or self.tool_arguments
                    or self.must_not_call)

    def empty(self) -> bool:
        return (self.state is None and not self.variables and not self.discarded and not self.tool_arguments
                and not self.must_not and not self.must_not_call)


class Turn(BaseModel):
    model_config = ConfigDict(extra="allow")

    user: str | None = None
    event: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    intent: str | None = None
    rejected: bool = False
    expect: Assertions = Field(default_factory=Assertions)


class GoldenCase(BaseModel):
    """One golden case, whatever its source format. `file`/`line` locate it for messages."""

    model_config = ConfigDict(extra="allow")

    id: str
    file: str = ""
    line: int = 0
    severity: str | None = None
    contract: str | None = None
    model: str | None = None
    precondition: dict[str, Any] = Field(default_factory=dict)
    turns: list[Turn] = Field(default_factory=list)
    final: Assertions = Field(default_factory=Assertions)
    decisions: list[DecisionCheck] = Field(default_factory=list)  # decision-table checks (goldens/decisions.py)
    request: PolicyRequest | None = None  # a policy request (goldens/requests.py)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def split_state_map(raw: dict[str, Any]) -> dict[str, Any]:
    """An assert_state / state map -> Assertions fields: `state` is the control state, `discarded.X` and
    `discarded: {X: ..}` the discarded values, anything else a variable."""
    if not isinstance(raw, dict):
        raise ValueError("expected a mapping of names to values")
    out: dict[str, Any] = {"variables": {}, "discarded": {}}
    for key, value in raw.items():
        key = str(key)
        if key == "state":
            if value is not None and not isinstance(value, str):
                raise ValueError(f"`state` must be a state name, not {_kind(value)}")
            out["state"] = value
        elif key == "discarded" and isinstance(value, dict):
            out["discarded"].update({str(k): v for k, v in value.items()})
        elif key.startswith("discarded."):
            out["discarded"][key[len("discarded."):]] = value
        else:
            out["variables"][key] = value
    return out


def assertions_from(raw: dict[str, Any] | None, state_key: str, what: str = "assertions") -> Assertions:
    """Assertions from a turn (`assert_state`, ...) or a case's final `assertions` (`state`, ...)."""
    if raw is not None and not isinstance(raw, dict):
        raise ValueError(f"`{what}` must be a mapping, not {_kind(raw)}")
    raw = dict(raw or {})
    fields: dict[str, Any] = {"variables": {}, "discarded": {}}
    state = raw.pop(state_key, None)
    if isinstance(state, str):
        fields["state"] = state
    elif state is not None:
        if not isinstance(state, dict):
            raise ValueError(f"`{state_key}` must be a state name or a mapping of names to values, not {_kind(state)}")
        parts = split_state_map(state)
        fields["variables"].update(parts["variables"])
        fields["discarded"].update(parts["discarded"])
        if "state" in parts:
            fields["state"] = parts["state"]
    discarded = raw.pop("discarded", None)
    if discarded is not None:
        if not isinstance(discarded, dict):
            raise ValueError("`discarded` must map variable names to values")
        fields["discarded"].update({str(k): v for k, v in discarded.items()})
    fields.update(raw)  # tool_arguments, must_not, must_have, intent; other keys are kept, not interpreted
    return Assertions.model_validate(fields)


_TURN_EXPECT_KEYS = frozenset(("assert_state", "must_not", "must_not_call", "must_have", "tool_arguments",
                               "discarded"))
_NO_EXPECTATIONS = assertions_from({"assert_state": None}, "assert_state")  # what a turn without them gets


def _kind(value: Any) -> str:
    """What a wrong-typed value is, in a message's words."""
    names = {bool: "true/false", int: "a number", float: "a number", str: "text", list: "a list", dict: "a mapping"}
    return next((n for t, n in names.items() if type(value) is t), type(value).__name__)


MAX_DEPTH = 64  # no golden needs more; deeper data is refused before anything recurses over it


def check_raw(raw: Any) -> None:
    """Refuse data no golden holds: nesting over MAX_DEPTH levels, and text with a lone surrogate (JSON's
    "\\ud800" escape decodes to one; it is not text, and every report that writes it as UTF-8 would fail)."""
    stack: list[tuple[Any, int]] = [(raw, 1)]  # iterative: the data may be nested a thousand deep
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise ValueError(f"the case is nested more than {MAX_DEPTH} levels deep")
            items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
            for key, item in items:
                if isinstance(key, str):
                    stack.append((key, depth))
                stack.append((item, depth + 1))
        elif isinstance(value, str):
            bad = _SURROGATE.search(value)
            if bad:
                raise ValueError(f"the text {value[:40]!r} holds a lone surrogate (U+{ord(bad.group()):04X}), "
                                 "which is not a character")


_SURROGATE = re.compile("[\ud800-\udfff]")


def normalise(raw: Any) -> dict[str, Any]:
    """Map any of seed 000's case shapes onto GoldenCase's fields (validation happens in GoldenCase)."""
    if not isinstance(raw, dict):
        raise ValueError(f"a case must be a mapping, not {type(raw).__name__}")
    data = dict(raw)
    case_id = data.pop("id", None) or data.pop("case_id", None)
    if case_id is None:
        raise ValueError("the case has no `id`")
    out: dict[str, Any] = {"id": str(case_id)}
    for key in ("severity", "contract", "model"):
        if key in data:
            out[key] = data.pop(key)
    if "precondition" in data:
        pre = data.pop("precondition") or {}
        if not isinstance(pre, dict):
            raise ValueError("`precondition` must be a mapping")
        if "state" in pre and not isinstance(pre["state"], str):
            raise ValueError(f"`precondition.state` must be a state name, not {_kind(pre['state'])}")
        out["precondition"] = pre
    normalise_decisions(data, out)  # a decision case (`table`, `inputs`, `expect`) or a conversation's `decisions`
    normalise_request(data, out)  # a request case (`policy`, `request`, `expect`) or a conversation's context
    turns = []
    if "input" in data and "turns" not in data:  # single-turn intent case
        turns.append({"user": data.pop("input"), "intent": data.pop("expected_intent", None)})
    raw_turns = data.pop("turns", None)
    if raw_turns is not None and not isinstance(raw_turns, list):
        raise ValueError(f"`turns` must be a list of turns, not {_kind(raw_turns)}")
    for i, raw_turn in enumerate(raw_turns or []):
        if not isinstance(raw_turn, dict):
            raise ValueError(f"turn {i + 1} must be a mapping")
        turn = dict(raw_turn)
        if _TURN_EXPECT_KEYS.isdisjoint(turn):
            # Most turns assert nothing: they share one empty Assertions (never mutated), which saves a
            # validation and about a kilobyte per turn when loading 100,000 goldens (tests/bench).
            turn["expect"] = _NO_EXPECTATIONS
            turns.append(turn)
            continue
        expect_raw = {"assert_state": turn.pop("assert_state", None)}
        for key in ("must_not", "must_not_call", "must_have", "tool_arguments", "discarded"):
            if key in turn:
                expect_raw[key] = turn.pop(key)
        turn["expect"] = assertions_from(expect_raw, "assert_state", f"turn {i + 1}")
        turns.append(turn)
    out["turns"] = turns
    final = data.pop("assertions", None)
    final_alt = data.pop("final_assertions", None)
    if final is not None and final_alt is not None:
        raise ValueError("use either `assertions` or `final_assertions`, not both")
    out["final"] = assertions_from(final if final is not None else final_alt, state_key="state",
                                   what="assertions" if final is not None else "final_assertions")
    out.update(data)  # recovery, evidence, failure_owner ... kept as extra fields
    return out


# Kinds whose cases have neither turns, decisions nor a request say how to recognise theirs: mbt.kinds.register puts
# each KindSupport.case_shape here (a lower stage offers the seam, so it never imports the registry).
CASE_SHAPES: list[Callable[[GoldenCase], bool]] = []


def parse_case(raw: Any, file: str, line: int) -> GoldenCase:
    """Normalise and validate one raw case; raises ValueError (or pydantic's ValidationError) when unusable."""
    check_raw(raw)
    data = normalise(raw)
    data.update(file=file, line=line)
    case = GoldenCase.model_validate(data)
    if not case.turns and not case.decisions and case.request is None and not any(s(case) for s in CASE_SHAPES):
        raise ValueError("the case has no turns (and no `input`); a decision case names its `table`, "
                         "a request case its `policy` and `request`")
    return case


def reason(err: Exception) -> str:
    """Why a case is invalid, in one line (pydantic's first error with its field path)."""
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else first["msg"]
    return str(err)
