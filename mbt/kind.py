"""The kind interface and its one registry (the ground floor): per model kind a KindSupport that says, in types, how
each stage of the pipeline handles it.

A kind is read from files in one of two ways (parsing): from mbt's DSL — its grammar file, a transformer mixin and a
resolver — or from files of a format of its own (`FileFormat`: seed 000's contract YAML), then its checks (`mbt check`), its element
enumeration and replayer (coverage), optionally which golden cases it takes, its view (`mbt render`, the HTML report),
its expected result (the traceability matrix), its test generator, its part of the generated tests' driver and
its reference for them (`mbt generate`), its mutation operators (`mbt mutate`) and its run judge (`mbt runs`). The
stages ask this registry; none of them names a kind.

Each hook is a Protocol (a typed callable) over the base types every stage shares (ModelBase, Element, GoldenCase,
CaseRun): a kind's assembly (`mbt/kinds/<kind>.py`) narrows the model to its own class before calling its stage
modules, so the registry never needs `Any`. A hook a kind does not have is None: the stage says "not supported".
This module imports no stage at run time: the types below are for annotations only, and the built-in assemblies
(`mbt/kinds/`, the roof) and the kinds installed packages declare (entry-point group `mbt.kinds`) are imported by name
on first use. Another kind registers its own KindSupport with `register()`, editing no existing file
(tests/plugin_kind/ does so).
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:  # annotations only: the interface names the stages' types, and imports none of them at run time
    from mbt.analysis.findings import CheckOptions, Finding
    from mbt.elements.base import Element
    from mbt.errors import Problem
    from mbt.generate.driver import Driver
    from mbt.generate.files import OutputFile
    from mbt.generate.generation import GenerateOptions
    from mbt.generate.report import ModelGeneration
    from mbt.goldens.cases import GoldenCase
    from mbt.goldens.results import CaseRun
    from mbt.judges.verdicts import Judge
    from mbt.measure.coverage import ElementCoverage, ModelCoverage
    from mbt.model.common import ModelBase, SourceDecl
    from mbt.mutate.mutant import Distinction, Mutant
    from mbt.parsing.loader import ModelFile
    from mbt.render.graph import Graph, RenderOptions
    from mbt.render.table import RuleGrid, TableView
    from mbt.runs.judge import Verdict
    from mbt.runs.steps import ObservedRun


# ---------------------------------------------------------------- criteria


@dataclass(frozen=True)
class Criterion:
    """A criterion of a kind and what it means to the stages that treat criteria differently.

    `alarm`: an uncovered element of it is behaviour nobody tests that must never happen (forbidden transitions):
    the default gate fails on it, reports list it first. `findings`: its elements are findings a reviewer reads
    one by one (guards, triggers, conflicts, boundaries), listed with their labels in the text report."""

    name: str
    alarm: bool = False
    findings: bool = False

    def __str__(self) -> str:
        return self.name


# ---------------------------------------------------------------- the hooks


class Resolve(Protocol):
    """(raw model, file path, file text, the file's sources) -> (typed model or None, problems)."""

    def __call__(self, raw: object, path: str, text: str, sources: dict[str, SourceDecl], /
                 ) -> tuple[ModelBase | None, list[Problem]]: ...


class ResolveLate(Protocol):
    """Resolved once every file is read: also the file set's models of the other kinds, by name (invariants name the
    FSM they constrain)."""

    def __call__(self, raw: object, models: Mapping[str, ModelBase], path: str, text: str,
                 sources: dict[str, SourceDecl], /) -> tuple[ModelBase | None, list[Problem]]: ...


class ReadFile(Protocol):
    """A file of a kind's own format read into its models: (the path as messages show it, the file's text) -> the
    parsed file (mbt.parsing.loader.ModelFile, its models resolved). Bad input raises mbt.errors.LocatedError, each
    problem at its `file:line:col`."""

    def __call__(self, path: str, text: str, /) -> ModelFile: ...


@dataclass(frozen=True)
class FileFormat:
    """How a kind without a DSL grammar is read: files of a format of its own, found by suffix and, since such a
    suffix is shared with other files (a `.yaml` may be a golden file, a gate file or a contract), told apart by
    content. A file named as a model (`--model FILE`) is read by `read` whatever `sniff` says (so its errors are
    shown); a file met in a folder, or given as a positional path, is the kind's only when `sniff` says so."""

    suffixes: tuple[str, ...]
    read: ReadFile
    sniff: Callable[[str], bool]  # the text of a file of one of those suffixes -> whether it is such a model
    sniff_limit: int = 1024 * 1024  # a larger file met in a folder is not opened to be told apart: it is not one


class Replayer(Protocol):
    """Replays golden cases on one model: every kind's replayer returns the one result type, CaseRun."""

    def replay(self, case: GoldenCase, /) -> CaseRun: ...


class RunJudge(Protocol):
    """Judges observed runs on one model (`mbt runs`)."""

    def judge(self, run: ObservedRun, /) -> Verdict: ...


class RunJudgeFactory(Protocol):
    """(model, its elements) -> its run judge; `answers`, when given, is the answer judge that decides what the
    assistant's texts say (`mbt runs --judge`; mbt.judges.sayings), else the kind's default."""

    def __call__(self, model: ModelBase, elements: list[Element], /, answers: Judge | None = None) -> RunJudge: ...


class Generator(Protocol):
    """A kind's test generator for one model (`mbt generate`): the gaps of a coverage run as tests and stubs."""

    def gaps(self, rows: list[ElementCoverage], /) -> ModelGeneration: ...

    def files(self, mode: str, /) -> list[OutputFile]: ...


@runtime_checkable  # generate() checks that a kind declaring `suites` gives one
class SuiteGenerator(Generator, Protocol):
    """A generator that also builds full suites (`mbt generate --all --criterion C`)."""

    def full_suite(self, criterion: str, /) -> ModelGeneration: ...


@dataclass(frozen=True)
class DriverPart:
    """A kind's part of the driver its generated tests run on (mbt_support.py, which `mbt generate` copies beside
    them: mbt.generate.support joins every registered kind's part to the conversation driver, mbt/generate/driver.py).
    The part is plain Python, copied as written: its methods and functions may use what the driver module imports
    (json, operator, os, re, Path, Any) and defines (observe, same, evaluate), and import anything else themselves."""

    # A subclass of the driver: the statements after its docstring (the methods the kind's tests call) join the
    # Driver class, in mbt as in the copy.
    methods: type[Driver]
    # Its lines of the adapter protocol in the module's docstring: the adapter methods those methods call, e.g.
    # `    decide(table, inputs)               # a decision table: ...`, each ending with a newline.
    adapter: str
    # Module functions the methods call, copied after the Driver class.
    functions: tuple[Callable[..., object], ...] = ()


GraphBuild = Callable[["ModelBase", "ModelCoverage | None", "RenderOptions"], "Graph"]
TableBuild = Callable[["ModelBase", "ModelCoverage | None", "RenderOptions"], "TableView"]


@dataclass(frozen=True)
class View:
    """How a kind is drawn: as a graph (DOT/SVG/PNG) or as a table (Markdown/HTML)."""

    shape: str  # graph | table
    build: GraphBuild | TableBuild
    suffixes: tuple[str, ...]
    # a table view's rule grid: (model, coverage state by element id, mbt.render.graph.coverage_of) -> RuleGrid
    grid: Callable[[ModelBase, dict[str, str]], RuleGrid] | None = None


@dataclass(frozen=True)
class MutationSupport:
    """How a kind's models are mutated (mbt/mutate/): its operators, and how a mutant is replayed and told apart."""

    operators: dict[str, str]  # short code -> one-line doc
    mutants: Callable[[ModelBase], list[Mutant]]
    replayer: Callable[[Replayer, Mutant], Replayer]  # (the original's replayer, mutant) -> the mutant's replayer
    # (the original's replayer, the mutant's replayer, mutant) -> how they compare on every input the search tried
    distinguish: Callable[[Replayer, Replayer, Mutant], Distinction]
    # (the original's replayer, case) -> (its run, the slots it steps through or None: any mutant may change it)
    footprint: Callable[[Replayer, GoldenCase], tuple[CaseRun, frozenset[object] | None]] | None = None


@dataclass(frozen=True)
class KindSupport:
    kind: str  # the `kind` of its typed models: fsm, table, policy, invariant, contract
    # ---- parsing: a DSL kind gives the five grammar fields and one of the resolvers; a kind of its own file format
    # gives `file_format` and none of them (`register` checks which). Only DSL kinds join the file grammar.
    keyword: str | None = None  # the word a model of the kind starts with in a file (`fsm`, `invariants`)
    grammar: Path | None = None  # its .lark file; it defines `rule`
    rule: str | None = None  # the grammar rule of one model, e.g. fsm_model
    # The transformer mixin whose methods are named after the grammar's rules, and what the transformer makes of one
    # model: each a class, or its `module:Name`, imported when a file is parsed (a model read from the compiled-model
    # cache needs no parser: start-up time). Read them with rules_class() and raw_class().
    rules: type | str | None = None
    raw: type | str | None = None
    resolve: Resolve | None = None  # one of `resolve` and `resolve_late`
    resolve_late: ResolveLate | None = None
    file_format: FileFormat | None = None  # a kind read from files of its own format (no grammar, no resolver)
    link: Callable[[list[ModelFile]], list[Problem]] | None = None  # once every file is resolved
    suffixes: tuple[str, ...] = ()  # DSL file suffixes searched for in folders (a file format has its own)
    # ---- coverage
    criteria: tuple[Criterion, ...] = ()  # in increasing strength where they nest
    enumerate: Callable[[ModelBase], list[Element]] | None = None
    replayer: Callable[[ModelBase, list[Element]], Replayer] | None = None
    # Which cases the kind replays; None: those naming the model or its contract, or neither (goldens.routing).
    accepts: Callable[[ModelBase, GoldenCase], bool] | None = None
    # A requirement tag on an element of these criteria is met by covering that element; None: by every element
    # that inherits the tag (GraphWalker's vertex and edge requirements are met by visiting, not by guard outcomes).
    requirement_criteria: tuple[str, ...] | None = None
    # ---- checks and review
    check: Callable[[ModelBase, CheckOptions], list[Finding]] | None = None
    view: View | None = None
    expected: Callable[[ModelBase], Callable[[Element], str]] | None = None  # traceability's expected result
    # ---- goldens
    # For a kind whose cases have no turns, decisions or request: the case as the kind's own typed case, or None
    # when it is not one of its cases (GoldenCase keeps keys it does not know in `case.model_extra`; the kind reads
    # them here, once, into its own type). Raises ValueError for a case of its shape whose values do not fit: the case
    # is invalid with that message. The kind's replayer and `accepts` read the same typed case.
    case_shape: Callable[[GoldenCase], object | None] | None = None
    # Keys of a case, beyond the golden format's own (GoldenCase's fields), that the kind reads from
    # `case.model_extra` (`assertions.KEY`: from its final assertions' extra keys, `turns.KEY`: from its turns'):
    # any other such key is a "Not checked" note (goldens.cases.unchecked_key_notes).
    golden_keys: frozenset[str] = frozenset()
    # ---- generation (`mbt generate`): (model, options, out folder) -> the kind's generator; with `suites`, the
    # generator is a SuiteGenerator. None: the kind generates nothing.
    generation: Callable[[ModelBase, GenerateOptions, str], Generator] | None = None
    suites: tuple[str, ...] = ()  # the criteria it builds full suites for (`mbt generate --all --criterion C`)
    # What its generated tests call beyond the conversation (start, step): its part of their Driver. None: nothing.
    driver: DriverPart | None = None
    # (model) -> mbt's own semantics answering the adapter methods its tests call (reset / send / observe for a
    # conversation, its part's own), which the reference adapter (`MBT_ADAPTER=reference`, mbt.generate.adapter)
    # hands each call to. None: its tests run on no reference of their own (an invariant's run on its FSM's).
    reference: Callable[[ModelBase], object] | None = None
    # ---- mutation (mbt mutate, coverage --mutants)
    mutation: MutationSupport | None = None
    # ---- observed runs (`mbt runs`): (model, its elements[, answers=judge]) -> the judge; None: the kind judges no run
    run_judge: RunJudgeFactory | None = None

    def rules_class(self) -> type | None:
        return _named(self.rules)

    def raw_class(self) -> type | None:
        return _named(self.raw)

    @property
    def has_grammar(self) -> bool:
        """Whether the kind's models are written in mbt's DSL (its grammar joins the file grammar)."""
        return self.grammar is not None

    def criterion(self, name: str) -> Criterion | None:
        return next((c for c in self.criteria if c.name == name), None)

    def elements(self, model: ModelBase) -> list[Element]:
        """The model's elements, enumerated afresh (none for a kind that counts nothing)."""
        return self.enumerate(model) if self.enumerate is not None else []


def _named(given: type | str | None) -> type | None:
    """A class as given, or as named by `module:Name`."""
    if not isinstance(given, str):
        return given
    module, _, name = given.partition(":")
    found = getattr(importlib.import_module(module), name)
    if not isinstance(found, type):
        raise TypeError(f"{given} is not a class")
    return found


M = TypeVar("M")


def narrow(model: object, cls: type[M], kind: str) -> M:
    """The model as its kind's class: what an assembly's hook does first (a model of another kind is a bug)."""
    if not isinstance(model, cls):
        raise TypeError(f"the {kind} kind was handed a {type(model).__name__}")
    return model


_KINDS: dict[str, KindSupport] = {}
_VERSION = [0]  # bumped on every registration: what is built from the registry (the parser) is keyed by it


_GRAMMAR_FIELDS = ("keyword", "grammar", "rule", "rules", "raw")


def register(support: KindSupport) -> None:
    """Add (or replace) a kind, once its parsing fields are consistent: a DSL kind gives every grammar field and
    exactly one of `resolve` and `resolve_late`; a kind of its own file format gives `file_format` and none of them.
    Every built-in kind is registered before any other (or a replacement of one), as when all were loaded at once."""
    if _ASSEMBLING[0] != support.kind:
        _load_builtins(len(BUILTIN_KINDS))
    given = [name for name in _GRAMMAR_FIELDS if getattr(support, name) is not None]
    if support.file_format is not None:
        if given or support.resolve is not None or support.resolve_late is not None or support.suffixes:
            extra = given + [n for n in ("resolve", "resolve_late") if getattr(support, n) is not None]
            extra += ["suffixes"] if support.suffixes else []
            raise ValueError(f"kind `{support.kind}` is read from its own file format: it takes no "
                             f"{', '.join(f'`{n}`' for n in extra)} (those are for DSL kinds; its suffixes are the "
                             f"format's)")
    else:
        missing = [name for name in _GRAMMAR_FIELDS if getattr(support, name) is None]
        if missing:
            raise ValueError(f"kind `{support.kind}`: a DSL kind gives {', '.join(f'`{n}`' for n in missing)} "
                             f"(or, read from a format of its own, `file_format`)")
        if (support.resolve is None) == (support.resolve_late is None):
            raise ValueError(f"kind `{support.kind}`: give exactly one of `resolve` and `resolve_late`")
    unregister(support.kind)
    _KINDS[support.kind] = support
    _VERSION[0] += 1


def unregister(kind: str) -> None:
    _KINDS.pop(kind, None)
    _VERSION[0] += 1


def case_shapes() -> list[Callable[[GoldenCase], object | None]]:
    """How the registered kinds whose cases have no turns, decisions or request recognise theirs (the built-in kinds
    have none, so the registry is not loaded for this)."""
    return [k.case_shape for k in _KINDS.values() if k.case_shape is not None]


def version() -> int:
    return _VERSION[0]


def all_kinds() -> list[KindSupport]:
    """Every registered kind, in registration order (the built-in ones first)."""
    _load()
    return list(_KINDS.values())


def support(kind: str) -> KindSupport:
    """The kind's support: a built-in kind's assembly is imported when it (or a kind after it) is first asked for."""
    found = _KINDS.get(kind) if _PLUGINS_LOADED[0] else None  # a registered kind: every kind before it is too
    if found is not None:
        return found
    if kind in BUILTIN_KINDS:
        _load_plugins()
        _load_builtins(list(BUILTIN_KINDS).index(kind) + 1)
    else:
        _load()
    found = _KINDS.get(kind)
    if found is None:
        raise KeyError(f"no model kind `{kind}` is registered (known: {', '.join(_KINDS)})")
    return found


def elements_of(model: ModelBase) -> list[Element]:
    """The model's coverage elements, enumerated by its kind once and kept on the model (the compiled-model cache
    stores them with it)."""
    found = model._elements
    if found is None:
        found = model._elements = support(model.kind).elements(model)
    return found


def grammar_kinds() -> list[KindSupport]:
    """The kinds written in mbt's DSL, in registration order: those whose grammars make the file grammar."""
    return [k for k in all_kinds() if k.has_grammar]


def for_raw(raw: object) -> KindSupport:
    """The kind whose transformer made this raw model."""
    for k in grammar_kinds():
        raw_class = k.raw_class()
        if raw_class is not None and isinstance(raw, raw_class):
            return k
    raise KeyError(f"no model kind makes {type(raw).__name__}")


def _suffixes() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(DSL suffixes, own-format suffixes) of every kind, in registration order: the kinds registered, then the
    built-in kinds not loaded yet, by BUILTIN_KINDS (which come last only while no other kind is registered)."""
    _load_plugins()
    found = [(k.suffixes, k.file_format.suffixes if k.file_format is not None else ()) for k in _KINDS.values()]
    return found + [(dsl, own) for _, dsl, own in list(BUILTIN_KINDS.values())[_BUILTINS_LOADED[0]:]]


def model_suffixes() -> tuple[str, ...]:
    """The suffixes of DSL model files: every such file in a folder is a model file."""
    return tuple(dict.fromkeys(s for dsl, _ in _suffixes() for s in dsl))


def format_suffixes() -> tuple[str, ...]:
    """The suffixes of the kinds' own file formats: a file of one is a model only when its kind's sniff says so."""
    return tuple(dict.fromkeys(s for _, own in _suffixes() for s in own))


def format_kinds(suffix: str) -> list[KindSupport]:
    """The kinds of their own file format that read files of this suffix (lower-cased), in registration order."""
    suffix = suffix.lower()
    if any(suffix in own for _, _, own in list(BUILTIN_KINDS.values())[_BUILTINS_LOADED[0]:]):
        support(next(k for k, (_, _, own) in BUILTIN_KINDS.items() if suffix in own))
    _load_plugins()
    return [k for k in _KINDS.values() if k.file_format is not None and suffix in k.file_format.suffixes]


def format_kind_of(suffix: str, text: str) -> KindSupport | None:
    """The kind of its own file format whose sniff recognises this text (of a file with this suffix), or None."""
    return next((k for k in format_kinds(suffix) if k.file_format is not None and k.file_format.sniff(text)), None)


# The built-in kinds, in the order their grammars join the file grammar: the module whose import registers each
# (its assembly) and the file suffixes it registers (DSL suffixes, its own format's). They are imported by name on
# first use (and so are the kinds that installed packages declare under the `mbt.kinds` entry-point group), so no
# stage module needs to import any kind; which files are models is answered from the suffixes here, and a kind's
# assembly (with the stages it imports) is loaded only once it, or a kind after it, is asked for: start-up time
# (`mbt runs` on an FSM loads the FSM kind alone). tests/test_startup.py checks these suffixes against the assemblies.
BUILTIN_KINDS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "fsm": ("mbt.kinds.fsm", (".model", ".fsm"), ()),
    "table": ("mbt.kinds.table", (".dt",), ()),
    "policy": ("mbt.kinds.policy", (".policy",), ()),
    "invariant": ("mbt.kinds.invariant", (".inv",), ()),
    "contract": ("mbt.kinds.contract", (), (".yaml", ".yml")),
}
_BUILTINS_LOADED = [0]  # how many of BUILTIN_KINDS are imported: always the first ones, so the order is kept
_ASSEMBLING: list[str | None] = [None]  # the built-in kind whose assembly is being imported
_PLUGINS_LOADED = [False]


def _load_builtins(count: int) -> None:
    """Import the first `count` built-in assemblies (those not imported yet), in order."""
    while _BUILTINS_LOADED[0] < count:
        kind = list(BUILTIN_KINDS)[_BUILTINS_LOADED[0]]
        _BUILTINS_LOADED[0] += 1
        outer, _ASSEMBLING[0] = _ASSEMBLING[0], kind
        try:
            importlib.import_module(BUILTIN_KINDS[kind][0])
        finally:
            _ASSEMBLING[0] = outer


def _load_plugins() -> None:
    """Import the kinds installed packages declare (each registering loads every built-in kind first)."""
    if _PLUGINS_LOADED[0]:
        return
    _PLUGINS_LOADED[0] = True
    for entry in importlib.metadata.entry_points(group="mbt.kinds"):
        importlib.import_module(entry.value)


def _load() -> None:
    """Every kind: the built-in ones, then the installed packages'."""
    _load_builtins(len(BUILTIN_KINDS))
    _load_plugins()
