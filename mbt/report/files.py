"""Writing finished outputs: bytes to a file, or a whole folder of files, each all-or-nothing (no partial output)."""

from __future__ import annotations

import sys
from pathlib import Path

from mbt.errors import MbtError
from mbt.files import OutputSet, write_file

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
    write_reports([(path, files)])


def write_reports(reports: list[tuple[str | None, str | bytes | dict[str, bytes]]]) -> None:
    """Write finished reports as one set: (path, text) for a file, (path, {name: bytes}) for a folder, (None or
    "-", text) for standard output. Every file and folder is staged first and moved into place only when all are
    written (mbt/files.OutputSet); standard output is written last, once the files are in place."""
    for path, body in reports:
        if isinstance(body, dict) and path not in (None, "-"):
            check_folder_target(path)
    printed = []
    with OutputSet() as outputs:
        for path, body in reports:
            if path in (None, "-"):
                printed.append(body)
            elif isinstance(body, dict):
                _folder_of(Path(path), path)
                outputs.folder(path, {**body, MARKER: b"written by mbt; this folder is replaced on the next report\n"})
            else:
                target = Path(path)
                if target.is_dir():
                    raise MbtError(f"error: {path} is a folder; give a file name for -o")
                _folder_of(target, path)
                outputs.file(target, body)
    for body in printed:
        sys.stdout.write(body if isinstance(body, str) else body.decode("utf-8"))  # type: ignore[union-attr]
        sys.stdout.flush()
