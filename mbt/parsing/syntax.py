"""Turns lark's parse failures into one `file:line:col: error:` message in plain words, with the line and a caret."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from mbt.errors import LocatedError, problem_at
from mbt.kind import grammar_kinds
from mbt.parsing.grammar import parser

# Named terminals as a person would say them; every other terminal is shown as its literal text.
TOKEN_WORDS = {
    "NAME": "a name",
    "STRING": 'a quoted string ("...")',
    "INT": "a whole number",
    "DECIMAL": "a number",
    "CMP_OP": "a comparison (==, !=, <, <=, >, >=)",
    "SEVERITY": "a severity (low, medium, high, critical)",
    "BIND_KIND": "intent, text or regex",
    "$END": "the end of the file",
    "POLICY_ALGORITHM": "a combining algorithm",
}



def model_keywords() -> tuple[str, ...]:
    """The words models start with: one per registered kind (mbt.kind)."""
    return tuple(k.keyword for k in grammar_kinds() if k.keyword is not None)


COMING_KINDS: tuple[str, ...] = ()
# Words that begin a line inside an fsm body; a mistyped one is read as the start of a transition.
FSM_ITEM_WORDS = ("title", "contract", "complete", "var", "state", "event", "bind", "forbid")
TYPE_TERMINALS = {"BOOL", "ENUM"}  # plus the anonymous "string" and "int", found by their text
TYPES_HINT = "the types are bool, string, int[LOW..HIGH], enum{A, B} (add ? to allow none)"
CLOSERS = {"{": "}", "[": "]", "(": ")"}
# Tokens that can start an item of a comma-separated list (a mapping, an argument, an enum value, a string), besides
# keywords (a policy mapping starts with `subject`, `resource`, ...).
ITEM_STARTS = {"NAME", "STRING", "INT", "DECIMAL"}


@dataclass
class Failure:
    """What went wrong, where, in plain words."""

    line: int
    column: int
    message: str
    hint: str | None = None


def syntax_error(err: UnexpectedInput, path: str, text: str) -> LocatedError:
    """The located error for a lark failure on `text`."""
    failure = explain(err, text)
    return LocatedError([problem_at(path, text, failure.line, failure.column,
                                    f"syntax error: {failure.message}", failure.hint)])


def explain(err: UnexpectedInput, text: str) -> Failure:
    """Where the mistake is and what it is, in the DSL's words."""
    if isinstance(err, UnexpectedCharacters):
        return _bad_character(err, text)
    if isinstance(err, UnexpectedToken) and err.token.type != "$END":
        return _bad_token(err, text)
    if isinstance(err, (UnexpectedToken, UnexpectedEOF)):
        return _early_end(set(getattr(err, "expected", ()) or ()), text)
    line, column = getattr(err, "line", 1) or 1, getattr(err, "column", 1) or 1
    return Failure(line, column, "the text cannot be read here")


# ---------- characters the lexer cannot start a token with

def _bad_character(err: UnexpectedCharacters, text: str) -> Failure:
    # lark declares `pos_in_stream = None` on the base class; UnexpectedCharacters always sets the lexer's position.
    pos, line, column = err.pos_in_stream or 0, err.line, err.column
    char = text[pos] if pos < len(text) else ""
    allowed = set(err.allowed or ())
    if char == '"':
        return Failure(line, column, "unterminated string: the closing \" is missing",
                       "a quoted string must end on the line where it starts; write \\\" for a quote inside it")
    if char == "'":
        return Failure(line, column, "strings are written in double quotes, not single quotes",
                       'write "text" instead of \'text\'')
    operator = _operator_mistake(text, pos, allowed)
    if operator is not None:
        return Failure(line, column, operator[0], operator[1])
    if char.isalpha():  # a letter outside A-Z, e.g. a Chinese name
        return Failure(line, column, f"unexpected character `{char}`: names use the letters A-Z, digits and _",
                       "non-English text belongs in quoted strings")
    shown = repr(char) if not char.isprintable() or char == " " else f"`{char}`"
    return Failure(line, column, f"unexpected character {shown}", _expected_hint(allowed))


