"""Optional colour for terminal output, decided as pytest decides it: --color, then PY_COLORS, NO_COLOR, FORCE_COLOR."""

from __future__ import annotations

import os
import sys
from typing import TextIO

_CODES = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2"}


class Style:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: TextIO | None = None, color: str = "auto") -> Style:
        """`color` is --color: yes, no, or auto: PY_COLORS=1/0 decides, else a set NO_COLOR turns colour off and a
        set FORCE_COLOR on, else colour on a terminal that is not TERM=dumb (https://no-color.org,
        https://force-color.org, and pytest's own order)."""
        return cls(wants_color(stream or sys.stdout, color))

    def __call__(self, text: str, color: str) -> str:
        if not self.enabled:
            return text
        return f"\x1b[{_CODES[color]}m{text}\x1b[0m"


def wants_color(stream: object, color: str = "auto") -> bool:
    if color in ("yes", "no"):
        return color == "yes"
    forced = os.environ.get("PY_COLORS")
    if forced in ("0", "1"):
        return forced == "1"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


PLAIN = Style(False)
