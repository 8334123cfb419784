"""Spreadsheet goldens in seed 001's template (.xlsx, .csv): one row per turn, a case continuing on rows whose No. is empty.

Columns are found by their header, in English or Vietnamese, in any order (seed 001's own are `No.`, `Question`,
`Expected answer`); mbt's own fields may follow in optional columns. Each case becomes the same raw mapping a JSONL
line would give, validated by cases.parse_case, and is located at `file:row` (the row of its `No.`; in a workbook of
several sheets, `file[sheet]:row`). A broken case is reported and the other cases are read.

A value in a cell (an event's or a tool call's argument, an expected variable) stays the text written, as a
cells.Cell: only a model knows whether `0042` is text or a number, so each model's replay reads it by its own
declarations (mbt.goldens.cells).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import itertools
import math
import re
import unicodedata
import warnings
import zipfile
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import msgspec

from mbt.goldens.cases import GoldenCase, parse_case, reason
from mbt.goldens.cells import Cell

SHEET_SUFFIXES = (".xlsx", ".csv")


def _key(header: str) -> str:
    """A header as compared: case, accents, punctuation and spacing ignored (`No.`, `no`, `NO ` are one)."""
    text = unicodedata.normalize("NFKD", str(header)).replace("đ", "d").replace("Đ", "d")
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return re.sub(r"[^a-z0-9]+", " ", text).strip()


# field -> the headers that name it (compared through _key). Seed 001's template is English (`No.`, `Question`,
# `Expected answer`); its result export and Vietnamese teams write `STT`, `Câu hỏi`, `Câu trả lời mong muốn`.
HEADERS: dict[str, tuple[str, ...]] = {
    "id": ("No.", "No", "ID", "Case ID", "Test case", "STT", "Mã", "Mã test case"),
    "question": ("Question", "User", "Input", "Câu hỏi", "Câu hỏi đầu vào"),
    "expected_answer": ("Expected answer", "Expected", "Câu trả lời mong muốn", "Câu trả lời kỳ vọng",
                        "Câu trả lời mong đợi"),
    "event": ("Event", "Sự kiện"),
    "expected_state": ("Expected state", "Assert state", "Trạng thái mong đợi", "Trạng thái kỳ vọng"),
    "expected_tool_call": ("Expected tool call", "Tool call", "Công cụ mong đợi", "Lệnh gọi công cụ mong đợi"),
    "must_not": ("Must not", "Không được"),
    "must_not_call": ("Must not call", "Không được gọi"),
    "intent": ("Intent", "Expected intent", "Ý định"),
    "contract": ("Contract", "Hợp đồng"),
    "model": ("Model", "Mô hình"),
    "severity": ("Severity", "Mức độ"),
}
_BY_KEY = {_key(h): field for field, names in HEADERS.items() for h in names}
MAX_UNPACKED_BYTES = 256 * 1024 * 1024  # an .xlsx is a zip: its XML, not the file, is what costs memory
HEADER_ROWS = 10  # the header is looked for in the first rows (a title row above it is common)


class SheetProblem(ValueError):
    """A spreadsheet that holds no usable table (empty, no header): one invalid entry for the whole sheet."""


_ZERO_PADDED = re.compile(r"0+")  # a number format such as `0000`: Excel shows 42 as 0042


def _text(value: Any, number_format: str = "General") -> str:
    """An .xlsx cell as the text Excel displays for it: a number in plain decimals without Excel's `.0` (it stores
    every number as a float) and to its 15 significant digits (0.1 + 0.2 shows 0.3), zero-padded when its format
    is `0000`-like; TRUE / FALSE; a date as ISO (`2024-03-01`, with its time when it has one); None as empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
        return format(Decimal(f"{value:.15g}"), "f")
    if isinstance(value, (int, float)) and (not isinstance(value, float) or math.isfinite(value)):
        whole = str(int(value))
        if _ZERO_PADDED.fullmatch(number_format or ""):
            sign, digits = ("-", whole[1:]) if whole.startswith("-") else ("", whole)
            whole = sign + digits.zfill(len(number_format))
        return whole
    return str(value).strip()


