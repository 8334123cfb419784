"""Writes a finished report to stdout or a file; a file is written whole or not at all (no partial output)."""

from __future__ import annotations

import sys
from pathlib import Path

from mbt.errors import MbtError
from mbt.files import write_file


def emit(text: str, path: str | None) -> None:
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    if target.is_dir():
        raise MbtError(f"error: {path} is a folder; give a file name for -o")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.exists():
        raise MbtError(f"error: cannot write {path}: folder {folder} does not exist")
    write_file(target, text)
