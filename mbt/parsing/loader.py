"""Reads model files (or folders of them) into typed models; every problem is reported with file:line:col."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lark import Transformer
from lark.exceptions import UnexpectedInput, VisitError

from mbt.errors import LocatedError, MbtError, Problem, problem_at
from mbt.model.common import Annotated, ModelBase, SourceDecl
from mbt.parsing.common import CommonRules
from mbt.parsing.fsm_resolve import resolve_fsm
from mbt.parsing.fsm_rules import FsmRules, RawFsm
from mbt.parsing.grammar import parser
from mbt.parsing.invariant_resolve import resolve_invariants
from mbt.parsing.invariant_rules import InvariantRules, RawInvariants
from mbt.parsing.policy_link import link_policies
from mbt.parsing.policy_resolve import resolve_policy
from mbt.parsing.policy_rules import PolicyRules, RawPolicy
from mbt.parsing.syntax import syntax_error
from mbt.parsing.table_resolve import resolve_table
from mbt.parsing.table_rules import RawTable, TableRules

MODEL_SUFFIXES = (".model", ".fsm", ".dt", ".policy", ".inv")
# DMN XML files are read too: each decision table becomes a `table` model (mbt/tables/dmn.py).
DMN_SUFFIX = ".dmn"
# GraphWalker JSON models are read when named explicitly (folders are not searched for .json: goldens use it too).
GRAPHWALKER_SUFFIX = ".json"
MAX_MODEL_BYTES = 20 * 1024 * 1024


class FileTransformer(FsmRules, TableRules, InvariantRules, PolicyRules, CommonRules, Transformer):
    """One transformer for the whole file grammar: a mixin of rules per grammar file."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path

    def start(self, children):
        return children


@dataclass
class ModelFile:
    """One parsed file: its sources and its models, in file order."""

    path: str
    text: str
    sources: dict[str, SourceDecl]
    models: list[ModelBase] = field(default_factory=list)
    pending: list = field(default_factory=list)  # `invariants for FSM` blocks until linked to their FSM


def read_text(path: Path, shown: str, limit: int = MAX_MODEL_BYTES) -> str:
    """The file's text, or a clear error for missing, unreadable, huge, binary or non-UTF-8 files."""
    if not path.exists():
        raise LocatedError([Problem(shown, 1, 1, "no such file")])
    if path.is_dir():
        raise LocatedError([Problem(shown, 1, 1, "is a folder, not a file")])
    try:
        size = path.stat().st_size
        if size > limit:
            raise LocatedError([Problem(shown, 1, 1, f"file is too large ({size:,} bytes; the limit is {limit:,})")])
        data = path.read_bytes()
    except OSError as err:
        raise LocatedError([Problem(shown, 1, 1, f"cannot read file: {err.strerror}")]) from None
    if b"\x00" in data[:8192]:
        raise LocatedError([Problem(shown, 1, 1, "this is a binary file, not a text file")])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise LocatedError([Problem(shown, line, column, "the file is not valid UTF-8 text")]) from None


def parse_text(text: str, path: str, link: bool = True) -> ModelFile:
    """Parse and resolve one file; `link=False` leaves its invariants for link_invariants (their FSM may be
    in another file)."""
    try:
        tree = parser().parse(text)
    except UnexpectedInput as err:
        raise syntax_error(err, path, text) from None
    try:
        items = FileTransformer(path).transform(tree)
    except VisitError as err:  # an exception inside a rule: show its position, not a stack
        raise LocatedError([problem_at(path, text, getattr(err.obj, "line", 1) or 1,
                                       getattr(err.obj, "column", 1) or 1, str(err.orig_exc))]) from None
    sources: dict[str, SourceDecl] = {}
    problems: list[Problem] = []
    raw_models = []
    for item in items:
        if isinstance(item, SourceDecl):
            if item.name in sources:
                problems.append(problem_at(path, text, item.loc.line, item.loc.column,
                                           f"source `{item.name}` is declared twice (first at line {sources[item.name].loc.line})"))
            sources[item.name] = item
        else:
            raw_models.append(item)
    if not raw_models:
        problems.append(problem_at(path, text, 1, 1, "no model in this file",
                                   "a model starts with `fsm NAME {`"))
    result = ModelFile(path=path, text=text, sources=sources)
    names: dict[str, int] = {}
    for raw in raw_models:
        if isinstance(raw, RawInvariants):  # resolved by link_invariants, once every file is read
            result.pending.append(raw)
            continue
        if isinstance(raw, RawFsm):
            model, found = resolve_fsm(raw, path, text, sources)
        elif isinstance(raw, RawTable):
            model, found = resolve_table(raw, path, text, sources)
        elif isinstance(raw, RawPolicy):
            model, found = resolve_policy(raw, path, text, sources)
        else:  # pragma: no cover - every grammar kind has a resolver
            raise MbtError(f"{path}: unsupported model kind")
        problems.extend(found)
        if model.name in names:
            problems.append(problem_at(path, text, model.loc.line, model.loc.column,
                                       f"model `{model.name}` is declared twice (first at line {names[model.name]})"))
        names[model.name] = model.loc.line
        problems.extend(check_span_sources(model, sources, path, text))
        result.models.append(model)
    if link and not problems:
        problems.extend(link_invariants([result]))
        problems.extend(link_policies([result]))
    if problems:
        raise LocatedError(sorted(problems, key=lambda p: (p.line, p.column)))
    return result


