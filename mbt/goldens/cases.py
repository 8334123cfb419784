"""Golden case schema: seed 000's single-turn, multi-turn and golden formats, normalised into one GoldenCase."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import msgspec

from mbt.argpaths import flatten, leaves
from mbt.goldens.decisions import DecisionCheck, normalise_decisions
from mbt.goldens.requests import PolicyRequest, normalise_request
from mbt.goldens.results import Note
from mbt.kind import case_shapes

# The cases are msgspec structs, not pydantic models: a large golden set makes millions of them, and a struct costs
# a fraction of a model's time and memory (tests/bench). pydantic stays for the reports and published schemas. Unknown
# keys of a case, a turn or its assertions are kept, not interpreted, in `extra` (`model_extra`, as pydantic said).


class OneOf(msgspec.Struct, frozen=True):
    """A set-valued expectation: the model's value may be any of `values` (`{in: [...]}` in a golden; for the control
    state, a list of states too). A list of one value is read as that value."""

    values: tuple[Any, ...]

    def written(self) -> dict[str, list[Any]]:
        """As a golden writes it (and reports show it): `{"in": [...]}`."""
        return {"in": list(self.values)}


class Assertions(msgspec.Struct):
    """What a golden expects of the configuration after a turn (or after the last turn)."""

    state: str | OneOf | None = None  # the control state, or the states any of which is accepted
    variables: dict[str, Any] = {}
    discarded: dict[str, Any] = {}
    tool_arguments: dict[str, Any] = {}
    must_not: list[str] = []
    # Tools the golden asserts were NOT called (at this turn; in the final assertions: anywhere in the case).
    must_not_call: list[str] = []
    must_have: list[str] = []
    intent: str | None = None
    extra: dict[str, Any] = {}

    @property
    def model_extra(self) -> dict[str, Any]:
        return self.extra

    def checks_outcome(self) -> bool:
        """Checks the model can compute and contradict: only these verify a step's elements (a `must_not`
        phrase speaks of what is said, which an FSM does not compute: it verifies forbids only)."""
        return bool(self.state is not None or self.variables or self.discarded or self.tool_arguments
                    or self.must_not_call)

    def empty(self) -> bool:
        return (self.state is None and not self.variables and not self.discarded and not self.tool_arguments
                and not self.must_not and not self.must_not_call)


class Turn(msgspec.Struct):
    user: str | None = None
    event: str | None = None
    args: dict[str, Any] = {}
    intent: str | None = None
    rejected: bool = False
    expect: Assertions = msgspec.field(default_factory=Assertions)
    extra: dict[str, Any] = {}

    @property
    def model_extra(self) -> dict[str, Any]:
        return self.extra


class GoldenCase(msgspec.Struct):
    """One golden case, whatever its source format. `file`/`line` locate it for messages."""

    id: str
    file: str = ""
    line: int = 0
    severity: str | None = None
    contract: str | None = None
    model: str | None = None
    precondition: dict[str, Any] = {}
    turns: list[Turn] = []
    final: Assertions = msgspec.field(default_factory=Assertions)
    decisions: list[DecisionCheck] = []  # decision-table checks (goldens/decisions.py)
    request: PolicyRequest | None = None  # a policy request (goldens/requests.py)
    extra: dict[str, Any] = {}
    # Read from a spreadsheet: its values are cells.Cell texts until a model's replay reads them by its types.
    sheet_cells: bool = False

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def model_extra(self) -> dict[str, Any]:
        return self.extra


ASSERTION_FIELDS = frozenset(Assertions.__struct_fields__) - {"extra"}
TURN_FIELDS = frozenset(Turn.__struct_fields__) - {"extra"}
CASE_FIELDS = frozenset(GoldenCase.__struct_fields__) - {"extra", "sheet_cells"}  # only a sheet sets sheet_cells


# Keys of a case that describe it rather than expect anything of the model: the element an `mbt generate` stub was
# made for (`element`, `also_covers`) and the source it cites (`source`). Never a "Not checked" note.
DESCRIPTIVE_KEYS = frozenset(("element", "also_covers", "source"))
# Expectations written on the case itself, where nothing reads them: the note says where they belong.
_MISPLACED = frozenset(("must_not", "must_have", "must_not_call", "tool_arguments", "discarded", "state",
                        "assert_state", "intent"))


def unchecked_key_notes(case: GoldenCase, model: str = "", read: frozenset[str] = frozenset()) -> list[Note]:
    """A "Not checked" note for every key of the case that the golden format does not read (kept as `extra` on the
    case, a turn or the final assertions): never dropped without a word. `read`: keys of the case itself that a kind
    replaying it reads (KindSupport.golden_keys; `assertions.KEY` names a key of its final assertions, `turns.KEY`
    one of its turns);
    DESCRIPTIVE_KEYS are words about the case, not expectations."""
    notes = []

    def note(turn: int | None, message: str) -> None:
        notes.append(Note(case=case.id, where=case.where, model=model, turn=turn, message=message))

    for key in case.extra:
        if key in read or key in DESCRIPTIVE_KEYS:
            continue
        if key in _MISPLACED:
            note(None, f"`{key}` outside `assertions` is not checked: put it under `assertions` (or on a turn)")
        else:
            note(None, f"`{key}` is not checked (mbt does not read this key)")
    number = 0
    for turn in case.turns:
        number += 1
        for key in turn.extra:
            if f"turns.{key}" in read:  # a key of a turn a kind reads (a contract's allowed_source)
                continue
            why = ("golden replay does not judge answer text: `mbt eval` judges it against the recorded answers"
                   if key == "expected_answer" else "mbt does not read this key")
            note(number, f"turn {number}: `{key}` is not checked ({why})")
    for key in case.final.extra:
        if f"assertions.{key}" not in read:  # a key of the final assertions a kind reads (a contract's allowed_source)
            note(None, f"final assertions: `{key}` is not checked (mbt does not read this key)")
    return notes


def has_unread_keys(case: GoldenCase) -> bool:
    """Whether the case holds a key the golden format does not read (most cases hold none)."""
    return bool(case.extra or case.final.extra or any(turn.extra for turn in case.turns))


def _known(data: dict[str, Any], fields: frozenset[str]) -> dict[str, Any]:
    """The fields of a struct as msgspec converts them; the other keys go, untouched, under `extra`."""
    extra = {k: v for k, v in data.items() if k not in fields}
    if not extra:
        return data
    known = {k: v for k, v in data.items() if k in fields}
    known["extra"] = extra
    return known


def _is_set(value: Any) -> bool:
    """`{in: ...}`: a set of accepted values (`in` is a reserved word of the DSL: no variable, state or argument
    has that name, so the mapping cannot mean anything else)."""
    return type(value) is dict and len(value) == 1 and "in" in value


def expected_value(name: str, value: Any) -> Any:
    """The value a golden expects of a variable, a discarded value or a tool argument: `{in: [...]}` is a OneOf."""
    if not _is_set(value):
        return value
    items = value["in"]
    if not isinstance(items, list):
        raise ValueError(f"`{name}: {{in: ...}}` must be a list of values, not {_kind(items)}")
    if not items:
        raise ValueError(f"`{name}: {{in: []}}` lists no value")
    return items[0] if len(items) == 1 else OneOf(tuple(items))


def expected_state(value: Any, key: str = "state") -> str | OneOf | None:
    """The control state a golden expects: a state name, or a list of them (`{in: [...]}` too), any of which is
    accepted."""
    if value is None or isinstance(value, str):
        return value
    if _is_set(value):
        value = value["in"]
    if not isinstance(value, list):
        raise ValueError(f"`{key}` must be a state name or a list of state names, not {_kind(value)}")
    if not value:
        raise ValueError(f"`{key}` lists no state: write one, or several in a list")
    bad = [item for item in value if not isinstance(item, str)]
    if bad:
        raise ValueError(f"`{key}` must list state names, not {_kind(bad[0])}")
    return value[0] if len(value) == 1 else OneOf(tuple(value))


def tool_paths(raw: dict[str, Any]) -> dict[str, Any]:
    """`tool_arguments` as dotted paths, the one reading of them (mbt/argpaths.flatten): `{TOOL: {ARG: v}}`,
    `{"TOOL.ARG": v}`, `{TOOL: {FIELD: {SUB: v}}}` and `{"TOOL.FIELD.SUB": v}` are one check each; a set
    (`{in: [...]}`) is a value, not a field; `{TOOL: {}}` (the call itself) stays as it is."""
    given = _sets_as_values(raw, "")
    seen: set[str] = set()
    for path, _ in leaves(given):  # one path written both ways: which value counts would be a guess
        if path in seen:
            raise ValueError(f"tool_arguments: `{path}` is given twice (as a dotted key and as nested fields)")
        seen.add(path)
    return flatten(given)


def _sets_as_values(mapping: dict[str, Any], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        if type(value) is dict and value:
            out[key] = expected_value(f"{prefix}{key}", value) if _is_set(value) else \
                _sets_as_values(value, f"{prefix}{key}.")
        else:
            out[key] = value
    return out


def tool_checks(tool_arguments: dict[str, Any], tools: Any) -> list[tuple[str | None, str | None, Any]]:
    """A `tool_arguments` check (dotted paths, `tool_paths`) as (tool, argument path, expected value) per entry: a
    path starting with a tool of the model checks that tool's latest call (`{TOOL: {}}`: the call itself, argument
    None); any other path, the latest call of any tool passing it (tool None). Every replayer reads them so."""
    out: list[tuple[str | None, str | None, Any]] = []
    for path, value in tool_arguments.items():
        tool, dot, rest = path.partition(".")
        if tool in tools and dot:
            out.append((tool, rest, value))
        elif tool in tools and type(value) is dict and not value:
            out.append((tool, None, None))
        else:
            out.append((None, path, value))
    return out


def split_state_map(raw: dict[str, Any]) -> dict[str, Any]:
    """An assert_state / state map -> Assertions fields: `state` is the control state, `discarded.X` and
    `discarded: {X: ..}` the discarded values, anything else a variable. A value may be a set (`{in: [...]}`)."""
    if not isinstance(raw, dict):
        raise ValueError("expected a mapping of names to values")
    out: dict[str, Any] = {"variables": {}, "discarded": {}}
    for key, value in raw.items():
        key = str(key)
        if key == "state":
            out["state"] = expected_state(value)
        elif key == "discarded" and isinstance(value, dict) and not _is_set(value):
            out["discarded"].update({str(k): expected_value(str(k), v) for k, v in value.items()})
        elif key.startswith("discarded."):
            out["discarded"][key[len("discarded."):]] = expected_value(key, value)
        else:
            out["variables"][key] = expected_value(key, value)
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
    elif isinstance(state, list) or _is_set(state):  # the states any of which is accepted
        fields["state"] = expected_state(state, state_key)
    elif state is not None:
        if not isinstance(state, dict):
            raise ValueError(f"`{state_key}` must be a state name, a list of them or a mapping of names to values, "
                             f"not {_kind(state)}")
        parts = split_state_map(state)
        fields["variables"].update(parts["variables"])
        fields["discarded"].update(parts["discarded"])
        if "state" in parts:
            fields["state"] = parts["state"]
    discarded = raw.pop("discarded", None)
    if discarded is not None:
        if not isinstance(discarded, dict):
            raise ValueError("`discarded` must map variable names to values")
        fields["discarded"].update({str(k): expected_value(str(k), v) for k, v in discarded.items()})
    fields.update(raw)  # tool_arguments, must_not, must_have, intent; other keys are kept, not interpreted
    if type(fields.get("tool_arguments")) is dict:
        fields["tool_arguments"] = tool_paths(fields["tool_arguments"])
    try:
        return msgspec.convert(_known(fields, ASSERTION_FIELDS), Assertions)
    except msgspec.ValidationError as err:
        raise CaseError(_reason_of(err)) from None


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




class CaseError(ValueError):
    """A case whose fields have the wrong type: the message says which (`turns.0.user: Input should be ...`)."""


def parse_case(raw: Any, file: str, line: int) -> GoldenCase:
    """Normalise and validate one raw case; raises ValueError when unusable."""
    check_raw(raw)
    data = normalise(raw)
    data.update(file=file, line=line)
    return checked(build_case(data))


def build_case(data: dict[str, Any]) -> GoldenCase:
    """A GoldenCase from normalised fields (`normalise`), each field's type checked by msgspec."""
    turns = data.get("turns")
    if isinstance(turns, list):
        data["turns"] = [_turn_fields(t, n) if isinstance(t, dict) else t for n, t in enumerate(turns)]
    try:
        return msgspec.convert(_known(data, CASE_FIELDS), GoldenCase)
    except msgspec.ValidationError as err:
        raise CaseError(_reason_of(err)) from None


