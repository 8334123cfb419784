"""Argument paths: structured tool arguments named by dotted paths (`handoff.confirmed_fields.recovery_email`).

A model's call, a golden's `tool_arguments` and a run's recorded arguments may all nest objects; comparing them goes
through paths, so that `{"handoff": {"confirmed_fields": {"recovery_email": "x"}}}` and
`{"handoff.confirmed_fields.recovery_email": "x"}` mean the same. A key that itself contains a dot is looked up
literally first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def flatten(args: Mapping[str, Any]) -> dict[str, Any]:
    """Nested mappings to dotted paths of their leaves (a key containing a dot is kept as it is written)."""
    out: dict[str, Any] = {}
    stack: list[tuple[str, Any]] = [(str(k), v) for k, v in reversed(list(args.items()))]
    while stack:  # iterative: a hostile run may nest deeper than Python's recursion limit
        path, value = stack.pop()
        if isinstance(value, Mapping) and value:
            stack.extend((f"{path}.{k}", v) for k, v in reversed(list(value.items())))
        else:
            out[path] = value
    return out


def lookup(args: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """(found, value) of a dotted path in nested mappings; the literal key is tried first at each level."""
    if path in args:
        return True, args[path]
    head, dot, rest = path.partition(".")
    while dot:
        inner = args.get(head)
        if isinstance(inner, Mapping):
            found, value = lookup(inner, rest)
            if found:
                return True, value
        more, dot, rest = rest.partition(".")
        head = f"{head}.{more}"
    return False, None
