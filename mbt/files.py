"""Writing outputs safely: one atomic writer for files and one for whole folders, both with the user's umask.

A file is written to a temporary file beside it, flushed to disk, given its mode and renamed over the target, so a
reader sees the old file or the new one, never half of one. New files get `0o666 & ~umask` and new folders
`0o777 & ~umask`, as `open()` and `mkdir` would give them (a temporary file is created 0600, which must not leak
through); an existing regular file keeps its mode. A target that exists but is not a regular file (`/dev/null`, a
FIFO, `/dev/stdout`) is written in place and never replaced; a symbolic link is followed, so the link stays.
Several outputs of one run (reports, generated files) form one OutputSet: they appear together or not at all.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import stat
import tempfile
import threading
import zipfile
from collections.abc import Iterable, Iterator
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
    with OutputSet() as outputs:
        outputs.file(path, data)


class Chunks:
    """A large file's content as the pieces it is made of, made while the file is written and never held whole (a
    JSON report of hundreds of thousands of elements); iterable once. An error while making them is an error while
    writing: the set is abandoned, as for any other."""

    def __init__(self, parts: Iterable[bytes]) -> None:
        self._parts = iter(parts)

    def __iter__(self) -> Iterator[bytes]:
        return self._parts


class Files:
    """A folder's files made while the folder is written, never held together (a site of 100,000 cases): pairs of a
    safe relative name and the content, bytes or the Path of an existing file with the same content (linked when the
    file system allows, else copied: a folder written again keeps what did not change without rewriting it);
    iterable once."""

    def __init__(self, items: Iterable[tuple[str, bytes | Path]]) -> None:
        self._items = iter(items)

    def __iter__(self) -> Iterator[tuple[str, bytes | Path]]:
        return self._items


def _write_out(handle, payload: bytes | Chunks) -> None:
    if isinstance(payload, Chunks):
        for part in payload:
            handle.write(part)
    else:
        handle.write(payload)


class OutputSet:
    """Outputs that appear together or not at all: `with OutputSet() as out: out.file(...); out.folder(...)`.

    Each file is first written whole to a temporary file beside its target (a folder to a staged folder beside
    it); only when every one is written are they renamed into place, with Ctrl-C held back for those few renames.
    An error or a Ctrl-C before that removes every temporary file, staged folder and folder made for the set, so a
    failed run leaves what was there before, never a part of the new set. A device or pipe (`/dev/null`, a FIFO)
    cannot be staged: it is written first when the set is committed, so an error there still leaves no file moved.
    """

    def __init__(self) -> None:
        self._devices: list[tuple[Path, bytes | Chunks]] = []
        self._files: list[tuple[str, Path]] = []  # (temporary file, target)
        self._folders: list[tuple[Path, Path]] = []  # (staged folder, target)
        self._made: list[Path] = []  # folders created for the set's files, removed if it is abandoned

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.commit()
        else:
            self.abandon()

    def file(self, path: str | Path, data: bytes | str | Chunks, make_folders: bool = False) -> None:
        """Stage `data` for `path`; `make_folders` creates missing parent folders (with the umask's mode)."""
        payload = data.encode("utf-8") if isinstance(data, str) else data
        target = Path(path)
        if target.is_symlink():
            target = target.resolve()  # write where the link points; the link itself stays a link
        if target.exists() and not target.is_file():
            if target.is_dir():
                raise MbtError(f"{path} is a folder; give a file name")
            self._devices.append((target, payload))  # a device or a pipe: written in place, never replaced
            return
        folder = target.parent if str(target.parent) else Path(".")
        if make_folders:
            self._make_folders(folder)
        if not folder.is_dir():
            raise MbtError(f"cannot write {path}: folder {folder} does not exist")
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else new_file_mode()
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name[:200]}.", suffix=".tmp")
        self._files.append((tmp, target))  # before writing: an error while writing still removes it
        with os.fdopen(fd, "wb") as handle:
            _write_out(handle, payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)

    def folder(self, path: str | Path, files: dict[str, bytes] | Files) -> None:
        """Stage a whole folder of `files` (safe relative names) to replace `path`."""
        target = Path(path)
        staged = stage_folder(target.parent if str(target.parent) else Path("."), target.name)
        self._folders.append((staged, target))
        fill_folder(staged, files)

    def _make_folders(self, folder: Path) -> None:
        missing = [p for p in [folder, *folder.parents] if not p.exists()]
        for p in reversed(missing):
            p.mkdir()
            os.chmod(p, new_folder_mode())
            self._made.append(p)

    def commit(self) -> None:
        try:
            for target, payload in self._devices:
                with open(target, "wb") as handle:
                    _write_out(handle, payload)
        except BaseException:
            self.abandon()
            raise
        with _interrupts_held():
            for staged, target in self._folders:
                replace_folder(staged, target)
            for tmp, target in self._files:
                os.replace(tmp, target)
        self._devices, self._files, self._folders, self._made = [], [], [], []

    def abandon(self) -> None:
        for tmp, _ in self._files:
            Path(tmp).unlink(missing_ok=True)
        for staged, _ in self._folders:
            shutil.rmtree(staged, ignore_errors=True)
        for made in reversed(self._made):
            with contextlib.suppress(OSError):
                made.rmdir()  # only if still empty
        self._devices, self._files, self._folders, self._made = [], [], [], []


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Ctrl-C waits until the block is done (then raises as usual): renaming a finished set into place is never
    cut in half. Only the main thread can install a signal handler; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def stage_folder(parent: Path, name: str) -> Path:
    """A new empty folder beside where `name` will go, with the mode a new folder gets (mkdtemp makes it 0700)."""
    staged = Path(tempfile.mkdtemp(dir=parent, prefix=f".{name}.", suffix=".tmp"))
    os.chmod(staged, new_folder_mode())
    return staged


def fill_folder(root: Path, files: dict[str, bytes] | Files) -> None:
    """Write `files` (safe relative names) under `root`, creating subfolders with the umask's mode."""
    file_mode, folder_mode = new_file_mode(), new_folder_mode()
    for name, data in sorted(files.items()) if isinstance(files, dict) else files:
        rel = Path(name)
        if rel.is_absolute() or ".." in rel.parts:  # names come from mbt, but never escape the folder
            raise MbtError(f"refusing to write {name!r} outside {root}")
        dest = root / rel
        for folder in reversed([p for p in dest.parents if p != root and root in p.parents]):
            if not folder.exists():
                folder.mkdir()
                os.chmod(folder, folder_mode)
        if isinstance(data, Path):
            try:
                os.link(data, dest)  # the same content, and the old file stays as it was until replaced
                continue
            except OSError:
                shutil.copyfile(data, dest)
        else:
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


def zip_archive(parts: Iterable[tuple[str, Iterable[bytes]]],
                date_time: tuple[int, int, int, int, int, int] = (2000, 1, 1, 0, 0, 0)) -> bytes:
    """A zip archive made in memory (an .xlsx workbook is one) from each part's name and its content in pieces,
    deflated as the pieces come, so a part is never one string; every entry dated `date_time` and mode 0644, so the
    same parts give the same bytes. Only the archive is held, compressed; nothing touches the file system."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, pieces in parts:
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with archive.open(info, "w") as member:
                for piece in pieces:
                    member.write(piece)
    return out.getvalue()


def cache_dir() -> Path:
    """mbt's own cache folder (XDG_CACHE_HOME, else ~/.cache): private to the user, never a shared temp folder,
    since lark's cache is a pickle and loading it runs code (the parser's, the compiled models', the LLM judge's)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mbt"
