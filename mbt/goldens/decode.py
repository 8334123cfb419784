"""JSON lines of goldens decoded by msgspec straight into typed structs, in one C call per line, for the usual shape.

A line of seed 000's conversation shape (`id`, `severity`, `contract`, `model`, `precondition`, `turns` of `user` /
`event` / `args` / `intent` / `rejected` and expectations, `assertions` or `final_assertions`) is decoded into the
structs below and becomes a GoldenCase without any intermediate dict. Anything else — another shape, another key, a
value of another type, a repeated key, nesting past MAX_DEPTH, any error at all — returns None, and the caller reads
the line the general way (mbt.goldens.loader, cases.normalise), which gives every message: the two ways make the
same case from the same line (tests/test_goldens_decode.py), and only one of them words errors.
"""

from __future__ import annotations

import re
from decimal import Decimal
from operator import ne
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType
from msgspec.structs import astuple

from mbt.goldens.cases import _NO_EXPECTATIONS, MAX_DEPTH, Assertions, GoldenCase, Turn, assertions_from, checked


class _Turn(msgspec.Struct, forbid_unknown_fields=True):
    # A key given its default (`"user": null`) cannot be told from a missing one: such a line is left to the general
    # way (the key count below differs), which is right, only slower.
    user: str | None = None
    event: str | None = None
    args: dict[str, Any] = {}
    intent: str | None = None
    rejected: bool = False
    assert_state: str | dict[str, Any] | None = None
    must_not: Any = UNSET  # the other expectations are checked by cases.assertions_from, as the general way does
    must_not_call: Any = UNSET
    must_have: Any = UNSET
    tool_arguments: Any = UNSET
    discarded: Any = UNSET


class _Case(msgspec.Struct, forbid_unknown_fields=True):
    id: str = ""
    severity: str | None = None
    contract: str | None = None
    model: str | None = None
    precondition: dict[str, Any] = {}
    turns: list[_Turn] | UnsetType = UNSET
    assertions: dict[str, Any] | None = None
    final_assertions: Any = UNSET


_DECODER = msgspec.json.Decoder(_Case, float_hook=Decimal)  # exact decimals, as the general way reads them
_KEY = re.compile(r'"\s*:')  # every key of the line ends so (and a few escaped quotes inside strings do too)
_CASE_DEFAULTS: tuple[Any, ...] = ("", None, None, None, {}, UNSET, None, UNSET)
_CONTAINERS = (dict, list)


class _Unusual(Exception):
    """Not this module's shape: the general way reads the line."""


def _keys(value: Any, depth: int) -> int:
    """How many keys the mappings in `value` (at nesting `depth`, as cases.check_raw counts it) hold."""
    if depth > MAX_DEPTH:
        raise _Unusual
    if isinstance(value, dict):
        count = len(value)
        for item in value.values():
            if isinstance(item, _CONTAINERS):
                count += _keys(item, depth + 1)
        return count
    return sum(_keys(item, depth + 1) for item in value if isinstance(item, _CONTAINERS))


def decode_case(line: str, file: str, number: int) -> GoldenCase | None:
    """The case on a JSON line, or None when the general way must read it (see the module's docstring)."""
    try:
        return _case(_DECODER.decode(line), line, file, number)
    except (msgspec.MsgspecError, ValueError, _Unusual, RecursionError, TypeError, AttributeError):
        return None  # the general way reads it, and words what is wrong with it


def _state(value: Any) -> Assertions:
    """A turn's `assert_state` or a case's `assertions.state` alone, as cases.assertions_from reads it."""
    if value is None:
        return _NO_EXPECTATIONS
    if isinstance(value, str):
        return Assertions(state=value)
    if not isinstance(value, dict):
        raise _Unusual
    variables: dict[str, Any] = {}
    discarded: dict[str, Any] = {}
    state = None
    for key, item in value.items():
        if type(item) is dict and key != "discarded":
            raise _Unusual  # a set (`{in: [...]}`), read the general way (cases.expected_value)
        if key == "state":
            if item is not None and not isinstance(item, str):
                raise _Unusual
            state = item
        elif key == "discarded" and isinstance(item, dict):
            if any(type(v) is dict for v in item.values()) or "in" in item:
                raise _Unusual
            discarded.update(item)
        elif key.startswith("discarded."):
            discarded[key[10:]] = item
        else:
            variables[key] = item
    return Assertions(state=state, variables=variables, discarded=discarded)


def _case(raw: _Case, line: str, file: str, number: int) -> GoldenCase:
    if not raw.id or raw.turns is UNSET:
        raise _Unusual
    keys = sum(map(ne, astuple(raw), _CASE_DEFAULTS))
    if raw.precondition:
        keys += _keys(raw.precondition, 2)
        state = raw.precondition.get("state", "")
        if not isinstance(state, str):
            raise _Unusual
    turns = []
    for index, t in enumerate(raw.turns):
        # The keys given: the fields of _Turn not at their defaults, compared one by one (three times faster than
        # astuple and a map over a tuple of the defaults, on every turn).
        keys += ((t.user is not None) + (t.event is not None) + (t.args != {}) + (t.intent is not None) + t.rejected
                 + (t.assert_state is not None) + (t.must_not is not UNSET) + (t.must_not_call is not UNSET)
                 + (t.must_have is not UNSET) + (t.tool_arguments is not UNSET) + (t.discarded is not UNSET))
        args = t.args
        if args:  # _keys(args, 4), without a call for the usual flat mapping
            keys += len(args)
            for item in args.values():
                if isinstance(item, _CONTAINERS):
                    keys += _keys(item, 5)
        expect = t.assert_state
        if isinstance(expect, dict):
            keys += _keys(expect, 4)
        if t.must_not is UNSET and t.must_not_call is UNSET and t.must_have is UNSET and t.tool_arguments is UNSET \
                and t.discarded is UNSET:
            expected = _NO_EXPECTATIONS if expect is None else _state(expect)
        else:
            given = {"assert_state": expect}
            for name in ("must_not", "must_not_call", "must_have", "tool_arguments", "discarded"):
                value = getattr(t, name)
                if value is not UNSET:
                    given[name] = value
                    if isinstance(value, _CONTAINERS):
                        keys += _keys(value, 4)
            expected = assertions_from(given, "assert_state", f"turn {index + 1}")
        turns.append(Turn(t.user, t.event, t.args, t.intent, t.rejected, expected))  # Turn's fields in order
    final, what = raw.assertions, "assertions"
    if raw.final_assertions is not UNSET:
        if final is not None:
            raise _Unusual
        final, what = raw.final_assertions, "final_assertions"
    if isinstance(final, dict):
        keys += _keys(final, 2)
    # Every key ends with `"` and `:`, spaces between them only where `" ` or `"\t` occurs; a few escaped quotes
    # inside strings may end so too. So the count is never below the keys written, and equals the keys decoded
    # only when no key repeats (msgspec keeps the last of a repeated key without a word).
    written = len(_KEY.findall(line)) if '" ' in line or '"\t' in line else line.count('":')
    if keys != written:
        raise _Unusual
    if final is None:
        last = _NO_EXPECTATIONS
    elif isinstance(final, dict) and len(final) == 1 and "state" in final:
        last = _state(final["state"])
    else:
        last = assertions_from(final, state_key="state", what=what)
    return checked(GoldenCase(id=raw.id, file=file, line=number, severity=raw.severity, contract=raw.contract,
                              model=raw.model, precondition=raw.precondition, turns=turns, final=last))