def _operator_mistake(text: str, pos: int, expected: set[str]) -> tuple[str, str | None] | None:
    """Operators from other languages (&&, ||, !, =, =>) get a message that names the DSL's spelling."""
    ahead = text[pos:pos + 2]
    if ahead[:1] == "&":
        return "`&&` is not an operator here", "write `and`"
    if ahead[:1] == "|":
        return "`||` is not an operator here", "write `or`"
    if ahead[:1] == "!" and ahead != "!=":
        return "`!` is not an operator here", "write `not`"
    if ahead == "=>":
        return "`=>` is not an arrow here", "a transition is written `SOURCE -> TARGET on EVENT`"
    opened = _unclosed(text, pos)
    in_guard = bool(opened) and opened[-1][0] == "["
    if ahead[:1] == "=" and ahead != "==":
        if in_guard:
            return "`=` is not a comparison", "write `==` to compare"
        if ":=" in _literals(expected):
            return "`=` does not assign here", "write `:=` to assign, e.g. `/ retries := retries + 1`"
        if "CMP_OP" in expected:  # after an operand, e.g. a policy's `when x = 1`
            return "`=` is not a comparison", "write `==` to compare"
        return "unexpected `=`", _expected_hint(expected)
    if ahead == "==" and not in_guard and ":=" in _literals(expected):
        return "`==` compares; it does not assign", "write `:=` to assign"
    return None


# ---------- tokens the parser did not expect

def _bad_token(err: UnexpectedToken, text: str) -> Failure:
    token = err.token
    expected = set(err.expected)
    literal = _literals(expected)
    value = str(token)
    line, column = token.line, token.column
    start = token.start_pos if token.start_pos is not None else 0
    previous = _previous_word(text, start)
    end_line, end_column = _content_end(text, start)
    on_later_line = line > end_line

    operator = _operator_mistake(text, start, expected)
    if operator is not None:
        return Failure(line, column, operator[0], operator[1])
    invariant = _invariant_mistake(token, literal, previous, text)
    if invariant is not None:
        return invariant
    policy = _policy_mistake(token, expected, literal, text)
    if policy is not None:
        return policy

    # A word glued to a keyword it starts with (`integer` after the type keyword `int`): talk about the whole word.
    word_start = _word_start(text, start) if _is_word(value[:1]) else start
    if word_start < start:
        word = _word_at(text, word_start)
        line, column = _line_col(text, word_start)
        if _after_colon(text, word_start):
            return Failure(line, column, f"unknown type `{word}`", TYPES_HINT)
        return Failure(line, column, f"unexpected `{word}`", _expected_hint(expected))

    # A model keyword inside a model that was never closed: the '}' before it is missing.
    open_model = _open_model(text, start) if value in model_keywords() and "}" in literal else None
    if open_model is not None:
        name, model_line = open_model
        return Failure(line, column, f"a `}}` is missing: the model `{name}` (line {model_line}) is not closed "
                                     f"before this `{value}`")

    # A comma-separated list whose next item starts without its `,` (the parser can only say it wanted `,` or the
    # closing bracket): the `,` belongs right after the previous item, not a bracket at the end of the line.
    opened = _unclosed(text, start)
    if (opened and literal == {",", CLOSERS[opened[-1][0]]} and previous is not None
            and (token.type in ITEM_STARTS or _is_word(value[:1]))):
        return _missing_comma(text, start, previous[0])

    # A closing bracket is expected but the text goes on elsewhere: point at where the bracket belongs.
    if on_later_line or value in CLOSERS.values():
        missing = _missing_closer(text, start, literal)
        if missing is not None:
            return missing

    if "NAME" in expected and _is_keyword(token):
        return Failure(line, column, f"`{value}` is a reserved word and cannot be used as a name",
                       f"choose another name, e.g. `{value}_`")

    if _at_top_level(expected):
        return _top_level(token, line, column)

    # An unknown word at the start of an fsm line is read as a transition source, so `->` is expected next.
    if literal == {"->"} and previous is not None and _is_word(previous[0]):
        return _after_item_word(previous, token, text)

    # After `state done`, a line `final -> ...` reads as the flag `final`: such a word cannot start a transition.
    if value == "->" and previous is not None and previous[0] in _keywords():
        word = previous[0]
        pline, pcol = _line_col(text, previous[1])
        return Failure(pline, pcol, f"`{word}` is a keyword here, so it cannot start a transition",
                       f"a state named `{word}` cannot be the source of a transition; rename the state")

    if expected & TYPE_TERMINALS or {"string", "int"} <= literal:
        return Failure(line, column, f"unknown type `{value}`", TYPES_HINT)

    hint = "a transition is written `SOURCE -> TARGET on EVENT`" if literal == {"on"} else None
    if expected == {"STRING"} and previous is not None and previous[0] == "unspecified":
        hint = 'write the reason the document is silent, e.g. unspecified "the policy does not say"'
    if on_later_line and previous is not None:
        # The line ended too early: point at its end rather than at the next line.
        return Failure(end_line, end_column, f"expected {_words(expected)} after `{previous[0]}`", hint)
    return Failure(line, column, f"unexpected {_show(token)}; expected {_words(expected)}", hint)


