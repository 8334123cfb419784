"""Redaction of values in regression goldens: e-mail addresses and phone numbers by default, free text on request.

A redacted value becomes a short hash of itself (`<email:1a2b3c4d>`), so equal values stay equal and a regression
golden still replays (its explicit events carry the same tokens as its expected tool arguments); `drop` mode writes
the bare kind instead (`<email>`), losing that.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Any

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
# A phone number: international (+ and 7 to 15 digits with spaces, dots, dashes or brackets), North American
# (415-555-0134, (415) 555 0134) or a bare 10 or 11 digit mobile number (13812345678). Order numbers (SO-10042) and
# dates (2026-01-02) have too few digits or the wrong shape.
PHONE = re.compile(r"\+\d(?:[\s().-]{0,2}\d){6,14}(?!\d)"
                   r"|(?<![\w-])\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}(?![\w-])"
                   r"|(?<![\w-])\d{10,11}(?![\w-])")
KINDS = ("email", "phone", "text")
DEFAULT_KINDS = ("email", "phone")


@dataclass(frozen=True)
class Redaction:
    kinds: tuple[str, ...] = DEFAULT_KINDS
    mode: str = "hash"  # hash | drop

    def token(self, kind: str, value: str) -> str:
        if self.mode == "drop":
            return f"<{kind}>"
        return f"<{kind}:{hashlib.sha256(value.encode('utf-8')).hexdigest()[:8]}>"

    def value(self, value: Any) -> Any:
        """Values inside strings redacted (recursively through lists and mappings)."""
        kind = type(value)
        if kind is str:
            return _redacted(self, value)
        if kind is dict:  # exact types first: the common cases without isinstance's walk
            return {k: self.value(v) for k, v in value.items()}
        if kind in (int, float, bool) or value is None:
            return value
        if isinstance(value, str):
            return _redacted(self, value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value

    def text(self, value: str | None) -> str | None:
        """Free text (what the user said): hashed whole under `text`, else with its e-mails and phones redacted."""
        if value is None:
            return None
        if "text" in self.kinds:
            return self.token("text", value)
        return self.value(value)


@functools.lru_cache(maxsize=65_536)  # failing runs repeat the same texts and values: each is redacted once
def _redacted(redaction: Redaction, value: str) -> str:
    out = value
    if "email" in redaction.kinds:
        out = EMAIL.sub(lambda m: redaction.token("email", m.group(0)), out)
    if "phone" in redaction.kinds:
        out = PHONE.sub(lambda m: redaction.token("phone", m.group(0)), out)
    return out


NONE = Redaction(kinds=())
