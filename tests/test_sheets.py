"""Spreadsheet goldens in seed 001's template (.xlsx, .csv; mbt/goldens/sheets.py): one row per turn, a multi-turn
case continuing on rows whose No. is empty, English or Vietnamese headers, mbt's own fields in optional columns.
Each sheet is checked against the same cases written by hand as JSON (the second reading), and every broken row or
sheet is an invalid case with its file:row while the rest is read.

The shipped example models/goldens/password-reset.xlsx is built from EXAMPLE below; `UPDATE_GOLD=1` rewrites it.
"""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path

import msgspec
import openpyxl
import pytest

from mbt.goldens.cells import declared_types, typed_case
from mbt.goldens.loader import load_goldens, parse_case
from mbt.parsing.loader import load_paths
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "models" / "goldens" / "password-reset.xlsx"

HEADER = ["No.", "Question", "Expected answer", "Event", "Expected state", "Expected tool call", "Must not",
          "Contract"]
C = "password-reset-v1"
# Seed 001's template for the password-reset model (models/recovery.fsm): single-turn cases on one row, multi-turn
# cases continuing on rows whose No. is empty; a tool's answer has no question, so its row names the event.
EXAMPLE = [
    ["XL-RST-001", "I forgot my password", "Asks for the registered e-mail address", None, "collecting_email",
     None, "ask for the current password", C],
    ["XL-RST-002", "I forgot my password", "Asks for the registered e-mail address", None,
     "state: collecting_email, active_task: password_reset", None, None, C],
    [None, "my e-mail is lin@example.com", "Repeats lin@example.com back and asks to confirm it", None,
     "state: confirming_email, recovery_email: lin@example.com", None, None, None],
    [None, "yes, that is the one", "Says a reset link is on its way", None, "state: reset_started, email_confirmed: true",
     "start_password_reset(recovery_email=lin@example.com, channel=EMAIL)", None, None],
    [None, None, "Tells the user to check the registered mailbox", "tool_succeeded", "link_sent", None,
     "claim the password was reset", None],
    ["XL-RST-003", "I forgot my password", "Asks for the e-mail address", None, "collecting_email", None, None, C],
    [None, "my e-mail is lin@example.com", "Asks to confirm lin@example.com", None, "confirming_email", None, None,
     None],
    [None, "by the way, when does support close?", "Answers, and keeps the reset for later", None,
     "state: suspended, suspended_task: password_reset", None, None, None],
    [None, "back to the reset please", "Asks again to confirm lin@example.com", None,
     "state: confirming_email, recovery_email: lin@example.com", None, None, None],
    ["XL-RST-004", "Can't get into my account", "Starts a password reset", None, "collecting_email", None,
     "ask for the current password", C],
    ["XL-RST-005", "reset my password", "Asks for the e-mail address", None, "collecting_email", None, None, C],
    [None, "my e-mail is li@example.com", "Asks to confirm li@example.com", None, "confirming_email", None, None,
     None],
    [None, "wrong, it is lin@example.com", "Starts the reset with lin@example.com", None,
     "state: reset_started, recovery_email: lin@example.com, discarded.recovery_email: li@example.com",
     "start_password_reset(recovery_email=lin@example.com, channel=EMAIL)",
     "send li@example.com to the reset tool", None],
]


def build(path: Path, rows: list[list], header: list[str] = HEADER, title: str | None = None) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Test cases"
    if title:
        sheet.append([title])
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    book.save(path)


def by_hand(rows: list[list], first_row: int) -> list[dict]:
    """The same cases written as golden mappings directly (the second reading of the template)."""
    cases: list[dict] = []
    for number, (no, question, answer, event, state, call, must_not, contract) in enumerate(rows, start=first_row):
        if no is not None:
            cases.append({"id": str(no), "turns": [], "_row": number, **({"contract": contract} if contract else {})})
        turn: dict = {}
        if question:
            turn["user"] = question
        if event:
            turn["event"] = event
        if answer:
            turn["expected_answer"] = answer
        if state:
            turn["assert_state"] = (dict(part.split(": ") for part in state.split(", ")) if ":" in state else state)
        if call:
            name, args = call.rstrip(")").split("(")
            turn["tool_arguments"] = {name: dict(a.split("=") for a in args.split(", "))}
        if must_not:
            turn["must_not"] = [must_not]
        cases[-1]["turns"].append(turn)
    return cases


