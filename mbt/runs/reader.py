"""Reads observed-run files or folders through the run readers (RUN_READERS, found by content); a file or line no
reader can use is reported with its location and the rest is read (never skipped silently).

A file is read as a stream (`FileRuns`): its runs come one at a time, each as soon as it can be built (a transcript
when its line is read, a trace once its spans are located: mbt.runs.otlp), so judging a file needs the memory of
its largest run, not of the file. The bytes are decoded by msgspec (mbt.runs.decoding) when they are plain UTF-8
JSON; a file with anything unusual (a byte-order mark, a byte that is not UTF-8, a 4,300-digit number) and every
value msgspec does not take is read the careful way, by Python's json and the readers' checks, which give the
messages and the values they always gave (tests/test_runs_reading_gold.py keeps the reports byte for byte).
"""

from __future__ import annotations

import importlib
import json
import mmap
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mbt.errors import LocatedError, Problem
from mbt.reader import read_bytes, read_text
from mbt.runs import decoding
from mbt.runs.steps import InvalidRun, ObservedRun, RunSet

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
    # "module:Class" of a reader of one file's values one at a time: Class(file, buffer) with `add(line, value)`
    # (a run, or None), then `runs()` (the runs `add` did not give), `problems()` and `notes()`; None: the file's
    # values are gathered and given to `read` at once.
    stream: str | None = None

    def recognises(self, value: Any) -> bool:
        return bool(_function(self.recognise)(value))

    def reader(self) -> Callable[..., Any]:
        return _function(self.read)


RUN_SUFFIXES = (".json", ".jsonl")
RUN_READERS = (
    RunReader("otlp", "mbt.runs.otlp:is_otlp", "mbt.runs.otlp:read_otlp", "mbt.runs.otlp:OtlpFile"),
    RunReader("transcript", "mbt.runs.transcripts:is_transcript", "mbt.runs.transcripts:read_transcripts",
              "mbt.runs.transcripts:TranscriptFile"),
    RunReader("rag", "mbt.runs.rag:is_rag", "mbt.runs.rag:read_rag", "mbt.runs.rag:RagFile"),
)
OTLP = RUN_READERS[0]


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
        reading = FileRuns(name, shown)
        out.files.append(shown)
        out.runs.extend(reading)
        out.invalid.extend(reading.invalid)
        out.unread.extend(reading.unread)
    return out


NOT_A_RUN = ("neither an OTLP trace (`resourceSpans`, or a span with `traceId` and `spanId`), a transcript "
             "(`messages`, `session_id`, a list of messages or of turn results) nor a RAG trace (`retrieved`, "
             "`selected_source`, `claims`)")
MAPPED_FROM = 1 << 20  # files from this size on are mapped into memory, not read into it
_OTHER_ENCODINGS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")  # UTF-16 and UTF-32 byte-order marks
_UTF8_BOM = b"\xef\xbb\xbf"


