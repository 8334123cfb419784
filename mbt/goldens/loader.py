"""Reads golden files (JSONL, YAML; files or folders): a broken line or case is reported with file:line and skipped."""

from __future__ import annotations

import codecs
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mbt.errors import LocatedError, Problem
from mbt.goldens.cases import GoldenCase, parse_case
from mbt.goldens.cases import reason as _reason
from mbt.goldens.sheets import SHEET_SUFFIXES, csv_cases, xlsx_cases
from mbt.goldens.yamlread import DecimalLoader
from mbt.parsing.reader import is_folder, read_bytes, shown_path

GOLDEN_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml", *SHEET_SUFFIXES)
MAX_GOLDEN_BYTES = 512 * 1024 * 1024


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


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose key repeats is refused: the last value would win without a word."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key `{repeated}` in a JSON object (which one counts is not said)")
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


def _jsonl_cases(text: str, shown: str, invalid: list[InvalidCase], first_line: int = 1,
                 bad_lines: dict[int, str] | None = None) -> Iterator[GoldenCase]:
    # Lines end at "\n" only: str.splitlines() also breaks at U+2028, U+2029 and U+0085, which are legal inside
    # JSON strings (pasted web text), and would cut one case in two and shift every later line number.
    for number, line in enumerate(text.split("\n"), start=first_line):
        if bad_lines and number in bad_lines:
            invalid.append(InvalidCase(shown, number, bad_lines[number]))
            continue
        stripped = line.strip(" \t\r\ufeff")  # a BOM starting a later line: files concatenated from exports
        if not stripped or stripped.startswith("//"):
            continue
        try:
            raw, end = _json_value(stripped)
            if stripped[end:].strip():
                raise ValueError(f"not valid JSON: Extra data (column {end + 1})")
            case = parse_case(raw, shown, number)
        except (ValueError, ValidationError) as err:
            invalid.append(InvalidCase(shown, number, _reason(err)))
            continue
        yield case


def _compose(text: str) -> list[yaml.Node]:
    """The case nodes of YAML text: one case, a list of cases, or several `---` documents of either."""
    nodes: list[yaml.Node] = []
    for doc in yaml.compose_all(text, Loader=yaml.SafeLoader):
        if doc is not None:
            nodes.extend(doc.value if isinstance(doc, yaml.SequenceNode) else [doc])
    return nodes


def _yaml_cases(text: str, shown: str, invalid: list[InvalidCase],
                bad_lines: dict[int, str] | None = None) -> Iterator[GoldenCase]:
    """A YAML file holds one case, a list of cases, or several `---` documents; line numbers come from the nodes.
    A syntax error loses only what it must: the file is read again piece by piece (documents, and the items of a
    top-level list), and each piece that still fails is one invalid case, or says how many cases it held."""
    try:
        nodes = _compose(text)
    except (yaml.YAMLError, RecursionError):
        yield from _yaml_recover(text, shown, invalid, bad_lines or {})
        return
    for node in nodes:
        yield from _yaml_node_case(node, shown, invalid, bad_lines or {})


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
    except (ValueError, ValidationError, yaml.YAMLError) as err:
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


def _yaml_recover(text: str, shown: str, invalid: list[InvalidCase],
                  bad_lines: dict[int, str]) -> Iterator[GoldenCase]:
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
           skipped: list[tuple[str, str]] | None = None) -> list[Path]:
    """Files as given, and golden files found (recursively, sorted) in the folders given; folders holding none are
    added to `empty_folders`, and other files found there (not hidden ones) to `skipped` as (folder, file): never
    passed over without a word (an .xls or .ods sheet, a .txt export). A file reached twice (`models/
    models/goldens/`, a folder and a file in it) is read once, where it is first reached: else each of its cases
    would be reported as a duplicate of itself."""
    found: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if is_folder(p):
            files = sorted(q for q in p.rglob("*") if q.is_file()
                           and not any(part.startswith(".") for part in q.relative_to(p).parts))
            inside = [q for q in files if q.suffix.lower() in GOLDEN_SUFFIXES]
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


def load_goldens(paths: list[str]) -> GoldenSet:
    """All cases of all files; unreadable files are unusable input (exit 2), broken cases are reported and skipped."""
    stream = GoldenStream(paths)
    cases = list(stream.cases)
    return GoldenSet(cases, stream.invalid, stream.files)


