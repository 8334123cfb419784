"""How a spreadsheet cell's value is read (issue 32, item 8; docs/user-guide.md, "How a cell is read"): a value
written in a sheet's Event, Expected state or Expected tool call cell is text until a model reads it, and then takes
the type that model declares for the name (a variable, an event parameter, a tool argument). A value that does not
fit the declared type makes the case invalid with its row and column; a name no model declares keeps its text.

The sheets are a Vietnamese debit-card assistant's (seed 001's template), saved as .xlsx with openpyxl and as CSV
byte for byte as Excel saves it; both must read alike.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

from mbt.elements.fsm import enumerate_fsm
from mbt.engine.fsm import CompiledFsm
from mbt.goldens.loader import load_goldens
from mbt.goldens.replay_fsm import FsmReplayer
from mbt.model.types import ValueType
from mbt.parsing.loader import load_paths
from tests.cli_runner import run_mbt

CARDS = """\
fsm cards {
  contract "debit-card-v1"
  var card_last4: string? = none
  var card_kind: enum{DEBIT, CREDIT}? = none
  var attempts: int[0..3] = 0
  var urgent: bool = false

  state idle initial
  state awaiting_last4
  state card_locked final

  event request_lock(kind: enum{DEBIT, CREDIT}, urgent: bool)
  event retry(attempt: int[0..3])
  event provide_last4(last4: string)
  bind regex "(?P<last4>[0-9]{4})" -> provide_last4

  idle -> awaiting_last4 on request_lock(k, u) / card_kind := k, urgent := u
  awaiting_last4 -> awaiting_last4 on retry(n) / attempts := n
  awaiting_last4 -> card_locked on provide_last4(d) / card_last4 := d,
    call lock_card(last4 = card_last4, urgent = urgent, attempts = attempts, kind = card_kind)
}
"""
HEADER = ["No.", "Question", "Expected answer", "Event", "Expected state", "Expected tool call"]
# TC-01's last four digits are bound from the question by the regex (text, as the model declares); the sheet's
# `2468` must be that text too. TC-02 gives `0042` explicitly, which is not the number 34.
ROWS = [
    ["TC-01", "Tôi muốn khóa thẻ gấp", "Hỏi 4 số cuối", "request_lock(kind=DEBIT, urgent=TRUE)",
     "state: awaiting_last4, card_kind: DEBIT, urgent: TRUE", None],
    [None, "nhập sai, thử lại lần 2", None, "retry(attempt=2)", "state: awaiting_last4, attempts: 2", None],
    [None, "4 số cuối là 2468", "Khóa thẻ", None, "state: card_locked, card_last4: 2468",
     "lock_card(last4=2468, urgent=true, attempts=2, kind=DEBIT)"],
    ["TC-02", "khóa thẻ giúp tôi", None, "request_lock(kind=CREDIT, urgent=no)", "urgent: false", None],
    [None, "số cuối 0042", None, "provide_last4(last4=0042)", "state: card_locked, card_last4: 0042",
     "lock_card(last4=0042, urgent=FALSE, attempts=0)"],
]
# The same sheet saved by Excel as "CSV UTF-8": BOM, CRLF, cells holding a comma quoted.
ROWS_CSV = (
    "\ufeffNo.,Question,Expected answer,Event,Expected state,Expected tool call\r\n"
    'TC-01,Tôi muốn khóa thẻ gấp,Hỏi 4 số cuối,"request_lock(kind=DEBIT, urgent=TRUE)",'
    '"state: awaiting_last4, card_kind: DEBIT, urgent: TRUE",\r\n'
    ',"nhập sai, thử lại lần 2",,retry(attempt=2),"state: awaiting_last4, attempts: 2",\r\n'
    ",4 số cuối là 2468,Khóa thẻ,,\"state: card_locked, card_last4: 2468\","
    '"lock_card(last4=2468, urgent=true, attempts=2, kind=DEBIT)"\r\n'
    'TC-02,khóa thẻ giúp tôi,,"request_lock(kind=CREDIT, urgent=no)",urgent: false,\r\n'
    ',số cuối 0042,,provide_last4(last4=0042),"state: card_locked, card_last4: 0042",'
    '"lock_card(last4=0042, urgent=FALSE, attempts=0)"\r\n'
).encode("utf-8")


def xlsx(path: Path, rows: list[list], header: list[str] = HEADER) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


@pytest.fixture
def model_file(tmp_path) -> Path:
    path = tmp_path / "cards.fsm"
    path.write_text(CARDS, encoding="utf-8")
    return path


def coverage(model: Path, goldens: Path) -> dict:
    done = run_mbt("coverage", "--model", model, "--goldens", goldens, "--no-gate", "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def replayed(model: Path, goldens: Path) -> dict[str, dict]:
    """Each case's variables after its last turn, replayed on the model."""
    (fsm,) = [m for f in load_paths([str(model)]) for m in f.models]
    replayer = FsmReplayer(CompiledFsm(fsm, enumerate_fsm(fsm)))
    out = {}
    for case in load_goldens([str(goldens)]).cases:
        run = replayer.replay(case, keep_snapshots=True)
        assert run.invalid is None and not run.unbound and not run.contradictions, (case.id, run)
        out[case.id] = dict(run.snapshots[-1].variables)
    return out


