"""`mbt runs --format NAME[:PATH]`: the runs report as Markdown (for a CI job page) and as an Excel workbook beside
text and JSON, written in one run; every figure the same as the JSON report's; hostile run texts escaped (Markdown)
and kept as text, never formulas (Excel)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl

from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
DEMO = ["--model", "models/orders.fsm", "--runs", "models/runs/", "--goldens", "models/goldens/orders/",
        "--gate", "models/gates/seed-000-release.yaml"]


def test_markdown_and_excel_beside_json_in_one_run(tmp_path):
    md, book, js = tmp_path / "runs.md", tmp_path / "runs.xlsx", tmp_path / "runs.json"
    done = run_mbt("runs", *DEMO, "--format", f"markdown:{md}", "--format", f"xlsx:{book}", "--format", f"json:{js}",
                   "--format", "text", cwd=ROOT)
    assert done.returncode == 1, done.stderr  # the example fails seed 000's release gate
    assert done.stdout.startswith("mbt runs: 25 run(s)")  # the text report on stdout
    report = json.loads(js.read_text(encoding="utf-8"))
    m = report["metrics"]

    text = md.read_text(encoding="utf-8")
    assert text.startswith(f"## mbt runs: ❌ gate failed ({len(report['gate']['failures'])} failures)")
    assert (f"| all runs | {m['runs']} | {m['passed']} | {m['deviations']} | {m['not_judged']} | "
            f"{m['intent_accuracy']:.1%} ({m['intent_correct']}/{m['intent_runs']}) |") in text
    assert f"### Runs with a deviation ({m['deviations']})" in text
    assert "| human\\_handoff (required) |" in text  # underscores escaped: no italics
    for failure in report["gate"]["failures"]:
        assert failure["message"].split(" ")[0].replace("_", "\\_") in text

    wb = openpyxl.load_workbook(book)
    assert wb.sheetnames == ["Overview", "Runs", "First deviations"]
    rows = list(wb["Runs"].iter_rows(values_only=True))
    header = rows[0]
    runs = [dict(zip(header, row)) for row in rows[1:]]
    assert [(r["Run"], r["Verdict"]) for r in runs] == [(r["id"], r["verdict"]) for r in report["runs"]]
    by_id = {r["id"]: r for r in report["runs"]}
    for row in runs:
        deviation = by_id[row["Run"]]["deviation"]
        assert (row["First deviation"] or None) == (deviation["type"] if deviation else None)
    overview = list(wb["Overview"].iter_rows(values_only=True))
    all_runs = next(r for r in overview if r and r[0] == "all runs")
    assert all_runs[1:5] == (m["runs"], m["passed"], m["deviations"], m["not_judged"])
    assert all_runs[5] == round(m["intent_accuracy"] * 100, 2)
    assert ("Gate", "FAILED") == next(r for r in overview if r and r[0] == "Gate")[:2]
    deviations = {(r[0], r[1]): r[2] for r in list(wb["First deviations"].iter_rows(values_only=True))[1:]}
    assert {k: v for (k, by), v in deviations.items() if by == "type"} == report["first_deviations"]["by_type"]


def test_hostile_run_texts_are_escaped_in_markdown_and_text_in_excel(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    source = json.loads((ROOT / "models/runs/transcripts/chat-ORD-0032.json").read_text(encoding="utf-8"))
    source["id"] = '=HYPERLINK("http://evil.example","x") | <script>alert(1)</script>'
    (runs / "evil.json").write_text(json.dumps(source), encoding="utf-8")
    md, book = tmp_path / "r.md", tmp_path / "r.xlsx"
    done = run_mbt("runs", "--model", ROOT / "models/orders.fsm", "--runs", runs, "--no-gate", "--format",
                   f"markdown:{md}", "--format", f"xlsx:{book}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = md.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if "HYPERLINK" in line)
    assert "<script>" not in text and "&lt;script>" in row
    assert row.replace("\\|", "").count("|") == 6  # five cells: the pipe in the id is escaped
    wb = openpyxl.load_workbook(book)
    cell = wb["Runs"]["A2"]
    assert cell.value == source["id"] and cell.data_type == "s"  # text, never a formula
    assert cell.quotePrefix  # and stays text when edited in Excel
    assert all(c.data_type != "f" for ws in wb for line in ws.iter_rows() for c in line)


def test_a_binary_format_needs_a_path_and_unknown_formats_are_refused():
    done = run_mbt("runs", *DEMO, "--format", "xlsx", cwd=ROOT)
    assert done.returncode == 2 and "--format xlsx writes a binary file: use --format xlsx:PATH" in done.stderr
    done = run_mbt("runs", *DEMO, "--format", "html:out", cwd=ROOT)
    assert done.returncode == 2 and "unknown format for `mbt runs` (use text, json, markdown, xlsx" in done.stderr
