"""Reads golden files (JSONL, YAML, JSON, sheets; files or folders), streamed: a broken line or case is reported and skipped."""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from mbt.errors import LocatedError, Problem
from mbt.goldens.cases import GoldenCase, GoldenSet, InvalidCase, parse_case  # noqa: F401 - GoldenSet: also from here
from mbt.goldens.cases import reason as _reason
from mbt.goldens.decode import decode_case
from mbt.goldens.seen import SeenIds
from mbt.goldens.sheets import SHEET_SUFFIXES, csv_cases, xlsx_cases
from mbt.goldens.yamlread import DecimalLoader
from mbt.reader import is_folder, read_bytes, shown_path

GOLDEN_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml", *SHEET_SUFFIXES)
MAX_GOLDEN_BYTES = 512 * 1024 * 1024


class InvalidList(list):
    """Invalid cases as they are met, keeping (with a `cap`) only the `cap` first by place (file, line) and counting
    the others in `dropped`: a golden set of a million broken lines costs no more than one of a thousand."""

    def __init__(self, cap: int | None = None):
        super().__init__()
        self.cap, self.dropped = cap, 0

    def append(self, item: InvalidCase) -> None:
        super().append(item)
        if self.cap is not None and len(self) > 2 * self.cap + 16:
            self._prune()

    def extend(self, items) -> None:
        for item in items:
            self.append(item)

    def __reduce__(self):  # pickled for worker processes: rebuilt whole (list's own way appends before __init__)
        return _invalid_list, (self.cap, self.dropped, list(self))

    def _prune(self) -> None:
        assert self.cap is not None
        kept = sorted(self, key=_place)[:self.cap]  # stable: at one place, the earlier one stays first
        self.dropped += len(self) - len(kept)
        self[:] = kept

    @property
    def total(self) -> int:
        return len(self) + self.dropped


def _invalid_list(cap: int | None, dropped: int, items: list[InvalidCase]) -> InvalidList:
    out = InvalidList(cap)
    out.extend(items)
    out.dropped += dropped
    return out


def _place(invalid: InvalidCase) -> tuple[str, int]:
    return invalid.file, invalid.line


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose key repeats is refused: the last value would win without a word."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key `{key}` in a JSON object (which one counts is not said)")
            seen.add(key)
    return out


def _json_value(text: str, start: int = 0) -> tuple[Any, int]:
    """One JSON value from `start` (exact decimals, repeated keys refused) and where it ends; ValueError (with the
    reason) for invalid JSON, nesting too deep for the parser, or an integer too long to convert."""
    try:
        return _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as err:
        where = f"line {err.lineno}, column {err.colno}" if err.lineno > 1 else f"column {err.colno}"
        raise ValueError(f"not valid JSON: {err.msg} ({where})") from None
    except RecursionError:
        raise ValueError("not usable JSON: nested too deeply") from None
    except ValueError as err:  # an integer of more than 4,300 digits; a duplicate key
        message = str(err)
        if "digits" in message:
            message = "an integer has too many digits (more than 4,300) to be a business value"
        raise ValueError(message) from None


_DECODER = json.JSONDecoder(parse_float=Decimal, object_pairs_hook=_no_duplicates)


Line = tuple[int, str | None, str | None]  # (line number, its text, or why it is not text)


def _text_lines(text: str, first_line: int = 1, bad_lines: dict[int, str] | None = None) -> Iterator[Line]:
    """The lines of text in memory (standard input, a UTF-16 file), with the problems of those that are not text."""
    # Lines end at "\n" only: str.splitlines() also breaks at U+2028, U+2029 and U+0085, which are legal inside
    # JSON strings (pasted web text), and would cut one case in two and shift every later line number.
    for number, line in enumerate(text.split("\n"), start=first_line):
        problem = bad_lines.get(number) if bad_lines else None
        yield (number, None, problem) if problem is not None else (number, line, None)


