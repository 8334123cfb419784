"""A result set as an Excel workbook (seed 001's export): an overview sheet (with what its LLM judges cost), the
detail list (a row per case: its number, first question, expected and actual answer, single or multi-turn, the
result per criterion with its explanation, overall), and the turns in seed 001's upload template (a row per turn,
`No.` on a case's first row).

Written row by row into the zip (`workbook`), so a set of 100,000 cases is never held whole. Every text cell is
written as text, never as a formula or an error value (a question starting with `=` stays that question, `#N/A`
stays text, and a text that starts as a formula would has Excel's quote prefix, so it stays text when edited);
characters XML cannot carry are shown as U+FFFD, and a text past Excel's 32,767 characters per cell is cut with a
note. The same set gives the same bytes. Formats only; `workbook` takes any sheets of rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from xml.sax.saxutils import escape

from mbt.files import zip_archive
from mbt.report.cases import _ILLEGAL_XML, FIXED_TIME
from mbt.report.llm_cost import usage_rows
from mbt.store.model import ExportCase, Overview, SetInfo, SetUsage

CELL_LIMIT = 32_767  # characters Excel holds in one cell
_CUT = " … [cut: Excel holds 32,767 characters in a cell; the JSON export has it whole]"


def cell_text(value: str) -> str:
    text = _ILLEGAL_XML.sub("\ufffd", value)
    return text if len(text) <= CELL_LIMIT else text[:CELL_LIMIT - len(_CUT)] + _CUT


def workbook(sheets: Sequence[tuple[str, Sequence[float], Iterable[Sequence[Any]]]]) -> bytes:
    """Sheets of (title, column widths, rows; the first row is the header, bold and frozen) as .xlsx bytes.

    The SpreadsheetML is written here, row by row into the zip, rather than through openpyxl: its cell objects and
    pure-Python XML writer cost some 30 microseconds a cell, over a minute for a set of 100,000 cases; these few
    parts take a fraction of that. Texts are inline strings, numbers numbers; nothing is ever a formula (there is no
    `<f>` element to write) nor an error value. tests/test_store_cli.py reads the workbooks back with openpyxl."""
    def text(body: str | Iterable[str]) -> Iterator[bytes]:
        for piece in [body] if isinstance(body, str) else body:
            yield piece.encode("utf-8")

    names = [_sheet_name(title) for title, _, _ in sheets]
    numbers = range(1, len(sheets) + 1)
    parts = [
        ("[Content_Types].xml", _CONTENT_TYPES.format(sheets="".join(
            f'<Override PartName="/xl/worksheets/sheet{n}.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.worksheet+xml"/>' for n in numbers))),
        ("_rels/.rels", _ROOT_RELS),
        ("docProps/core.xml", _CORE),
        ("xl/workbook.xml", _WORKBOOK.format(sheets="".join(
            f'<sheet name="{escape(name, _QUOTE)}" sheetId="{n}" r:id="rId{n}"/>'
            for n, name in zip(numbers, names)))),
        ("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS.format(sheets="".join(
            f'<Relationship Id="rId{n}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            f'worksheet" Target="worksheets/sheet{n}.xml"/>' for n in numbers), styles=len(sheets) + 1)),
        ("xl/styles.xml", _STYLES),
        *((f"xl/worksheets/sheet{n}.xml", _sheet_xml(widths, rows)) for n, (_, widths, rows) in zip(numbers, sheets)),
    ]
    return zip_archive(((name, text(body)) for name, body in parts), FIXED_TIME)


_QUOTE = {'"': "&quot;"}


def _sheet_name(title: str) -> str:
    """A worksheet name as Excel allows it: at most 31 characters, none of []:*?/\\."""
    return re.sub(r"[\[\]:*?/\\]", "_", title)[:31] or "Sheet"


# What a spreadsheet would run as a formula when a person edits the cell: such a text gets Excel's quote prefix
# (style 2), so it stays text after an edit too (as mbt eval's own workbook does).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(column: str, row: int, value: Any, style: str) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return f'<c r="{column}{row}" t="b"{style}><v>{int(value)}</v></c>'
    if isinstance(value, (int, float)):
        return f'<c r="{column}{row}"{style}><v>{value!r}</v></c>'
    text = cell_text(str(value))
    if not style and text.startswith(FORMULA_STARTS):
        style = ' s="2"'
    return f'<c r="{column}{row}" t="inlineStr"{style}><is><t xml:space="preserve">{escape(text)}</t></is></c>'


def _sheet_xml(widths: Sequence[float], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    columns = [_column(n) for n in range(max(len(widths), 64))]
    yield ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
           '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
           '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" '
           'state="frozen"/></sheetView></sheetViews><sheetFormatPr defaultRowHeight="15"/>')
    if widths:
        yield "<cols>" + "".join(f'<col min="{n}" max="{n}" width="{w}" customWidth="1"/>'
                                 for n, w in enumerate(widths, start=1)) + "</cols>"
    yield "<sheetData>"
    for number, values in enumerate(rows, start=1):
        while len(columns) < len(values):
            columns.append(_column(len(columns)))
        style = ' s="1"' if number == 1 else ""
        yield (f'<row r="{number}">' + "".join(_cell(columns[i], number, v, style) for i, v in enumerate(values))
               + "</row>")
    yield "</sheetData></worksheet>"


_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/styles.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
    '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>'
    "{sheets}</Types>")
_ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="xl/workbook.xml"/>'
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" '
    'Target="docProps/core.xml"/></Relationships>')
_CORE = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:creator>mbt</dc:creator>'
    '<dcterms:created xsi:type="dcterms:W3CDTF">2000-01-01T00:00:00Z</dcterms:created>'
    '<dcterms:modified xsi:type="dcterms:W3CDTF">2000-01-01T00:00:00Z</dcterms:modified></cp:coreProperties>')
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    "<sheets>{sheets}</sheets></workbook>")
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{sheets}'
    '<Relationship Id="rId{styles}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" '
    'Target="styles.xml"/></Relationships>')
# Three cell formats: 0 plain, 1 bold (the header row), 2 a text with Excel's quote prefix (FORMULA_STARTS).
_STYLES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font>'
    '<font><b/><sz val="11"/><name val="Calibri"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill>'
    '</fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>'
    '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" quotePrefix="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>')


def _column(n: int) -> str:
    name = ""
    n += 1
    while n:
        n, rest = divmod(n - 1, 26)
        name = chr(65 + rest) + name
    return name


def _overview_rows(info: SetInfo, overview: Overview, usage: SetUsage | None = None) -> Iterator[list[Any]]:
    judge = info.judge
    yield ["Result set", info.name]
    for label, value in (("Suite", info.suite), ("Status", info.status), ("Run type", info.run_type),
                         ("Started (UTC)", info.started_at), ("Ended (UTC)", info.ended_at or ""),
                         ("Executor", info.executor), ("Agent version", info.agent_version or ""),
                         ("Model", info.model_version or ""), ("Prompt version", info.prompt_version or ""),
                         ("Judge", str(judge.get("judge") or ", ".join(judge.get("models") or []))),
                         ("Threshold", str(judge.get("threshold") or "")),
                         ("mbt version", info.mbt_version or "")):
        yield [label, value]
    if info.error:
        yield ["Why it ended", info.error]
    yield []
    yield ["Cases", overview.cases_total]
    yield ["Run successfully", overview.cases_ok]
    yield ["With errors", overview.cases_with_errors]
    yield ["Single-turn", overview.single_turn]
    yield ["Multi-turn", overview.multi_turn]
    yield []
    yield ["Result", "Weight", "Pass", "Fail", "Not judged", "Error", "Pass rate (% of cases run successfully)"]
    for rate in [overview.overall, *overview.criteria]:
        yield [rate.key, rate.weight or "", rate.passed, rate.failed, rate.not_judged, rate.errors,
               rate.pass_rate if rate.pass_rate is not None else "n/a"]
    if usage is not None:  # what its LLM judges cost, over the runs that wrote it, and each run's budget
        yield []
        yield from usage_rows(usage.judges, [(f"Budget of run {b.run}" if usage.runs > 1 else "Budget", b)
                                             for b in usage.budgets],
                              usage.totals if len(usage.judges) > 1 else None)


def _judged_turns(doc: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """An eval case's judged turns with their numbers (a turn with no expected answer is context only)."""
    turns = doc.get("turns")
    if not (isinstance(turns, list) and turns and isinstance(turns[0], dict)):
        return []
    return [(n, t) for n, t in enumerate(turns, start=1) if t.get("judged", True)]


