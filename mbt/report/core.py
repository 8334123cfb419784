"""The Reporter protocol and the one function that writes finished reports: stdout, a file or a folder, whole or not at all."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from mbt.errors import MbtError
from mbt.files import Chunks, Files, OutputSet

# What a reporter returns: text, bytes (a PNG, an xlsx), the pieces of a large file made while it is written (Chunks),
# or a folder of files (relative name -> bytes; or Files, made while the folder is written).
Body = str | bytes | Chunks | Mapping[str, bytes] | Files

# A folder mbt wrote holds this file; only such a folder (or an empty one) is replaced by a new report.
MARKER = ".mbt-report"
MARKER_TEXT = b"written by mbt; this folder is replaced on the next report\n"


# What a reporter reads and the presentation options it takes (contravariant: a reporter of a wider result type
# reports a narrower one too).
R_contra = TypeVar("R_contra", contravariant=True)
O_contra = TypeVar("O_contra", contravariant=True)


class Reporter(Protocol[R_contra, O_contra]):
    """A report format for one kind of result: turns the result (a CoverageRun, a CheckReport) and presentation
    options into its body. It never prints or opens a file; `write_reports` does both (as coverage.py's reporters
    hand their output to report_core)."""

    def __call__(self, result: R_contra, options: O_contra, /) -> Body: ...


@dataclass(frozen=True)
class Output:
    """A report still to be written: a reporter and the path it goes to (None or "-": stdout)."""

    produce: Callable[[], Body]
    path: str | None = None


def _file_path(path: str | None) -> str | None:
    """The file or folder a report goes to; None for stdout (None or "-")."""
    return None if path is None or path == "-" else path


def _parent(target: Path, shown: str) -> Path:
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise MbtError(f"cannot write {shown}: folder {folder} does not exist")
    return folder


def check_file_target(path: str, what: str = "") -> None:
    """Fail early (before any work) when `path` cannot receive a report file."""
    target = Path(path)
    if target.is_dir():
        raise MbtError(f"{path} is a folder; give a file name" + (f" for the {what} report" if what else ""))
    _parent(target, path)


def check_folder_target(path: str) -> None:
    """Fail early (before any work) when `path` cannot receive a report folder."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise MbtError(f"{path} is a file; the HTML report needs a folder name")
    if target.is_dir() and any(target.iterdir()) and not (target / MARKER).exists():
        raise MbtError(f"{path} is a folder mbt did not write and it is not empty; "
                       "choose a new or empty folder (mbt replaces only its own report folders)")
    _parent(target, path)


def _write_stdout(body: Body) -> None:
    if isinstance(body, (Mapping, Files)):
        raise MbtError("a report folder cannot go to stdout: give it a folder name")
    if isinstance(body, Chunks):  # made whole first: an error while making it must not leave half a report on stdout
        body = b"".join(body)
    if isinstance(body, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(body)
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(body)
        sys.stdout.flush()


def write_reports(outputs: Sequence[Output]) -> None:
    """Produce every report first, then write them as one set: each file and folder is staged beside its target
    and all are moved into place together once every one is written (mbt/files.OutputSet), so a reporter that fails,
    an OS error or a Ctrl-C leaves what was there before, never part of the new set; stdout is written last."""
    made = [(o.produce(), _file_path(o.path)) for o in outputs]
    for body, path in made:
        if path is None:
            if isinstance(body, (Mapping, Files)):
                raise MbtError("a report folder cannot go to stdout: give it a folder name")
        elif isinstance(body, (Mapping, Files)):
            check_folder_target(path)
        else:
            check_file_target(path)
    with OutputSet() as staged:
        for body, path in made:
            if path is None:
                continue
            if isinstance(body, Files):
                staged.folder(path, Files(itertools.chain(body, [(MARKER, MARKER_TEXT)])))
            elif isinstance(body, Mapping):
                staged.folder(path, {**body, MARKER: MARKER_TEXT})
            else:
                staged.file(Path(path), body)
    for body, path in made:
        if path is None:
            _write_stdout(body)


def write_report(body: Body, path: str | None) -> None:
    """One finished body to stdout (None or "-"), a file, or a folder (a mapping of files)."""
    write_reports([Output(lambda: body, path)])