def _top_level(token, line: int, column: int) -> Failure:
    value = str(token)
    if value == "}":
        return Failure(line, column, "unexpected `}`: there is no open `{` to close here")
    if value == "source":
        return Failure(line, column, "sources are declared at the top of the file, before the first model")
    if value in COMING_KINDS:
        return Failure(line, column, f"the model kind `{value}` is not supported yet",
                       f"this version reads {', '.join(f'`{k}`' for k in model_keywords())} models")
    close = difflib.get_close_matches(value.lower(), [*model_keywords(), "source"], n=1)
    hint = f"did you mean `{close[0]}`?" if close else "a model starts with `fsm NAME {`"
    return Failure(line, column, f"unexpected {_show(token)}: a file holds `source` lines and models", hint)


INVARIANT_PATTERN_WORDS = ("always", "never", "eventually", "every", "at")


def _invariant_mistake(token, literal: set[str], previous: tuple[str, int] | None, text: str) -> Failure | None:
    """Mistakes inside an `invariants` body: a missing `NAME:`, a misspelt pattern, `until` without `after`,
    arguments of a call written in parentheses."""
    if previous is None:
        return None
    word, word_pos = previous
    line, column = _line_col(text, word_pos)
    if str(token) == ":" and word in _keywords() and _line_col(text, word_pos)[1] == _indent(text, word_pos) + 1:
        return Failure(line, column, f"`{word}` is a keyword here, so it cannot name an invariant",
                       "the invariant before it may go on with it; choose another name")
    if literal == {":"} and word in INVARIANT_PATTERN_WORDS:
        return Failure(line, column, "an invariant starts with its name and a colon",
                       f"write e.g. `my_rule: {word} ...`")
    if {"precedes", "leads"} <= literal and _after_colon(text, word_pos):
        close = difflib.get_close_matches(word, INVARIANT_PATTERN_WORDS, n=1, cutoff=0.6)
        if close:
            return Failure(line, column, f"unknown pattern `{word}`", f"did you mean `{close[0]}`?")
    if str(token) == "until" and "until" not in literal:
        return Failure(token.line, token.column, "`until` only ends an `after` scope", "write `after Q until R`")
    before = _previous_word(text, word_pos)
    if str(token) == "(" and before is not None and before[0] == "call" and "(" not in literal:
        return Failure(token.line, token.column, "a call's arguments are not listed here",
                       f"write a condition on them in brackets: `call {word} [args.NAME == ...]`")
    return None


