"""`mbt eval --format xlsx:PATH` (issue 34, item 8): seed 001's Excel export read back with openpyxl — the overview
sheet (cases run successfully and with errors, the pass count and rate overall and per criterion, the gate) and the
detail sheet (STT, question, expected answer, actual answer, single or multi-turn, the result per criterion and
overall, the explanation); texts a spreadsheet would run as formulas stay text; the same report gives the same
bytes; the format convention of `mbt coverage` (NAME:PATH, -o, several formats at once)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl

from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "models" / "answers" / "goldens"
RUNS = ROOT / "models" / "answers" / "runs"


def rows(sheet) -> list[list]:
    return [list(r) for r in sheet.iter_rows(values_only=True)]


def test_the_workbook_holds_the_overview_and_a_row_per_case(tmp_path):
    book_path = tmp_path / "eval.xlsx"
    done = run_mbt("eval", "--goldens", GOLDENS, "--runs", RUNS, "--criteria", "accuracy=2,fluency=1",
                   "--format", f"xlsx:{book_path}", "--format", f"json:{tmp_path / 'eval.json'}", "--format", "text",
                   cwd=ROOT)
    assert done.returncode == 1 and "run successfully: 5" in done.stdout  # the text report still on stdout
    report = json.loads((tmp_path / "eval.json").read_text(encoding="utf-8"))
    book = openpyxl.load_workbook(book_path)
    assert book.sheetnames == ["Overview", "Details"]
    details = rows(book["Details"])
    assert details[0] == ["STT", "Case", "Where", "Question", "Expected answer", "Actual answer", "Conversation",
                          "accuracy", "fluency", "Overall", "Explanation"]
    assert [r[0] for r in details[1:]] == [1, 2, 3, 4, 5] and [r[1] for r in details[1:]] == ["1", "2", "3", "4", "5"]
    by_id = {r[1]: r for r in details[1:]}
    cases = {c["id"]: c for c in report["cases"]}
    for case_id, case in cases.items():
        row = by_id[case_id]
        assert row[2] == case["where"] and row[3] == case["turns"][0]["question"]
        assert row[7] == case["criteria"]["accuracy"]["verdict"].replace("_", " ")
        assert row[9] == case["overall"]["verdict"].replace("_", " ")
        assert case["criteria"]["accuracy"]["reason"] in row[10] and case["overall"]["reason"] in row[10]
    assert by_id["1"][4:7] == ["Refunds are credited within 5 business days.",
                               "Refunds are credited within 7 business days.", "single-turn"]
    # a multi-turn case: the first question stands for it; each turn's answers are labelled
    assert by_id["3"][3] == "I lost my card." and by_id["3"][6] == "multi-turn"
    assert by_id["3"][4] == "Turn 2: Your card is now locked."
    assert by_id["3"][5] == "Turn 1: I am sorry to hear that. Shall I lock it?\nTurn 2: Your card is now unlocked."
    assert by_id["5"][5] == "(no answer recorded)"
    overview = {r[0]: r[1:] for r in rows(book["Overview"]) if r and r[0]}
    assert overview["Cases"][0] == 5 and overview["Run successfully"][0] == 5 and overview["With errors"][0] == 0
    assert overview["Overall"][:2] == [report["passed_ok"], report["pass_rate"] / 100]
    for summary in report["criteria"]:
        assert overview[summary["key"]][:2] == [summary["passed_ok"], summary["pass_rate"] / 100]
    assert book["Overview"]["C6"].number_format == "0.0%"
    assert overview["Gate"][:2] == ["FAILED", "default: every case passes overall"]


def test_texts_that_look_like_formulas_stay_text_and_the_bytes_are_stable(tmp_path):
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps({"id": "=HYPERLINK(\"http://x\")", "turns": [
        {"user": "+1 what?", "expected_answer": "=1+1"}]}) + "\n", encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.json").write_text(json.dumps({"case_id": "=HYPERLINK(\"http://x\")", "messages": [
        {"role": "user", "content": "+1 what?"}, {"role": "assistant", "content": "@SUM(A1:A2)\u0007-2"}]}),
        encoding="utf-8")
    first, second = tmp_path / "one.xlsx", tmp_path / "two.xlsx"
    run_mbt("eval", "--goldens", golden, "--runs", runs, "--format", "xlsx", "-o", first)
    run_mbt("eval", "--goldens", golden, "--runs", runs, "-o", second)  # the suffix names the format
    assert first.read_bytes() == second.read_bytes()
    sheet = openpyxl.load_workbook(first)["Details"]
    row = {sheet.cell(1, c).value: sheet.cell(2, c) for c in range(1, sheet.max_column + 1)}
    for column, text in (("Case", "=HYPERLINK(\"http://x\")"), ("Question", "+1 what?"), ("Expected answer", "=1+1"),
                         ("Actual answer", "@SUM(A1:A2)\ufffd-2")):
        cell = row[column]
        assert cell.value == text and cell.data_type == "s", column  # never a formula
        assert cell.quotePrefix, column


def test_the_formats_follow_the_coverage_convention(tmp_path):
    args = ("eval", "--goldens", GOLDENS, "--runs", RUNS)
    done = run_mbt(*args, "--format", "xlsx", cwd=ROOT)
    assert done.returncode == 2 and "writes a binary file" in done.stderr
    done = run_mbt(*args, "--format", "html:x", cwd=ROOT)
    assert done.returncode == 2 and "unknown format for `mbt eval` (use text, json, xlsx" in done.stderr
    done = run_mbt(*args, "--format", f"xlsx:{tmp_path / 'missing' / 'e.xlsx'}", cwd=ROOT)
    assert done.returncode == 2 and "does not exist" in done.stderr
    done = run_mbt(*args, "-o", tmp_path / "eval.md", cwd=ROOT)  # no eval format of that suffix: text
    assert (tmp_path / "eval.md").read_text(encoding="utf-8").startswith("mbt eval: 5 case(s)")
