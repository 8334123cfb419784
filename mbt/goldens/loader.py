"""Reads golden files (JSONL, YAML; files or folders): a broken line or case is reported with file:line and skipped."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import ValidationError

from mbt.errors import LocatedError, Problem
from mbt.goldens.cases import GoldenCase, parse_case
from mbt.parsing.loader import read_text

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


def _load_jsonl(text: str, shown: str, out: GoldenSet) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        try:
            raw = json.loads(stripped)
        except json.JSONDecodeError as err:
            out.invalid.append(InvalidCase(shown, number, f"not valid JSON: {err.msg} (column {err.colno})"))
            continue
        try:
            out.cases.append(parse_case(raw, shown, number))
        except (ValueError, ValidationError) as err:
            out.invalid.append(InvalidCase(shown, number, _reason(err)))


def _load_yaml(text: str, shown: str, out: GoldenSet) -> None:
    """A YAML file holds one case, a list of cases, or several `---` documents; line numbers come from the nodes."""
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(err, "problem", None) or str(err)
        out.invalid.append(InvalidCase(shown, line, f"not valid YAML: {problem}; the whole file was skipped"))
        return
    for doc in documents:
        if doc is None:
            continue
        nodes = doc.value if isinstance(doc, yaml.SequenceNode) else [doc]
        for node in nodes:
            line = node.start_mark.line + 1
            try:
                raw = yaml.SafeLoader(yaml.serialize(node)).get_single_data()
                out.cases.append(parse_case(raw, shown, line))
            except (ValueError, ValidationError, yaml.YAMLError) as err:
                out.invalid.append(InvalidCase(shown, line, _reason(err)))


def expand(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.extend(sorted(q for q in p.rglob("*") if q.suffix in GOLDEN_SUFFIXES and q.is_file()))
        else:
            found.append(p)
    return found


def load_goldens(paths: list[str]) -> GoldenSet:
    """All cases of all files; unreadable files are unusable input (exit 2), broken cases are reported and skipped."""
    out = GoldenSet()
    problems: list[Problem] = []
    for path in expand(paths):
        shown = str(path)
        try:
            text = read_text(path, shown, MAX_GOLDEN_BYTES)
        except LocatedError as err:
            problems.extend(err.problems)
            continue
        out.files.append(shown)
        if path.suffix in (".yaml", ".yml"):
            _load_yaml(text, shown, out)
        elif path.suffix == ".json":
            _load_json(text, shown, out)
        else:
            _load_jsonl(text, shown, out)
    if problems:
        raise LocatedError(problems)
    _flag_duplicate_ids(out)
    out.invalid.sort(key=lambda i: (i.file, i.line))
    return out


def _load_json(text: str, shown: str, out: GoldenSet) -> None:
    """A .json file holds one case or a list of cases (JSONL is the usual format; this is for single exports)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        out.invalid.append(InvalidCase(shown, err.lineno, f"not valid JSON: {err.msg}; the whole file was skipped"))
        return
    for item in raw if isinstance(raw, list) else [raw]:
        try:
            out.cases.append(parse_case(item, shown, 1))
        except (ValueError, ValidationError) as err:
            out.invalid.append(InvalidCase(shown, 1, _reason(err)))


def _flag_duplicate_ids(out: GoldenSet) -> None:
    seen: dict[str, GoldenCase] = {}
    kept = []
    for case in out.cases:
        if case.id in seen:
            out.invalid.append(InvalidCase(case.file, case.line,
                                           f"duplicate case id `{case.id}` (first at {seen[case.id].where})"))
            continue
        seen[case.id] = case
        kept.append(case)
    out.cases = kept
