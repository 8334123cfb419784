"""Observed runs (traces and transcripts): one module per stage, from the observed-step model to regression goldens.

The compiled build (issue 37, docs/runs.md "Scale"): `make` compiles the hot modules of this package with mypyc into
_native/ (mbt/native_build.py). They are used in place of their .py files only when the build was made from exactly
the sources on disk: its manifest holds the sha256 of every .py file of mbt the compiler saw, checked here before any
module of this package is imported. A missing, partial or stale build, another interpreter, or `MBT_PURE_PYTHON=1`
means the .py modules, which are the source of truth: same results, only slower. `BUILD` says which is in use and
`BUILD_REASON` why.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

_NATIVE = Path(__file__).with_name("_native")


class _CompiledModules:
    """A finder of the import system that gives the compiled modules (and their shared library) by name."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        file = self.files.get(name)
        return importlib.util.spec_from_file_location(name, file) if file is not None else None


def _compiled_build() -> str | None:
    """Makes the compiled modules the ones imported when their build is current; else says why not (None: it is)."""
    if os.environ.get("MBT_PURE_PYTHON", "") not in ("", "0"):
        return "MBT_PURE_PYTHON is set"
    try:
        manifest = json.loads((_NATIVE / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "no compiled build (make builds it)"
    if manifest.get("interpreter") != importlib.machinery.EXTENSION_SUFFIXES[0]:
        return "the compiled build is for another interpreter"
    package = Path(__file__).resolve().parents[1]
    for relative, digest in manifest["sources"].items():
        try:
            current = hashlib.sha256((package.parent / relative).read_bytes()).hexdigest()
        except OSError:
            current = None
        if current != digest:
            return f"the compiled build is stale ({relative} changed; make rebuilds it)"
    # A .py file the build never saw is a change too (mypy would have read it had it been imported).
    if sum(1 for path in package.rglob("*.py") if "_native" not in path.parts) != len(manifest["sources"]):
        return "the compiled build is stale (mbt's files changed; make rebuilds it)"
    files = {name: _NATIVE / shim for name, shim in manifest["shims"].items()}
    library = manifest["library"]
    files[library["name"]] = _NATIVE / library["file"]
    finder = _CompiledModules(files)
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module(library["name"])  # the compiled code itself; no module of mbt runs yet
    except ImportError as error:
        sys.meta_path.remove(finder)
        return f"the compiled build does not load ({error})"
    return None


BUILD_REASON = _compiled_build() or "built from the current sources"
BUILD = "pure" if BUILD_REASON != "built from the current sources" else "compiled"
