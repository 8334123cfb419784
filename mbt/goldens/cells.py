"""Values written in spreadsheet cells (seed 001's template, mbt.goldens.sheets), read by the type a model declares.

A sheet says nothing of types: `2468` in an Expected state cell may be a card's last four digits (text) or a count.
So mbt.goldens.sheets keeps every value of an Event, Expected state or Expected tool call cell as the text written
(a Cell, which remembers its row and column), and a model's replay reads it by the type that model declares for the
name: a variable, an event parameter, a tool argument (the type of the value the model passes). A text that does not
fit that type makes the case invalid on the model, with the cell's row and column; a name the model does not declare
keeps its text. The rules, per type, are the user guide's "How a cell is read" (docs/user-guide.md).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import msgspec

from mbt.goldens.cases import Assertions, GoldenCase
from mbt.model.fsm import FsmModel, ToolCall
from mbt.model.typecheck import Checker, TypeProblem  # the parser's own typing of a call's expression
from mbt.model.types import ValueType


class Cell(str):
    """The text of one value written in a sheet cell, with where it was written (for messages)."""

    row: int
    column: str

    def __new__(cls, text: str, row: int, column: str) -> Cell:
        cell = super().__new__(cls, text)
        cell.row, cell.column = row, column
        return cell

    def __reduce__(self):  # a str subclass with attributes: pickled (worker processes) with them
        return Cell, (str(self), self.row, self.column)


class CellError(ValueError):
    """A cell's text that is not a value of the declared type: the message says why."""


# Spellings of true and false, compared case-insensitively: Excel's TRUE/FALSE, English and Vietnamese words, 1/0.
TRUE_WORDS = ("true", "yes", "1", "đúng", "có")
FALSE_WORDS = ("false", "no", "0", "sai", "không")
_WHOLE = re.compile(r"[+-]?[0-9]+", re.ASCII)  # ASCII: int() would also take other scripts' digits
_DECIMAL = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?", re.ASCII)
# `1,000.50`: grouped by commas in threes AND with a decimal point, so no locale reads it otherwise.
_GROUPED = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+\.[0-9]+", re.ASCII)
_GROUPED_WHOLE = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+", re.ASCII)


def read_cell(text: str, vtype: ValueType) -> Any:
    """The value of `vtype` a cell's text stands for; CellError when it stands for none."""
    if vtype.optional and text.strip().lower() in ("", "none"):
        return None
    kind = vtype.kind
    if kind == "string":
        return str(text)  # exactly as written: `0042` keeps its zeros, `2468` stays text
    word = text.strip()
    if kind == "int":
        if _WHOLE.fullmatch(word):
            return int(word, 10)  # decimal, whatever the leading zeros (`0042` is 42, never octal)
        raise CellError(_not_whole(word))
    if kind == "number":
        return _number(word, vtype)
    if kind == "bool":
        folded = word.casefold()
        if folded in TRUE_WORDS or folded in FALSE_WORDS:
            return folded in TRUE_WORDS
        raise CellError(f"not true or false (write one of {', '.join(TRUE_WORDS)} / {', '.join(FALSE_WORDS)}, "
                        "in any case)")
    if kind == "enum":
        if word in vtype.values:
            return word
        close = [v for v in vtype.values if v.casefold() == word.casefold()]
        close = close or difflib.get_close_matches(word, vtype.values, n=1)
        hint = f"; did you mean `{close[0]}`? (names are compared exactly)" if close else ""
        raise CellError(f"not one of {', '.join(vtype.values)}{hint}")
    raise CellError(f"mbt cannot read a cell as {vtype.text()}")


def _not_whole(word: str) -> str:
    if _GROUPED_WHOLE.fullmatch(word):
        return (f"not a whole number as mbt reads one: a comma groups thousands in some locales and is the decimal "
                f"point in others; write it without a separator: `{word.replace(',', '')}`")
    return "not a whole number (digits only, with an optional sign: `42`, `0042`, `-3`)"


def _number(word: str, vtype: ValueType) -> Decimal:
    if _DECIMAL.fullmatch(word) or _GROUPED.fullmatch(word):
        value = Decimal(word.replace(",", ""))
    elif _GROUPED_WHOLE.fullmatch(word):
        raise CellError(_not_whole(word).replace("not a whole number", "not a number"))
    elif re.fullmatch(r"[+-]?[0-9.]+,[0-9]+", word, re.ASCII):
        raise CellError(f"not a number as mbt reads one: `.` is the decimal point (write "
                        f"`{word.replace('.', '').replace(',', '.')}` for what a comma-decimal locale means)")
    else:
        raise CellError("not a number (digits with an optional sign and `.` decimal point: `1000.50`, `-0.5`)")
    scaled = value.scaleb(vtype.scale)
    if scaled != scaled.to_integral_value():
        raise CellError(f"finer than the precision {vtype.step} of {vtype.text()}")
    return value