def _jsonl_cases(lines: Iterable[Line], shown: str, invalid: list[InvalidCase]) -> Iterator[GoldenCase]:
    for number, line, problem in lines:
        if line is None:
            invalid.append(InvalidCase(shown, number, problem or ""))
            continue
        stripped = line.strip(" \t\r\ufeff")  # a BOM starting a later line: files concatenated from exports
        if not stripped or stripped.startswith("//"):
            continue
        fast = decode_case(stripped, shown, number)  # the usual shape, straight into structs; else as below
        if fast is not None:
            yield fast
            continue
        try:
            raw, end = _json_value(stripped)
            if stripped[end:].strip():
                raise ValueError(f"not valid JSON: Extra data (column {end + 1})")
            case = parse_case(raw, shown, number)
        except ValueError as err:
            invalid.append(InvalidCase(shown, number, _reason(err)))
            continue
        yield case


def _compose(text: str) -> list[yaml.Node]:
    """The case nodes of YAML text: one case, a list of cases, or several `---` documents of either."""
    return list(_case_nodes(text))


def _case_nodes(text: str) -> Iterator[yaml.Node]:
    """The case nodes of YAML text one at a time: the items of a top-level list are composed (and can be dropped)
    one by one, so a file of many cases never becomes one tree of nodes (about 10x the text's size)."""
    loader = yaml.SafeLoader(text)
    try:
        loader.get_event()  # the stream's start
        while not loader.check_event(yaml.StreamEndEvent):
            loader.get_event()  # the document's start
            start = loader.peek_event()
            if isinstance(start, yaml.SequenceStartEvent) and start.anchor is None and start.tag is None:
                loader.get_event()
                while not loader.check_event(yaml.SequenceEndEvent):
                    yield loader.compose_node(None, None)  # type: ignore[arg-type,misc]  # as compose_document
                loader.get_event()
            else:
                node = loader.compose_node(None, None)  # type: ignore[arg-type]  # as compose_document does
                if isinstance(node, yaml.SequenceNode):
                    yield from node.value
                elif node is not None:
                    yield node
            loader.get_event()  # the document's end
            loader.anchors = {}
    finally:
        loader.dispose()


def _yaml_cases(text: str, shown: str, invalid: list[InvalidCase],
                bad_lines: dict[int, str] | None = None) -> Iterator[GoldenCase]:
    """A YAML file holds one case, a list of cases, or several `---` documents; line numbers come from the nodes.
    A syntax error loses only what it must: the rest of the file is read again piece by piece (documents, and the
    items of a top-level list), and each piece that still fails is one invalid case, or says how many cases it held."""
    done = 0  # the last line of the last case node read before a syntax error
    try:
        for node in _case_nodes(text):
            done = node.end_mark.line + (1 if node.end_mark.column else 0)
            yield from _yaml_node_case(node, shown, invalid, bad_lines or {})
    except (yaml.YAMLError, RecursionError):
        yield from _yaml_recover(text, shown, invalid, bad_lines or {}, done)


def _yaml_node_case(node: yaml.Node, shown: str, invalid: list[InvalidCase],
                    bad_lines: dict[int, str]) -> Iterator[GoldenCase]:
    line = node.start_mark.line + 1
    last = node.end_mark.line + (1 if node.end_mark.column else 0)
    bad = [n for n in bad_lines if line <= n <= last]
    if bad:
        invalid.append(InvalidCase(shown, line, f"line {bad[0]}: {bad_lines[bad[0]]}"))
        return
    try:
        raw = DecimalLoader("").construct_document(node)  # from the node itself: marks keep the file's lines
        case = parse_case(raw, shown, line)
    except (ValueError, yaml.YAMLError) as err:
        invalid.append(InvalidCase(shown, line, _yaml_reason(err)))
        return
    except RecursionError:
        invalid.append(InvalidCase(shown, line, "not usable YAML: nested too deeply"))
        return
    yield case


def _yaml_reason(err: Exception) -> str:
    if isinstance(err, yaml.MarkedYAMLError):
        problem = err.problem or str(err)
        mark = err.problem_mark
        return f"{problem} (line {mark.line + 1})" if mark is not None else problem
    if isinstance(err, ValueError) and "digits" in str(err):
        return "an integer has too many digits (more than 4,300) to be a business value"
    return _reason(err)


