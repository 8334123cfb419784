"""The compiled-model cache: models parsed, resolved, linked and enumerated, stored under a hash of what they come from.

A coverage run on an unchanged model skips parsing, resolution, the z3 feasibility checks and element enumeration.
The key is a SHA-256 of mbt itself (the content of its modules and grammars, not only its version number, so an edited
checkout never loads stale entries), the Python version and every model file's path and bytes; an entry also records
the source documents the models cite, with their hashes, and is used only while they are unchanged. An entry is a
pickle behind a header carrying the payload's SHA-256: a damaged entry is never unpickled, it is rebuilt with a
note. The folder is mbt's private cache folder (see files.cache_dir); `--no-cache` or `MBT_NO_CACHE=1`
turns the cache off.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mbt import __version__
from mbt.files import cache_dir, write_file
from mbt.kind import elements_of
from mbt.model.common import ModelBase
from mbt.parsing import grammar_dir
from mbt.parsing.loader import ModelFile, expand_paths, load_paths
from mbt.sources import source_path

FORMAT = b"mbt-model-cache 2"
PACKAGE = Path(__file__).resolve().parent


@dataclass
class Loaded:
    """Models ready to measure (their elements enumerated), what the cache did, and what to note (a cache entry
    replaced, a part of a file its importer left out)."""

    files: list[ModelFile]
    models: list[ModelBase]
    status: str = "off"  # off | hit | miss | rebuilt (a damaged entry was replaced)
    notes: list[str] = field(default_factory=list)


def enabled() -> bool:
    return os.environ.get("MBT_NO_CACHE", "") in ("", "0")


@functools.lru_cache(maxsize=1)
def mbt_digest() -> str:
    """A hash of mbt's own code and grammars: any change to mbt gives new keys."""
    h = hashlib.sha256(f"{__version__}\n{sys.version}\n".encode())
    code = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
    for path in code + sorted(grammar_dir().glob("*.lark")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _key(paths: list[Path]) -> str:
    h = hashlib.sha256(mbt_digest().encode())
    for path in paths:
        h.update(os.fsencode(path) + b"\0" + path.read_bytes() + b"\0")  # fsencode: any file name
    return h.hexdigest()[:40]


def _sources_of(files: list[ModelFile]) -> list[tuple[str, str]]:
    """(path, content hash) of every source document the files cite; a missing one hashes as missing."""
    out = set()
    for f in files:
        for decl in f.sources.values():
            path = source_path(f.path, decl)
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                digest = "missing"
            out.add((str(path), digest))
    return sorted(out)


def _read(entry: Path) -> tuple[list[ModelFile], list[tuple[str, str]]] | None:
    """The entry's files and cited sources; None when there is none. Raises ValueError when it is damaged."""
    try:
        data = entry.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ValueError(f"unreadable ({err.strerror})") from err
    cut = data.find(b"\n")
    header = data[:cut] if cut >= 0 else data
    payload = memoryview(data)[cut + 1:] if cut >= 0 else memoryview(b"")  # a view: the payload is not copied
    parts = header.split(b" ")
    if b" ".join(parts[:2]) != FORMAT or len(parts) != 3:
        raise ValueError("not an entry of this cache format")
    if hashlib.sha256(payload).hexdigest().encode() != parts[2]:
        raise ValueError("its content does not match its checksum")
    try:
        files, sources = pickle.loads(payload)  # noqa: S301 - our own entry, checked against its checksum above
    except Exception as err:  # noqa: BLE001 - whatever unpickling raises, the entry is not trusted
        raise ValueError(f"it cannot be read back ({type(err).__name__})") from err
    return files, sources


def _write(entry: Path, files: list[ModelFile], sources: list[tuple[str, str]]) -> None:
    payload = pickle.dumps((files, sources), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_file(entry, FORMAT + b" " + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    except OSError:
        pass  # a cache that cannot be written only costs time


def _enumerated(files: list[ModelFile]) -> list[ModelBase]:
    models = [m for f in files for m in f.models]
    for m in models:
        elements_of(m)  # enumerated now, so the entry holds the elements too
    return models


def load_compiled(paths: list[str], use_cache: bool = True) -> Loaded:
    """Load the models of `paths` with their elements enumerated, from the cache when it holds them unchanged."""
    if not (use_cache and enabled()):
        files = load_paths(paths)
        return Loaded(files, _enumerated(files), notes=import_notes(files))
    expanded = expand_paths(paths)
    try:
        entry = cache_dir() / "models" / f"{_key(expanded)}.pickle"
    except OSError:  # a model file that cannot be read: loading says so, with its path
        files = load_paths(paths)
        return Loaded(files, _enumerated(files), notes=import_notes(files))
    notes: list[str] = []
    try:
        found = _read(entry)
    except ValueError as err:
        found = None
        notes.append(f"the compiled-model cache entry {entry} was ignored: {err}; it was rebuilt")
    if found is not None:
        files, sources = found
        if _sources_of(files) == sources:
            return Loaded(files, [m for f in files for m in f.models], "hit", import_notes(files))
    files = load_paths(paths)
    models = _enumerated(files)
    _write(entry, files, _sources_of(files))
    return Loaded(files, models, "rebuilt" if notes else "miss", notes + import_notes(files))


def import_notes(files: list[ModelFile]) -> list[str]:
    """What the importers left out of the files (a DMN table mbt cannot read), `file:line:col: message` each: a
    measurement without it says so."""
    return [f"{w.path}:{w.line}:{w.column}: {w.message}" for f in files for w in f.warnings]
