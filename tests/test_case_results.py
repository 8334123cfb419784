"""Per-case results (docs/coverage-rules/cases.md), the Excel export and the per-case CSV.

The judge recomputes every row from the JSON report and the golden files alone (no mbt code but the CLI)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.cli_runner import run_mbt
from tests.json_report import expanded

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"


def judge_rows(report: dict) -> dict[str, dict]:
    """Rows keyed by `where`, straight from the rule page: verdict, verified/exercised lists, first finding."""
    verified: dict[str, list[str]] = {}
    exercised: dict[str, list[str]] = {}
    for m in report["models"]:
        for e in m["elements"]:
            label = m["model"] + ": " + e["element"]["id"]
            for case in sorted(set(e["verified_by"]), key=e["verified_by"].index):
                verified.setdefault(case, []).append(label)
            for case in sorted(set(e["exercised_by"]), key=e["exercised_by"].index):
                if case not in e["verified_by"]:
                    exercised.setdefault(case, []).append(label)
    rows = {}
    for i in report["invalid_cases"]:
        rows[f"{i['file']}:{i['line']}"] = {"verdict": "invalid", "first": i["message"]}

    def of(key, case, where):
        return [f"{x['model']}: " + (f"turn {x['turn']}: {x['reason']}" if key == "unbound_turns" else x["message"])
                for x in report[key] if x["case"] == case and x["where"] == where]

    return rows, verified, exercised, of


def read_cases_csv(text: str) -> list[dict]:
    assert text.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(text[1:])))


def golden_shapes() -> dict[str, tuple[str, int]]:
    """where -> (first question, turns), read from the JSONL and YAML example files directly."""
    shapes = {}
    for path in sorted((MODELS / "goldens").rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if path.suffix == ".jsonl":
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                # Seed 000's single-turn shape: `input` is the one user turn.
                turns = obj.get("turns") or ([{"user": obj["input"]}] if "input" in obj else [])
                shapes[f"{rel}:{n}"] = (next((t["user"] for t in turns if t.get("user")), ""), len(turns))
    return shapes


# Every model (each case applies somewhere), and one model (most cases are another model's: not applicable).
@pytest.fixture(scope="module", params=[("models/", {"invalid", "contradicts", "verifies"}),
                                        ("models/recovery.fsm", {"not-applicable", "contradicts", "verifies"})])
def outputs(tmp_path_factory, request):
    out = tmp_path_factory.mktemp("cases")
    r = run_mbt("coverage", "--model", request.param[0], "--goldens", "models/goldens/", "--no-gate",
                "--format", f"json:{out}/cov.json",
                "--format", f"cases-csv:{out}/cases.csv", "--format", f"xlsx:{out}/cases.xlsx", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out, request.param[1]


def test_every_row_follows_the_rules(outputs):
    outputs, verdicts = outputs
    report = expanded(json.loads((outputs / "cov.json").read_text(encoding="utf-8")))
    rows = read_cases_csv((outputs / "cases.csv").read_text(encoding="utf-8"))
    invalid, verified, exercised, of = judge_rows(report)
    assert len(rows) == report["goldens"]["read"]  # one row per case read, valid or invalid
    shapes = golden_shapes()
    seen_verdicts = set()
    for row in rows:
        where = row["where"]
        seen_verdicts.add(row["verdict"])
        if where in invalid:
            assert row["verdict"] == "invalid" and row["first deviation or contradiction"] == invalid[where]["first"]
            continue
        case = row["id"]
        contradictions, forbidden = of("contradictions", case, where), of("forbidden_expected", case, where)
        unbound, divergences = of("unbound_turns", case, where), of("divergences", case, where)
        ver, exe = verified.get(case, []), exercised.get(case, [])
        expected = ("contradicts" if contradictions else "expects-forbidden" if forbidden
                    else "not-applicable" if not row["models"] else "unbound" if unbound
                    else "verifies" if ver else "exercises-only" if exe else "covers-nothing")
        assert row["verdict"] == expected, row
        assert row["elements verified"].split("\n") if ver else row["elements verified"] == ""
        assert (row["elements verified"].split("\n") if ver else []) == ver
        assert (row["elements exercised"].split("\n") if exe else []) == exe
        first = (contradictions + forbidden + divergences + unbound + [""])[0]
        assert row["first deviation or contradiction"] == first
        if where in shapes:
            assert (row["first question"], int(row["turns"])) == shapes[where]
    # The example set shows more than one verdict, so the rules above are exercised, not vacuous.
    assert verdicts <= seen_verdicts


def test_the_workbook_holds_the_same_rows(outputs):
    outputs, _ = outputs
    openpyxl = pytest.importorskip("openpyxl")
    rows = read_cases_csv((outputs / "cases.csv").read_text(encoding="utf-8"))
    ws = openpyxl.load_workbook(outputs / "cases.xlsx").active
    sheet = [["" if v is None else str(v) for v in r] for r in ws.iter_rows(values_only=True)]
    assert sheet[0][:3] == ["id", "where", "first question"]
    assert [dict(zip(sheet[0], r)) for r in sheet[1:]] == rows


def test_text_stays_text_and_the_export_is_byte_stable(tmp_path):
    golden = tmp_path / "g.jsonl"
    lines = [{"id": "VI-1", "contract": "password-reset-v1", "turns": [{"user": "=HYPERLINK(\"http://x\")"}]},
             {"id": "VI-2", "contract": "password-reset-v1",
              "turns": [{"user": "Tôi quên mật khẩu, giúp tôi đặt lại."}, {"user": "忘记密码\x01了"}]}]
    golden.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    outs = []
    for n in (1, 2):
        r = run_mbt("coverage", MODELS / "recovery.fsm", golden, "--no-gate", "-o", tmp_path / f"c{n}.xlsx")
        assert r.returncode == 0, r.stderr
        outs.append((tmp_path / f"c{n}.xlsx").read_bytes())
    assert outs[0] == outs[1]
    openpyxl = pytest.importorskip("openpyxl")
    ws = openpyxl.load_workbook(tmp_path / "c1.xlsx").active
    assert ws["C2"].value == "=HYPERLINK(\"http://x\")" and ws["C2"].data_type == "s"
    assert ws["C3"].value == "Tôi quên mật khẩu, giúp tôi đặt lại." and ws["D3"].value == 2
    r = run_mbt("coverage", MODELS / "recovery.fsm", golden, "--no-gate", "--format", "cases-csv")
    row = read_cases_csv(r.stdout)[0]
    assert row["first question"].startswith("'=")  # a spreadsheet would run it as a formula otherwise


def test_xlsx_needs_a_path():
    r = run_mbt("coverage", MODELS / "recovery.fsm", "--format", "xlsx")
    assert r.returncode == 2 and "binary file" in r.stderr and r.stdout == ""