_DOCUMENT_MARK = re.compile(r"^(---|\.\.\.)(\s|$)")


def _yaml_recover(text: str, shown: str, invalid: list[InvalidCase], bad_lines: dict[int, str],
                  done: int = 0) -> Iterator[GoldenCase]:
    """The pieces of a YAML file that fails to parse, after line `done` (the cases before it were read)."""
    lines = text.split("\n")
    documents, start = [], 1
    for number, line in enumerate(lines, start=1):
        if _DOCUMENT_MARK.match(line):
            documents.append((start, number - 1))
            start = number
    documents.append((start, len(lines)))
    for first, last in documents:
        content = [n for n in range(first, last + 1) if lines[n - 1].strip()
                   and not lines[n - 1].lstrip().startswith("#") and not _DOCUMENT_MARK.match(lines[n - 1])]
        if not content:
            continue
        items = [n for n in content if lines[n - 1].startswith("- ") or lines[n - 1].rstrip() == "-"]
        listed = bool(items) and items[0] == content[0]  # a top-level block list: its items are told apart
        pieces = [(n, (items[i + 1] - 1) if i + 1 < len(items) else last) for i, n in enumerate(items)] \
            if listed else [(content[0], last)]
        for piece_first, piece_last in pieces:
            if piece_first <= done:
                continue
            # Blank lines before the piece keep every mark (and so every case's line) where it is in the file.
            piece = "\n" * (piece_first - 1) + "\n".join(lines[piece_first - 1:piece_last])
            try:
                nodes = _compose(piece)
            except (yaml.YAMLError, RecursionError) as err:
                mark = getattr(err, "problem_mark", None)
                where = f" at line {mark.line + 1}" if mark is not None else ""
                problem = getattr(err, "problem", None) or ("nested too deeply" if isinstance(err, RecursionError)
                                                            else str(err))
                if listed:
                    lost = "this case was skipped"
                elif lines[piece_first - 1].lstrip()[:1] in "[-":
                    lost = (f"lines {piece_first}-{piece_last} were skipped (how many cases they hold cannot be "
                            "told)")
                else:
                    lost = f"1 case lost (lines {piece_first}-{piece_last} were skipped)"
                invalid.append(InvalidCase(shown, piece_first, f"not valid YAML{where}: {problem}; {lost}"))
                continue
            for node in nodes:
                yield from _yaml_node_case(node, shown, invalid, bad_lines)


STDIN = "-"


def expand(paths: list[str], empty_folders: list[str] | None = None,
           skipped: list[tuple[str, str]] | None = None, not_goldens: Mapping[str, str] | None = None,
           left_out: list[tuple[str, str, str]] | None = None) -> list[Path]:
    """Files as given, and golden files found (recursively, sorted) in the folders given; folders holding none are
    added to `empty_folders`, and other files found there (not hidden ones) to `skipped` as (folder, file): never
    passed over without a word (an .xls or .ods sheet, a .txt export). A file found in a folder whose resolved path
    `not_goldens` names (mbt.paths.left_out: a gate file, a run, a source document) is not read, and added to
    `left_out` as (folder, file, why). A file reached twice (`models/ models/goldens/`, a folder and a file in it)
    is read once, where it is first reached: else each of its cases would be reported as a duplicate of itself."""
    found: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if is_folder(p):
            files = sorted(q for q in p.rglob("*") if q.is_file()
                           and not any(part.startswith(".") for part in q.relative_to(p).parts))
            inside = [q for q in files if q.suffix.lower() in GOLDEN_SUFFIXES]
            if not_goldens:
                why = {q: not_goldens.get(str(q.resolve())) for q in inside}
                if left_out is not None:
                    left_out.extend((raw, str(q), reason) for q, reason in why.items() if reason is not None)
                inside = [q for q in inside if why[q] is None]
            if not inside and empty_folders is not None:
                empty_folders.append(raw)
            if skipped is not None:
                skipped.extend((raw, str(q)) for q in files if q.suffix.lower() not in GOLDEN_SUFFIXES)
        else:
            inside = [p]
        for q in inside:
            key = q.resolve() if raw != STDIN else q
            if key not in seen:
                seen.add(key)
                found.append(q)
    return found


