"""Importers: files in other tools' formats read as models, found by suffix (DMN XML, GraphWalker JSON and GraphML).

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
