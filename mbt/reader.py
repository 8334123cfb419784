"""Reads an input file safely: a clear located error for missing, unreadable, huge, binary or non-UTF-8 files
(UTF-16 and UTF-32 with a byte-order mark are read)."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from mbt.errors import LocatedError, Problem

MAX_MODEL_BYTES = 20 * 1024 * 1024


def shown_path(path: str | Path) -> str:
    """A path as messages and reports show it: a file name that is not UTF-8 (Python keeps its bytes as lone
    surrogates) is shown with those bytes escaped (`caf\\xe9.jsonl`), so every report can be written as UTF-8."""
    text = str(path)
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


_SURROGATE = re.compile("[\ud800-\udfff]")


def is_folder(path: Path) -> bool:
    """Whether `path` is a folder; False when the system cannot even look it up (a name over 255 bytes), so the
    read that follows reports the path with the reason instead of a stack."""
    try:
        return path.is_dir()
    except OSError:
        return False


def exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def read_bytes(path: Path, shown: str, limit: int = MAX_MODEL_BYTES) -> bytes:
    """The file's bytes, or a clear error for missing, unreadable or huge files."""
    try:
        missing, folder = not path.exists(), path.is_dir()
    except OSError as err:  # a name over 255 bytes, a path through a file, ...
        raise LocatedError([Problem(shown, 1, 1, f"cannot read file: {err.strerror}")]) from None
    if missing:
        raise LocatedError([Problem(shown, 1, 1, "no such file")])
    if folder:
        raise LocatedError([Problem(shown, 1, 1, "is a folder, not a file")])
    try:
        size = path.stat().st_size
        if size > limit:
            raise LocatedError([Problem(shown, 1, 1, f"file is too large ({size:,} bytes; the limit is {limit:,})")])
        data = path.read_bytes()
    except OSError as err:
        raise LocatedError([Problem(shown, 1, 1, f"cannot read file: {err.strerror}")]) from None
    return data


def read_text(path: Path, shown: str, limit: int = MAX_MODEL_BYTES) -> str:
    """The file's text, or a clear error for missing, unreadable, huge, binary or non-UTF-8 files."""
    data = read_bytes(path, shown, limit)
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):  # a byte-order mark says the encoding (Windows tools save "Unicode" as UTF-16)
            try:
                return data.decode(codec)
            except UnicodeDecodeError as err:
                raise LocatedError([Problem(shown, 1, 1, f"the file starts with a {codec.upper()} byte-order mark "
                                            f"but is not valid {codec.upper()} (byte {err.start})")]) from None
    if b"\x00" in data[:8192]:
        raise LocatedError([Problem(shown, 1, 1, "this is a binary file, not a text file")])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise LocatedError([Problem(shown, line, column, "the file is not valid UTF-8 text")]) from None
