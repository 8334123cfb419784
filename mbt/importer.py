"""The importer interface and its registry (the ground floor): files in other tools' formats read as models, found
by suffix (DMN XML, GraphWalker JSON and GraphML).

Each entry names the module and function that turns a file into a `ModelFile` (mbt.parsing.loader); the loader looks
the suffix up here and imports the module by name when such a file is read, so the loader and the importers (which
parse the DSL text they produce with the loader's parser, a floor below them) never import each other statically.
The importers themselves live in mbt/importers/, a floor above the parser.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # annotations only: the registry imports no importer and not the loader at run time
    from mbt.parsing.loader import ModelFile

Load = Callable[[str | Path], "ModelFile"]  # a file -> its models
LoadGroup = Callable[[Sequence[str | Path]], "list[ModelFile]"]  # the files of one load, read together
Sniff = Callable[[Path], bool]  # a file found in a folder -> whether it is such a model


def _function(name: str) -> object:
    """The function a "module:function" entry names, its module imported now (when such a file is read)."""
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


@dataclass(frozen=True)
class Importer:
    name: str  # as in `mbt import NAME`
    suffix: str
    loader: str  # "module:function" taking a path, returning a parsing.loader.ModelFile
    searched: bool  # read from folders too (a .json in a folder is a golden file, so GraphWalker is not)
    # "module:function" taking every such file of one load at once (files that link to each other, as GraphWalker's
    # shared states do), returning a list of ModelFile; None: each file is read on its own.
    group_loader: str | None = None
    # "module:function" telling, for a file of this suffix found in a folder, whether it is such a model.
    sniff: str | None = None

    # The entries name functions of these signatures (tests/test_architecture.py imports each and checks them): the
    # casts state what the entry promises, which a string cannot say to a type checker.
    def load(self) -> Load:
        return cast(Load, _function(self.loader))

    def load_group(self) -> LoadGroup:
        assert self.group_loader is not None
        return cast(LoadGroup, _function(self.group_loader))

    def found_in_folder(self, path: Path) -> bool:
        return self.searched or (self.sniff is not None and cast(Sniff, _function(self.sniff))(path))


_GW = "mbt.importers.graphwalker"
IMPORTERS = {
    ".dmn": Importer("dmn", ".dmn", "mbt.importers.dmn:load_dmn", searched=True),
    # GraphWalker JSON and yEd GraphML: files given together link through shared states. In a folder, only the
    # files that are GraphWalker models are read (a .json there may be a golden file, a .graphml another tool's).
    ".json": Importer("graphwalker", ".json", f"{_GW}:load_graphwalker", searched=False,
                      group_loader=f"{_GW}:load_graphwalker_files", sniff=f"{_GW}:looks_like_graphwalker"),
    ".graphml": Importer("graphwalker", ".graphml", f"{_GW}:load_graphwalker", searched=False,
                         group_loader=f"{_GW}:load_graphwalker_files", sniff=f"{_GW}:looks_like_graphwalker"),
}


def importer_for(suffix: str) -> Importer | None:
    return IMPORTERS.get(suffix.lower())


def searched_suffixes() -> tuple[str, ...]:
    """Suffixes looked for in folders (each file found is asked `found_in_folder`)."""
    return tuple(s for s, i in IMPORTERS.items() if i.searched or i.sniff is not None)


def all_suffixes() -> tuple[str, ...]:
    return tuple(IMPORTERS)