@pytest.mark.parametrize("kind", ["xlsx", "csv"])
def test_a_cell_takes_the_type_the_model_declares(tmp_path, model_file, kind):
    if kind == "xlsx":
        sheet = xlsx(tmp_path / "cards.xlsx", ROWS)
    else:
        sheet = tmp_path / "cards.csv"
        sheet.write_bytes(ROWS_CSV)
    report = coverage(model_file, sheet)
    g = report["goldens"]
    assert (g["read"], g["valid"], g["invalid"], g["unbound"]) == (2, 2, 0, 0), report["unbound_turns"]
    assert report["contradictions"] == [] and report["divergences"] == []
    values = replayed(model_file, sheet)
    assert values["TC-01"] == {"card_last4": "2468", "card_kind": "DEBIT", "attempts": 2, "urgent": True}
    assert values["TC-02"] == {"card_last4": "0042", "card_kind": "CREDIT", "attempts": 0, "urgent": False}


def test_a_value_that_does_not_fit_its_declared_type_is_an_invalid_case_with_row_and_column(tmp_path, model_file):
    rows = [
        ["BAD-INT", "thử lại", None, "retry(attempt=2.0)", None, None],
        ["BAD-THOUSANDS", "thử lại", None, "retry(attempt=1)", "attempts: 1,000", None],
        ["BAD-BOOL", "khóa thẻ", None, "request_lock(kind=DEBIT, urgent=maybe)", None, None],
        ["BAD-ENUM", "khóa thẻ", None, "request_lock(kind=debit, urgent=yes)", None, None],
        ["BAD-STATE", "khóa thẻ", None, "request_lock(kind=DEBIT, urgent=yes)", "awaiting_last4", None],
        [None, "2468", None, None, "state: card_locked, card_kind: VISA", None],
        ["BAD-TOOL", "khóa thẻ", None, "request_lock(kind=DEBIT, urgent=yes)", None, None],
        [None, "2468", None, None, None, "lock_card(urgent=sometimes)"],
        ["GOOD", "khóa thẻ", None, "request_lock(kind=DEBIT, urgent=yes)", "awaiting_last4", None],
    ]
    sheet = xlsx(tmp_path / "bad.xlsx", rows)
    report = coverage(model_file, sheet)
    g = report["goldens"]
    assert (g["read"], g["valid"], g["invalid"]) == (7, 1, 6)
    got = {i["line"]: i["message"] for i in report["invalid_cases"]}
    assert sorted(got) == [2, 3, 4, 5, 6, 8] and all(i["file"] == str(sheet) for i in report["invalid_cases"])
    assert "row 2, column `Event`: `attempt=2.0`: not a whole number" in got[2]
    assert "row 3, column `Expected state`: `attempts: 1,000`" in got[3] and "1000" in got[3]
    assert "row 4, column `Event`: `urgent=maybe`: not true or false" in got[4]
    assert "row 5, column `Event`: `kind=debit`: not one of DEBIT, CREDIT" in got[5] and "`DEBIT`?" in got[5]
    assert "row 7, column `Expected state`: `card_kind: VISA`: not one of DEBIT, CREDIT" in got[6]
    assert "row 9, column `Expected tool call`: `urgent=sometimes`: not true or false" in got[8]


