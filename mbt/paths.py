"""Paths as people type them: quoted shell globs expanded, and positional paths told apart into models and goldens."""

from __future__ import annotations

import glob
from pathlib import Path

from mbt.errors import MbtError
from mbt.goldens.loader import GOLDEN_SUFFIXES
from mbt.kinds import model_suffixes

GLOB_CHARS = frozenset("*?[")
# Model files that are not DSL files: read with --model (positional .json files are goldens, see split_positional).
IMPORTED_MODEL_SUFFIXES = (".dmn",)


def expand(paths: list[str], what: str) -> list[str]:
    """Each path as given, or, when it is a glob the shell did not expand (quoted, or on Windows), the files it
    matches, sorted (`**` spans folders). A glob matching nothing is a bad option."""
    out: list[str] = []
    for raw in paths:
        if raw != "-" and GLOB_CHARS & set(raw) and not Path(raw).exists():
            found = sorted(glob.glob(raw, recursive=True))
            if not found:
                raise MbtError(f"error: {what} {raw}: no file matches this pattern")
            out.extend(found)
        else:
            out.append(raw)
    return out


def split_positional(paths: list[str]) -> tuple[list[str], list[str]]:
    """`mbt coverage models/ goldens/ x.fsm g.jsonl`: model files go to the models, golden files to the goldens, a
    folder to whichever it holds (both when it holds both: a folder of examples with their goldens)."""
    models: list[str] = []
    goldens: list[str] = []
    model_kinds = (*model_suffixes(), *IMPORTED_MODEL_SUFFIXES)
    for raw in expand(paths, "path"):
        p = Path(raw)
        suffix = p.suffix.lower()
        if raw == "-" or (p.is_file() and suffix in GOLDEN_SUFFIXES):
            goldens.append(raw)
        elif p.is_file() and suffix in model_kinds:
            models.append(raw)
        elif p.is_dir():
            files = [q.suffix.lower() for q in p.rglob("*") if q.is_file()]
            has_models = any(s in model_kinds for s in files)
            has_goldens = any(s in GOLDEN_SUFFIXES for s in files)
            if has_models:
                models.append(raw)
            if has_goldens or not has_models:
                goldens.append(raw)
        elif not p.exists():
            raise MbtError(f"error: {raw}: no such file or folder")
        else:
            raise MbtError(f"error: {raw}: neither a model file ({', '.join(model_kinds)}) nor a golden file "
                           f"({', '.join(GOLDEN_SUFFIXES)})")
    return models, goldens