def link_invariants(files: list[ModelFile]) -> list[Problem]:
    """Resolve every file's `invariants for FSM` blocks against the FSMs of all the files; the problems found."""
    fsms = {m.name: m for f in files for m in f.models if m.kind == "fsm"}
    problems: list[Problem] = []
    for f in files:
        names = {m.name: m.loc.line for m in f.models}
        for raw in f.pending:
            model, found = resolve_invariants(raw, fsms, f.path, f.text, f.sources)
            problems.extend(found)
            if model is None:
                continue
            if model.name in names:
                problems.append(problem_at(f.path, f.text, model.loc.line, model.loc.column,
                                           f"model `{model.name}` is declared twice (first at line {names[model.name]})"))
            names[model.name] = model.loc.line
            problems.extend(check_span_sources(model, f.sources, f.path, f.text))
            model.sources = f.sources  # the file's sources are every model's: source coverage reads them here
            f.models.append(model)
        f.pending = []
    return problems


def annotated_elements(model: ModelBase):
    """Every annotated part of a model (the model itself first), in a stable order."""
    yield model
    for name in type(model).model_fields:
        value = getattr(model, name)
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        for item in items:
            if isinstance(item, Annotated):
                yield item


def check_span_sources(model: ModelBase, sources: dict[str, SourceDecl], path: str, text: str) -> list[Problem]:
    problems = []
    for element in annotated_elements(model):
        span = element.span
        if span is not None and span.source not in sources:
            hint = f"declare it at the top: source {span.source} \"path/to/document\""
            problems.append(problem_at(path, text, span.loc.line, span.loc.column,
                                       f"span cites unknown source `{span.source}`", hint))
        if span is not None and span.line_start is not None and span.line_end < span.line_start:
            problems.append(problem_at(path, text, span.loc.line, span.loc.column,
                                       f"span line range {span.line_start}-{span.line_end} runs backwards"))
    return problems


def load_file(path: str | Path, link: bool = True) -> ModelFile:
    shown = str(path)
    if Path(path).suffix == DMN_SUFFIX:
        from mbt.tables.dmn import load_dmn

        return load_dmn(path)
    if Path(path).suffix == GRAPHWALKER_SUFFIX:
        from mbt.parsing.graphwalker import load_graphwalker

        return load_graphwalker(path)
    return parse_text(read_text(Path(path), shown), shown, link)


def expand_paths(paths: list[str]) -> list[Path]:
    """Files as given, and model files found (recursively, sorted) in the folders given."""
    found: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.extend(sorted(q for q in p.rglob("*") if q.suffix in (*MODEL_SUFFIXES, DMN_SUFFIX) and q.is_file()))
        else:
            if p.exists() and p.suffix not in (*MODEL_SUFFIXES, DMN_SUFFIX, GRAPHWALKER_SUFFIX):
                raise LocatedError([Problem(raw, 1, 1, f"not a model file (mbt reads {', '.join(MODEL_SUFFIXES)}, "
                                                       f"{DMN_SUFFIX}, and GraphWalker {GRAPHWALKER_SUFFIX})")])
            found.append(p)
    return found


def load_paths(paths: list[str]) -> list[ModelFile]:
    """Load every model file; problems from all files are reported together."""
    files, problems = [], []
    for path in expand_paths(paths):
        try:
            files.append(load_file(path, link=False))
        except LocatedError as err:
            problems.extend(err.problems)
    if not problems:
        problems.extend(link_invariants(files))
        problems.extend(link_policies(files))
    if not files and not problems:
        raise MbtError(f"error: no model files found in {', '.join(paths)}")
    seen: dict[str, str] = {}
    for f in files:
        for m in f.models:
            if m.name in seen and seen[m.name] != f.path:
                problems.append(Problem(f.path, m.loc.line, m.loc.column,
                                        f"model `{m.name}` is also declared in {seen[m.name]}"))
            seen.setdefault(m.name, f.path)
    if problems:
        raise LocatedError(problems)
    return files
