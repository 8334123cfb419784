"""Turns lark's parse failures into one `file:line:col: error:` message in plain words, with the line and a caret."""

from __future__ import annotations

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from mbt.errors import LocatedError, problem_at

# Terminal names as a person would say them.
TOKEN_WORDS = {
    "NAME": "a name",
    "STRING": 'a quoted string ("...")',
    "INT": "a whole number",
    "DECIMAL": "a number",
    "LBRACE": '"{"',
    "RBRACE": '"}"',
    "LSQB": '"["',
    "RSQB": '"]"',
    "LPAR": '"("',
    "RPAR": '")"',
    "COLON": '":"',
    "COMMA": '","',
    "SLASH": '"/"',
    "EQUAL": '"="',
    "CMP_OP": "a comparison (==, !=, <, <=, >, >=)",
    "SEVERITY": "a severity (low, medium, high, critical)",
    "BIND_KIND": "intent, text or regex",
    "OPTIONAL_MARK": '"?"',
    "$END": "the end of the file",
}


def _words(expected: set[str]) -> str:
    shown = sorted({TOKEN_WORDS.get(name, _keyword(name)) for name in expected})
    if len(shown) > 8:
        shown = shown[:8] + ["..."]
    return ", ".join(shown)


def _keyword(name: str) -> str:
    # Anonymous keyword terminals are named after their text, e.g. FSM -> "fsm", MORETHAN -> ">".
    symbols = {"MORETHAN": ">", "LESSTHAN": "<", "MINUS": "-", "PLUS": "+", "AT": "@", "STAR": "*", "QMARK": "?"}
    if name in symbols:
        return f'"{symbols[name]}"'
    if name.startswith("__ANON"):
        return "more input"
    return f'"{name.lower()}"'


def friendly_message(err: UnexpectedInput, text: str) -> tuple[str, str | None]:
    """The message and an optional hint for the common mistakes."""
    if isinstance(err, UnexpectedCharacters):
        char = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        line_text = text.splitlines()[err.line - 1] if err.line - 1 < len(text.splitlines()) else ""
        if char == '"' or line_text.count('"') % 2 == 1:
            return "unterminated string: a quoted string must close on the same line", None
        if char == "'":
            return "strings use double quotes, not single quotes", 'write "text"'
        if char in "&|!":
            return f"unexpected {char!r}", "write `and`, `or`, `not` for boolean logic"
        if char == "=" and text[err.pos_in_stream:err.pos_in_stream + 2] != "==":
            return "unexpected '='", "use `==` to compare and `:=` to assign"
        return f"unexpected character {char!r}", None
    if isinstance(err, UnexpectedEOF):
        return "the file ends too early", "a '}' may be missing at the end of a model"
    if isinstance(err, UnexpectedToken):
        token = err.token
        if token.type == "$END":
            return "the file ends too early", "a '}' may be missing at the end of a model"
        expected = set(err.expected)
        got = f"'{token}'"
        if token.type == "EQUAL" and "COLON" not in expected:
            return "unexpected '='", "use `==` to compare and `:=` to assign"
        if expected == {"RBRACE"} or ("RBRACE" in expected and token.type == "$END"):
            return f"unexpected {got}: a '}}' is missing", None
        if "NAME" in expected and token.type != "NAME" and token.type.isupper() and str(token).isalpha():
            return f"'{token}' is a reserved word and cannot be used as a name here", "rename it"
        return f"unexpected {got}; expected {_words(expected)}", None
    return str(err).splitlines()[0], None


def syntax_error(err: UnexpectedInput, path: str, text: str) -> LocatedError:
    message, hint = friendly_message(err, text)
    line = getattr(err, "line", 1) or 1
    column = getattr(err, "column", 1) or 1
    if line < 1:  # lark reports EOF at line -1
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
    return LocatedError([problem_at(path, text, line, column, f"syntax error: {message}", hint)])
