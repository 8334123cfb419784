"""Writing outputs safely: one atomic writer for files and one for whole folders, both with the user's umask.

A file is written to a temporary file beside it, flushed to disk, given its mode and renamed over the target, so a
reader sees the old file or the new one, never half of one. New files get `0o666 & ~umask` and new folders
`0o777 & ~umask`, as `open()` and `mkdir` would give them (a temporary file is created 0600, which must not leak
through); an existing regular file keeps its mode. A target that exists but is not a regular file (`/dev/null`, a
FIFO, `/dev/stdout`) is written in place and never replaced; a symbolic link is followed, so the link stays.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from mbt.errors import MbtError


def current_umask() -> int:
    """The process's umask (reading it means setting it: it is put back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    return 0o666 & ~current_umask()


def new_folder_mode() -> int:
    return 0o777 & ~current_umask()


def write_file(path: str | Path, data: bytes | str) -> None:
    """Write `data` (text is written as UTF-8) to `path` whole or not at all."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    target = Path(path)
    if target.is_symlink():
        target = target.resolve()  # write where the link points; the link itself stays a link
    if target.exists() and not target.is_file():
        if target.is_dir():
            raise MbtError(f"error: {path} is a folder; give a file name")
        with open(target, "wb") as handle:  # a device or a pipe: written in place, never replaced
            handle.write(payload)
        return
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise MbtError(f"error: cannot write {path}: folder {folder} does not exist")
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else new_file_mode()
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def stage_folder(parent: Path, name: str) -> Path:
    """A new empty folder beside where `name` will go, with the mode a new folder gets (mkdtemp makes it 0700)."""
    staged = Path(tempfile.mkdtemp(dir=parent, prefix=f".{name}.", suffix=".tmp"))
    os.chmod(staged, new_folder_mode())
    return staged


def fill_folder(root: Path, files: dict[str, bytes]) -> None:
    """Write `files` (safe relative names) under `root`, creating subfolders with the umask's mode."""
    file_mode, folder_mode = new_file_mode(), new_folder_mode()
    for name, data in sorted(files.items()):
        rel = Path(name)
        if rel.is_absolute() or ".." in rel.parts:  # names come from mbt, but never escape the folder
            raise MbtError(f"error: refusing to write {name!r} outside {root}")
        dest = root / rel
        for folder in reversed([p for p in dest.parents if p != root and root in p.parents]):
            if not folder.exists():
                folder.mkdir()
                os.chmod(folder, folder_mode)
        dest.write_bytes(data)
        os.chmod(dest, file_mode)


def replace_folder(staged: Path, target: Path) -> None:
    """Move a finished staged folder into place; an old folder at `target` goes only once the new one is there."""
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
        os.replace(target, old / "previous")
    try:
        os.replace(staged, target)
    except BaseException:
        if old is not None:
            os.replace(old / "previous", target)  # put the previous folder back: never neither of them
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
