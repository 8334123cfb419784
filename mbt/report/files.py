"""Writing finished outputs: bytes to a file, or a whole folder of files, each all-or-nothing (no partial output)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from mbt.errors import MbtError

# A folder mbt wrote holds this file; only such a folder (or an empty one) is replaced by a new report.
MARKER = ".mbt-report"


def _folder_of(target: Path, shown: str) -> Path:
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.exists():
        raise MbtError(f"error: cannot write {shown}: folder {folder} does not exist")
    return folder


def write_bytes(path: str, data: bytes) -> None:
    """Write `data` to `path` atomically (a temporary file renamed over the target)."""
    target = Path(path)
    if target.is_dir():
        raise MbtError(f"error: {path} is a folder; give a file name")
    folder = _folder_of(target, path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_folder_target(path: str) -> None:
    """Fail early (before any work) when `path` cannot receive a report folder."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise MbtError(f"error: {path} is a file; the HTML report needs a folder name")
    if target.is_dir() and any(target.iterdir()) and not (target / MARKER).exists():
        raise MbtError(f"error: {path} is a folder mbt did not write and it is not empty; "
                       "choose a new or empty folder (mbt replaces only its own report folders)")
    _folder_of(target, path)


def write_folder(path: str, files: dict[str, bytes]) -> None:
    """Write a folder of files whole: built beside the target, then swapped in; `files` maps safe relative names."""
    check_folder_target(path)
    target = Path(path)
    parent = _folder_of(target, path)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        for name, data in sorted(files.items()):
            rel = Path(name)
            if rel.is_absolute() or ".." in rel.parts:  # names come from mbt, but never escape the folder
                raise MbtError(f"error: refusing to write {name!r} outside {path}")
            dest = tmp / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        (tmp / MARKER).write_text("written by mbt; this folder is replaced on the next report\n", encoding="utf-8")
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.", suffix=".old"))
            os.replace(target, old / "report")
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