def _stdin_suffix(text: str) -> str:
    """What standard input holds: JSON Lines when it starts with `{`, a JSON list with `[`, else YAML."""
    start = text.lstrip()[:1]
    return ".jsonl" if start == "{" else ".json" if start == "[" else ".yaml"


def load_goldens(paths: list[str], not_goldens: Mapping[str, str] | None = None) -> GoldenSet:
    """All cases of all files; unreadable files are unusable input (exit 2), broken cases are reported and skipped.
    `not_goldens`: files of the folders that are not read (GoldenStream)."""
    stream = GoldenStream(paths, not_goldens=not_goldens)
    cases = list(stream.cases)
    return GoldenSet(cases, stream.invalid, stream.files, stream.left_out)


@dataclass(frozen=True)
class FileRange:
    """Bytes [start, end) of a golden file, read only when its cases are reached: a golden file is never held in
    memory whole, except in the formats that must be (see WHOLE_SUFFIXES)."""

    path: str
    start: int
    end: int
    stamp: tuple[int, int]  # (size, mtime_ns) when the run began: a part read from a changed file is refused

    @property
    def size(self) -> int:
        return self.end - self.start


# Formats read whole when their file is reached (at most MAX_GOLDEN_BYTES each): a JSON array and a spreadsheet are
# not line-based, and a YAML file's syntax errors are recovered from its whole text. JSON Lines (any other suffix
# too) are read line by line from the file, whatever its size.
WHOLE_SUFFIXES = (".json", ".yaml", ".yml", *SHEET_SUFFIXES)
Piece = tuple[str, str, "str | FileRange", int]  # (suffix, shown path, text in memory or a file range, first line)
_READ_STEP = 1 << 20  # bytes read between two calls of on_read (a progress bar)


def _open_piece(path: Path, shown: str) -> tuple[Piece, dict[int, str]]:
    """The piece of a golden file (a range of the file; its text for UTF-16/32, decoded here) and the lines of that
    text that are not text; unusable files (missing, a folder, binary, too large to read whole) raise LocatedError."""
    suffix = path.suffix.lower()
    try:
        missing, folder = not path.exists(), path.is_dir()
        if missing or folder:
            raise LocatedError([Problem(shown, 1, 1, "no such file" if missing else "is a folder, not a file")])
        status = path.stat()
        with path.open("rb") as handle:
            head = handle.read(8192)
    except OSError as err:  # a name over 255 bytes, a path through a file, no permission, ...
        raise LocatedError([Problem(shown, 1, 1, f"cannot read file: {err.strerror}")]) from None
    size = status.st_size
    utf16 = head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    if (utf16 or suffix in WHOLE_SUFFIXES) and size > MAX_GOLDEN_BYTES:
        raise LocatedError([Problem(shown, 1, 1, f"file is too large ({size:,} bytes; the limit is "
                                    f"{MAX_GOLDEN_BYTES:,} for a file read whole)")])
    if utf16:  # rare (Windows "Unicode" exports): decoded whole, here, so a bad one is refused before any replay
        text, bad = decode_golden(read_bytes(path, shown, MAX_GOLDEN_BYTES), shown)
        return (suffix, shown, text, 1), bad
    if suffix != ".xlsx" and head and len(NUL_OR_CONTROL.findall(head)) * 10 > len(head):
        raise LocatedError([Problem(shown, 1, 1, "this is a binary file, not a text file")])
    return (suffix, shown, FileRange(str(path), 0, size, (size, status.st_mtime_ns)), 1), {}


def _read_range(source: FileRange, shown: str) -> bytes:
    with _opened(source, shown) as handle:
        return handle.read(source.size)


