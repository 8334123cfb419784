"""The one registry of model kinds: per kind a KindSupport that says how each stage of the pipeline handles it.

A kind is its grammar file, a transformer mixin and a resolver (parsing), its checks (`mbt check`), its element
enumeration and replayer (coverage), optionally which golden cases it takes, its view (`mbt render`, the HTML report),
its expected result (the traceability matrix), its test generator (`mbt generate`) and its mutation operators
(`mbt mutate`). The stages ask this registry; none of them names a kind. The built-in kinds are registered by the
modules of this package (`kinds/fsm.py`, ...); another kind registers its own KindSupport with `register()`,
editing no existing file (tests/test_kind_plugin.py does so).
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mbt.elements.base import Element
from mbt.goldens.cases import CASE_SHAPES, GoldenCase
from mbt.model.common import ModelBase


class Replayer(Protocol):
    def replay(self, case: GoldenCase) -> Any: ...


@dataclass(frozen=True)
class View:
    """How a kind is drawn: as a graph (DOT/SVG/PNG) or as a table (Markdown/HTML)."""

    shape: str  # graph | table
    build: Callable[..., object]  # (model, ModelCoverage | None, RenderOptions) -> Graph | TableView
    suffixes: tuple[str, ...]
    grid: Callable[[Any, dict], Any] | None = None  # a table view's rule grid: (model, coverage by id) -> RuleGrid


@dataclass(frozen=True)
class MutationSupport:
    """How a kind's models are mutated (mbt/mutate/): its operators, and how a mutant is replayed and told apart."""

    operators: dict[str, str]  # short code -> one-line doc
    mutants: Callable[[Any], list]  # model -> [mbt.mutate.mutant.Mutant]
    replayer: Callable[[Any, Any], Replayer]  # (the original's replayer, mutant) -> the mutant's replayer
    # (the original's replayer, mutant's replayer, mutant) -> mbt.mutate.mutant.Distinction
    distinguish: Callable[[Any, Any, Any], Any]
    # (the original's replayer, case) -> (its run, the slots it steps through or None: any mutant may change it)
    footprint: Callable[[Any, GoldenCase], tuple[Any, frozenset | None]] | None = None


@dataclass(frozen=True)
class KindSupport:
    kind: str  # the `kind` of its typed models: fsm, table, policy, invariant
    # ---- parsing
    keyword: str  # the word a model of the kind starts with in a file (`fsm`, `invariants`)
    grammar: Path  # its .lark file; it defines `rule`
    rule: str  # the grammar rule of one model, e.g. fsm_model
    rules: type  # the transformer mixin whose methods are named after the grammar's rules
    raw: type  # what the transformer makes of one model
    # (raw, path, text, sources) -> (typed model or None, problems); with `late`, (raw, models, path, text, sources)
    # where `models` are the file set's models of the other kinds, by name (invariants name their FSM).
    resolve: Callable[..., tuple[ModelBase | None, list]]
    late: bool = False
    link: Callable[[list], list] | None = None  # (model files) -> problems, once every file is resolved
    suffixes: tuple[str, ...] = ()  # file suffixes searched for in folders
    # ---- coverage
    # The hooks take the kind's own model class (FsmModel, ...): typed `Any` here, as the registry cannot name them.
    criteria: tuple[str, ...] = ()  # in increasing strength where they nest
    enumerate: Callable[[Any], list[Element]] = lambda model: []
    replayer: Callable[[Any, list[Element]], Replayer] | None = None
    # Which cases the kind replays; None: those naming the model or its contract, or neither (goldens.routing).
    accepts: Callable[[Any, GoldenCase], bool] | None = None
    # ---- checks and review
    check: Callable[..., list] | None = None  # (model[, options]) -> findings
    view: View | None = None
    expected: Callable[[Any], Callable[[Element], str]] | None = None  # traceability's expected result
    # ---- goldens
    # For a kind whose cases have no turns, decisions or request: is this case one of its own? (GoldenCase keeps
    # unknown keys as extra fields, so such a kind reads its case shape from `case.model_extra`.)
    case_shape: Callable[[GoldenCase], bool] | None = None
    # Keys of a case, beyond the golden format's own (GoldenCase's fields), that the kind reads from
    # `case.model_extra`: any other such key is a "Not checked" note (goldens.cases.unchecked_key_notes).
    golden_keys: frozenset[str] = frozenset()
    # ---- generation (`mbt generate`)
    # (model, GenerateOptions, out folder) -> the kind's generator: `.gaps(rows)` -> ModelGeneration and
    # `.files(mode)`; with `suites`, also `.full_suite(criterion)` for `--all`. None: the kind generates nothing.
    generation: Callable[..., Any] | None = None
    suites: bool = False
    # ---- mutation (mbt mutate, coverage --mutants)
    mutation: MutationSupport | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # hooks of stages yet to come


_KINDS: dict[str, KindSupport] = {}
_VERSION = [0]  # bumped on every registration: what is built from the registry (the parser) is keyed by it


def register(support: KindSupport) -> None:
    """Add (or replace) a kind."""
    unregister(support.kind)
    _KINDS[support.kind] = support
    if support.case_shape is not None:
        CASE_SHAPES.append(support.case_shape)
    _VERSION[0] += 1


def unregister(kind: str) -> None:
    old = _KINDS.pop(kind, None)
    if old is not None and old.case_shape in CASE_SHAPES:
        CASE_SHAPES.remove(old.case_shape)
    _VERSION[0] += 1


def version() -> int:
    return _VERSION[0]


def all_kinds() -> list[KindSupport]:
    """Every registered kind, in registration order (the built-in ones first)."""
    _load()
    return list(_KINDS.values())


def support(kind: str) -> KindSupport:
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
        found = model._elements = support(model.kind).enumerate(model)
    return found


def for_raw(raw: object) -> KindSupport:
    """The kind whose transformer made this raw model."""
    for k in all_kinds():
        if isinstance(raw, k.raw):
            return k
    raise KeyError(f"no model kind makes {type(raw).__name__}")


def model_suffixes() -> tuple[str, ...]:
    return tuple(dict.fromkeys(s for k in all_kinds() for s in k.suffixes))


# The built-in kinds, in the order their grammars join the file grammar; each module registers its KindSupport.
# They are imported by name on first use of the registry (and so are the kinds that installed packages declare
# under the `mbt.kinds` entry-point group), so no stage module needs to import any kind.
BUILTIN_KINDS = ("mbt.kinds.fsm", "mbt.kinds.table", "mbt.kinds.policy", "mbt.kinds.invariant")
_LOADED = [False]


def _load() -> None:
    if _LOADED[0]:
        return
    _LOADED[0] = True
    for name in BUILTIN_KINDS:
        importlib.import_module(name)
    for entry in importlib.metadata.entry_points(group="mbt.kinds"):
        importlib.import_module(entry.value)
