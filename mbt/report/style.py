"""Optional colour for terminal output: only on a terminal, never when NO_COLOR is set."""

from __future__ import annotations

import os
import sys

_CODES = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2"}


class Style:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream=None) -> Style:
        stream = stream or sys.stdout
        return cls(stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb")

    def __call__(self, text: str, color: str) -> str:
        if not self.enabled:
            return text
        return f"\x1b[{_CODES[color]}m{text}\x1b[0m"


PLAIN = Style(False)
