"""Finds the lark grammars (installed inside the package, or the checkout's grammars/ folder) and builds the parser."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

import lark
from lark import Lark, Token, Tree
from lark.grammar import Rule

from mbt.files import cache_dir
from mbt.kind import grammar_kinds, version
from mbt.parsing import grammar_dir

# common.lark first (names, literals, expressions, spans), then each registered kind's grammar (mbt.kind), then the
# file rule, whose `model` alternatives are the kinds' model rules.
COMMON, FILE = "common.lark", "mbt.lark"


@lru_cache(maxsize=1)
def reserved_words() -> frozenset[str]:
    """The words that can never be names, read from common.lark's NAME terminal (its negative lookahead), so the
    importers' renaming can never drift from the grammar."""
    text = (grammar_dir() / COMMON).read_text(encoding="utf-8")
    found = re.search(r"^NAME: /\(\?!\(\?:([a-z|]+)\)\\b\)", text, re.MULTILINE)
    if found is None:  # pragma: no cover - common.lark defines NAME this way
        raise RuntimeError("common.lark: NAME has no reserved-word lookahead")
    return frozenset(found.group(1).split("|"))


# Names with a meaning of their own inside expressions (`discarded.X`, `args.NAME`): importers avoid them too.
EXPRESSION_PREFIXES = frozenset({"discarded", "args"})


def grammar_text() -> str:
    folder = grammar_dir()
    kinds = grammar_kinds()  # a kind read from a format of its own has no grammar (mbt.kind.FileFormat)
    parts = [(folder / COMMON).read_text(encoding="utf-8")]
    parts += [Path(k.grammar).read_text(encoding="utf-8") for k in kinds if k.grammar is not None]
    parts.append((folder / FILE).read_text(encoding="utf-8"))
    parts.append("?model: " + "\n      | ".join(k.rule for k in kinds if k.rule is not None) + "\n")
    return "\n".join(parts)


def parser() -> Lark:
    """The file parser for the kinds registered now (built once per registry state)."""
    return _parser(version())


@lru_cache(maxsize=4)
def _parser(registry_version: int) -> Lark:
    # LALR with the contextual lexer: linear time on large models, and keywords only reserved where they fit.
    text = grammar_text()
    # Positions come from _StartPositions (below), not from lark's propagate_positions.
    options = dict(parser="lalr", propagate_positions=False, maybe_placeholders=True)
    # Building the LALR tables takes ~0.2 s per process; lark's cache keeps them in a file keyed by the grammar's
    # content and lark's version (so a changed grammar never loads stale tables). No cache when it cannot be written.
    key = hashlib.sha256(f"{lark.__version__}\n{sorted(options.items())}\n{text}".encode()).hexdigest()[:32]
    folder = cache_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return _StartPositions(text, cache=str(folder / f"grammar-{key}.lark-cache"), **options)
    except OSError:
        return _StartPositions(text, **options)


class _StartPositions(Lark):
    """lark's LALR parser with only where each node starts in its meta (line, column): mbt reads nothing else of a
    node's position, and lark's propagate_positions, which also works out where it ends, was a quarter of parsing."""

    def _prepare_callbacks(self) -> None:
        super()._prepare_callbacks()
        callbacks = self._callbacks  # the dict the parser calls (shared with it, also when loaded from lark's cache)
        for rule, build in callbacks.items():
            if isinstance(rule, Rule):  # the rest are the lexer's terminal callbacks
                callbacks[rule] = _starts(build)


def _starts(build):
    """A rule's tree builder that records where the node starts, by lark's rule (PropagatePositions): at the first
    child that has a position, counting the tokens the tree leaves out (`fsm`, `(`); a node a `?rule` passed up
    keeps its own start, and the rule's start is kept as its `container_` start for the node's parent."""

    def build_positioned(children):
        node = build(children)
        if type(node) is not Tree:
            return node
        for child in children:
            if type(child) is Token:
                line, column = child.line, child.column
                break
            if type(child) is Tree:
                meta = child._meta
                if meta is not None and not meta.empty:
                    line, column = meta.container_line, meta.container_column
                    break
        else:
            return node
        meta = node.meta
        if meta.empty:
            meta.line, meta.column, meta.empty = line, column, False
        meta.container_line, meta.container_column = line, column
        return node

    return build_positioned