def _turn_fields(turn: dict[str, Any], index: int) -> dict[str, Any]:
    if "rejected" in turn:
        turn["rejected"] = lax_bool(turn["rejected"], f"turns.{index}.rejected")
    return _known(turn, TURN_FIELDS)


_TRUE, _FALSE = frozenset(("1", "on", "t", "true", "y", "yes")), frozenset(("0", "off", "f", "false", "n", "no"))


def lax_bool(value: Any, where: str) -> bool:
    """A flag as goldens have always been read (pydantic's lax rule): true/false, 1/0, and yes/no, on/off, t/f,
    y/n, 1/0 as text in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, Decimal)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise CaseError(f"{where}: Input should be a valid boolean, unable to interpret input")


def checked(case: GoldenCase) -> GoldenCase:
    """The case, if it holds something to replay."""
    # a kind whose cases have neither turns, decisions nor a request says how to recognise its own (KindSupport)
    if not case.turns and not case.decisions and case.request is None and all(s(case) is None for s in case_shapes()):
        raise ValueError("the case has no turns (and no `input`); a decision case names its `table`, "
                         "a request case its `policy` and `request`")
    return case


# msgspec's words for a type -> the message goldens have always had for it (pydantic's, from before msgspec).
_SHOULD_BE = {"str": "a valid string", "array": "a valid list", "object": "a valid dictionary",
              "bool": "a valid boolean", "int": "a valid integer", "float": "a valid number"}
_EXPECTED = re.compile(r"Expected `(?P<type>[^`]+)`, got `[^`]+`(?: - at `\$(?P<at>[^`]*)`)?$")
_MISSING = re.compile(r"Object missing required field `(?P<field>[^`]+)`(?: - at `\$(?P<at>[^`]*)`)?$")


def _path(at: str | None) -> list[str]:
    """`$.turns[0].user` -> ["turns", "0", "user"]."""
    return [p for p in re.split(r"[.\[\]]+", at or "") if p]


def _reason_of(err: msgspec.ValidationError) -> str:
    text = str(err)
    match = _EXPECTED.match(text)
    if match:
        kind = match.group("type").removesuffix(" | null")
        where = ".".join(_path(match.group("at")))
        message = f"Input should be {_SHOULD_BE.get(kind, kind)}"
        return f"{where}: {message}" if where else message
    match = _MISSING.match(text)
    if match:
        return ".".join([*_path(match.group("at")), match.group("field")]) + ": Field required"
    return text


def reason(err: Exception) -> str:
    """Why a case is invalid, in one line."""
    return str(err)


# What a golden set read holds (mbt.goldens.loader reads them). Here, beside the cases, so that a stage taking no
# goldens (`mbt runs` without --goldens measures an empty GoldenSet) loads no reader: start-up time.
@dataclass
class InvalidCase:
    file: str
    line: int
    message: str

    def render(self) -> str:
        return f"{self.file}:{self.line}: invalid case: {self.message}"


@dataclass
class GoldenSet:
    cases: list[GoldenCase] = field(default_factory=list)
    invalid: list[InvalidCase] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    left_out: list[tuple[str, str, str]] = field(default_factory=list)  # (folder, file, why): see GoldenStream