def _value(text: str, row: int, column: str) -> Cell:
    """A value written in a cell, as text: a model's replay reads it by the type it declares (mbt.goldens.cells).
    Double quotes around the whole value are not part of it (they let it hold `, name=` or spaces at its ends)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    return Cell(text, row, column)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def _pairs(text: str, sign: str) -> list[str]:
    """The `name<sign>value` pieces of `a=1, b="x, c=2"`: split at each comma outside double quotes that a name and
    `sign` follow, so a comma inside a value (`reason=mất thẻ, gấp`) stays in it."""
    follows = re.compile(r"\s*" + _NAME.pattern + r"\s*" + re.escape(sign))
    parts, start, quoted = [], 0, False
    for i, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted and follows.match(text, i + 1):
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


_CALL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.S)


def _call(text: str, what: str, row: int, column: str) -> tuple[str, dict[str, Any]]:
    """`name` or `name(arg=value, ...)` (an event with arguments, an expected tool call)."""
    match = _CALL.match(text)
    if match is None:
        raise ValueError(f"{what} {text!r} is not `name` or `name(arg=value, ...)`")
    name, inside = match.group(1), (match.group(2) or "").strip()
    args: dict[str, Any] = {}
    for part in _pairs(inside, "="):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{what} {text!r}: `{part.strip()}` is not `arg=value`")
        if key.strip() in args:
            raise ValueError(f"{what} {text!r}: argument `{key.strip()}` is given twice")
        args[key.strip()] = _value(value, row, column)
    return name, args


def _state(text: str, row: int, column: str) -> Any:
    """`collecting_email` (the control state) or `state: x, recovery_email: a@b.c` (a state map)."""
    if ":" not in text:
        return text
    values: dict[str, Any] = {}
    for part in _pairs(text.strip().removeprefix("{").removesuffix("}"), ":"):
        key, _, value = part.partition(":")
        key = key.strip()
        if not _NAME.fullmatch(key):
            raise ValueError(f"expected state {text!r}: `{part.strip()}` is not `name: value`")
        if key in values:
            raise ValueError(f"expected state {text!r}: `{key}` is given twice")
        if key == "discarded":
            raise ValueError(f"expected state {text!r}: write a discarded value as `discarded.NAME: value`")
        values[key] = str(_value(value, row, column)) if key == "state" else _value(value, row, column)
    return values


def _phrases(text: str) -> list[str]:
    """Several phrases in one cell: one per line (or separated by `;`)."""
    return [p.strip() for p in re.split(r"[\n;]", text) if p.strip()]


def _turn(row: dict[str, str], number: int, headers: dict[str, str]) -> dict[str, Any]:
    """One row's turn; `headers`: each field's column header as written (a value's message names its column)."""
    turn: dict[str, Any] = {}
    if row.get("question"):
        turn["user"] = row["question"]
    if row.get("event"):
        turn["event"], args = _call(row["event"], "event", number, headers["event"])
        if args:
            turn["args"] = args
    if row.get("intent"):
        turn["intent"] = row["intent"]
    if row.get("expected_answer"):
        # kept with the case: golden replay does not judge answer text (mbt eval does)
        turn["expected_answer"] = row["expected_answer"]
    if row.get("expected_state"):
        turn["assert_state"] = _state(row["expected_state"], number, headers["expected_state"])
    if row.get("expected_tool_call"):
        calls: dict[str, Any] = {}
        for line in _phrases(row["expected_tool_call"]):
            name, args = _call(line, "expected tool call", number, headers["expected_tool_call"])
            calls[name] = args
        turn["tool_arguments"] = calls
    if row.get("must_not"):
        turn["must_not"] = _phrases(row["must_not"])
    if row.get("must_not_call"):
        turn["must_not_call"] = _phrases(row["must_not_call"])
    return turn


def _header(rows: list[tuple[int, list[str]]]) -> tuple[int, dict[int, str]] | None:
    """The header row among the first rows: the first that names both the id and the question columns."""
    for number, cells in rows[:HEADER_ROWS]:
        columns = {i: _BY_KEY[_key(c)] for i, c in enumerate(cells) if c and _key(c) in _BY_KEY}
        if "id" in columns.values() and "question" in columns.values():
            return number, columns
    return None


def _cases(rows: list[tuple[int, list[str]]], shown: str, invalid: list, merged: Callable[[int, int], str | None],
           make_invalid: Callable[[str, int, str], Any]) -> Iterator[GoldenCase]:
    """The cases of one sheet's rows (row number, cell texts)."""
    if not any(any(cells) for _, cells in rows):
        invalid.append(make_invalid(shown, 1, "the sheet is empty: no header row and no test case"))
        return
    found = _header(rows)
    if found is None:
        first = next(n for n, cells in rows if any(cells))
        invalid.append(make_invalid(shown, first, "no header row naming the `No.` and `Question` columns in the "
                                    f"first {HEADER_ROWS} rows (seed 001's template: No. / Question / Expected answer)"))
        return
    header_row, columns = found
    for field in set(columns.values()):
        where = [i for i, f in columns.items() if f == field]
        if len(where) > 1:
            invalid.append(make_invalid(shown, header_row, f"the column `{field}` is named twice in the header row; "
                                        "the sheet was skipped"))
            return
    header_cells = next(cells for number, cells in rows if number == header_row)
    headers = {field: header_cells[i] for i, field in columns.items()}
    current: list[tuple[int, dict[str, str]]] = []

    def finish() -> Iterator[GoldenCase]:
        if not current:
            return
        start, first = current[0]
        try:
            for number, row in current:
                problem = merged(number, start)
                if problem:
                    raise ValueError(problem if problem.startswith("line ") else f"row {number}: {problem}")
                if not row.get("question") and not row.get("event"):
                    raise ValueError(f"row {number} has no question (and no event): fill in the Question column, "
                                     "or leave the row entirely empty")
            raw: dict[str, Any] = {"id": first["id"], "turns": [_turn(row, number, headers)
                                                                 for number, row in current]}
            for key in ("contract", "model", "severity"):
                values = {row[key] for _, row in current if row.get(key)}
                if len(values) > 1:
                    raise ValueError(f"the rows of case `{first['id']}` give several values of `{key}`")
                if values:
                    raw[key] = values.pop()
            case = msgspec.structs.replace(parse_case(raw, shown, start), sheet_cells=True)
        except ValueError as err:
            invalid.append(make_invalid(shown, start, reason(err)))
            return
        yield case

    for number, cells in rows:
        if number <= header_row or not any(cells):
            continue  # rows above the header (a title), and empty rows
        row = {field: cells[i] for i, field in columns.items() if i < len(cells) and cells[i]}
        if row.get("id"):
            yield from finish()
            current = [(number, row)]
        elif current:
            current.append((number, row))
        else:
            invalid.append(make_invalid(shown, number, "the first case's row has no `No.`: a case starts on a row "
                                        "with its No., and continues on rows whose No. is empty"))
    yield from finish()


def xlsx_cases(data: bytes, shown: str, invalid: list, make_invalid) -> Iterator[GoldenCase]:
    """The cases of every sheet of an .xlsx workbook."""
    # openpyxl (heavy, and only for .xlsx) is imported here; it reads the XML through defusedxml when installed.
    import openpyxl

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:  # a zip bomb is refused before anything unpacks it
            unpacked = sum(info.file_size for info in archive.infolist())
        if unpacked > MAX_UNPACKED_BYTES:
            invalid.append(make_invalid(shown, 1, f"the workbook unpacks to {unpacked:,} bytes (the limit is "
                                        f"{MAX_UNPACKED_BYTES:,}); the whole file was skipped"))
            return
        with warnings.catch_warnings():  # openpyxl warns about features it drops (styles, validation): not ours
            warnings.simplefilter("ignore")
            book = openpyxl.load_workbook(io.BytesIO(data), data_only=True)  # data_only: a formula's last value
    except (zipfile.BadZipFile, KeyError, OSError, ValueError, TypeError, EOFError) as err:
        invalid.append(make_invalid(shown, 1, f"not a readable .xlsx workbook ({type(err).__name__}: {err}); "
                                    "the whole file was skipped (an .xls file: save it as .xlsx)"))
        return
    sheets = book.worksheets
    for sheet in sheets:
        where = shown if len(sheets) == 1 else f"{shown}[{sheet.title}]"
        rows = [(r[0].row if r else n, [_text(c.value, getattr(c, "number_format", "General")) for c in r])
                for n, r in enumerate(sheet.iter_rows(), start=1)]
        if len(sheets) > 1 and not any(any(cells) for _, cells in rows):
            continue  # an empty extra sheet of a workbook; a workbook whose sheets are all empty is reported below
        spans = [(m.min_row, m.max_row, m.min_col, m.max_col, m.coord) for m in sheet.merged_cells.ranges]
        header = _header(rows)
        id_col = None if header is None else next((i + 1 for i, f in header[1].items() if f == "id"), None)

        def merged(number: int, start: int, spans=spans, id_col=id_col) -> str | None:
            # A No. merged down a case's rows is the template's own way to group turns; any other merge hides
            # which cell a value belongs to.
            for top, bottom, left, right, coord in spans:
                if top <= number <= bottom and not (left == right == id_col):
                    return (f"cells {coord} are merged, so which row or column a value belongs to is not clear; "
                            "unmerge them and fill in each cell")
            return None

        yield from _cases(rows, where, invalid, merged, make_invalid)
    if all(not any(any(_text(c.value) for c in r) for r in s.iter_rows()) for s in sheets) and len(sheets) > 1:
        invalid.append(make_invalid(shown, 1, "every sheet of the workbook is empty: no test case"))


# Excel's CSV separators: `,`; `;` where the decimal point is a comma (vi-VN, de-DE, ...); tab in "Unicode Text".
SEPARATORS = (",", ";", "\t")


def _separator(text: str) -> str:
    """The separator of a CSV file: the one under which a row among the first HEADER_ROWS names the `No.` and
    `Question` columns (the most known columns if several do; `,` if none does, and the missing header is reported).
    The header's known words make this certain where csv.Sniffer guesses from one line: a title row or a cell
    holding commas above a `;` header misleads it, and it takes a line without quotes to mean quotes are not
    doubled, which is how Excel's `""` came back as stray quotes."""
    best, found = ",", 0
    for separator in SEPARATORS:
        reader = csv.reader(io.StringIO(text, newline=""), csv.excel, delimiter=separator)
        try:
            head = [(n, [c.strip() for c in cells]) for n, cells in enumerate(itertools.islice(reader, HEADER_ROWS))]
        except csv.Error:
            continue
        header = _header(head)
        if header is not None and len(header[1]) > found:
            best, found = separator, len(header[1])
    return best


def csv_cases(text: str, shown: str, invalid: list, make_invalid,
              bad_lines: dict[int, str] | None = None) -> Iterator[GoldenCase]:
    """The cases of a .csv file as Excel saves one: cells quoted when they hold the separator, a quote or a line
    break, quotes inside doubled, rows ending in CRLF (or LF), comma, semicolon or tab separated (_separator)."""
    reader = csv.reader(io.StringIO(text, newline=""), csv.excel, delimiter=_separator(text))
    rows: list[tuple[int, list[str]]] = []
    unreadable: dict[int, str] = {}  # row -> why, for rows spanning a line that is not text
    start = 1
    try:
        for cells in reader:
            rows.append((start, [c.strip() for c in cells]))
            bad = [n for n in (bad_lines or {}) if start <= n <= reader.line_num]
            if bad:
                unreadable[start] = f"line {bad[0]}: {(bad_lines or {})[bad[0]]}"
            start = reader.line_num + 1  # a quoted cell may hold line breaks: the next row starts after them
    except csv.Error as err:
        invalid.append(make_invalid(shown, start, f"not valid CSV: {err}; the rest of the file was skipped"))
    yield from _cases(rows, shown, invalid, lambda number, start: unreadable.get(number), make_invalid)
