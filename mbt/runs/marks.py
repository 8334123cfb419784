"""Runs marked as incidents or adversarial (seed 004's level 4: 生产流量、事故、对抗输入): the tags a run carries, and the
marks mbt reads from them (docs/runs.md, "Marked runs and undocumented behaviour").

A run's **tags** are read from

    a transcript          `tags` and `metadata.tags`: a list of texts, or one text of comma-separated tags
    OpenTelemetry         `mbt.run.tags` (a string array, a JSON array in a string, or comma-separated) and
                          `app.run.kind` (one tag), on any span or on the resource

in that order, each tag once. A tag **marks** the run `incident` or `adversarial` when it is that word or starts with
it and a colon (`incident:INC-42`), case aside; any other tag is kept with the run and marks nothing. A run with
both marks counts in both; a run with neither is *unmarked* (production or test traffic).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

MARKS = ("incident", "adversarial")
UNMARKED = "unmarked"
TAG_ATTRIBUTES = ("mbt.run.tags", "app.run.kind")


class TagProblem(ValueError):
    """A `tags` value that is neither a text nor a list of texts."""


def parse_tags(value: Any) -> tuple[str, ...]:
    """The tags a value holds: a list's texts, or a text's comma-separated parts (a JSON array written as a text, as
    OpenTelemetry exporters write a list attribute, is read as the list); blanks dropped, each tag once."""
    if value is None:
        return ()
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, list):
            value = decoded
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        raise TagProblem(f"`tags` must be a list of texts or a text of comma-separated tags, not "
                         f"{json.dumps(value, ensure_ascii=False, default=str)[:80]}")
    out: list[str] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise TagProblem(f"a tag must be a text, not {json.dumps(item, ensure_ascii=False, default=str)[:80]}")
        tag = str(item).strip()
        if tag and tag not in out:
            out.append(tag)
    return tuple(out)


def merged(*groups: Iterable[str]) -> tuple[str, ...]:
    """The tags of several places, in order, each once."""
    return tuple(dict.fromkeys(tag for group in groups for tag in group))


def transcript_tags(raw: dict) -> tuple[str, ...]:
    """A transcript's `tags` and `metadata.tags`; raises TagProblem on a value of the wrong shape."""
    metadata = raw.get("metadata")
    inner = metadata.get("tags") if isinstance(metadata, dict) else None
    return merged(parse_tags(raw.get("tags")), parse_tags(inner))


def attribute_tags(attributes: dict[str, Any], used: set[str]) -> tuple[str, ...]:
    """The tags of one span's attributes (the resource's included), marking the attributes read in `used`. A value
    of another shape is kept as its text: telemetry is read, never refused, for a tag."""
    found: list[tuple[str, ...]] = []
    for key in TAG_ATTRIBUTES:
        if attributes.get(key) is None:
            continue
        used.add(key)
        try:
            found.append(parse_tags(attributes[key]))
        except TagProblem:
            found.append(parse_tags(str(attributes[key])))
    return merged(*found)


def marks_of(tags: Iterable[str]) -> list[str]:
    """The marks the tags give, in MARKS order."""
    folded = [t.casefold() for t in tags]
    return [m for m in MARKS if any(t == m or t.startswith(m + ":") for t in folded)]
