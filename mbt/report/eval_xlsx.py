"""The `mbt eval` report as an Excel workbook (`--format xlsx:PATH`), seed 001's export: an overview sheet (cases run
successfully and with errors; the pass count and rate overall and per criterion; what each LLM judge cost and the
budget; the gate) and a detail sheet, a row
per case (STT, the question, the expected answer, the agent's actual answer, single or multi-turn, the result per
criterion and overall, the explanation). Formatting only: every figure comes from the report.

Every text is stored as text: a cell that starts with `=`, `+`, `-` or `@` (what a spreadsheet runs as a formula)
is a string cell with Excel's quote prefix, never a formula; characters XML cannot carry are shown as U+FFFD. The
same report gives the same bytes (fixed times in the workbook and its zip entries).
"""

from __future__ import annotations

import datetime as dt
import io

from mbt.answers.results import CaseResult, EvalReport
from mbt.report.cases import _ILLEGAL_XML, FIXED_TIME, _fixed_zip
from mbt.report.llm_cost import USAGE_HEADER, usage_rows

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
VERDICT_WORDS = {"pass": "pass", "fail": "fail", "not_judged": "not judged", "error": "error"}


def _turn_texts(case: CaseResult, which: str) -> str:
    """The expected (judged turns) or actual answers of a case; a multi-turn case's prefixed with their turn."""
    multi = len(case.turns) > 1
    parts = []
    for n, turn in enumerate(case.turns, start=1):
        if which == "expected":
            if not turn.judged or not turn.expected:
                continue
            text = "\n".join(turn.expected)
        else:
            text = turn.actual if turn.actual is not None else "(no answer recorded)"
        parts.append(f"Turn {n}: {text}" if multi else text)
    return "\n".join(parts)


def _explanation(case: CaseResult) -> str:
    lines = [f"{key} [{v.judge}]: {VERDICT_WORDS[v.verdict]}: {v.reason}" for key, v in case.criteria.items()]
    lines.append(f"overall: {case.overall.reason}")
    if case.must_not_violated:
        lines.append("must_not said: " + ", ".join(case.must_not_violated))
    if case.model is not None:
        lines.append(f"on the model: {case.model.verdict}: {case.model.reason}")
    return "\n".join(lines)


def detail_rows(report: EvalReport) -> tuple[list[str], list[list]]:
    """The detail sheet's header and rows (a row per case, in the report's order)."""
    keys = [c.key for c in report.criteria]
    header = ["STT", "Case", "Where", "Question", "Expected answer", "Actual answer", "Conversation",
              *keys, "Overall", "Explanation"]
    rows = []
    for number, case in enumerate(report.cases, start=1):
        question = case.turns[0].question if case.turns else ""
        rows.append([number, case.id, case.where, question, _turn_texts(case, "expected"),
                     _turn_texts(case, "actual"), "multi-turn" if len(case.turns) > 1 else "single-turn",
                     *[VERDICT_WORDS[case.criteria[k].verdict] for k in keys],
                     VERDICT_WORDS[case.overall.verdict], _explanation(case)])
    return header, rows


def overview_rows(report: EvalReport) -> list[list]:
    """The overview sheet: seed 001's counts, the rates as fractions (shown as percentages), the gate."""
    ok = report.cases_ok

    def rate(value: float | None):
        return None if value is None else value / 100

    rows: list[list] = [
        ["Cases", report.cases_total],
        ["Run successfully", ok],
        ["With errors", report.cases_with_errors],
        [],
        ["", "Passed (run successfully)", f"Pass rate (of {ok} run successfully)", "Failed (all cases)",
         "Not judged (all cases)", "Error (all cases)", "Weight", "Judge"],
        ["Overall", report.passed_ok, rate(report.pass_rate), report.failed, report.not_judged, report.errors,
         f"threshold {report.threshold}", report.judge],
    ]
    rows += [[c.key, c.passed_ok, rate(c.pass_rate), c.failed, c.not_judged, c.errors, c.weight, c.judge or report.judge]
             for c in report.criteria]
    rows += [[], ["must_not phrases said", report.must_not_violated], ["Judge errors", report.judge_errors],
             ["Agent errors", report.agent_errors],
             ["Invalid cases", len(report.invalid_cases)], ["Runs without a case", len(report.runs_without_case)]]
    costs = usage_rows(report.judge_usage, [("Budget", report.budget)] if report.budget is not None else [])
    if costs:  # what each LLM judge cost (requests, tokens, cost or `not measured`, cache hits), and the budget
        rows += [[], *costs]
    rows += [[], ["Gate", "passed" if report.gate.passed else "FAILED",
                  report.gate.source or "default: every case passes overall"]]
    rows += [["", "ok" if c.passed else "FAILED", f"{c.key} {c.expected}",
              None if c.actual is None else c.actual] for c in report.gate.checks]
    rows += [["", failure] for failure in report.gate.failures]
    rows += [["Invalid case", i.where, i.message] for i in report.invalid_cases]
    rows += [["Run without a case", i.where, i.message] for i in report.runs_without_case]
    return rows


def _append(ws, rows: list[list]) -> None:
    """Rows appended with the characters XML cannot carry shown as U+FFFD (openpyxl refuses them)."""
    for row in rows:
        ws.append([_ILLEGAL_XML.sub("\ufffd", v) if isinstance(v, str) else v for v in row])


def _texts_as_text(ws) -> None:
    from openpyxl.styles import Alignment

    for row in ws.iter_rows():
        for cell in row:
            if isinstance(cell.value, str):
                cell.data_type = "s"  # a text starting with = stays text, never a formula
                if cell.value.startswith(FORMULA_STARTS):
                    cell.quotePrefix = True  # and Excel keeps it text when the cell is edited
                cell.alignment = Alignment(wrap_text=True, vertical="top")


def eval_xlsx(report: EvalReport) -> bytes:
    from openpyxl import Workbook  # slow to import: only for this format
    from openpyxl.styles import Font

    wb = Workbook()
    overview = wb.active
    overview.title = "Overview"
    _append(overview, overview_rows(report))
    _texts_as_text(overview)
    for row in overview.iter_rows(min_row=6, max_row=6 + len(report.criteria), min_col=3, max_col=3):
        for cell in row:
            cell.number_format = "0.0%"
    for cell in overview[5]:
        cell.font = Font(bold=True)
    for row in overview.iter_rows():
        if row[0].value == USAGE_HEADER[0] and row[1].value == USAGE_HEADER[1]:  # the LLM judges' header
            for cell in row:
                cell.font = Font(bold=True)
    for column, width in zip("ABCDEFGH", (24, 16, 24, 14, 14, 14, 14, 24)):
        overview.column_dimensions[column].width = width

    details = wb.create_sheet("Details")
    header, rows = detail_rows(report)
    _append(details, [header, *rows])
    _texts_as_text(details)
    for cell in details[1]:
        cell.font = Font(bold=True)
    widths = [6, 14, 28, 40, 40, 40, 12] + [12] * len(report.criteria) + [10, 60]
    from openpyxl.utils import get_column_letter

    for index, width in enumerate(widths, start=1):
        details.column_dimensions[get_column_letter(index)].width = width
    details.freeze_panes = "A2"
    details.auto_filter.ref = details.dimensions

    stamp = dt.datetime(*FIXED_TIME)
    wb.properties.created = wb.properties.modified = stamp
    wb.properties.creator = "mbt"
    raw = io.BytesIO()
    wb.save(raw)
    return _fixed_zip(raw.getvalue())
