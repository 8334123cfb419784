"""Writing finished outputs: bytes to a file, or a whole folder of files, each all-or-nothing (no partial output)."""

from __future__ import annotations

import shutil
from pathlib import Path

from mbt.errors import MbtError
from mbt.files import fill_folder, replace_folder, stage_folder, write_file

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
    _folder_of(target, path)
    write_file(target, data)


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
    staged = stage_folder(_folder_of(target, path), target.name)
    try:
        fill_folder(staged, {**files, MARKER: b"written by mbt; this folder is replaced on the next report\n"})
        replace_folder(staged, target)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