def _opened(source: FileRange, shown: str):
    """The file of a range, positioned at its start; refused when it is not the file the run began with."""
    try:
        handle = open(source.path, "rb")  # noqa: SIM115 - the caller closes it (a context manager)
        status = os.fstat(handle.fileno())
    except OSError as err:
        raise LocatedError([Problem(shown, 1, 1, f"cannot read file: {err.strerror}")]) from None
    if (status.st_size, status.st_mtime_ns) != source.stamp:
        handle.close()
        raise LocatedError([Problem(shown, 1, 1, "the file changed while mbt was reading it")])
    handle.seek(source.start)
    return handle


def _file_lines(source: FileRange, shown: str, first_line: int,
                on_read: Callable[[int], None] | None) -> Iterator[Line]:
    """The lines of a JSON Lines range, read one at a time; a line holding a NUL or a byte that is not UTF-8 is
    reported alone (the same words as decode_golden), and the lines around it are read."""
    number, left, unreported = first_line, source.size, 0
    with _opened(source, shown) as handle:
        for raw in handle:  # a binary file splits at b"\n" only
            if left <= 0:
                break
            left -= len(raw)
            if left < 0:
                raw = raw[:left]
            raw = raw.removesuffix(b"\n")
            try:
                line = raw.decode("utf-8")
                nul = line.find("\x00")
                yield (number, line, None) if nul < 0 else (number, None, f"holds a NUL character (column {nul + 1})")
            except UnicodeDecodeError as err:
                yield number, None, f"not valid UTF-8 text (byte 0x{raw[err.start]:02X} at column {err.start + 1})"
            number += 1
            if on_read is not None:
                unreported += len(raw) + 1
                if unreported >= _READ_STEP:
                    on_read(unreported)
                    unreported = 0
    if on_read is not None and unreported:
        on_read(unreported)


def _line_start(source: FileRange, shown: str, at: int) -> tuple[int, int]:
    """Where the first line starting at or after byte `at` of the range begins, and how many lines precede it."""
    lines, position = 0, source.start
    with _opened(source, shown) as handle:
        while position < at:  # counted in blocks: a gigabyte is scanned in well under a second
            block = handle.read(min(_READ_STEP, at - position))
            if not block:
                break
            lines += block.count(b"\n")
            position += len(block)
        rest = handle.readline() if position < source.end else b""
    if position >= source.end:
        return source.end, lines
    if rest.endswith(b"\n"):
        return min(position + len(rest), source.end), lines + 1
    return source.end, lines


