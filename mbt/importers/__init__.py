"""Importers: files in other tools' formats read as models, found by suffix (DMN XML, GraphWalker JSON and GraphML),
and observed runs (OTLP traces, chat transcripts) found by content (RUN_READERS).

Each entry names the module and function that turns a file into a `ModelFile`; the loader looks the suffix up here
and imports the module by name when such a file is read, so the loader and the importers (which parse the DSL text
they produce with the loader's parser) never import each other at load time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Importer:
    name: str  # as in `mbt import NAME`
    suffix: str
    loader: str  # "module:function" taking a path, returning a parsing.loader.ModelFile
    searched: bool  # read from folders too (a .json in a folder is a golden file, so GraphWalker is not)

    def load(self) -> Callable:
        module, _, function = self.loader.partition(":")
        return getattr(importlib.import_module(module), function)


IMPORTERS = {
    ".dmn": Importer("dmn", ".dmn", "mbt.importers.dmn:load_dmn", searched=True),
    ".json": Importer("graphwalker", ".json", "mbt.importers.graphwalker:load_graphwalker", searched=False),
    # yEd GraphML in GraphWalker's label syntax; not searched in folders (other tools write GraphML too).
    ".graphml": Importer("graphwalker", ".graphml", "mbt.importers.graphwalker:load_graphwalker", searched=False),
}


def importer_for(suffix: str) -> Importer | None:
    return IMPORTERS.get(suffix.lower())


def searched_suffixes() -> tuple[str, ...]:
    return tuple(s for s, i in IMPORTERS.items() if i.searched)


def all_suffixes() -> tuple[str, ...]:
    return tuple(IMPORTERS)


@dataclass(frozen=True)
class RunReader:
    """Reads observed runs (mbt.runs.steps) from JSON values: `recognise` takes one decoded value, `read` a file
    name and its values with their line numbers (None for a whole-file document) and returns (runs, problems)."""

    name: str
    recognise: str  # "module:function"
    read: str  # "module:function"

    def recognises(self, value) -> bool:
        module, _, function = self.recognise.partition(":")
        return getattr(importlib.import_module(module), function)(value)

    def reader(self) -> Callable:
        module, _, function = self.read.partition(":")
        return getattr(importlib.import_module(module), function)


RUN_SUFFIXES = (".json", ".jsonl")
RUN_READERS = (
    RunReader("otlp", "mbt.importers.otlp:is_otlp", "mbt.importers.otlp:read_otlp"),
    RunReader("transcript", "mbt.importers.transcripts:is_transcript", "mbt.importers.transcripts:read_transcripts"),
)


def run_reader_for(value) -> RunReader | None:
    return next((r for r in RUN_READERS if r.recognises(value)), None)