class FileRuns:
    """One run file read as a stream: iterating gives its runs in file order (within an OTLP file, traces by trace
    id; a file holding values for several readers gives each reader's runs in turn, in the order the readers are
    first met), each built when it can be; then `invalid` and `unread` hold what could not be used and what was read
    as nothing, in the order `read_files` has always listed them."""

    def __init__(self, name: str, shown: str):
        self.path, self.shown = Path(name), shown
        self.invalid: list[InvalidRun] = []
        self.unread: list[str] = []
        self._decode_problems: list[InvalidRun] = []  # values that are not JSON, in file order
        self._not_runs: list[InvalidRun] = []  # values no reader recognises, in file order
        self._streams: dict[str, Any] = {}  # reader name -> its file reader, in the order first met
        self._held: dict[str, list[tuple[int | None, Any]]] = {}  # values of a reader met after another, held
        self._ready: list[ObservedRun] = []  # runs of the first reader met, given out as they come
        self._buffer: Any = None
        self._long_digits: list[int] = []  # where the file holds a run of 4,301 digits or more (msgspec skips them)

    def __iter__(self) -> Iterator[ObservedRun]:
        if self.path.suffix.lower() not in RUN_SUFFIXES:
            self.invalid.append(InvalidRun(self.shown, f"not a trace or transcript file (mbt reads "
                                                       f"{', '.join(RUN_SUFFIXES)})"))
            return
        data = self._bytes()
        if data is None or not self._plain(data):
            yield from self._careful()
            return
        self._buffer = data
        self._long_digits = decoding.long_digit_runs(data)
        if self.path.suffix.lower() == ".jsonl":
            view = memoryview(data)  # lines are views of the bytes (or of the mapping), never copies
            for number, start, end in _lines(data):
                self._value(view[start:end], number, start, end)
                yield from self._take_ready()
        else:
            self._value(data, None, 0, len(data))
            yield from self._take_ready()
        yield from self._finish()

    # ---------------------------------------------------------------- the bytes

    def _bytes(self) -> Any:
        """The file's bytes (mapped into memory when large), or None when they cannot be had so (missing, too large,
        unreadable, changing): the careful reading then says why, as it always has."""
        try:
            size = self.path.stat().st_size
            if not self.path.is_file() or size > MAX_RUN_BYTES:
                return None
            if size < MAPPED_FROM:
                return read_bytes(self.path, self.shown, MAX_RUN_BYTES)
            with open(self.path, "rb") as handle:
                return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (LocatedError, OSError, ValueError):
            return None

    def _plain(self, data: Any) -> bool:
        """Whether the file is UTF-8 without a byte-order mark and NUL-free at its start: what `read_text` reads
        without a word, so its values can be decoded from the bytes."""
        if not data[:4] or any(data[:4].startswith(bom) for bom in _OTHER_ENCODINGS) or b"\x00" in data[:8192]:
            return False
        found = decoding.encoding_of(data)
        return found == "ascii" or (found == "utf-8" and data.find(_UTF8_BOM) == -1)  # a BOM is not ASCII

    # ---------------------------------------------------------------- one value

    def _value(self, data: Any, line: int | None, start: int, end: int) -> None:
        """One JSON value (the document, or a line): located by what it is, decoded where that is needed now."""
        if not any(start - len(decoding.LONG_DIGITS) <= at < end for at in self._long_digits):
            try:
                head = decoding.head_decoder.decode(data)
            except decoding.DecodeFailure:
                head = None
            if head is not None:
                if head.resourceSpans is not decoding.UNSET:
                    self._stream(OTLP).add_document(data, line)
                elif head.traceId is not decoding.UNSET and head.spanId is not decoding.UNSET:
                    self._stream(OTLP).add_span_line(start, end, line, head.traceId)
                else:
                    self._route(line, decoding.loads(data))
                return
        # what msgspec does not take: json decides, with its messages
        text = bytes(data).decode("utf-8")
        try:
            value = _decode(text, self.shown, line)
        except InvalidRunError as err:
            self._decode_problems.append(err.invalid)
            return
        self._route(line, value)

    def _route(self, line: int | None, value: Any) -> None:
        reader = run_reader_for(value)
        if reader is None:
            where = f"{self.shown}:{line}" if line is not None else self.shown
            self._not_runs.append(InvalidRun(where, NOT_A_RUN))
            return
        stream = self._stream(reader)
        if reader.stream is not None and next(iter(self._streams)) == reader.name:
            run = stream.add(line, value)  # the first reader met: its runs come first, as they are read
            if run is not None:
                self._ready.append(run)
        else:
            self._held.setdefault(reader.name, []).append((line, value))

    def _stream(self, reader: RunReader) -> Any:
        found = self._streams.get(reader.name)
        if found is None:
            found = _function(reader.stream)(self.shown, self._buffer) if reader.stream is not None else reader
            self._streams[reader.name] = found
        return found

    def _take_ready(self) -> Iterator[ObservedRun]:
        if self._ready:
            ready, self._ready = self._ready, []
            yield from ready

    # ---------------------------------------------------------------- the file's end

    def _finish(self) -> Iterator[ObservedRun]:
        groups: list[tuple[list[tuple[str, str]], list[str]]] = []
        for name, stream in self._streams.items():
            held = self._held.pop(name, [])
            if isinstance(stream, RunReader):  # a reader without a stream: its values at once
                runs, problems, notes = stream.reader()(self.shown, held)
                yield from runs
                groups.append((problems, notes))
                continue
            for line, value in held:
                run = stream.add(line, value)
                if run is not None:
                    yield run
            yield from stream.runs()
            groups.append((stream.problems(), stream.notes()))
        self.invalid.extend(self._decode_problems + self._not_runs)
        for problems, notes in groups:
            self.invalid.extend(InvalidRun(where, message) for where, message in problems)
            self.unread.extend(f"{self.shown}: {note}" for note in notes)

    def _careful(self) -> Iterator[ObservedRun]:
        """The file read as text and decoded by json, value by value (a file `_plain` does not take)."""
        try:
            text = read_text(self.path, self.shown, MAX_RUN_BYTES)
        except LocatedError as err:
            self.invalid.extend(InvalidRun(f"{p.path}:{p.line}:{p.column}", p.message) for p in err.problems)
            return
        for line, doc in _documents(text, self.shown, self.path.suffix.lower() == ".jsonl", self._decode_problems):
            self._route(line, doc)
            yield from self._take_ready()
        yield from self._finish()


def _lines(data: Any) -> Iterator[tuple[int, int, int]]:
    """(line number, start, end) of each JSON Lines line that is not blank, split at "\\n" only (U+2028 may sit inside
    a JSON string) and without the spaces, tabs and carriage returns around it."""
    size = len(data)
    start, number = 0, 0
    while start <= size:
        end = data.find(b"\n", start)
        if end == -1:
            end = size
        number += 1
        first, last = start, end
        while first < last and data[first] in _BLANK:
            first += 1
        while last > first and data[last - 1] in _BLANK:
            last -= 1
        if first < last:
            yield number, first, last
        start = end + 1


_BLANK = frozenset(b" \t\r")
