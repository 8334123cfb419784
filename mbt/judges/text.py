"""Text as the judges compare it: Unicode-folded, tokenised for English, Vietnamese and Chinese, split into clauses.

`fold` makes equal what only looks different: NFKC (full-width forms, compatibility characters), case, runs of white
space, and the two ways Vietnamese places a tone mark in `oa`, `oe`, `uy` at a syllable's end ("khóa" and "khoá" are
one word written in the old and the new style). Tokens: a Han character is a token of its own (Chinese is not split
into words: no dictionary ships here), a run of letters is a word (Vietnamese syllables are words), a number is one
token with its separators. Nothing here knows about verdicts.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
TOKEN = re.compile(rf"[{HAN}]|\d+(?:[.,]\d+)*|[^\W\d_{HAN}]+(?:['’][^\W\d_{HAN}]+)?")
# tone on the first vowel of a final oa / oe / uy (old style) -> on the second (new style), at a syllable's end
_TONES = {"\u0301": 0, "\u0300": 1, "\u0309": 2, "\u0303": 3, "\u0323": 4}
_OLD_STYLE = re.compile(r"([oóòỏõọuúùủũụ])([ae y])(?![^\W\d_])".replace(" ", ""), re.IGNORECASE)


def _retone(match: re.Match[str]) -> str:
    first, second = match.group(1), match.group(2)
    base = unicodedata.normalize("NFD", first)
    marks = [ch for ch in base[1:] if ch in _TONES]
    if not marks or (base[0].lower() == "u" and second.lower() != "y") or (base[0].lower() == "o" and second.lower() == "y"):
        return match.group(0)
    return base[0] + unicodedata.normalize("NFC", second + marks[0])


def fold(text: str) -> str:
    """The text as compared: NFKC, case-folded, Vietnamese tone marks in one style, white space collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _OLD_STYLE.sub(_retone, text)
    return " ".join(text.split())


def tokens(text: str) -> list[str]:
    """The folded text's tokens (Han characters one by one, words, numbers), without punctuation."""
    return TOKEN.findall(fold(text))


def is_han(token: str) -> bool:
    return len(token) == 1 and bool(re.match(f"[{HAN}]", token))


def language(text: str) -> str:
    """`zh`, `vi` or `en`, by script: Han characters make Chinese, Vietnamese letters make Vietnamese."""
    if re.search(f"[{HAN}]", text):
        return "zh"
    if re.search(r"[ăâđêôơưĂÂĐÊÔƠƯ]|[\u0300\u0301\u0303\u0309\u0323]", unicodedata.normalize("NFD", text)):
        return "vi"
    return "en"


_CLAUSE = re.compile(r"[.!?;。！？；\n]+|,\s*(?:then|and then)\b|,\s*(?:sau đó|rồi)\b|，\s*(?:然后|再)|[，,]")


def clauses(text: str) -> list[str]:
    """The text's sentences and comma-separated parts (steps are clauses), empty ones left out."""
    return [part.strip() for part in _CLAUSE.split(fold(text)) if part and part.strip()]


def reply_objects(reply: str) -> Iterator[Any]:
    """Each JSON value that starts at a `{` in a model's reply, in order, its `<think>` blocks and code fences left out:
    the tolerant reading the LLM judge, the proposition extractor and the probe generator share (a reply may wrap its
    object in prose or a fenced block)."""
    text = re.sub(r"<think>.*?</think>|```(?:json)?", " ", reply, flags=re.DOTALL | re.IGNORECASE)
    decoder = json.JSONDecoder()
    for found in re.finditer(r"\{", text):
        try:
            yield decoder.raw_decode(text, found.start())[0]
        except ValueError:
            continue
