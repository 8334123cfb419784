"""Seed 000's RAG trace read as an observed run: one JSON object (or a JSON Lines file of them) with the user's
`query`, the `route` taken, the `retrieved` documents with their approval, status and score, the `selected_source`,
the answer's `claims` with what grounds each, and the trace's own `must_not` items. The query is the run's user
text; an `answer`, when the trace gives one, its assistant text. The format records no tool call, and no answer text
unless `answer` is there (the claims are what the answer asserted, not its words): a criterion that needs them is
not judged. docs/runs.md, "Grounding", says what is judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mbt.runs.grounding import GROUNDING_KEYS, count_unread
from mbt.runs.steps import ObservedRun, ObservedStep
from mbt.runs.transcripts import _CONTEXT_FIELDS, _RUN_FIELDS, TranscriptProblem, is_transcript, read_wrapper

_RAG_KEYS = frozenset({"case_id", "id", "answer", "contract", "metadata", "tags", "precondition", *GROUNDING_KEYS}
                      | {k for k, _ in _RUN_FIELDS} | {k for k, _ in _CONTEXT_FIELDS})


def is_rag(raw: Any) -> bool:
    """An object with seed 000's retrieval fields and no messages or turns (a transcript may carry the same fields
    beside its messages: the transcript reader reads them there)."""
    return isinstance(raw, dict) and not is_transcript(raw) and any(
        k in raw for k in ("retrieved", "selected_source", "claims"))


def read_rag_run(raw: dict, file: str, where: str, default_id: str) -> ObservedRun:
    """One RAG trace -> one run; raises TranscriptProblem."""
    run_id = raw.get("case_id", raw.get("id", default_id))
    if not isinstance(run_id, (str, int)) or isinstance(run_id, bool):
        raise TranscriptProblem("`case_id` (or `id`) must be text")
    run = ObservedRun(id=str(run_id), file=file, where=where, format="rag")
    run.records_tool_calls = False  # the shape has no place for a call
    read_wrapper(run, raw)
    query, answer = raw.get("query"), raw.get("answer")
    if query is not None:
        if not isinstance(query, str):
            raise TranscriptProblem("`query` must be the user's text", f"{where} query")
        run.steps.append(ObservedStep("user", f"{where} query", text=query))
    if answer is not None:
        if not isinstance(answer, str):
            raise TranscriptProblem("`answer` must be the assistant's text", f"{where} answer")
        run.steps.append(ObservedStep("assistant", f"{where} answer", text=answer))
    run.records_assistant_texts = answer is not None
    return run


class RagFile:
    """One file's RAG traces read one value at a time (`add`), and the keys read as nothing, counted over the file."""

    def __init__(self, file: str, buffer: object = None):
        self.file = file
        self.stem = file.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        self._problems: list[tuple[str, str]] = []
        self.unread: dict[str, int] = {}

    def add(self, line: int | None, doc: Any) -> ObservedRun | None:
        where = f"{self.file}:{line}" if line is not None else self.file
        try:
            run = read_rag_run(doc, self.file, where, self.stem if line is None else f"{self.stem}:{line}")
        except TranscriptProblem as err:
            self._problems.append((err.where or where, str(err)))
            return None
        for key in doc:
            if key not in _RAG_KEYS:
                name = f"key `{key}` of a RAG trace"
                self.unread[name] = self.unread.get(name, 0) + 1
        count_unread(doc, self.unread)
        return run

    def runs(self) -> Iterator[ObservedRun]:
        return iter(())  # each run comes from `add`

    def problems(self) -> list[tuple[str, str]]:
        return self._problems

    def notes(self) -> list[str]:
        return [f"{what} on {n} occasion(s): read as nothing" for what, n in sorted(self.unread.items())]


def read_rag(file: str, documents: list[tuple[int | None, Any]]
             ) -> tuple[list[ObservedRun], list[tuple[str, str]], list[str]]:
    """Runs from one file's RAG traces (the run reader interface of mbt.runs.reader.RUN_READERS), and the keys read
    as nothing, counted over the file."""
    reading = RagFile(file)
    runs = [run for line, doc in documents if (run := reading.add(line, doc)) is not None]
    return runs, reading.problems(), reading.notes()
