"""Reads observed-run files or folders through the run readers (RUN_READERS, found by content); a file or line no
reader can use is reported with its location and the rest is read (never skipped silently)."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mbt.errors import LocatedError, Problem
from mbt.reader import read_text
from mbt.runs.steps import InvalidRun, RunSet

MAX_RUN_BYTES = 512 * 1024 * 1024


def _function(name: str) -> Callable[..., Any]:
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)  # readers are imported when a file needs them


@dataclass(frozen=True)
class RunReader:
    """Reads observed runs (mbt.runs.steps) from JSON values: `recognise` takes one decoded value, `read` a file
    name and its values with their line numbers (None for a whole-file document) and returns (runs, problems, notes):
    notes say once per file what the reader read as nothing (docs/runs.md, "Unread telemetry")."""

    name: str
    recognise: str  # "module:function"
    read: str  # "module:function"

    def recognises(self, value: Any) -> bool:
        return bool(_function(self.recognise)(value))

    def reader(self) -> Callable[..., Any]:
        return _function(self.read)


RUN_SUFFIXES = (".json", ".jsonl")
RUN_READERS = (
    RunReader("otlp", "mbt.runs.otlp:is_otlp", "mbt.runs.otlp:read_otlp"),
    RunReader("transcript", "mbt.runs.transcripts:is_transcript", "mbt.runs.transcripts:read_transcripts"),
    RunReader("rag", "mbt.runs.rag:is_rag", "mbt.runs.rag:read_rag"),
)


def run_reader_for(value: Any) -> RunReader | None:
    return next((r for r in RUN_READERS if r.recognises(value)), None)



def _files(paths: list[str]) -> list[tuple[Path, str]]:
    out: list[tuple[Path, str]] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(f for f in path.rglob("*") if f.is_file() and not f.name.startswith("."))
            out.extend((f, str(f)) for f in found)
        elif not path.exists():
            raise LocatedError([Problem(p, 1, 1, "no such file or folder")])
        else:
            out.append((path, p))
    return out


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _decode(text: str, shown: str, line: int | None) -> Any:
    """One JSON value; raises InvalidRunError with the place. Besides syntax errors, json refuses integers past
    Python's digit limit (ValueError) and recurses once per nesting level (RecursionError); a `\\ud800` escape
    without its pair decodes to a lone surrogate, which is no text: no report could write it, nor protobuf read it."""
    try:
        value = json.loads(text)
        if _SURROGATE_ESCAPE.search(text):
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeEncodeError:
        found = _SURROGATE_ESCAPE.search(text)
        at = found.start() if found else 0
        row = line if line is not None else text.count("\n", 0, at) + 1
        col = at - text.rfind("\n", 0, at) if line is None else at + 1
        raise InvalidRunError(InvalidRun(f"{shown}:{row}:{col}", "a `\\uD800`-`\\uDFFF` escape without its pair "
                                         "is not text")) from None
    except json.JSONDecodeError as err:
        place = f"{shown}:{err.lineno if line is None else line}:{err.colno}"
        raise InvalidRunError(InvalidRun(place, f"not valid JSON: {err.msg}")) from None
    except RecursionError:
        raise InvalidRunError(InvalidRun(f"{shown}:{line or 1}:1", "JSON nested too deeply to read")) from None
    except ValueError as err:  # "Exceeds the limit (4300 digits) for integer string conversion"
        raise InvalidRunError(InvalidRun(f"{shown}:{line or 1}:1", f"not usable JSON: {err}")) from None


class InvalidRunError(ValueError):
    def __init__(self, invalid: InvalidRun):
        super().__init__(invalid.message)
        self.invalid = invalid


def _documents(text: str, shown: str, jsonl: bool, invalid: list[InvalidRun]) -> list[tuple[int | None, Any]]:
    if not jsonl:
        try:
            return [(None, _decode(text, shown, None))]
        except InvalidRunError as err:
            invalid.append(err.invalid)
            return []
    docs: list[tuple[int | None, Any]] = []
    for number, line in enumerate(text.split("\n"), start=1):  # "\n" only: U+2028 may sit inside a JSON string
        stripped = line.strip(" \t\r\ufeff")
        if not stripped:
            continue
        try:
            docs.append((number, _decode(stripped, shown, number)))
        except InvalidRunError as err:
            invalid.append(err.invalid)
    return docs


def read_runs(paths: list[str]) -> RunSet:
    """Every run in the files (folders: every file inside, sorted; a file that is not a trace or transcript is
    reported). Runs keep file order; within an OTLP file, traces are sorted by trace id."""
    return read_files(run_files(paths))


def run_files(paths: list[str]) -> list[tuple[str, str]]:
    """The files `read_runs` reads, in order, as (path, shown path): each is read alone, so a split list's parts
    read one after the other give what the whole list gives (mbt.runs.parts)."""
    return [(str(path), shown) for path, shown in _files(paths)]


def read_files(files: list[tuple[str, str]]) -> RunSet:
    """Every run in these files (as `run_files` lists them)."""
    out = RunSet()
    for name, shown in files:
        path = Path(name)
        out.files.append(shown)
        if path.suffix.lower() not in RUN_SUFFIXES:
            out.invalid.append(InvalidRun(shown, f"not a trace or transcript file (mbt reads {', '.join(RUN_SUFFIXES)})"))
            continue
        try:
            text = read_text(path, shown, MAX_RUN_BYTES)
        except LocatedError as err:
            out.invalid.extend(InvalidRun(f"{p.path}:{p.line}:{p.column}", p.message) for p in err.problems)
            continue
        docs = _documents(text, shown, path.suffix.lower() == ".jsonl", out.invalid)
        groups: dict[str, tuple[Any, list]] = {}  # reader name -> (reader, its documents), in first-seen order
        for line, doc in docs:
            reader = run_reader_for(doc)
            if reader is None:
                where = f"{shown}:{line}" if line is not None else shown
                out.invalid.append(InvalidRun(where, "neither an OTLP trace (`resourceSpans`, or a span with `traceId` "
                                                     "and `spanId`), a transcript (`messages`, `session_id`, "
                                                     "a list of messages or of turn results) nor a RAG trace "
                                                     "(`retrieved`, `selected_source`, `claims`)"))
                continue
            groups.setdefault(reader.name, (reader, []))[1].append((line, doc))
        for reader, found in groups.values():
            runs, problems, unread = reader.reader()(shown, found)
            out.runs.extend(runs)
            out.invalid.extend(InvalidRun(where, message) for where, message in problems)
            out.unread.extend(f"{shown}: {note}" for note in unread)
    return out
