"""Reads model files (or folders of them) into typed models; every problem is reported with file:line:col."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from mbt import importer as importers
from mbt import kind as kinds
from mbt.errors import LocatedError, MbtError, Problem, problem_at
from mbt.model.common import Annotated, Location, ModelBase, SourceDecl
from mbt.reader import MAX_MODEL_BYTES, exists, is_folder, read_text, shown_path  # noqa: F401 - read_text: also for the importers

if TYPE_CHECKING:
    from lark import Transformer, Tree

# The parser (lark, the grammars, the transformer) is imported by the functions that parse: a model read from the
# compiled-model cache (mbt.cache) needs none of it. On use: start-up time.

# Files in other tools' formats (DMN XML, GraphWalker JSON) are read by the importers, found by suffix.


class _FileRules:
    def __init__(self, path: str, locate: Callable[[int, int], Location] | None = None):
        super().__init__()
        self.path = path
        self.locate = locate  # where a position of the parsed text is in the user's file (DMN: in the XML)

    def loc(self, meta_or_token) -> Location:
        line, column = getattr(meta_or_token, "line", 1) or 1, getattr(meta_or_token, "column", 1) or 1
        return self.locate(line, column) if self.locate is not None else Location(file=self.path, line=line,
                                                                                   column=column)

    def start(self, children):
        return children


@lru_cache(maxsize=4)
def _transformer_class(registry_version: int) -> type:
    """One transformer for the whole file grammar: each registered kind's rules mixin, then the common rules."""
    from mbt.parsing.common import CommonRules
    from mbt.parsing.transformer import TableTransformer

    mixins = (k.rules_class() for k in kinds.grammar_kinds())
    bases = tuple(mixin for mixin in mixins if mixin is not None) + (CommonRules, TableTransformer)
    return type("FileTransformer", (_FileRules, *bases), {"__doc__": _transformer_class.__doc__})


def FileTransformer(path: str, locate: Callable[[int, int], Location] | None = None) -> Transformer:  # noqa: N802
    """The transformer for the file grammar of the kinds registered now (used like the class it builds)."""
    return _transformer_class(kinds.version())(path, locate)


def model_suffixes() -> tuple[str, ...]:
    """The suffixes of model files searched for in folders: every registered kind's."""
    return kinds.model_suffixes()


@dataclass
class ModelFile:
    """One parsed file: its sources and its models, in file order."""

    path: str
    text: str
    sources: dict[str, SourceDecl]
    models: list[ModelBase] = field(default_factory=list)
    pending: list = field(default_factory=list)  # `invariants for FSM` blocks until linked to their FSM
    # What an importer read but left out, each where it is (a DMN decision table it cannot read: the file's other
    # tables are measured, and `mbt check` and the coverage notes name this one).
    warnings: list[Problem] = field(default_factory=list)


MAX_NESTING = 100  # parentheses inside parentheses; chains of one operator are flat and never count


def _nested_too_deep(tree: Tree) -> Any:
    """The first parse-tree node deeper than MAX_NESTING (its meta has the position), else None. Walked without
    recursion: every later stage (the transformer, typing, compiling) recurses, and must meet only a tree this
    check let through."""
    from lark import Tree

    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            return node.meta if not node.meta.empty else SimpleNamespace(line=1, column=1)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))
    return None


def parse_text(text: str, path: str, link: bool = True,
               locate: Callable[[int, int], Location] | None = None, shown_text: str | None = None) -> ModelFile:
    """Parse and resolve one file; `link=False` leaves its invariants for link_invariants (their FSM may be
    in another file). An importer's DSL passes `locate` (a DSL position -> where it is in the user's file) and
    `shown_text` (that file's text), so every message points into the file the user wrote."""
    from lark.exceptions import UnexpectedInput, VisitError

    from mbt.parsing.grammar import parser
    from mbt.parsing.syntax import syntax_error

    try:
        tree = parser().parse(text)
    except UnexpectedInput as err:
        raise syntax_error(err, path, text) from None
    too_deep = _nested_too_deep(tree)
    shown = shown_text if shown_text is not None else text
    if too_deep is not None:
        line, column = too_deep.line, too_deep.column
        if locate is not None:
            where = locate(line, column)
            line, column = where.line, where.column
        raise LocatedError([problem_at(path, shown, line, column,
                                       f"expression nested more than {MAX_NESTING} levels deep",
                                       "split it into several guards or named conditions")])
    text = shown
    try:
        items = FileTransformer(path, locate).transform(tree)
    except VisitError as err:  # an exception inside a rule: show its position, not a stack
        line, column = getattr(err.obj, "line", 1) or 1, getattr(err.obj, "column", 1) or 1
        if locate is not None:
            where = locate(line, column)
            line, column = where.line, where.column
        raise LocatedError([problem_at(path, text, line, column, str(err.orig_exc))]) from None
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
        kind = kinds.for_raw(raw)
        if kind.resolve is None:  # resolve_late: by link_models, once every file is read (invariants name an FSM)
            result.pending.append(raw)
            continue
        model, found = kind.resolve(raw, path, text, sources)
        problems.extend(found)
        if model is None:
            continue
        if model.name in names:
            problems.append(problem_at(path, text, model.loc.line, model.loc.column,
                                       f"model `{model.name}` is declared twice (first at line {names[model.name]})"))
        names[model.name] = model.loc.line
        problems.extend(check_span_sources(model, sources, path, text))
        result.models.append(model)
    if link and not problems:
        problems.extend(link_models([result]))
    if problems:
        raise LocatedError(sorted(problems, key=lambda p: (p.line, p.column)))
    return result