POLICY_ALGORITHMS = ("deny-overrides", "permit-overrides", "first-applicable", "only-one-applicable",
                     "deny-unless-permit", "permit-unless-deny")
POLICY_ITEM_WORDS = ("title", "contract", "combining", "subject", "resource", "action", "environment", "permit",
                     "deny", "assert", "enforce")


def _policy_mistake(token, expected: set[str], literal: set[str], text: str) -> Failure | None:
    """Mistakes inside a `policy` body: an unknown combining algorithm, a misspelt item word or category."""
    value, line, column = str(token), token.line, token.column
    # `permitt r` lexes as the keyword `permit` then the rule `t`: the error comes later, the mistake is here.
    start = token.start_pos if token.start_pos is not None else 0
    line_start = text.rfind("\n", 0, start) + 1
    first = re.match(r"[ \t]*([A-Za-z_][A-Za-z0-9_]*)", text[line_start:start])
    if first and first.group(1) not in POLICY_ITEM_WORDS and "{" not in text[line_start:start] \
            and any(first.group(1).startswith(w) for w in POLICY_ITEM_WORDS) and _in_policy(text, start):
        word = first.group(1)
        close = difflib.get_close_matches(word.lower(), POLICY_ITEM_WORDS, n=1, cutoff=0.6)
        return Failure(line, first.start(1) + 1, f"unknown keyword `{word}`",
                       f"did you mean `{close[0]}`?" if close else None)
    if "POLICY_ALGORITHM" in expected:
        close = difflib.get_close_matches(value.lower().replace("_", "-"), POLICY_ALGORITHMS, n=1, cutoff=0.6)
        hint = f"did you mean `{close[0]}`?" if close else "one of " + ", ".join(POLICY_ALGORITHMS)
        return Failure(line, column, f"unknown combining algorithm `{value}`", hint)
    if {"permit", "deny", "assert", "enforce"} <= literal and token.type == "NAME":
        end = token.end_pos if token.end_pos is not None else 0
        if text[end:end + 1] == ".":
            return Failure(line, column, f"unknown attribute category `{value}`",
                           "attributes are written CATEGORY.NAME; the categories are subject, resource, action, "
                           "environment")
        close = difflib.get_close_matches(value.lower(), POLICY_ITEM_WORDS, n=1, cutoff=0.6)
        hint = f"did you mean `{close[0]}`?" if close else \
            "a policy line starts with " + ", ".join(POLICY_ITEM_WORDS)
        return Failure(line, column, f"unknown keyword `{value}`", hint)
    return None


def _in_policy(text: str, pos: int) -> bool:
    """The position is inside the body of a `policy` model."""
    opened = _unclosed(text, pos)
    if not opened or opened[0][0] != "{":
        return False
    brace = _pos_of(text, opened[0][1], opened[0][2])
    found = list(re.finditer(r"\b(fsm|table|invariants|policy)\b", text[:brace]))
    return bool(found) and found[-1].group(1) == "policy"


def _indent(text: str, pos: int) -> int:
    """How many blanks start the line that holds `pos`."""
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return len(line) - len(line.lstrip(" \t"))


def _after_item_word(previous: tuple[str, int], token, text: str) -> Failure:
    word, word_pos = previous
    line, column = _line_col(text, word_pos)
    if word == "source":
        return Failure(line, column, "sources are declared at the top of the file, before the first model")
    close = difflib.get_close_matches(word.lower(), FSM_ITEM_WORDS, n=1, cutoff=0.7)
    if close and close[0] != word:
        return Failure(line, column, f"unknown keyword `{word}`", f"did you mean `{close[0]}`?")
    if str(token) == ":":
        return Failure(line, column, f"a source span starts with `@`: write `@{word}:...`")
    tline, tcol = token.line, token.column
    return Failure(tline, tcol, f"expected `->` after `{word}`, found {_show(token)}",
                   "a transition is written `SOURCE -> TARGET on EVENT`; other lines start with a keyword "
                   "(" + ", ".join(FSM_ITEM_WORDS) + ")")