class GoldenStream:
    """The cases of golden files, read one at a time: a coverage run replays each case as it is read, so a hundred
    thousand cases never sit in memory together, nor does a file's text (JSON Lines are read line by line from the
    file; see WHOLE_SUFFIXES for what is read whole). Unusable files fail at once (like load_goldens); `invalid`
    (broken and duplicate cases, by file and line) is complete once `cases` has been consumed, which it can be once.
    """

    # Told the bytes (characters, for text in memory) of each piece as it is read (a progress bar).
    on_read: Callable[[int], None] | None = None

    def __init__(self, paths: list[str], invalid_cap: int | None = None, not_goldens: Mapping[str, str] | None = None):
        """`invalid_cap`: at most this many invalid cases kept, the first by place (`invalid_count` counts all).
        `not_goldens`: files found in the folders that are not read, by resolved path, with why (mbt.paths.left_out:
        in a folder given as a positional path, gate files, observed runs, source documents)."""
        self.invalid_cap = invalid_cap
        self.files: list[str] = []
        self._bad: dict[str, dict[int, str]] = {}  # per text in memory: the lines that are not text (bad bytes, NUL)
        self._texts: list[Piece] = []
        problems: list[Problem] = []
        self.empty_folders: list[str] = []  # folders given that hold no golden file (the report says so)
        self.skipped_files: list[tuple[str, str]] = []  # (folder, file) found there that is not a golden file
        self.left_out: list[tuple[str, str, str]] = []  # (folder, file, why) found there and not read (not_goldens)
        for path in expand(paths, self.empty_folders, self.skipped_files, not_goldens, self.left_out):
            shown = shown_path(path)
            if shown == STDIN:  # read whole: standard input can be neither read twice nor split
                stdin = getattr(sys.stdin, "buffer", None)
                text, bad = decode_golden(stdin.read(), "<stdin>") if stdin else (sys.stdin.read(), {})
                self._bad["<stdin>"] = bad
                self.files.append("<stdin>")
                self._texts.append((_stdin_suffix(text), "<stdin>", text, 1))
                continue
            try:
                piece, bad = _open_piece(path, shown)
            except LocatedError as err:
                problems.extend(err.problems)
                continue
            if bad:
                self._bad[shown] = bad
            self.files.append(shown)
            self._texts.append(piece)
        if problems:
            raise LocatedError(problems)
        self._broken = InvalidList(invalid_cap)
        self._duplicates = InvalidList(invalid_cap)
        self._seen = SeenIds()

    @property
    def cases(self) -> Iterator[GoldenCase]:
        """Valid cases in file order; a repeated id is reported and skipped (the first one counts)."""
        for case in self.all_cases():
            if not self.repeats(case.id, case.file, case.line, case.where):
                yield case

    def all_cases(self) -> Iterator[GoldenCase]:
        """Every valid case, repeated ids included; broken ones go to `invalid`."""
        while self._texts:
            suffix, shown, source, first_line = self._texts.pop(0)  # a piece goes once its cases are read
            yield from self._piece_cases(suffix, shown, source, first_line)

    def _piece_cases(self, suffix: str, shown: str, source: str | FileRange, first_line: int) -> Iterator[GoldenCase]:
        bad = self._bad.get(shown)
        if isinstance(source, FileRange) and suffix not in WHOLE_SUFFIXES:
            yield from _jsonl_cases(_file_lines(source, shown, first_line, self.on_read), shown, self._broken)
            return
        if isinstance(source, FileRange):
            data = _read_range(source, shown)
            if self.on_read is not None:
                self.on_read(len(data))
            if suffix == ".xlsx":  # a zip of XML: read by sheets.xlsx_cases, never as text
                yield from xlsx_cases(data, shown, self._broken, InvalidCase)
                return
            text, bad = decode_golden(data, shown)
            del data
        else:
            text = source
            if self.on_read is not None:
                self.on_read(len(text))
        if suffix in (".yaml", ".yml"):
            yield from _yaml_cases(text, shown, self._broken, bad)
        elif suffix == ".json":
            yield from _json_cases(text, shown, self._broken, bad)
        elif suffix == ".csv":
            yield from csv_cases(text, shown, self._broken, InvalidCase, bad)
        else:
            yield from _jsonl_cases(_text_lines(text, first_line, bad), shown, self._broken)

    def repeats(self, case_id: str, file: str, line: int, where: str = "") -> bool:
        """True, and reported in `invalid`, when an earlier case has the same id (`where`: unused, kept for callers)."""
        first = self._seen.first(case_id, file, line)
        if first is not None:
            self._duplicates.append(InvalidCase(file, line, f"duplicate case id `{case_id}` (first at {first})"))
            return True
        return False

    def seen(self, case_id: str) -> bool:
        """Whether a case with this id was counted already (nothing is recorded)."""
        return self._seen.where(case_id) is not None

    def split(self, later_share: float = 0.5) -> GoldenStream | None:
        """Move the later part of the unread goldens (`later_share` of them by size; a JSON Lines file is cut
        between lines) to a new stream, for a worker process to read; None when it cannot be split. Its cases come
        after all of this stream's: check their ids with `repeats` here, in order, and `adopt` its broken cases."""
        half = int(self.size * (1 - later_share))
        size = 0
        for position, piece in enumerate(self._texts):
            suffix, shown, source, first_line = piece
            length = _piece_size(piece)
            if size + length <= half:
                size += length
                continue
            keep, rest = self._texts[:position], self._texts[position + 1:]
            early, late = _cut(piece, half - size) if suffix not in WHOLE_SUFFIXES else (None, piece)
            if early is not None and late is not None:
                keep.append(early)
                rest.insert(0, late)
            else:
                rest.insert(0, piece)
            if not keep or not rest:
                return None
            self._texts = keep
            return GoldenStream.of_pieces(rest, self._bad, self.invalid_cap)
        return None

    @property
    def pieces(self) -> list[Piece]:
        """The unread goldens as plain data, for another process or machine to read (`of_pieces`): (suffix, shown
        path, the text or a range of the file, number of its first line) per file or part of one."""
        return list(self._texts)

    @staticmethod
    def of_pieces(pieces: list[Piece], bad: dict[str, dict[int, str]] | None = None,
                  invalid_cap: int | None = None) -> GoldenStream:
        """The stream of `pieces` (as `pieces` gives them) and the lines of their texts that are not text (`bad`,
        as `bad_lines` gives them): what a split-off part is, here or on a Dask worker."""
        stream = GoldenStream.__new__(GoldenStream)
        stream.files, stream.empty_folders, stream.skipped_files, stream._texts = [], [], [], list(pieces)
        stream.left_out = []
        stream.invalid_cap = invalid_cap
        stream._broken, stream._duplicates = InvalidList(invalid_cap), InvalidList(invalid_cap)
        stream._seen = SeenIds()
        stream._bad = dict(bad or {})
        return stream

    @property
    def bad_lines(self) -> dict[str, dict[int, str]]:
        """Per text of the unread pieces, the lines that are not text (bad bytes, NUL): shipped with `pieces`."""
        shown = {piece[1] for piece in self._texts}
        return {name: lines for name, lines in self._bad.items() if name in shown}

    @property
    def broken(self) -> list[InvalidCase]:
        """The broken cases met so far (not the duplicates)."""
        return self._broken

    @property
    def duplicates(self) -> list[InvalidCase]:
        """The cases skipped so far because an earlier case has their id."""
        return self._duplicates

    def adopt(self, broken: list[InvalidCase], duplicates: Sequence[InvalidCase] = ()) -> None:
        """Take the broken (and duplicate) cases of a stream split off this one (they follow this stream's own)."""
        self._broken.extend(broken)
        self._duplicates.extend(duplicates)
        self._broken.dropped += getattr(broken, "dropped", 0)
        self._duplicates.dropped += getattr(duplicates, "dropped", 0)

    @property
    def size(self) -> int:
        """Bytes of golden files (characters of text in memory) not read yet."""
        return sum(_piece_size(piece) for piece in self._texts)

    @property
    def invalid(self) -> list[InvalidCase]:
        """The broken and duplicate cases by place (with a cap, the first `invalid_cap` of them)."""
        # Sorted stably: at one place, broken cases come before duplicates.
        found = sorted(self._broken + self._duplicates, key=_place)
        return found if self.invalid_cap is None else found[:self.invalid_cap]

    @property
    def invalid_count(self) -> int:
        """How many cases were broken or duplicates, listed in `invalid` or not."""
        return self._broken.total + self._duplicates.total