class GoldenStream:
    """The cases of golden files, read one at a time: a coverage run replays each case as it is read, so a hundred
    thousand cases never sit in memory together. Unreadable files fail at once (like load_goldens); `invalid`
    (broken and duplicate cases, by file and line) is complete once `cases` has been consumed, which it can be once.
    """

    # Told the characters of each text as it is read (a progress bar); a split-off part reports nothing.
    on_read: Callable[[int], None] | None = None

    def __init__(self, paths: list[str]):
        self.files: list[str] = []
        self._bad: dict[str, dict[int, str]] = {}  # per file: the lines that are not text (bad bytes, NUL)
        self._texts: list[tuple[str, str, str, int]] = []  # (suffix, shown path, text, number of its first line)
        problems: list[Problem] = []
        self.empty_folders: list[str] = []  # folders given that hold no golden file (the report says so)
        self.skipped_files: list[tuple[str, str]] = []  # (folder, file) found there that is not a golden file
        for path in expand(paths, self.empty_folders, self.skipped_files):
            shown = shown_path(path)
            if shown == STDIN:
                stdin = getattr(sys.stdin, "buffer", None)
                text, bad = decode_golden(stdin.read(), "<stdin>") if stdin else (sys.stdin.read(), {})
                self._bad["<stdin>"] = bad
                self.files.append("<stdin>")
                self._texts.append((_stdin_suffix(text), "<stdin>", text, 1))
                continue
            try:
                data = read_bytes(path, shown, MAX_GOLDEN_BYTES)
                if path.suffix.lower() == ".xlsx":  # a zip of XML: read by sheets.xlsx_cases, never as text
                    self.files.append(shown)
                    self._texts.append((".xlsx", shown, data, 1))  # type: ignore[arg-type]
                    continue
                text, self._bad[shown] = decode_golden(data, shown)
            except LocatedError as err:
                problems.extend(err.problems)
                continue
            self.files.append(shown)
            self._texts.append((path.suffix.lower(), shown, text, 1))
        if problems:
            raise LocatedError(problems)
        self._broken: list[InvalidCase] = []
        self._duplicates: list[InvalidCase] = []
        self._seen: dict[str, str] = {}  # case id -> where it first occurs

    @property
    def cases(self) -> Iterator[GoldenCase]:
        """Valid cases in file order; a repeated id is reported and skipped (the first one counts)."""
        for case in self.all_cases():
            if not self.repeats(case.id, case.file, case.line, case.where):
                yield case

    def all_cases(self) -> Iterator[GoldenCase]:
        """Every valid case, repeated ids included; broken ones go to `invalid`."""
        while self._texts:
            suffix, shown, text, first_line = self._texts.pop(0)  # the text goes once its cases are read
            if self.on_read is not None:
                self.on_read(len(text))
            if suffix in (".yaml", ".yml"):
                found = _yaml_cases(text, shown, self._broken, self._bad.get(shown))
            elif suffix == ".json":
                found = _json_cases(text, shown, self._broken, self._bad.get(shown))
            elif suffix == ".xlsx":
                found = xlsx_cases(text, shown, self._broken, InvalidCase)  # type: ignore[arg-type]
            elif suffix == ".csv":
                found = csv_cases(text, shown, self._broken, InvalidCase, self._bad.get(shown))
            else:
                found = _jsonl_cases(text, shown, self._broken, first_line, self._bad.get(shown))
            del text
            yield from found

    def repeats(self, case_id: str, file: str, line: int, where: str) -> bool:
        """True, and reported in `invalid`, when an earlier case has the same id."""
        first = self._seen.get(case_id)
        if first is not None:
            self._duplicates.append(InvalidCase(file, line, f"duplicate case id `{case_id}` (first at {first})"))
            return True
        self._seen[case_id] = where
        return False

    def split(self, later_share: float = 0.5) -> GoldenStream | None:
        """Move the later part of the unread text (`later_share` of it by size; a JSONL file is cut between lines)
        to a new stream, for a worker process to read; None when it cannot be split. Its cases come after all of
        this stream's: check their ids with `repeats` here, in order, and `adopt` its broken cases."""
        half = int(sum(len(text) for _, _, text, _ in self._texts) * (1 - later_share))
        size = 0
        for position, (suffix, shown, text, first_line) in enumerate(self._texts):
            if size + len(text) <= half:
                size += len(text)
                continue
            cut = text.find("\n", half - size) + 1 if suffix not in (".yaml", ".yml", ".json", *SHEET_SUFFIXES) else 0
            keep, rest = self._texts[:position], self._texts[position + 1:]
            if 0 < cut < len(text):
                keep.append((suffix, shown, text[:cut], first_line))
                rest.insert(0, (suffix, shown, text[cut:], first_line + len(text[:cut].splitlines())))
            else:
                rest.insert(0, (suffix, shown, text, first_line))
            if not keep or not rest:
                return None
            self._texts = keep
            return GoldenStream.of_pieces(rest, self._bad)
        return None

    @property
    def pieces(self) -> list[tuple[str, str, str, int]]:
        """The unread text as plain data, for another machine to read (`of_pieces`): (suffix, shown path, text,
        number of its first line) per file or part of one."""
        return list(self._texts)

    @staticmethod
    def of_pieces(pieces: list[tuple[str, str, str, int]], bad: dict[str, dict[int, str]] | None = None) -> GoldenStream:
        """The stream of `pieces` (as `pieces` gives them) and the lines of their files that are not text (`bad`,
        as `bad_lines` gives them): what a split-off part is, here or on a Dask worker."""
        stream = GoldenStream.__new__(GoldenStream)
        stream.files, stream.empty_folders, stream.skipped_files, stream._texts = [], [], [], list(pieces)
        stream._broken, stream._duplicates, stream._seen = [], [], {}
        stream._bad = dict(bad or {})
        return stream

    @property
    def bad_lines(self) -> dict[str, dict[int, str]]:
        """Per file of the unread pieces, the lines that are not text (bad bytes, NUL): shipped with `pieces`."""
        shown = {piece[1] for piece in self._texts}
        return {name: lines for name, lines in self._bad.items() if name in shown}

    @property
    def broken(self) -> list[InvalidCase]:
        """The broken cases met so far (not the duplicates)."""
        return self._broken

    def adopt(self, broken: list[InvalidCase]) -> None:
        """Take the broken cases of a stream split off this one (they follow this stream's own)."""
        self._broken.extend(broken)

    @property
    def size(self) -> int:
        """Characters of golden text not read yet."""
        return sum(len(text) for _, _, text, _ in self._texts)

    @property
    def invalid(self) -> list[InvalidCase]:
        # Sorted stably: at one place, broken cases come before duplicates.
        return sorted(self._broken + self._duplicates, key=lambda i: (i.file, i.line))


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
            except (ValueError, ValidationError) as err:
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
