"""Finds the lark grammars (installed inside the package, or the checkout's grammars/ folder) and builds the parser."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark

# common.lark first (names, literals, expressions, spans), then one grammar per model kind, then the file rule.
GRAMMAR_FILES = ("common.lark", "fsm.lark", "table.lark", "policy.lark", "invariant.lark", "mbt.lark")


def grammar_dir() -> Path:
    """The folder holding the .lark files: package data when installed, else the source checkout's grammars/."""
    try:
        packaged = resources.files("mbt.grammars")
        if packaged.joinpath("mbt.lark").is_file():
            return Path(str(packaged))
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parents[2] / "grammars"


def grammar_text() -> str:
    folder = grammar_dir()
    return "\n".join((folder / name).read_text(encoding="utf-8") for name in GRAMMAR_FILES)


@lru_cache(maxsize=1)
def parser() -> Lark:
    # LALR with the contextual lexer: linear time on large models, and keywords only reserved where they fit.
    return Lark(grammar_text(), parser="lalr", propagate_positions=True, maybe_placeholders=True)