@dataclass(frozen=True)
class Declared:
    """What one FSM model declares for the names a golden gives values to."""

    variables: dict[str, ValueType]
    params: dict[str, dict[str, ValueType]]  # event -> parameter -> type
    tool_args: dict[str, dict[str, ValueType]]  # tool -> argument -> the type of what every call passes


def declared_types(model: FsmModel) -> Declared:
    variables = {name: v.type for name, v in model.variables.items()}
    params = {name: {p.name: p.type for p in e.params} for name, e in model.events.items()}
    return Declared(variables, params, _tool_argument_types(model))


def _tool_argument_types(model: FsmModel) -> dict[str, dict[str, ValueType]]:
    """A tool argument's type: that of the value the model's calls pass (a variable's, an event parameter's, a
    literal's); where calls pass values of different kinds the argument has no declared type (its text is kept)."""
    kinds: dict[tuple[str, str], list[ValueType]] = {}
    for t in model.transitions:
        event = model.events.get(t.event)
        if event is None:
            continue
        scope = model.state_scope()
        scope.update({local: p.type for local, p in zip(t.params or [p.name for p in event.params], event.params)})
        for action in t.actions:
            if isinstance(action, ToolCall):
                for name, expr in action.args:
                    try:
                        kinds.setdefault((action.tool, name), []).append(Checker(scope).typed(expr)[1])
                    except TypeProblem:
                        kinds.setdefault((action.tool, name), []).append(ValueType("unknown"))
    out: dict[str, dict[str, ValueType]] = {}
    for (tool, name), found in kinds.items():
        if len({t.kind for t in found}) != 1 or found[0].kind == "unknown":
            continue
        first = found[0]
        # A literal `3` is typed int[3..3] and `"EMAIL"` string: a cell is read by kind; whether the value is the
        # one passed is the comparison's question (a contradiction), not the reading's.
        values = tuple(dict.fromkeys(v for t in found for v in t.values))
        out.setdefault(tool, {})[name] = ValueType(first.kind, values=values, scale=max(t.scale for t in found),
                                                   optional=any(t.optional for t in found))
    return out


def typed_case(case: GoldenCase, declared: Declared) -> GoldenCase:
    """The case with each Cell read by the type `declared` gives its name (a plain str where none is declared);
    CellError, naming the cell's row and column, for the first that does not fit."""
    turns = []
    for turn in case.turns:
        params = declared.params.get(turn.event or "", {})
        args = _typed(turn.args, params.get, "=")
        expect = _typed_assertions(turn.expect, declared)
        turns.append(msgspec.structs.replace(turn, args=args, expect=expect) if args is not turn.args
                     or expect is not turn.expect else turn)
    precondition = _typed(case.precondition, declared.variables.get, ": ")
    return msgspec.structs.replace(case, turns=turns, precondition=precondition,
                                   final=_typed_assertions(case.final, declared))


def _typed_assertions(a: Assertions, declared: Declared) -> Assertions:
    if not (a.variables or a.discarded or a.tool_arguments):
        return a
    tools: dict[str, Any] = {}
    for path, value in a.tool_arguments.items():  # dotted paths (cases.tool_paths): `tool.arg` or a bare `arg`
        tool, dot, arg = path.partition(".")
        if dot and tool in declared.tool_args:  # `tool(arg=value)`: the type of what the model's calls pass
            tools[path] = _typed({arg: value}, declared.tool_args[tool].get, "=")[arg]
        else:  # `{arg: value}` of whichever call passes it: no one declaration
            tools[path] = _typed({path: value}, {}.get, "=")[path]
    return msgspec.structs.replace(a, variables=_typed(a.variables, declared.variables.get, ": "),
                                   discarded=_typed(a.discarded, declared.variables.get, ": ", "discarded."),
                                   tool_arguments=tools)


def _typed(values: dict[str, Any], type_of, sign: str, prefix: str = "") -> dict[str, Any]:
    if not any(isinstance(v, Cell) for v in values.values()):
        return values
    out = {}
    for name, value in values.items():
        if not isinstance(value, Cell):
            out[name] = value
            continue
        vtype = type_of(name)
        if vtype is None:
            out[name] = str(value)  # no declaration: the text as written
            continue
        if prefix:  # a discarded value may be none, whatever the variable's type
            vtype = ValueType(vtype.kind, vtype.lo, vtype.hi, vtype.values, optional=True, scale=vtype.scale)
        try:
            out[name] = read_cell(value, vtype)
        except CellError as err:
            raise CellError(f"row {value.row}, column `{value.column}`: `{prefix}{name}{sign}{value}`: {err} "
                            f"(`{prefix}{name}` is {vtype.text()})") from None
    return out

