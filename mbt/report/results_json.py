"""A result set exported as JSON: the set, its overview, the report's summary and what its LLM judges cost, then
every case (its row, its
verdicts with reasons and judges, and the case as its report had it with the session), written piece by piece so a
set of 100,000 cases is never one string in memory. Formats only."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from mbt.files import Chunks
from mbt.store.model import SCHEMA_VERSION, ExportCase, Overview, SetInfo, SetUsage


def results_json(info: SetInfo, overview: Overview, summary: dict[str, Any], cases: Iterable[ExportCase],
                 usage: SetUsage | None = None) -> Chunks:
    def parts() -> Iterator[bytes]:
        head = {"schema_version": SCHEMA_VERSION, "set": info.model_dump(mode="json"),
                "overview": overview.model_dump(mode="json"), "summary": summary,
                "usage": usage.model_dump(mode="json") if usage is not None else None}
        text = json.dumps(head, ensure_ascii=False, sort_keys=True)
        yield (text[:-1] + ', "cases": [').encode()
        for n, case in enumerate(cases):
            yield ((",\n" if n else "\n") + case.model_dump_json()).encode()
        yield b"\n]}\n"

    return Chunks(parts())