def link_models(files: list[ModelFile]) -> list[Problem]:
    """Once every file is read: resolve the models of `late` kinds (invariants, against the FSMs of all the files),
    then run each kind's `link` (policies type their `enforce` blocks against their FSM); the problems found."""
    problems = _resolve_late(files)
    if not problems:
        for kind in kinds.all_kinds():
            if kind.link is not None:
                problems.extend(kind.link(files))
    return problems


def _resolve_late(files: list[ModelFile]) -> list[Problem]:
    resolved = {m.name: m for f in files for m in f.models}
    problems: list[Problem] = []
    for f in files:
        names = {m.name: m.loc.line for m in f.models}
        for raw in f.pending:
            late = kinds.for_raw(raw).resolve_late
            assert late is not None  # pending holds only the raw models of kinds resolved late
            model, found = late(raw, resolved, f.path, f.text, f.sources)
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
        if isinstance(value, Annotated) and not isinstance(value, ModelBase):  # a single part (a contract's goal);
            items = [value]  # never another model a model refers to (an invariant block's FSM)
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
        elif (span is not None and span.line_start == span.line_end and span.column_start is not None
              and span.column_end is not None and span.column_end < span.column_start):
            problems.append(problem_at(path, text, span.loc.line, span.loc.column,
                                       f"span range {span.range_text()} runs backwards"))
    return problems


def load_file(path: str | Path, link: bool = True) -> ModelFile:
    shown = shown_path(path)
    suffix = Path(path).suffix
    importer = importers.importer_for(suffix)
    if importer is not None:
        return importer.load()(path)
    own = kinds.format_kinds(suffix)
    if own:  # a kind of its own file format (a contract's YAML): the one that recognises it, else the first
        text = read_text(Path(path), shown)
        found = kinds.format_kind_of(suffix, text) or own[0]
        assert found.file_format is not None  # format_kinds lists only such kinds
        return found.file_format.read(shown, text)
    return parse_text(read_text(Path(path), shown), shown, link)


def expand_paths(paths: list[str]) -> list[Path]:
    """Files as given, and model files found (recursively, sorted) in the folders given."""
    found: list[Path] = []
    suffixes = model_suffixes()
    formats = kinds.format_suffixes()
    for raw in paths:
        p = Path(raw)
        if is_folder(p):
            searched = (*suffixes, *importers.searched_suffixes(), *formats)
            found.extend(sorted(q for q in p.rglob("*") if q.suffix.lower() in searched and q.is_file()
                                and (q.suffix in suffixes or _found_in_folder(q))))
        else:
            if exists(p) and p.suffix not in suffixes and p.suffix.lower() not in (*importers.all_suffixes(), *formats):
                named = ", ".join(k.kind for k in kinds.all_kinds() if k.file_format is not None)
                own = f", {', '.join(formats)} ({named})" if formats else ""
                raise LocatedError([Problem(raw, 1, 1, f"not a model file (mbt reads {', '.join(suffixes)}{own}, "
                                                       f"and through importers {', '.join(importers.all_suffixes())})")])
            found.append(p)
    return found


def _found_in_folder(path: Path) -> bool:
    """Whether a file met in a folder whose suffix is not a DSL one is a model: an importer's file it sniffs, or a
    file of a kind's own format whose content that kind recognises (a `.yaml` there is usually a golden file)."""
    importer = importers.importer_for(path.suffix)
    if importer is not None and importer.found_in_folder(path):
        return True
    return is_own_format_model(path)


def is_own_format_model(path: Path) -> bool:
    """Whether the file is a model of a kind of its own file format, by its content (unreadable, or larger than every
    such kind's `sniff_limit`: not one)."""
    own = kinds.format_kinds(path.suffix)
    if not own:
        return False
    try:
        if path.stat().st_size > max(k.file_format.sniff_limit for k in own if k.file_format is not None):
            return False
        text = read_text(path, shown_path(path))
    except (OSError, MbtError):
        return False
    return kinds.format_kind_of(path.suffix, text) is not None


def load_paths(paths: list[str]) -> list[ModelFile]:
    """Load every model file; problems from all files are reported together. The files of an importer that reads
    them together (GraphWalker's, linked by shared states) are read in one call, where the first of them is."""
    files, problems = [], []
    expanded = expand_paths(paths)
    together: dict[str, list[Path]] = {}
    for path in expanded:
        importer = importers.importer_for(path.suffix)
        if importer is not None and importer.group_loader is not None:
            together.setdefault(importer.group_loader, []).append(path)
    for path in expanded:
        importer = importers.importer_for(path.suffix)
        try:
            if importer is None or importer.group_loader is None:
                files.append(load_file(path, link=False))
            elif together.get(importer.group_loader, [None])[0] == path:
                files.extend(importer.load_group()(together.pop(importer.group_loader)))
        except LocatedError as err:
            problems.extend(err.problems)
    if not problems:
        problems.extend(link_models(files))
    if not files and not problems:
        raise MbtError(f"no model files found in {', '.join(paths)}")
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