def _answers(case: ExportCase) -> tuple[str, str]:
    """The Expected and Actual answer cells: a single-turn case's texts; for a multi-turn case, each judged turn's
    as `turn N: ...` (the Turns sheet has every turn)."""
    judged = _judged_turns(case.doc)
    if not judged:
        return "", case.row.answer or ""
    if case.row.turns <= 1:
        _, turn = judged[0]
        return "\n".join(str(e) for e in turn.get("expected") or []), str(turn.get("actual") or "")
    expected = "\n".join(f"turn {n}: {e}" for n, t in judged for e in t.get("expected") or [])
    actual = "\n".join(f"turn {n}: {t.get('actual') if t.get('actual') is not None else '(no answer recorded)'}"
                       for n, t in judged)
    return expected, actual


def _case_rows(cases: Iterable[ExportCase], criteria: list[str]) -> Iterator[list[Any]]:
    yield (["No.", "Case", "Question", "Expected answer", "Actual answer", "Conversation", "Overall"]
           + [f"{c} result" for c in criteria] + [f"{c} explanation" for c in criteria]
           + ["Judge", "Agent version", "First deviation", "Error", "Where"])
    for case in cases:
        row, by = case.row, {v.criterion: v for v in case.verdicts}
        judges = ", ".join(dict.fromkeys(v.judge for v in case.verdicts))
        expected, actual = _answers(case)
        yield ([row.seq, row.key, row.question, expected, actual,
                "multi-turn" if row.kind == "multi" else "single-turn", row.overall]
               + [by[c].verdict if c in by else "" for c in criteria]
               + [by[c].reason if c in by else "" for c in criteria]
               + [judges, row.agent_version or "", row.first_deviation or "", row.error or "", row.where])


