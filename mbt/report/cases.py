"""The per-case results as a spreadsheet: Excel (.xlsx, seed 001's export) and CSV with a BOM; formatting only."""

from __future__ import annotations

import csv
import io
import re
import zipfile

from mbt.measure.cases import CaseResult
from mbt.report.markdown import BOM, safe_cell

HEADERS = ["id", "where", "first question", "turns", "models", "verdict", "elements verified", "elements exercised",
           "first deviation or contradiction", "explanation"]
# Characters XML 1.0 cannot carry (openpyxl refuses them): shown as U+FFFD instead of failing the export.
_ILLEGAL_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
# A fixed time for the workbook's properties and zip entries, so the same results give the same bytes.
FIXED_TIME = (2000, 1, 1, 0, 0, 0)


def _cells(r: CaseResult) -> list:
    return [r.id, r.where, r.first_question, r.turns, ", ".join(r.models), r.verdict, "\n".join(r.verified),
            "\n".join(r.exercised), r.first_finding, r.explanation]


def cases_csv(rows: list[CaseResult]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADERS)
    for r in rows:
        w.writerow([safe_cell(v) for v in _cells(r)])
    return BOM + buf.getvalue()


def cases_xlsx(rows: list[CaseResult]) -> bytes:
    import datetime as dt

    from openpyxl import Workbook  # optional and slow to import: only for this format (pip install 'mbt[xlsx]')
    from openpyxl.styles import Alignment, Font

    wb = Workbook()
    ws = wb.active
    ws.title = "cases"
    ws.append(HEADERS)
    for cell in ws[1]:
        cell.font = Font(bold=True)
    for r in rows:
        ws.append([_ILLEGAL_XML.sub("\ufffd", v) if isinstance(v, str) else v for v in _cells(r)])
    for row in ws.iter_rows(min_row=2):
        for cell in row:
            if isinstance(cell.value, str):
                cell.data_type = "s"  # a text starting with = stays text, never a formula
                cell.alignment = Alignment(wrap_text=True, vertical="top")
    for column, width in zip("ABCDEFGHIJ", (18, 28, 40, 7, 16, 16, 40, 40, 50, 50)):
        ws.column_dimensions[column].width = width
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = ws.dimensions
    stamp = dt.datetime(*FIXED_TIME)
    wb.properties.created = wb.properties.modified = stamp
    wb.properties.creator = "mbt"
    raw = io.BytesIO()
    wb.save(raw)
    return _fixed_zip(raw.getvalue())


def _fixed_zip(data: bytes) -> bytes:
    """The same archive with every entry dated FIXED_TIME (zip entries carry the time they were written)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":  # openpyxl stamps the save time as `modified`
                body = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2000-01-01T00:00:00Z", body)
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, body)
    return out.getvalue()