def same_cases(loaded, expected: list[dict], file: str) -> None:
    """The sheet's cases are the hand-written ones, their values still text (a model's replay types them)."""
    assert [c.id for c in loaded.cases] == [e["id"] for e in expected]
    for case, raw in zip(loaded.cases, expected):
        row = raw.pop("_row")
        assert case == msgspec.structs.replace(parse_case(raw, file, row), sheet_cells=True)


def test_the_shipped_example_is_built_from_its_rows():
    if os.environ.get("UPDATE_GOLD"):
        build(SHIPPED, EXAMPLE)
    sheet = openpyxl.load_workbook(SHIPPED).active
    assert [[c.value for c in row] for row in sheet.iter_rows()] == [HEADER] + EXAMPLE


def test_the_template_reads_as_the_cases_written_by_hand(tmp_path):
    path = tmp_path / "cases.xlsx"
    build(path, EXAMPLE)
    loaded = load_goldens([str(path)])
    assert not loaded.invalid
    same_cases(loaded, by_hand(EXAMPLE, 2), str(path))
    assert [len(c.turns) for c in loaded.cases] == [1, 4, 4, 1, 3]
    # Read by models/recovery.fsm's declarations: `email_confirmed: true` is the bool, the e-mails stay text.
    (recovery,) = [m for f in load_paths([str(ROOT / "models" / "recovery.fsm")]) for m in f.models]
    typed = typed_case(loaded.cases[1], declared_types(recovery))
    assert typed.turns[2].expect.variables == {"email_confirmed": True}
    assert typed.turns[2].expect.tool_arguments == {"start_password_reset.recovery_email": "lin@example.com",
                                                    "start_password_reset.channel": "EMAIL"}  # argument paths


def test_the_shipped_example_is_valid_bound_and_agrees_with_the_model():
    report = json.loads(run_mbt("coverage", "--model", "models/recovery.fsm", "--goldens", str(SHIPPED),
                                "--no-gate", "--format", "json", cwd=ROOT).stdout)
    g = report["goldens"]
    assert (g["read"], g["valid"], g["invalid"], g["unbound"]) == (5, 5, 0, 0)
    assert report["contradictions"] == [] and report["divergences"] == []


VIETNAMESE = ["STT", "Câu hỏi", "Câu trả lời mong muốn", "Sự kiện", "Trạng thái mong đợi", "Công cụ mong đợi",
              "Không được", "Hợp đồng"]


def test_vietnamese_headers_and_a_title_row_above_them(tmp_path):
    path = tmp_path / "vi.xlsx"
    rows = [[1, "Tôi quên mật khẩu", "Hỏi địa chỉ e-mail", "request_reset", "collecting_email", None, None, C],
            [None, "e-mail của tôi là lin@example.com", "Xác nhận lại địa chỉ", "provide_email(email=lin@example.com)",
             "confirming_email", None, "hỏi mật khẩu hiện tại", None],
            [2, "Xin chào", "Chào lại", None, None, None, None, None]]
    build(path, rows, VIETNAMESE, title="Bộ test case: đặt lại mật khẩu")
    loaded = load_goldens([str(path)])
    assert not loaded.invalid and [(c.id, c.line) for c in loaded.cases] == [("1", 3), ("2", 5)]
    first = loaded.cases[0]
    assert [(t.user, t.event, t.args) for t in first.turns] == [
        ("Tôi quên mật khẩu", "request_reset", {}),
        ("e-mail của tôi là lin@example.com", "provide_email", {"email": "lin@example.com"})]
    assert first.turns[1].expect.must_not == ["hỏi mật khẩu hiện tại"] and first.contract == C