def test_a_name_no_model_declares_keeps_its_text(tmp_path, model_file):
    sheet = xlsx(tmp_path / "extra.xlsx", [["X-1", "khóa thẻ", None, "request_lock(kind=DEBIT, urgent=yes)",
                                             "state: awaiting_last4, branch_code: 0042", "notify_branch(code=0042)"]])
    (case,) = load_goldens([str(sheet)]).cases
    assert case.turns[0].expect.variables["branch_code"] == "0042"
    assert case.turns[0].expect.tool_arguments == {"notify_branch.code": "0042"}  # an argument path
    report = coverage(model_file, sheet)
    assert report["goldens"]["valid"] == 1
    # The model never calls notify_branch: the expected call contradicts it, its argument shown as the text written.
    assert [(c["path"], c["expected"]) for c in report["contradictions"]] == [
        ("tool_arguments.notify_branch.code", "0042")]
    assert any("`branch_code` is not a variable of the model" in n["message"] for n in report["notes"])


def test_quotes_around_a_value_are_not_part_of_it(tmp_path, model_file):
    sheet = xlsx(tmp_path / "q.xlsx", [["Q-1", "khóa thẻ", None, 'request_lock(kind="DEBIT", urgent=yes)', None, None],
                                       [None, "xong", None, 'provide_last4(last4="0042, mới")',
                                        'state: card_locked, card_last4: "0042, mới"', None]])
    report = coverage(model_file, sheet)
    assert report["goldens"]["valid"] == 1 and report["contradictions"] == [], report
    assert replayed(model_file, sheet)["Q-1"]["card_last4"] == "0042, mới"


# Each type's reading, as the user guide's table states it (docs/user-guide.md, "How a cell is read").
INT = ValueType("int", lo=0, hi=9999)
MONEY = ValueType("number", scale=2)
KIND = ValueType("enum", values=("DEBIT", "CREDIT"))


@pytest.mark.parametrize("vtype,text,value", [
    (ValueType("string"), "0042", "0042"),
    (ValueType("string"), "2468", "2468"),
    (ValueType("string"), "TRUE", "TRUE"),
    (ValueType("string"), "2024-03-01", "2024-03-01"),
    (ValueType("string"), "", ""),
    (ValueType("string"), "none", "none"),
    (ValueType("string", optional=True), "none", None),
    (ValueType("string", optional=True), "", None),
    (INT, "0042", 42),
    (INT, "2468", 2468),
    (INT, "-3", -3),
    (INT, "+7", 7),
    (MONEY, "1000.50", Decimal("1000.50")),
    (MONEY, "1,000.50", Decimal("1000.50")),
    (MONEY, "12", Decimal("12")),
    (MONEY, "-0.5", Decimal("-0.5")),
    (ValueType("bool"), "TRUE", True),
    (ValueType("bool"), "false", False),
    (ValueType("bool"), "Yes", True),
    (ValueType("bool"), "no", False),
    (ValueType("bool"), "1", True),
    (ValueType("bool"), "0", False),
    (ValueType("bool"), "Đúng", True),
    (ValueType("bool"), "sai", False),
    (ValueType("bool"), "có", True),
    (ValueType("bool"), "không", False),
    (KIND, "CREDIT", "CREDIT"),
    (ValueType("enum", values=("DEBIT",), optional=True), "none", None),
])
def test_each_type_reads_a_cell_as_the_user_guide_says(vtype, text, value):
    from mbt.goldens.cells import read_cell

    got = read_cell(text, vtype)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("vtype,text,why", [
    (INT, "2.0", "not a whole number"),
    (INT, "1,000", "write it without a separator: `1000`"),
    (INT, "1.000", "not a whole number"),
    (INT, "0x10", "not a whole number"),
    (INT, "", "not a whole number"),
    (INT, "none", "not a whole number"),
    (INT, "٣", "not a whole number"),  # an Arabic-Indic digit: int() would take it
    (MONEY, "1.005", "finer than the precision 0.01"),
    (MONEY, "1.000,50", "`.` is the decimal point"),
    (MONEY, "1,000", "write it without a separator: `1000`"),
    (MONEY, "1e3", "not a number"),
    (MONEY, "NaN", "not a number"),
    (ValueType("bool"), "maybe", "not true or false"),
    (ValueType("bool"), "", "not true or false"),
    (KIND, "debit", "not one of DEBIT, CREDIT; did you mean `DEBIT`?"),
    (KIND, "VISA", "not one of DEBIT, CREDIT"),
])
def test_a_cell_that_does_not_fit_says_why(vtype, text, why):
    from mbt.goldens.cells import CellError, read_cell

    with pytest.raises(CellError) as err:
        read_cell(text, vtype)
    assert why in str(err.value)