def _piece_size(piece: Piece) -> int:
    source = piece[2]
    return source.size if isinstance(source, FileRange) else len(source)


def _cut(piece: Piece, at: int) -> tuple[Piece | None, Piece | None]:
    """A JSON Lines piece cut at the first line boundary from `at` (bytes or characters into it): the two parts,
    either None when the cut falls at an end."""
    suffix, shown, source, first_line = piece
    early: FileRange | str
    late: FileRange | str
    if isinstance(source, FileRange):
        cut, lines = _line_start(source, shown, source.start + at)
        early = FileRange(source.path, source.start, cut, source.stamp)
        late = FileRange(source.path, cut, source.end, source.stamp)
    else:
        cut = source.find("\n", at) + 1
        cut = cut if cut > 0 else len(source)
        early, late, lines = source[:cut], source[cut:], source.count("\n", 0, cut)
    return ((suffix, shown, early, first_line) if _piece_size((suffix, shown, early, 0)) else None,
            (suffix, shown, late, first_line + lines) if _piece_size((suffix, shown, late, 0)) else None)


def _json_cases(text: str, shown: str, invalid: list[InvalidCase],
                bad_lines: dict[int, str] | None = None) -> Iterator[GoldenCase]:
    """A .json file holds one case or a list of cases (JSONL is the usual format; this is for single exports).
    Each case is located at the line where it starts; a broken list item ends the reading, and says so."""
    bad_lines = bad_lines or {}
    counted, counted_line = 0, 1

    def line_of(pos: int) -> int:  # counted forward only: a file of many cases is scanned once
        nonlocal counted, counted_line
        counted_line += text.count("\n", counted, pos)
        counted = pos
        return counted_line

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\r\n\ufeff":
            pos += 1
        return pos

    pos = skip(0)
    listed = text.startswith("[", pos)
    pos = skip(pos + 1) if listed else pos
    while pos < len(text) and not (listed and text[pos] == "]"):
        line = line_of(pos)
        try:
            raw, end = _json_value(text, pos)
        except ValueError as err:
            resync = _json_end(text, pos)
            if resync is None:
                invalid.append(InvalidCase(shown, line, f"{err}; the rest of the file was skipped"))
                return
            invalid.append(InvalidCase(shown, line, str(err)))
            end = resync
        else:
            bad = [n for n in bad_lines if line <= n <= line_of(end)]
            try:
                if bad:
                    raise ValueError(f"line {bad[0]}: {bad_lines[bad[0]]}")
                case = parse_case(raw, shown, line)
            except ValueError as err:
                invalid.append(InvalidCase(shown, line, _reason(err)))
            else:
                yield case
        pos = skip(end)
        if not listed:
            break
        if text.startswith(",", pos):
            pos = skip(pos + 1)
        elif not text.startswith("]", pos):
            invalid.append(InvalidCase(shown, line_of(pos), "not valid JSON: expected `,` or `]` after a case; "
                                       "the rest of the file was skipped"))
            return
    if listed and not text.startswith("]", pos):
        invalid.append(InvalidCase(shown, line_of(min(pos, len(text))), "not valid JSON: the list of cases is not "
                                   "closed with `]`"))
        return
    rest = skip(pos + 1 if listed else pos)
    if rest < len(text):
        invalid.append(InvalidCase(shown, line_of(rest), "not valid JSON: extra data after the cases"))