@pytest.mark.parametrize("encoding,delimiter", [("utf-8", ","), ("utf-8-sig", ";"), ("utf-16", "\t")])
def test_csv_in_each_excel_flavour(tmp_path, encoding, delimiter):
    import csv
    import io

    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter)
    writer.writerow(HEADER)
    for row in EXAMPLE:
        writer.writerow(["" if v is None else v for v in row])
    path = tmp_path / "cases.csv"
    path.write_bytes(buffer.getvalue().encode(encoding))
    loaded = load_goldens([str(path)])
    assert not loaded.invalid
    same_cases(loaded, by_hand(EXAMPLE, 2), str(path))


def test_a_quoted_cell_with_line_breaks_keeps_later_rows_numbered_by_line(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text('No.,Question,Expected answer\n1,"first line\nsecond line",x\n2,hello,y\n', encoding="utf-8")
    loaded = load_goldens([str(path)])
    assert [(c.id, c.line) for c in loaded.cases] == [("1", 2), ("2", 4)]
    assert loaded.cases[0].turns[0].user == "first line\nsecond line"


def test_broken_rows_and_sheets_are_reported_with_their_row(tmp_path):
    path = tmp_path / "bad.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Cases"
    for row in [HEADER[:3], [None, "orphan turn", "x"], [1, "hello", "x"], [None, None, "an answer, no question"],
                [2, "fine", "x"], [3, "merged", "x"], [None, "y", None], [4, "fine too", "x"],
                [5, "bad call", "x", None, None, "start(", None, None]]:
        sheet.append(row)
    sheet["D1"], sheet["F1"] = "Event", "Expected tool call"
    sheet.merge_cells("B6:C7")
    book.create_sheet("Empty")
    book.create_sheet("No header").append(["just", "some", "notes"])
    book.save(path)
    loaded = load_goldens([str(path)])
    assert [c.id for c in loaded.cases] == ["2", "4"]
    got = {(i.file.rsplit("/", 1)[-1], i.line): i.message for i in loaded.invalid}
    assert sorted(got) == [("bad.xlsx[Cases]", 2), ("bad.xlsx[Cases]", 3), ("bad.xlsx[Cases]", 6),
                           ("bad.xlsx[Cases]", 9), ("bad.xlsx[No header]", 1)]
    assert "has no `No.`" in got[("bad.xlsx[Cases]", 2)]
    assert "row 4 has no question" in got[("bad.xlsx[Cases]", 3)]
    assert "B6:C7 are merged" in got[("bad.xlsx[Cases]", 6)]
    assert "start(" in got[("bad.xlsx[Cases]", 9)]
    assert "no header row" in got[("bad.xlsx[No header]", 1)]


def test_an_empty_sheet_and_an_unreadable_workbook_are_reported(tmp_path):
    empty = tmp_path / "empty.xlsx"
    openpyxl.Workbook().save(empty)
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    loaded = load_goldens([str(empty), str(broken)])
    assert loaded.cases == []
    assert [(Path(i.file).name, i.line) for i in loaded.invalid] == [("broken.xlsx", 1), ("empty.xlsx", 1)]
    assert "not a readable .xlsx workbook" in loaded.invalid[0].message
    assert "the sheet is empty" in loaded.invalid[1].message


def test_files_mbt_cannot_read_in_a_goldens_folder_are_reported(tmp_path):
    (tmp_path / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0 an old Excel file")
    (tmp_path / "notes.ods").write_bytes(b"PK")
    (tmp_path / ".hidden").write_text("ignored")
    build(tmp_path / "cases.xlsx", EXAMPLE)
    report = json.loads(run_mbt("coverage", "--model", "models/recovery.fsm", "--goldens", str(tmp_path),
                                "--no-gate", "--format", "json", cwd=ROOT).stdout)
    (note,) = [n["message"] for n in report["notes"] if n["message"].startswith("not read:")]
    assert note.startswith(f"not read: 2 file(s) in {tmp_path}") and "old.xls" in note and "notes.ods" in note
    assert ".hidden" not in note
    assert report["goldens"]["valid"] == 5


def test_a_utf16_csv_with_a_bom(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_bytes(codecs.BOM_UTF16_LE + "No.\tQuestion\n1\tI forgot my password\n".encode("utf-16-le"))
    assert [c.id for c in load_goldens([str(path)]).cases] == ["1"]


def test_a_workbook_that_unpacks_too_large_is_refused_before_reading(tmp_path, monkeypatch):
    from mbt.goldens import sheets

    path = tmp_path / "big.xlsx"
    build(path, EXAMPLE)
    monkeypatch.setattr(sheets, "MAX_UNPACKED_BYTES", 1000)
    loaded = load_goldens([str(path)])
    assert loaded.cases == [] and "unpacks to" in loaded.invalid[0].message


def test_a_no_merged_down_its_rows_groups_the_turns(tmp_path):
    path = tmp_path / "merged.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    for row in [["No.", "Question"], [1.0, "I forgot my password"], [None, "my e-mail is lin@example.com"],
                [2, "hello"]]:
        sheet.append(row)
    sheet.merge_cells("A2:A3")
    book.save(path)
    loaded = load_goldens([str(path)])
    assert not loaded.invalid and [(c.id, c.line, len(c.turns)) for c in loaded.cases] == [("1", 2, 2), ("2", 4, 1)]


# ------------------------------------------------------------------ CSV exactly as Excel saves it
# Issue 32, item 8: Excel quotes a cell only when it holds the separator, a quote or a line break, doubles the quotes
# inside it, ends rows with CRLF and a line break inside a cell with LF, and starts "CSV UTF-8" with a BOM; where the
# decimal point is a comma (vi-VN, de-DE) its separator is `;`. Each file below is written byte for byte as Excel
# writes that sheet, and must give the same cases as the same sheet saved as .xlsx.
CARD_HEADER = ["No.", "Question", "Expected answer", "Event", "Expected state", "Expected tool call"]
CARD_ROWS = [
    ["TC-01", 'Khách nói "khóa thẻ" ngay', "Hỏi 4 số cuối của thẻ,\nrồi xác nhận", None, "awaiting_last4", None],
    [None, "4 số cuối là 2468", "Xác nhận và khóa thẻ", None, "state: card_locked, card_last4: 2468",
     'lock_card(last4=2468, reason="mất thẻ")'],
    ["TC-02", '"Tôi mất thẻ rồi"', 'Trả lời: "Tôi sẽ khóa thẻ giúp bạn"', None, "awaiting_last4", None],
]
EXCEL_CSV_COMMA = (
    b"\xef\xbb\xbfNo.,Question,Expected answer,Event,Expected state,Expected tool call\r\n"
    b'TC-01,"Kh\xc3\xa1ch n\xc3\xb3i ""kh\xc3\xb3a th\xe1\xba\xbb"" ngay","H\xe1\xbb\x8fi 4 s\xe1\xbb\x91 cu\xe1\xbb\x91i '
    b'c\xe1\xbb\xa7a th\xe1\xba\xbb,\nr\xe1\xbb\x93i x\xc3\xa1c nh\xe1\xba\xadn",,awaiting_last4,\r\n'
    b",4 s\xe1\xbb\x91 cu\xe1\xbb\x91i l\xc3\xa0 2468,X\xc3\xa1c nh\xe1\xba\xadn v\xc3\xa0 kh\xc3\xb3a th\xe1\xba\xbb,,"
    b'"state: card_locked, card_last4: 2468","lock_card(last4=2468, reason=""m\xe1\xba\xa5t th\xe1\xba\xbb"")"\r\n'
    b'TC-02,"""T\xc3\xb4i m\xe1\xba\xa5t th\xe1\xba\xbb r\xe1\xbb\x93i""","Tr\xe1\xba\xa3 l\xe1\xbb\x9di: ""T\xc3\xb4i '
    b's\xe1\xba\xbd kh\xc3\xb3a th\xe1\xba\xbb gi\xc3\xbap b\xe1\xba\xa1n""",,awaiting_last4,\r\n'
)
# The same sheet from Excel where the list separator is `;`: a cell holding a comma needs no quotes there.
EXCEL_CSV_SEMICOLON = (
    b"\xef\xbb\xbfNo.;Question;Expected answer;Event;Expected state;Expected tool call\r\n"
    b'TC-01;"Kh\xc3\xa1ch n\xc3\xb3i ""kh\xc3\xb3a th\xe1\xba\xbb"" ngay";"H\xe1\xbb\x8fi 4 s\xe1\xbb\x91 cu\xe1\xbb\x91i '
    b'c\xe1\xbb\xa7a th\xe1\xba\xbb,\nr\xe1\xbb\x93i x\xc3\xa1c nh\xe1\xba\xadn";;awaiting_last4;\r\n'
    b";4 s\xe1\xbb\x91 cu\xe1\xbb\x91i l\xc3\xa0 2468;X\xc3\xa1c nh\xe1\xba\xadn v\xc3\xa0 kh\xc3\xb3a th\xe1\xba\xbb;;"
    b'state: card_locked, card_last4: 2468;"lock_card(last4=2468, reason=""m\xe1\xba\xa5t th\xe1\xba\xbb"")"\r\n'
    b'TC-02;"""T\xc3\xb4i m\xe1\xba\xa5t th\xe1\xba\xbb r\xe1\xbb\x93i""";"Tr\xe1\xba\xa3 l\xe1\xbb\x9di: ""T\xc3\xb4i '
    b's\xe1\xba\xbd kh\xc3\xb3a th\xe1\xba\xbb gi\xc3\xbap b\xe1\xba\xa1n""";;awaiting_last4;\r\n'
)


def _portable(cases) -> list:
    """Cases compared whatever file they came from (a CSV numbers its rows by line, and a line break inside a cell
    is a line: the rows below it are one further than in the workbook)."""
    import msgspec

    return [msgspec.structs.replace(c, file="sheet", line=0) for c in cases]


@pytest.mark.parametrize("data", [EXCEL_CSV_COMMA, EXCEL_CSV_SEMICOLON], ids=["comma", "semicolon"])
def test_csv_as_excel_saves_it_reads_as_the_same_sheet_saved_as_xlsx(tmp_path, data):
    xlsx, csv_file = tmp_path / "cards.xlsx", tmp_path / "cards.csv"
    build(xlsx, CARD_ROWS, CARD_HEADER)
    csv_file.write_bytes(data)
    from_xlsx, from_csv = load_goldens([str(xlsx)]), load_goldens([str(csv_file)])
    assert not from_xlsx.invalid and not from_csv.invalid, [i.message for i in from_csv.invalid]
    assert [(c.id, c.line) for c in from_csv.cases] == [("TC-01", 2), ("TC-02", 5)]  # a cell's LF is a line
    assert _portable(from_csv.cases) == _portable(from_xlsx.cases)
    first, second = from_csv.cases
    assert first.turns[0].user == 'Khách nói "khóa thẻ" ngay'
    assert first.turns[0].extra["expected_answer"] == "Hỏi 4 số cuối của thẻ,\nrồi xác nhận"
    assert second.turns[0].user == '"Tôi mất thẻ rồi"'
    assert first.turns[1].expect.tool_arguments["lock_card.reason"] == "mất thẻ"


def test_the_separator_is_the_one_under_which_the_header_names_its_columns(tmp_path):
    # A title row holding commas above a `;` header, and cells holding commas: the header row decides, not a guess
    # from the first line.
    path = tmp_path / "cards.csv"
    path.write_bytes("\ufeffBộ test, thẻ ghi nợ, bản 2\r\nNo.;Question;Expected answer\r\n"
                     "1;Tôi muốn khóa thẻ, gấp;Hỏi 4 số cuối, rồi khóa\r\n".encode())
    loaded = load_goldens([str(path)])
    assert not loaded.invalid and [(c.id, c.line) for c in loaded.cases] == [("1", 3)]
    assert loaded.cases[0].turns[0].user == "Tôi muốn khóa thẻ, gấp"
