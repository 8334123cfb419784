"""When, with what and from where a report was made: the date, mbt's version, the git commit and the command line."""

from __future__ import annotations

import datetime as dt
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass

from mbt import __version__
from mbt.reader import shown_path


@dataclass(frozen=True)
class Provenance:
    date: str  # UTC, to the minute
    version: str
    commit: str | None  # the checkout's HEAD (with "+ local changes" when the tree is dirty), or None
    command: str  # as typed, quoted for a POSIX shell


def provenance(argv: list[str] | None, folder: str | None = None) -> Provenance:
    """SOURCE_DATE_EPOCH (reproducible builds) replaces the clock, so a rebuilt report can be byte-identical."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    when = dt.datetime.fromtimestamp(int(epoch), dt.UTC) if epoch.isdigit() else dt.datetime.now(dt.UTC)
    # An argument that is not UTF-8 (a file name Python keeps as lone surrogates) is shown escaped, as paths are.
    command = "mbt " + " ".join(shlex.quote(shown_path(a)) for a in argv) if argv is not None else "(mbt.api)"
    return Provenance(when.strftime("%Y-%m-%d %H:%M UTC"), __version__, git_commit(folder), command)


def git_commit(folder: str | None = None) -> str | None:
    """The commit checked out in `folder` (default: the working folder); None outside a repository or without git."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        head = subprocess.run([git, "rev-parse", "--short=12", "HEAD"], cwd=folder, capture_output=True, text=True,
                              timeout=5, check=False)
        if head.returncode != 0:
            return None
        dirty = subprocess.run([git, "status", "--porcelain", "--untracked-files=no"], cwd=folder,
                               capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + (" + local changes" if dirty.stdout.strip() else "")
