"""Parsing: grammar loading, syntax errors in plain words, and transformation of parse trees into typed models."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def grammar_dir() -> Path:
    """The folder holding the .lark files: package data when installed, else the source checkout's grammars/. (Here,
    not in mbt.parsing.grammar, so that naming the grammar files loads no parser: start-up time.)"""
    try:
        packaged = resources.files("mbt.grammars")
        if packaged.joinpath("mbt.lark").is_file():
            return Path(str(packaged))
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parents[2] / "grammars"