def _turns_of(case: ExportCase) -> list[tuple[str, str, str]]:
    """(question, expected, actual) per turn: an eval case's turns, or a runs case's session."""
    turns = case.doc.get("turns")
    if isinstance(turns, list) and turns and isinstance(turns[0], dict):
        return [(str(t.get("question") or ""), "\n".join(str(e) for e in t.get("expected") or []),
                 str(t.get("actual") or "")) for t in turns]
    return [(str(t.get("prompt") or ""), "", str(t.get("answer") or "")) for t in case.doc.get("transcript") or []]


def _turn_rows(kept: Iterable[tuple[int, str, list[tuple[str, str, str]]]]) -> Iterator[list[Any]]:
    yield ["No.", "Question", "Expected answer", "Actual answer", "Case", "Turn"]
    for seq, key, turns in kept:
        for n, (question, expected, actual) in enumerate(turns, start=1):
            yield [seq if n == 1 else "", question, expected, actual, key, n]


def results_xlsx(info: SetInfo, overview: Overview, cases: Iterable[ExportCase], usage: SetUsage | None = None
                 ) -> bytes:
    """The workbook of one result set (`usage`: what its LLM judges cost). `cases` is read once: the Turns sheet is
    written from what the Cases sheet kept of each case's turns (small next to the documents)."""
    criteria = [r.key for r in overview.criteria]
    kept: list[tuple[int, str, list[tuple[str, str, str]]]] = []

    def remember(items: Iterable[ExportCase]) -> Iterator[ExportCase]:
        for item in items:
            kept.append((item.row.seq, item.row.key, _turns_of(item)))
            yield item

    return workbook([("Overview", (34, 60, 10, 10, 12, 10, 22), _overview_rows(info, overview, usage)),
                     ("Cases", [8, 18, 50, 50, 50, 13, 11] + [12] * len(criteria) + [50] * len(criteria)
                      + [16, 14, 20, 40, 36], _case_rows(remember(cases), criteria)),
                     ("Turns", (8, 50, 50, 50, 18, 6), _turn_rows(kept))])
