"""Reads golden files (JSONL, YAML; files or folders): a broken line or case is reported with file:line and skipped."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import yaml
from pydantic import ValidationError

from mbt.errors import LocatedError, Problem
from mbt.goldens.cases import GoldenCase, parse_case
from mbt.parsing.reader import read_text

GOLDEN_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml")
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


def _reason(err: Exception) -> str:
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else first["msg"]
    return str(err)


def _jsonl_cases(text: str, shown: str, invalid: list[InvalidCase], first_line: int = 1) -> Iterator[GoldenCase]:
    # Lines end at "\n" only: str.splitlines() also breaks at U+2028, U+2029 and U+0085, which are legal inside
    # JSON strings (pasted web text), and would cut one case in two and shift every later line number.
    for number, line in enumerate(text.split("\n"), start=first_line):
        stripped = line.strip(" \t\r\ufeff")  # a BOM starting a later line: files concatenated from exports
        if not stripped or stripped.startswith("//"):
            continue
        try:
            raw = json.loads(stripped, parse_float=Decimal)
        except json.JSONDecodeError as err:
            invalid.append(InvalidCase(shown, number, f"not valid JSON: {err.msg} (column {err.colno})"))
            continue
        try:
            case = parse_case(raw, shown, number)
        except (ValueError, ValidationError) as err:
            invalid.append(InvalidCase(shown, number, _reason(err)))
            continue
        yield case


class DecimalLoader(yaml.SafeLoader):
    """YAML's safe loader, reading numbers with a fraction as exact decimals: a golden's 17.99999999999999999 is not
    the float 18.0, and 0.1 + 0.2 is 0.3 (goldens are business values; the model compares them exactly)."""


def _decimal(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Decimal | float:
    text = str(loader.construct_scalar(node)).replace("_", "")
    if text.lower().lstrip("+-") in (".inf", ".nan"):
        return loader.construct_yaml_float(node)  # not a business value: kept as YAML reads it (and refused later)
    return Decimal(text)


DecimalLoader.add_constructor("tag:yaml.org,2002:float", _decimal)


def _yaml_cases(text: str, shown: str, invalid: list[InvalidCase]) -> Iterator[GoldenCase]:
    """A YAML file holds one case, a list of cases, or several `---` documents; line numbers come from the nodes."""
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(err, "problem", None) or str(err)
        invalid.append(InvalidCase(shown, line, f"not valid YAML: {problem}; the whole file was skipped"))
        return
    for doc in documents:
        if doc is None:
            continue
        nodes = doc.value if isinstance(doc, yaml.SequenceNode) else [doc]
        for node in nodes:
            line = node.start_mark.line + 1
            try:
                raw = DecimalLoader(yaml.serialize(node)).get_single_data()
                case = parse_case(raw, shown, line)
            except (ValueError, ValidationError, yaml.YAMLError) as err:
                invalid.append(InvalidCase(shown, line, _reason(err)))
                continue
            yield case


STDIN = "-"


def expand(paths: list[str], empty_folders: list[str] | None = None) -> list[Path]:
    """Files as given, and golden files found (recursively, sorted) in the folders given; folders holding none are
    added to `empty_folders`."""
    found: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            inside = sorted(q for q in p.rglob("*") if q.suffix.lower() in GOLDEN_SUFFIXES and q.is_file())
            if not inside and empty_folders is not None:
                empty_folders.append(raw)
            found.extend(inside)
        else:
            found.append(p)
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

    def __init__(self, paths: list[str]):
        self.files: list[str] = []
        self._texts: list[tuple[str, str, str, int]] = []  # (suffix, shown path, text, number of its first line)
        problems: list[Problem] = []
        self.empty_folders: list[str] = []  # folders given that hold no golden file (the report says so)
        for path in expand(paths, self.empty_folders):
            shown = str(path)
            if shown == STDIN:
                text = sys.stdin.read()
                self.files.append("<stdin>")
                self._texts.append((_stdin_suffix(text), "<stdin>", text, 1))
                continue
            try:
                text = read_text(path, shown, MAX_GOLDEN_BYTES)
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
            if suffix in (".yaml", ".yml"):
                found = _yaml_cases(text, shown, self._broken)
            elif suffix == ".json":
                found = _json_cases(text, shown, self._broken)
            else:
                found = _jsonl_cases(text, shown, self._broken, first_line)
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
            cut = text.find("\n", half - size) + 1 if suffix not in (".yaml", ".yml", ".json") else 0
            keep, rest = self._texts[:position], self._texts[position + 1:]
            if 0 < cut < len(text):
                keep.append((suffix, shown, text[:cut], first_line))
                rest.insert(0, (suffix, shown, text[cut:], first_line + len(text[:cut].splitlines())))
            else:
                rest.insert(0, (suffix, shown, text, first_line))
            if not keep or not rest:
                return None
            self._texts = keep
            return GoldenStream.of_pieces(rest)
        return None

    @property
    def pieces(self) -> list[tuple[str, str, str, int]]:
        """The unread text as plain data, for another machine to read (`of_pieces`): (suffix, shown path, text,
        number of its first line) per file or part of one."""
        return list(self._texts)

    @staticmethod
    def of_pieces(pieces: list[tuple[str, str, str, int]]) -> GoldenStream:
        """The stream of `pieces` (as `pieces` gives them): what a split-off part is, here or on a Dask worker."""
        stream = GoldenStream.__new__(GoldenStream)
        stream.files, stream.empty_folders, stream._texts = [], [], list(pieces)
        stream._broken, stream._duplicates, stream._seen = [], [], {}
        return stream

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


def _json_cases(text: str, shown: str, invalid: list[InvalidCase]) -> Iterator[GoldenCase]:
    """A .json file holds one case or a list of cases (JSONL is the usual format; this is for single exports)."""
    try:
        raw = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as err:
        invalid.append(InvalidCase(shown, err.lineno, f"not valid JSON: {err.msg}; the whole file was skipped"))
        return
    for item in raw if isinstance(raw, list) else [raw]:
        try:
            case = parse_case(item, shown, 1)
        except (ValueError, ValidationError) as err:
            invalid.append(InvalidCase(shown, 1, _reason(err)))
            continue
        yield case
