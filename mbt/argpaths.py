"""Dotted paths into structured tool arguments: `confirmed_fields.recovery_email` names one value inside a call's
arguments `{"confirmed_fields": {"recovery_email": "lin@example.com"}}`.

Seed 000's hand-off passes a structured payload, and its failed assertion names a field deep inside it
(`handoff.confirmed_fields.recovery_email`). A model's call writes such a field as `call handoff(
confirmed_fields.recovery_email = email)`, a golden as a dotted key or as nested mappings, and an observed run
carries whatever JSON the tool was given. These helpers are the one reading of a path, for all of them:

- `flatten(args)` -> `{path: value}`: nested mappings become dotted paths, in the order written. A leaf is anything
  that is not a non-empty mapping: a value, a list (lists are values; no path goes into one), an empty mapping. A
  key that itself contains a dot (`{"confirmed_fields.recovery_email": ...}`, as a model's call or a flattened
  export writes it) is kept literal: it names the same path as the nested spelling, which is the point (both mean
  the same). Keys that are not text (a YAML number) are named as text. When one path is given both ways
  (`{"a.b": 1, "a": {"b": 2}}`), its value is the one `lookup` finds: `flatten(args)[p] == lookup(args, p)[1]` for
  every path. Where that is a guess not to make (a golden's expectation), `leaves` shows the repetition.
- `lookup(args, path)` -> `(found, value)`: the value at `path` in a nested mapping; `(False, None)` when nothing is
  there (`(True, None)` is a value that is none). The literal key comes first: `{"a.b": 1}` answers `a.b` itself;
  only then is the path split at a dot and the rest looked up inside, the longest literal key first.
- `leaves(args)`: every (path, value) leaf in the order written, a path given both ways as often as it is given.

None of them recurses on the data (a hostile run may nest thousands deep); this module imports nothing of mbt.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def leaves(args: Mapping[Any, Any]) -> Iterator[tuple[str, Any]]:
    """Every leaf of nested mappings as (dotted path, value), in the order written; a path given both ways (a dotted
    key and nested fields) comes as often as it is given."""
    stack: list[tuple[str, Iterator[tuple[Any, Any]]]] = [("", iter(args.items()))]
    while stack:
        prefix, items = stack[-1]
        for key, value in items:
            path = f"{prefix}{key}"
            if isinstance(value, Mapping) and value:
                stack.append((path + ".", iter(value.items())))
                break  # its fields first; this mapping's next items afterwards, in the order written
            yield path, value
        else:
            stack.pop()


def flatten(args: Mapping[Any, Any]) -> dict[str, Any]:
    """Nested mappings to `{dotted path: value}` (see the module's docstring): a path given both ways has the value
    `lookup` finds for it."""
    out: dict[str, Any] = {}
    repeated = False
    for path, value in leaves(args):
        repeated = repeated or path in out
        out[path] = value
    if repeated:  # rare: settle each path as lookup reads it (the literal key first)
        out = {path: lookup(args, path)[1] for path in out}
    return out


def lookup(args: Mapping[Any, Any], path: str) -> tuple[bool, Any]:
    """The value at the dotted `path` in `args`: (True, value), or (False, None) when absent. The literal key
    first, then the path split at a dot (the longest literal key first) and the rest looked up inside."""
    pending: list[tuple[Mapping[Any, Any], str]] = [(args, path)]
    while pending:
        mapping, rest = pending.pop()
        if rest in mapping:
            return True, mapping[rest]
        # Splits are pushed shortest key first, so the longest literal key is tried first.
        dot = rest.find(".")
        splits = []
        while dot >= 0:
            head = rest[:dot]
            inner = mapping.get(head)
            if isinstance(inner, Mapping):
                splits.append((inner, rest[dot + 1:]))
            dot = rest.find(".", dot + 1)
        pending.extend(splits)
    return False, None
