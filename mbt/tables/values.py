"""Typed values of decision-table columns: DSL literals and golden (JSON/YAML) values converted to one representation.

number -> Decimal (exact, so 0.1 + 0.2 questions never arise), integer -> int, string -> str, boolean -> bool,
date -> datetime.date, null -> None.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal, InvalidOperation
from typing import Any

from mbt.model.table import ColumnType, value_text


class DateText(str):
    """The text inside `date("...")`, checked by the resolver (so a bad date gets a located message)."""


class ValueProblem(ValueError):
    """A value that does not fit its column (the message says why, in the DSL's words)."""


def article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def parse_date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except (ValueError, TypeError):
        raise ValueProblem(f'`{text}` is not a date; write date("YYYY-MM-DD")') from None


def literal_value(raw: Any, kind: str) -> Any:
    """A DSL literal (int, Decimal, str, bool, None, or the text of date("...")) as a value of `kind`."""
    if raw is None:
        return None
    if isinstance(raw, DateText):
        if kind != "date":
            raise ValueProblem(f"a date cannot be a value of {article(kind)} column")
        return parse_date(str(raw))
    if isinstance(raw, bool):
        if kind != "boolean":
            raise ValueProblem(f"`{'true' if raw else 'false'}` cannot be a value of {article(kind)} column")
        return raw
    if isinstance(raw, (int, Decimal)):
        if kind == "number":
            return Decimal(raw)
        if kind == "integer":
            if isinstance(raw, Decimal):
                if raw != raw.to_integral_value():
                    raise ValueProblem(f"{raw} is not a whole number (the column is integer)")
                return int(raw)
            return raw
        raise ValueProblem(f"the number {raw} cannot be a value of {article(kind)} column")
    if isinstance(raw, str):
        if kind != "string":
            hint = '; write date("YYYY-MM-DD")' if kind == "date" else ""
            raise ValueProblem(f"the string {value_text(raw)} cannot be a value of {article(kind)} column{hint}")
        return raw
    raise ValueProblem(f"unsupported value {raw!r}")


def golden_text(raw: Any) -> str:
    """A golden's value as the golden spells it, in JSON's words (`true`, `null`, `"18"`), not Python's (`True`)."""
    if isinstance(raw, (bool, str)) or raw is None:
        return json.dumps(raw, ensure_ascii=False)
    return str(raw) if isinstance(raw, (int, float, Decimal)) else repr(raw)


def coerce(raw: Any, ctype: ColumnType) -> Any:
    """A golden's plain value (from JSON or YAML) as a typed value of the column; ValueProblem when it cannot be one."""
    if raw is None:
        if not ctype.optional:
            raise ValueProblem("is null, but the column does not admit none (declare it with ?)")
        return None
    kind = ctype.kind
    value: bool | int | Decimal | dt.date | str
    if kind == "boolean":
        if not isinstance(raw, bool):
            raise ValueProblem(f"{golden_text(raw)} is not true/false")
        value = raw
    elif kind in ("number", "integer"):
        if isinstance(raw, bool) or not isinstance(raw, (int, float, Decimal)):
            # "18" is text: a golden that quotes a number means a string, and a string is not a number.
            what = "a string" if isinstance(raw, str) else "a boolean" if isinstance(raw, bool) else None
            raise ValueProblem(f"{golden_text(raw)} is {what}, not a number" if what
                               else f"{golden_text(raw)} is not a number")
        try:
            number = Decimal(str(raw)) if not isinstance(raw, Decimal) else raw
        except InvalidOperation:
            raise ValueProblem(f"{golden_text(raw)} is not a number") from None
        if not number.is_finite():
            raise ValueProblem(f"{golden_text(raw)} is not a finite number")
        if kind == "integer":
            if number != number.to_integral_value():
                raise ValueProblem(f"{golden_text(raw)} is not a whole number")
            value = int(number)
        else:
            value = number
    elif kind == "date":
        if isinstance(raw, dt.datetime):
            raw = raw.date()
        if isinstance(raw, dt.date):
            value = raw
        elif isinstance(raw, str):
            value = parse_date(raw)
        else:
            raise ValueProblem(f"{golden_text(raw)} is not a date (YYYY-MM-DD)")
    else:
        if not isinstance(raw, str):
            raise ValueProblem(f"{golden_text(raw)} is not a string")
        value = raw
    if ctype.values is not None and value not in ctype.values:
        raise ValueProblem(f"{value_text(value)} is not one of {', '.join(value_text(v) for v in ctype.values)}")
    if ctype.ordered and not ctype.in_range(value):
        raise ValueProblem(f"{value_text(value)} is outside the declared domain {ctype.text()}")
    if not ctype.on_lattice(value):
        raise ValueProblem(f"{value_text(value)} is finer than the declared precision {ctype.precision}")
    return value