def _missing_comma(text: str, pos: int, previous: str) -> Failure:
    """The `,` missing before the list item at `pos`, located where it belongs: just after the previous item."""
    line, column = _content_end(text, pos)
    char, oline, ocol = _unclosed(text, pos)[-1]
    before = text[:_pos_of(text, oline, ocol)]
    if char == "{" and re.search(r"\benforce\b[^{}]*$", before):
        items = "the mappings of the `enforce` block"
    else:
        items = f"the items of the `{char}` at line {oline}, column {ocol}"
    return Failure(line, column, f"a `,` is missing after `{previous}`", f"separate {items} with `,`")


def _missing_closer(text: str, pos: int, literal: set[str]) -> Failure | None:
    opened = _unclosed(text, pos)
    if not opened:
        return None
    char, oline, ocol = opened[-1]
    closer = CLOSERS[char]
    if closer not in literal:
        return None
    line, column = _content_end(text, pos)
    what = "model" if char == "{" else "guard" if char == "[" else "list"
    return Failure(line, column, f"a `{closer}` is missing: the `{char}` at line {oline}, column {ocol} is not closed",
                   f"close the {what} with `{closer}`")


def _early_end(expected: set[str], text: str) -> Failure:
    line, column = _content_end(text, len(text))
    opened = _unclosed(text, len(text))
    open_model = _open_model(text, len(text)) if len(opened) == 1 and opened[0][0] == "{" else None
    if open_model is not None:
        name, model_line = open_model
        return Failure(line, column, f"the file ends before the model `{name}` (line {model_line}) is closed",
                       "add the missing `}` at the end of the model")
    if opened:
        char, oline, ocol = opened[-1]
        return Failure(line, column, f"the file ends inside the `{char}` opened at line {oline}, column {ocol}",
                       f"add the missing `{CLOSERS[char]}`")
    return Failure(line, column, f"the file ends too early; expected {_words(expected)}")


# ---------- helpers over terminals

def _terminal_text(name: str) -> str | None:
    """The literal text of a keyword or symbol terminal (e.g. __ANON_4 -> '->'), or None for a pattern."""
    try:
        pattern = parser().get_terminal(name).pattern
    except KeyError:
        return None
    return pattern.value if isinstance(pattern, PatternStr) else None


def _literals(expected: set[str]) -> set[str]:
    return {t for t in (_terminal_text(n) for n in expected) if t is not None}


def _words(expected: set[str]) -> str:
    """The expected terminals in words: `a name, a value or `(``; never lark's internal names."""
    shown: set[str] = set()
    names = set(expected)
    if "STRING" in names and names & {"INT", "DECIMAL"}:
        # A literal value is expected: say so once rather than listing every kind of literal.
        names -= {"STRING", "INT", "DECIMAL"}
        names = {n for n in names if _terminal_text(n) not in ("true", "false", "none", "-")}
        shown.add("a value (a number, a quoted string, true, false or none)")
    if {"INT", "DECIMAL"} <= names:
        names.discard("INT")
    for name in names:
        if name in TOKEN_WORDS:
            shown.add(TOKEN_WORDS[name])
        else:
            literal = _terminal_text(name)
            shown.add(f"`{literal}`" if literal is not None else "something else")
    ordered = sorted(shown, key=lambda s: (s.startswith("`"), s))
    if len(ordered) > 8:
        ordered = ordered[:8] + ["..."]
    return " or ".join(ordered) if len(ordered) <= 2 else ", ".join(ordered[:-1]) + " or " + ordered[-1]


def _expected_hint(expected: set[str]) -> str | None:
    return f"expected {_words(expected)}" if expected else None


def _is_keyword(token) -> bool:
    return token.type not in ("NAME",) and _is_word(str(token))


def _is_word(value: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value))


def _show(token) -> str:
    if token.type == "STRING":
        return "a quoted string"
    value = str(token)
    return f"`{value}`" if value else "the end of the file"