_LENIENT = json.JSONDecoder(parse_int=str, parse_float=str, object_pairs_hook=list)


def _json_end(text: str, pos: int) -> int | None:
    """Where the JSON value at `pos` ends when it is valid JSON that mbt refuses (a repeated key, a huge integer),
    so the next case can still be read; None when it is not JSON at all."""
    try:
        return _LENIENT.raw_decode(text, pos)[1]
    except (ValueError, RecursionError):
        return None


NUL_OR_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


def decode_golden(data: bytes, shown: str) -> tuple[str, dict[int, str]]:
    """A golden file's text and its unreadable lines (line -> why). UTF-16/32 with a byte-order mark is read as
    such; a file that is mostly control bytes is binary (refused whole); otherwise a line holding a NUL or a byte
    that is not UTF-8 is reported alone, its bad bytes shown as U+FFFD so the lines around it still parse."""
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(codec), {}
            except UnicodeDecodeError as err:
                raise LocatedError([Problem(shown, 1, 1, f"the file starts with a {codec.upper()} byte-order "
                                            f"mark but is not valid {codec.upper()} (byte {err.start})")]) from None
    head = data[:8192]
    if head and len(NUL_OR_CONTROL.findall(head)) * 10 > len(head):
        raise LocatedError([Problem(shown, 1, 1, "this is a binary file, not a text file")])
    if b"\x00" not in data:
        try:
            return data.decode("utf-8-sig"), {}
        except UnicodeDecodeError:
            pass
    bad: dict[int, str] = {}
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        nul = raw.find(b"\x00")
        try:
            raw.decode("utf-8")
            problem = None if nul < 0 else f"holds a NUL character (column {nul + 1})"
        except UnicodeDecodeError as err:
            problem = f"not valid UTF-8 text (byte 0x{raw[err.start]:02X} at column {err.start + 1})"
        if problem is not None:
            bad[number] = problem
            lines[number - 1] = raw.replace(b"\x00", "\ufffd".encode())
    text = b"\n".join(lines).decode("utf-8", errors="replace")
    return text.removeprefix("\ufeff"), bad
