"""A result set as an Excel workbook (seed 001's export): an overview sheet, the detail list (a row per case: its
number, first question, expected and actual answer, single or multi-turn, the result per criterion with its
explanation, overall), and the turns in seed 001's upload template (a row per turn, `No.` on a case's first row).

Written row by row (openpyxl's write-only mode), so a set of 100,000 cases is never held whole. Every text cell is
written as text, never as a formula (a question starting with `=` stays that question); characters XML cannot carry
are shown as U+FFFD, and a text past Excel's 32,767 characters per cell is cut with a note. The same set gives the
same bytes. Formats only; `mbt eval`'s own Excel output can reuse `workbook` with its rows.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from mbt.report.cases import _ILLEGAL_XML, FIXED_TIME, _fixed_zip
from mbt.store.model import ExportCase, Overview, SetInfo

CELL_LIMIT = 32_767  # characters Excel holds in one cell
_CUT = " … [cut: Excel holds 32,767 characters in a cell; the JSON export has it whole]"


def cell_text(value: str) -> str:
    text = _ILLEGAL_XML.sub("\ufffd", value)
    return text if len(text) <= CELL_LIMIT else text[:CELL_LIMIT - len(_CUT)] + _CUT


def workbook(sheets: Sequence[tuple[str, Sequence[float], Iterable[Sequence[Any]]]]) -> bytes:
    """Sheets of (title, column widths, rows; the first row is the header, bold and frozen) as .xlsx bytes."""
    import datetime as dt

    from openpyxl import Workbook  # slow to import: only for this format
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Alignment, Font

    wb = Workbook(write_only=True)
    bold, wrap = Font(bold=True), Alignment(wrap_text=True, vertical="top")
    for title, widths, rows in sheets:
        ws = wb.create_sheet(title)
        for n, width in enumerate(widths):
            ws.column_dimensions[_column(n)].width = width
        ws.freeze_panes = "A2"
        for index, values in enumerate(rows):
            cells = []
            for value in values:
                cell = WriteOnlyCell(ws, value=cell_text(value) if isinstance(value, str) else value)
                if isinstance(value, str):
                    cell.data_type = "s"  # text, never a formula
                    cell.alignment = wrap
                if index == 0:
                    cell.font = bold
                cells.append(cell)
            ws.append(cells)
    stamp = dt.datetime(*FIXED_TIME)
    wb.properties.created = wb.properties.modified = stamp
    wb.properties.creator = "mbt"
    raw = io.BytesIO()
    wb.save(raw)
    return _fixed_zip(raw.getvalue())


def _column(n: int) -> str:
    name = ""
    n += 1
    while n:
        n, rest = divmod(n - 1, 26)
        name = chr(65 + rest) + name
    return name


def _overview_rows(info: SetInfo, overview: Overview) -> Iterator[list[Any]]:
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


def _turn_rows(cases: Iterable[ExportCase]) -> Iterator[list[Any]]:
    yield ["No.", "Question", "Expected answer", "Actual answer", "Case", "Turn"]
    for case in cases:
        turns = case.doc.get("turns")
        if not (isinstance(turns, list) and turns and isinstance(turns[0], dict)):  # runs: the session's turns
            turns = [{"question": t.get("prompt", ""), "expected": [], "actual": t.get("answer")}
                     for t in case.doc.get("transcript") or []]
        for n, turn in enumerate(turns, start=1):
            yield [case.row.seq if n == 1 else "", str(turn.get("question") or ""),
                   "\n".join(str(e) for e in turn.get("expected") or []), str(turn.get("actual") or ""),
                   case.row.key, n]


def results_xlsx(info: SetInfo, overview: Overview, cases: Iterable[ExportCase]) -> bytes:
    """The workbook of one result set. `cases` is read once: the turns sheet is written from what the case sheet
    kept of each case's turns (small next to the documents)."""
    criteria = [r.key for r in overview.criteria]
    kept: list[ExportCase] = []

    def remember(items: Iterable[ExportCase]) -> Iterator[ExportCase]:
        for item in items:
            doc = {"turns": item.doc.get("turns"), "transcript": item.doc.get("transcript")}
            kept.append(ExportCase(row=item.row, verdicts=[], doc=doc))
            yield item

    return workbook([("Overview", (34, 60, 10, 10, 12, 10, 22), _overview_rows(info, overview)),
                     ("Cases", [8, 18, 50, 50, 50, 13, 11] + [12] * len(criteria) + [50] * len(criteria)
                      + [16, 14, 20, 40, 36], _case_rows(remember(cases), criteria)),
                     ("Turns", (8, 50, 50, 50, 18, 6), _turn_rows(kept))])