def _at_top_level(expected: set[str]) -> bool:
    """Between models, only `source` (before the first model), a model kind or the end of the file may come."""
    literal = _literals(expected - {"$END"})
    return bool(literal) and literal <= {*model_keywords(), "source"}


def _keywords() -> frozenset[str]:
    return _keywords_of(parser())


@lru_cache(maxsize=4)
def _keywords_of(built) -> frozenset[str]:
    return frozenset(t.pattern.value for t in built.terminals
                     if isinstance(t.pattern, PatternStr) and _is_word(t.pattern.value))


# ---------- helpers over the text

def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _word_start(text: str, pos: int) -> int:
    while pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] == "_") and text[pos - 1].isascii():
        pos -= 1
    return pos


def _word_at(text: str, pos: int) -> str:
    match = re.match(r"[A-Za-z0-9_]+", text[pos:])
    return match.group(0) if match else text[pos:pos + 1]


def _after_colon(text: str, pos: int) -> bool:
    return text[:pos].rstrip().endswith(":")


# Strings never span lines, so a line can be read on its own; brackets are found with one regex pass (fast on
# large files) that steps over strings and comments.
_BRACKET_SCAN = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"?|#[^\n]*|[{}\[\]()]')


def _unclosed(text: str, end: int) -> list[tuple[str, int, int]]:
    """The brackets opened before `end` and not closed, innermost last, as (char, line, column)."""
    stack: list[tuple[str, int]] = []
    for match in _BRACKET_SCAN.finditer(text, 0, end):
        ch = match.group(0)
        if ch in CLOSERS:
            stack.append((ch, match.start()))
        elif ch in CLOSERS.values() and stack and CLOSERS[stack[-1][0]] == ch:
            stack.pop()
    return [(ch, *_line_col(text, i)) for ch, i in stack]


def _open_model(text: str, end: int) -> tuple[str, int] | None:
    """The model (name, line) whose `{` is still open at `end`, if any."""
    opened = _unclosed(text, end)
    if not opened or opened[0][0] != "{":
        return None
    _, line, column = opened[0]
    brace = _pos_of(text, line, column)
    kinds = "|".join(model_keywords())
    # `invariants for FSM {` names the FSM; `invariants NAME for FSM {` names itself.
    found = list(re.finditer(r"\b(?:" + kinds + r")\s+(?:for\s+)?([A-Za-z_][A-Za-z0-9_]*)", text[:brace]))
    if not found:
        return None
    return found[-1].group(1), _line_col(text, found[-1].start(1))[0]


def _pos_of(text: str, line: int, column: int) -> int:
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + column - 1


def _strip_comment(line: str) -> str:
    """The line without its `#` comment (a `#` inside a quoted string is text)."""
    in_string, i = False, 0
    while i < len(line):
        ch = line[i]
        if in_string and ch == "\\":
            i += 2
            continue
        if ch == '"':
            in_string = not in_string
        elif ch == "#" and not in_string:
            return line[:i]
        i += 1
    return line


def _last_content(text: str, pos: int) -> int | None:
    """The position of the last character of code or string before `pos`, skipping blanks and comments."""
    end = pos
    while end > 0:
        line_start = text.rfind("\n", 0, end) + 1
        code = _strip_comment(text[line_start:end]).rstrip()
        if code:
            return line_start + len(code) - 1
        end = line_start - 1
    return None


def _content_end(text: str, pos: int) -> tuple[int, int]:
    """The position just after the last code or string before `pos`."""
    last = _last_content(text, pos)
    return (1, 1) if last is None else _line_col(text, last + 1)


def _previous_word(text: str, pos: int) -> tuple[str, int] | None:
    """The word (or symbol) just before `pos` and where it starts, skipping blanks and comments."""
    last = _last_content(text, pos)
    if last is None:
        return None
    start = _word_start(text, last + 1) if (text[last].isalnum() or text[last] == "_") else last
    return text[start:last + 1], start