# ------------------------------------------------------------------ .xlsx cells Excel stores as numbers, dates, booleans
def test_an_xlsx_cell_reads_as_the_text_excel_displays(tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["No.", "Question"])
    shown = [(2468, "2468"), (2468.0, "2468"), (42, "0042"), (-42, "-0042"), ("0042", "0042"), (1000.5, "1000.5"),
             (0.1 + 0.2, "0.3"), (1e-7, "0.0000001"), (True, "TRUE"), (False, "FALSE"),
             (dt.datetime(2024, 3, 1), "2024-03-01"), (dt.datetime(2024, 3, 1, 9, 30), "2024-03-01T09:30:00")]
    for number, (value, _) in enumerate(shown, start=1):
        sheet.append([float(number), value])
    sheet["B4"].number_format = sheet["B5"].number_format = "0000"  # 42 and -42, shown zero-padded by Excel
    path = tmp_path / "shown.xlsx"
    book.save(path)
    loaded = load_goldens([str(path)])
    assert not loaded.invalid
    assert [c.id for c in loaded.cases] == [str(n) for n in range(1, len(shown) + 1)]
    assert [c.turns[0].user for c in loaded.cases] == [text for _, text in shown]


def test_a_number_cell_for_a_string_variable_is_its_displayed_text(tmp_path, model_file):
    # The question's digits bind the card's last four (a string) through the model's regex: whether Excel stored
    # them as a number, as a number formatted `0000`, or as text, the variable holds the digits Excel shows.
    rows = [["N-1", "khóa thẻ", None, "request_lock(kind=DEBIT, urgent=yes)", None, None],
            [None, 2468, None, None, "state: card_locked, card_last4: 2468", "lock_card(last4=2468)"],
            ["N-2", "khóa thẻ", None, "request_lock(kind=DEBIT, urgent=yes)", None, None],
            [None, 42, None, None, "state: card_locked, card_last4: 0042", "lock_card(last4=0042)"],
            ["N-3", "khóa thẻ", None, "request_lock(kind=DEBIT, urgent=yes)", None, None],
            [None, "0042", None, None, "state: card_locked, card_last4: 0042", "lock_card(last4=0042)"]]
    path = tmp_path / "numbers.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    for row in [HEADER, *rows]:
        sheet.append(row)
    sheet["B5"].number_format = "0000"
    book.save(path)
    report = coverage(model_file, path)
    assert (report["goldens"]["valid"], report["goldens"]["unbound"]) == (3, 0), report["unbound_turns"]
    assert report["contradictions"] == []
    assert {k: v["card_last4"] for k, v in replayed(model_file, path).items()} == {
        "N-1": "2468", "N-2": "0042", "N-3": "0042"}
