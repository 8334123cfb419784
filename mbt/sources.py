"""Source documents cited by models: loading (cached per path), lines, and whitespace-tolerant quote search."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path

from mbt.errors import LocatedError, MbtError
from mbt.model.common import SourceDecl
from mbt.reader import read_text


class SourceError(MbtError):
    """A declared source document that cannot be used (missing, a folder, binary, not UTF-8, too large)."""


def quote_pattern(quote: str) -> re.Pattern | None:
    """The quote's words with any white space between them (None for an empty quote)."""
    words = quote.split()
    return re.compile(r"\s+".join(re.escape(w) for w in words)) if words else None


def normalise(text: str) -> str:
    """Runs of whitespace (newlines included) become one space; the ends are trimmed; case is kept."""
    return " ".join(text.split())


@dataclass
class SourceDocument:
    """The text of one source document, split into lines, with an index for quote search."""

    path: str
    text: str
    lines: list[str] = field(init=False)
    # The normalised text of the whole document, and for each word its start offset in it and its line number.
    _flat: str | None = field(default=None, init=False, repr=False)
    _starts: list[int] = field(default_factory=list, init=False, repr=False)
    _word_lines: list[int] = field(default_factory=list, init=False, repr=False)
    _line_offsets: list[int] = field(default_factory=list, init=False, repr=False)  # where each line starts in it
    _raw_offsets: list[int] = field(default_factory=list, init=False, repr=False)  # where each line starts in `text`

    def __post_init__(self) -> None:
        self.lines = self.text.splitlines()

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def _index(self) -> str:
        if self._flat is None:
            words: list[str] = []
            offset = 0
            for number, line in enumerate(self.lines, start=1):
                self._line_offsets.append(offset)
                for word in line.split():
                    self._starts.append(offset)
                    self._word_lines.append(number)
                    words.append(word)
                    offset += len(word) + 1
            self._flat = " ".join(words)
        return self._flat

    def _line_at(self, offset: int) -> int:
        """The line of the character at `offset` of the normalised text (a joining space belongs to the word before)."""
        return self._word_lines[bisect.bisect_right(self._starts, offset) - 1]

    def find_quote(self, quote: str) -> list[tuple[int, int]]:
        """Every place the quote occurs, as (first line, last line), in document order; whitespace differences ignored."""
        needle = normalise(quote)
        flat = self._index()
        if not needle:
            return []
        found: list[tuple[int, int]] = []
        start = flat.find(needle)
        while start != -1:
            found.append((self._line_at(start), self._line_at(start + len(needle) - 1)))
            start = flat.find(needle, start + 1)
        return found

    def quote_within(self, quote: str, first: int, last: int) -> bool:
        """True when the quote occurs entirely inside lines first..last (1-based, inclusive). Only those lines are
        searched: a quote repeated all over a large document (an imported model's names) costs its span, not the
        whole document, for each of the thousands of spans citing it."""
        needle = normalise(quote)
        flat = self._index()
        first = max(first, 1)
        if not needle or first > last or first > len(self.lines):
            return False
        lo = self._line_offsets[first - 1]
        hi = self._line_offsets[last] if last < len(self.lines) else len(flat)
        return flat.find(needle, lo, hi) != -1

    def line_offsets(self) -> list[int]:
        """Where each line starts in the text (as `lines` splits it), and the text's length last."""
        if not self._raw_offsets:
            offset = 0
            for line in self.text.splitlines(keepends=True):
                self._raw_offsets.append(offset)
                offset += len(line)
            self._raw_offsets.append(len(self.text))
        return self._raw_offsets

    def characters(self, first: int, column_start: int | None, last: int, column_end: int | None) -> tuple[int, int]:
        """The text's offsets [start, end) of line `first` column `column_start` through line `last` column
        `column_end` (included); a missing start column is 1, a missing end column the end of its line."""
        starts = self.line_offsets()
        lo = starts[first - 1] + (column_start or 1) - 1
        hi = starts[last - 1] + column_end if column_end is not None else starts[last - 1] + len(self.lines[last - 1])
        return lo, min(hi, len(self.text))

    def quote_within_columns(self, quote: str, first: int, column_start: int | None, last: int,
                             column_end: int | None) -> bool:
        """True when the quote occurs entirely inside the characters from line:column to line:column (see
        `characters`); only those characters are read."""
        needle = normalise(quote)
        if not needle or first < 1 or last > len(self.lines) or first > last:
            return False
        lo, hi = self.characters(first, column_start, last, column_end)
        return needle in normalise(self.text[lo:hi])

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column) of the character at `offset`."""
        starts = self.line_offsets()
        line = bisect.bisect_right(starts, offset) - 1
        line = max(0, min(line, len(self.lines) - 1))
        return line + 1, offset - starts[line] + 1

    def nearest_quote_columns(self, quote: str, offset: int) -> tuple[int, int, int, int] | None:
        """The occurrence of the quote closest to the character at `offset`, as (line, column, last line, last
        column), or None when it is nowhere."""
        pattern = quote_pattern(quote)
        if pattern is None:
            return None
        best = min(pattern.finditer(self.text), key=lambda m: (abs(m.start() - offset), m.start()), default=None)
        if best is None:
            return None
        return (*self.position(best.start()), *self.position(best.end() - 1))

    def nearest_quote(self, quote: str, line: int) -> tuple[int, int] | None:
        """The occurrence of the quote closest to `line` (ties: the earlier one), or None when it is nowhere."""
        places = self.find_quote(quote)
        if not places:
            return None
        return min(places, key=lambda p: (abs(p[0] - line), p[0]))


# Documents by resolved path; the modification time and size make an edited file load afresh.
_CACHE: dict[tuple[str, int, int], SourceDocument] = {}


def load_document(path: str | Path, shown: str | None = None) -> SourceDocument:
    """The document at `path` (cached); raises SourceError with a plain message when it cannot be read as text."""
    p = Path(path)
    shown = shown or str(path)
    try:
        stat = p.stat()
        key = (str(p.resolve()), stat.st_mtime_ns, stat.st_size)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    try:
        text = read_text(p, shown)
    except LocatedError as err:
        raise SourceError(err.problems[0].message) from None
    document = SourceDocument(path=shown, text=text)
    if key is not None:
        _CACHE[key] = document
    return document


def source_path(model_path: str | Path, decl: SourceDecl) -> Path:
    """Where a declared source lives: its path is relative to the folder of the model file that declares it."""
    return Path(model_path).parent / decl.path


def clear_cache() -> None:
    _CACHE.clear()
