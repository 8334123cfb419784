"""JSON for the importers (GraphWalker): the document, and where each value starts and ends, in one linear pass.

GraphWalker's reader accepts `/* */` and `//` comments (licence headers are common), so they are read as white
space. Too deep nesting and huge numbers are refused with their position, so `json` never recurses or converts
without bound (`long_number` applies the same limit to the numbers in a string's code: guards, actions, labels); a
lone UTF-16 surrogate is refused where it is. Positions are (line, column), columns counted in
characters from 1, so a minified file (every value on line 1) still tells each value's place apart.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mbt.errors import LocatedError, problem_at

MAX_DEPTH = 64  # GraphWalker models nest about 6 levels; deeper files are refused before `json` recurses on them
MAX_DIGITS = 1000  # a longer number literal is refused (Python's int() stops at 4,300 digits with a ValueError)
MAX_PATH = 6  # values deeper than this (inside guards' lists, properties' objects) get no position of their own
_JSON_TOKEN = re.compile(r'\s+|/\*.*?\*/|//[^\n]*|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|[{}\[\]:,]|-?[0-9][0-9.eE+\-]*|[A-Za-z]+',
                         re.S)

_LONG_NUMBER = re.compile(rf"[0-9]{{{MAX_DIGITS + 1},}}")


def long_number(text: str) -> str | None:
    """Why `text` (a string of the document: a guard, an action, a label) cannot be read when it holds a number
    longer than MAX_DIGITS digits, else None: the one limit for every number an importer reads, in the JSON or in
    the code its strings hold (Python's int() refuses more than 4,300 digits)."""
    found = _LONG_NUMBER.search(text)
    if found is None:
        return None
    return f"a number of {found.end() - found.start()} digits; mbt reads numbers of up to {MAX_DIGITS}"


Path_ = tuple[str | int, ...]  # a place in the JSON document: ("models", 0, "edges", 3, "id")
Positions = dict[Path_, tuple[int, int]]  # Path_ -> (line, column) where the value there starts (any value)
Ends = dict[Path_, tuple[int, int]]  # Path_ -> (line, column) of the value's last character (a closing quote, a `}`)


def read_json(text: str, shown: str) -> tuple[object, Positions, Ends]:
    """The JSON document, where its values start and where they end."""
    positions: Positions = {}
    ends: Ends = {}
    stack: list[list[Any]] = []  # per open container: [its path, is an object, current key or index, a key is next]
    line, line_start, pos, end = 1, 0, 0, len(text)
    comments: list[tuple[int, int]] = []
    while pos < end:
        m = _JSON_TOKEN.match(text, pos)
        if m is None:
            break  # json.loads below reports what is wrong here
        start, pos = pos, m.end()
        c = text[start]
        if c.isspace() or c == "/":
            if c == "/":
                comments.append((start, pos))
            breaks = text.count("\n", start, pos)
            if breaks:
                line, line_start = line + breaks, text.rindex("\n", start, pos) + 1
            continue
        if c in ",:":
            if c == "," and stack:
                top = stack[-1]
                if top[1]:
                    top[3] = True
                else:
                    top[2] += 1
            continue
        if c in "}]":
            if stack:
                closed = stack.pop()[0]
                if len(closed) <= MAX_PATH:
                    ends[closed] = (line, start - line_start + 1)
            continue
        if c == '"' and "\\u" in text[start:pos]:
            _no_lone_surrogate(text, start, pos, shown, line, start - line_start + 1)
        if stack and stack[-1][1] and stack[-1][3]:  # an object's key
            if c != '"':
                break
            token = text[start:pos]
            stack[-1][2] = token[1:-1] if "\\" not in token else json.loads(token)
            stack[-1][3] = False
            continue
        here = (*stack[-1][0], stack[-1][2]) if stack else ()
        column = start - line_start + 1
        if len(here) <= MAX_PATH:
            positions[here] = (line, column)
            if c not in "{[":
                ends[here] = (line, column + pos - start - 1)  # a scalar token never spans lines
        if c in "{[":
            if len(stack) >= MAX_DEPTH:
                raise LocatedError([problem_at(shown, text, line, column,
                                               f"the JSON nests deeper than {MAX_DEPTH} levels; a GraphWalker model "
                                               "needs about 6")])
            stack.append([here, c == "{", 0 if c == "[" else None, c == "{"])
        elif (c == "-" or c.isdigit()) and pos - start > MAX_DIGITS:
            raise LocatedError([problem_at(shown, text, line, column,
                                           f"a number of {pos - start} characters; mbt reads numbers of up to "
                                           f"{MAX_DIGITS}")])
    if comments:
        pieces, last = [], 0
        for a, b in comments:
            pieces += [text[last:a], re.sub(r"[^\n]", " ", text[a:b])]
            last = b
        text = "".join(pieces) + text[last:]
    try:
        return json.loads(text), positions, ends
    except json.JSONDecodeError as err:
        raise LocatedError([problem_at(shown, text, err.lineno, err.colno, f"not valid JSON: {err.msg}")]) from None


def _no_lone_surrogate(text: str, start: int, end: int, shown: str, line: int, column: int) -> None:
    # `"\ud800"` is valid JSON but no text: it could not be written, printed or compared; refuse it where it is.
    try:
        value = json.loads(text[start:end])
    except json.JSONDecodeError:
        return  # json.loads of the whole text reports it
    if _SURROGATE.search(value):
        raise LocatedError([problem_at(shown, text, line, column, "a string holds a lone UTF-16 surrogate "
                                                                 "(`\\ud800`-`\\udfff` escape): not text")])


_SURROGATE = re.compile("[\ud800-\udfff]")
