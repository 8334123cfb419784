"""`mbt eval --save`, `mbt runs --save`, `--baseline-set` and `mbt results list|show|export|rename|delete|compare` on
the command line: text and JSON, the Excel and JSON exports, exit codes and messages for bad names and options."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.cli_runner import run_mbt

EVAL = ["eval", "--goldens", "models/answers/goldens/", "--runs", "models/answers/runs/"]


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / "results.db")


def test_eval_save_keeps_a_set_that_results_list_and_show_print(store):
    saved = run_mbt(*EVAL, "--save", "--store", store)
    assert saved.returncode == 1  # the eval's own gate, unchanged by saving
    name = saved.stderr.split("result set `", 1)[1].split("`", 1)[0]
    assert name.startswith("goldens_TestResult_") and f"mbt results show {name}" in saved.stderr
    assert saved.stdout == run_mbt(*EVAL).stdout  # the report is the same with or without --save
    listed = run_mbt("results", "list", "--store", store)
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[1].split() == ["NAME", "STATUS", "TYPE", "STARTED", "(UTC)", "TOOK", "EXECUTOR",
                                                    "CASES", "PASS", "RATE"]
    row = listed.stdout.splitlines()[2].split()
    assert row[0] == name and row[1:3] == ["done", "eval"] and row[-2:] == ["5", "40%"]
    shown = run_mbt("results", "show", name, "--result", "fail", "--store", store)
    assert shown.returncode == 0
    assert "overall: 2 pass, 2 fail, 1 not judged, 0 error (pass rate 40% of the cases run successfully)" in shown.stdout
    assert "cases: 2 matching (results fail)" in shown.stdout
    assert shown.stdout.count(" FAIL ") == 2 and "card-qna/3  multi-turn" in shown.stdout
    detail = run_mbt("results", "show", name, "--case", "card-qna/3", "--store", store)
    assert "accuracy: fail [embedded] says the opposite (lock/unlock)" in detail.stdout
    assert "    expected: 'Your card is now locked.'" in detail.stdout
    assert "history (the session):" in detail.stdout
    data = json.loads(run_mbt("results", "show", name, "--format", "json", "--turns", "single", "--search", "card",
                              "--store", store).stdout)
    assert [c["key"] for c in data["cases"]] == ["card-qna/2"] and data["matching"] == 1
    assert data["overview"]["overall"]["pass_rate"] == 40.0


def test_names_options_and_stores_that_cannot_be_used_exit_2_with_one_line(store, tmp_path):
    assert run_mbt(*EVAL, "--save", "qna", "--store", store).returncode == 1
    again = run_mbt(*EVAL, "--save", "qna", "--store", store)
    assert again.returncode == 2 and again.stderr.startswith("error: a result set named `qna` is in the store sqlite:")
    assert "Traceback" not in again.stderr and len(again.stderr.splitlines()) == 1
    cases = [
        (["results", "show", "qnx", "--store", store], "error: no result set named `qnx` in the store sqlite:///"
                                                        f"{store} (did you mean `qna`?)"),
        (["results", "show", "qna", "--case", "card-qna/9", "--store", store],
         "error: result set `qna`: `card-qna/9` is no case key of it (did you mean `card-qna/5`?)"),
        (["results", "list", "--since", "last week", "--store", store], "error: --since 'last week': expected a date"),
        (["results", "rename", "qna", " spaced", "--store", store], "error: the new name ` spaced` starts or ends"),
        ([*EVAL, "--store", store], "error: --store names where result sets are kept: add --save"),
        ([*EVAL, "--save", " ", "--store", store], "error: a result set's name is empty"),
        (["results", "export", "qna", "--format", "xlsx", "--store", store], "error: --format xlsx writes a workbook"),
        (["results", "list", "--store", "mysql://u:pw@host/db"], "error: --store: a store URL of scheme `mysql`"),
        (["results", "list", "--store", str(tmp_path / "no" / "such" / "x.db")],
         f"error: no result store at sqlite:///{tmp_path}/no/such/x.db (--store): nothing was saved there yet"),
        (["results", "compare", "qna", "missing", "--store", store], "error: no result set named `missing`"),
    ]
    for argv, message in cases:
        done = run_mbt(*argv)
        if message is None:
            assert done.returncode == 0, done.stderr
            continue
        assert done.returncode == 2, (argv, done.stderr)
        assert done.stderr.startswith(message), (argv, done.stderr)
        assert "pw@" not in done.stderr and "Traceback" not in done.stderr


def test_the_configuration_files_store_and_mbt_store_url(tmp_path):
    (tmp_path / "mbt.yaml").write_text("store: kept/results.db\n", encoding="utf-8")
    root = Path.cwd()
    goldens, runs = str(root / "models/answers/goldens"), str(root / "models/answers/runs")
    assert run_mbt("eval", "--goldens", goldens, "--runs", runs, "--save", "kept", cwd=tmp_path).returncode == 1
    assert (tmp_path / "kept" / "results.db").is_file()  # relative to the configuration file
    assert "kept" in run_mbt("results", "list", cwd=tmp_path).stdout
    other = str(tmp_path / "env.db")
    missing = run_mbt("results", "list", cwd=tmp_path, env={"MBT_STORE_URL": other})
    assert missing.returncode == 2 and "(MBT_STORE_URL): nothing was saved there yet" in missing.stderr
    assert not Path(other).exists()  # a command that only reads makes no store
    run_mbt("eval", "--goldens", goldens, "--runs", runs, "--save", "in-env", cwd=tmp_path,
            env={"MBT_STORE_URL": other})
    assert "in-env" in run_mbt("results", "list", cwd=tmp_path, env={"MBT_STORE_URL": other}).stdout
    # --store wins over the environment, which wins over the file
    assert "kept" in run_mbt("results", "list", "--store", str(tmp_path / "kept" / "results.db"), cwd=tmp_path,
                             env={"MBT_STORE_URL": other}).stdout


def test_rename_delete_and_json_output(store):
    run_mbt(*EVAL, "--save", "first", "--store", store)
    run_mbt(*EVAL, "--save", "second", "--store", store)
    renamed = run_mbt("results", "rename", "first", "release-1.4", "--store", store)
    assert renamed.returncode == 0 and renamed.stdout == "renamed result set `first` to `release-1.4`\n"
    listed = json.loads(run_mbt("results", "list", "--format", "json", "--store", store).stdout)
    assert sorted(s["name"] for s in listed["sets"]) == ["release-1.4", "second"]
    assert listed["store"] == f"sqlite:///{store}"
    deleted = run_mbt("results", "delete", "second", "--format", "json", "--store", store)
    assert json.loads(deleted.stdout) == {"deleted": ["second"]}
    assert [s["name"] for s in json.loads(run_mbt("results", "list", "--format", "json", "--store",
                                                  store).stdout)["sets"]] == ["release-1.4"]


def test_compare_and_the_baseline_gate_on_the_command_line(store, tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for path in Path("models/answers/runs").iterdir():
        text = path.read_text(encoding="utf-8").replace("7 business days", "5 business days")
        (runs / path.name).write_text(text.replace("under Cards > Unlock", "somewhere"), encoding="utf-8")
    assert run_mbt(*EVAL, "--save", "A", "--store", store).returncode == 1
    gated = run_mbt("eval", "--goldens", "models/answers/goldens/", "--runs", str(runs), "--save", "B",
                    "--baseline-set", "A", "--store", store)
    assert gated.returncode == 1
    assert "case `card-qna/2` passed in the baseline set `A` and is not_judged now" in gated.stdout
    compared = run_mbt("results", "compare", "A", "B", "--case", "card-qna/1", "--store", store)
    assert compared.returncode == 0
    text = compared.stdout
    assert text.index("fail -> pass") < text.index("pass -> not_judged")
    assert "overall pass rate: A 40% (2/5), B 40% (2/5); change +0.0 points, 95% CI [-46.5, +46.5]; 5 paired cases" \
        in text
    assert ("    answer: 'Refunds are credited within 7 business days.' -> 'Refunds are credited within 5 business "
            "days.'") in text
    data = json.loads(run_mbt("results", "compare", "A", "B", "--sessions", "--format", "json", "--store",
                              store).stdout)
    assert [(f["key"], f["before"], f["after"]) for f in data["flips"]] == [
        ("card-qna/1", "fail", "pass"), ("card-qna/2", "pass", "not_judged")]
    assert [s["key"] for s in data["sessions"]] == ["card-qna/1", "card-qna/2"]
    # a baseline of the other run type is refused
    runs_gate = run_mbt("runs", "--model", "models/orders.fsm", "--runs", "models/runs/", "--baseline-set", "A",
                        "--store", store)
    assert runs_gate.returncode == 2 and "--baseline-set A: a eval set; this run is runs" in runs_gate.stderr


def test_runs_save_and_its_show(store):
    saved = run_mbt("runs", "--model", "models/orders.fsm", "--runs", "models/runs/", "--save", "orders", "--store",
                    store)
    assert saved.returncode == 1 and "result set `orders` saved (done, 25 case(s))" in saved.stderr
    shown = run_mbt("results", "show", "orders", "--result", "fail", "--turns", "single", "--store", store)
    assert "first deviation wrong_argument; agent B" in shown.stdout


def _formula_suite(tmp_path):
    goldens = tmp_path / "formulas.csv"
    goldens.write_text('No.,Question,Expected answer\n1,"=HYPERLINK(""http://x"",""y"")","=1+1"\n'
                       "2,Bell\x07 in the question,@SUM(A1:A2)\n", encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "1.json").write_text(json.dumps([{"role": "user", "content": '=HYPERLINK("http://x","y")'},
                                             {"role": "assistant", "content": "=cmd|' /C calc'!A0"}]), encoding="utf-8")
    (runs / "2.json").write_text(json.dumps([{"role": "user", "content": "Bell\x07 in the question"},
                                             {"role": "assistant", "content": "#N/A"}]), encoding="utf-8")
    return str(goldens), str(runs)


def test_the_excel_export_has_an_overview_the_detail_list_and_the_turns_and_never_a_formula(store, tmp_path):
    from openpyxl import load_workbook

    goldens, runs = _formula_suite(tmp_path)
    assert run_mbt("eval", "--goldens", goldens, "--runs", runs, "--save", "formulas", "--store", store).returncode == 1
    run_mbt(*EVAL, "--save", "qna", "--store", store)
    book = tmp_path / "qna.xlsx"
    assert run_mbt("results", "export", "qna", "-o", str(book), "--store", store).returncode == 0
    wb = load_workbook(book)
    assert wb.sheetnames == ["Overview", "Cases", "Turns"]
    overview = {r[0]: r[1:] for r in wb["Overview"].iter_rows(values_only=True) if r and r[0]}
    assert overview["Result set"][0] == "qna" and overview["Cases"][0] == 5 and overview["Multi-turn"][0] == 1
    assert overview["overall"][1:6] == (2, 2, 1, 0, 40)
    cases = list(wb["Cases"].iter_rows(values_only=True))
    assert cases[0][:7] == ("No.", "Case", "Question", "Expected answer", "Actual answer", "Conversation", "Overall")
    assert cases[0][7:9] == ("accuracy result", "accuracy explanation")
    assert cases[1][:7] == (1, "card-qna/1", "How long does a refund take?",
                            "Refunds are credited within 5 business days.",
                            "Refunds are credited within 7 business days.", "single-turn", "fail")
    assert cases[3][:7] == (3, "card-qna/3", "I lost my card.", "turn 2: Your card is now locked.",
                            "turn 2: Your card is now unlocked.", "multi-turn", "fail")
    turns = list(wb["Turns"].iter_rows(values_only=True))
    assert turns[3:5] == [(3, "I lost my card.", None, "I am sorry to hear that. Shall I lock it?", "card-qna/3", 1),
                          (None, "Please lock it.", "Your card is now locked.", "Your card is now unlocked.",
                           "card-qna/3", 2)]  # seed 001's template: `No.` on a case's first row only
    formulas = tmp_path / "formulas.xlsx"
    assert run_mbt("results", "export", "formulas", "-o", str(formulas), "--store", store).returncode == 0
    wb = load_workbook(formulas)
    row = next(wb["Cases"].iter_rows(min_row=2, max_row=2))
    assert row[2].value == '=HYPERLINK("http://x","y")' and row[2].data_type == "s" and row[2].quotePrefix
    assert not row[1].quotePrefix  # only a text a spreadsheet would run gets the prefix
    assert row[3].value == "=1+1" and row[4].value == "=cmd|' /C calc'!A0"
    third = next(wb["Cases"].iter_rows(min_row=3, max_row=3))
    assert third[2].value == "Bell\ufffd in the question"
    assert (third[4].value, third[4].data_type) == ("#N/A", "s")  # text, not Excel's error value
    with zipfile.ZipFile(formulas) as raw:
        assert not any(b"<f>" in raw.read(n) or b"<f " in raw.read(n) for n in raw.namelist())
    again = tmp_path / "again.xlsx"
    run_mbt("results", "export", "formulas", "-o", str(again), "--store", store)
    assert again.read_bytes() == formulas.read_bytes()  # the same set, the same bytes


def test_the_json_export_holds_the_set_and_every_case_whole(store, tmp_path):
    run_mbt(*EVAL, "--save", "qna", "--store", store)
    out = tmp_path / "qna.json"
    assert run_mbt("results", "export", "qna", "-o", str(out), "--store", store).returncode == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["set"]["name"] == "qna" and data["overview"]["cases_total"] == 5
    assert data["summary"]["judge"] == "embedded" and "cases" not in data["summary"]
    assert [c["row"]["key"] for c in data["cases"]] == [f"card-qna/{n}" for n in range(1, 6)]
    third = data["cases"][2]
    assert third["verdicts"][0]["criterion"] == "accuracy" and third["doc"]["where"].endswith("card-qna.csv:4")
    filtered = json.loads(run_mbt("results", "export", "qna", "--result", "pass", "--store", store).stdout)
    assert [c["row"]["key"] for c in filtered["cases"]] == ["card-qna/2", "card-qna/4"]


@pytest.mark.parametrize("command", [["results"], ["results", "list"], ["results", "show"], ["results", "export"],
                                     ["results", "rename"], ["results", "delete"], ["results", "compare"]],
                         ids=" ".join)
def test_results_help_ends_with_examples_exit_codes_and_environment(command):
    text = run_mbt(*command, "--help").stdout
    examples = [e.strip() for e in text[text.index("Examples:"):text.index("Exit codes:")].splitlines()[1:]
                if e.strip()]
    assert 1 <= len(examples) <= 3 and all(e.startswith("mbt results") for e in examples), examples
    assert "MBT_STORE_URL" in text and "2 unusable input" in text


def test_every_results_json_output_follows_its_published_schema(store, tmp_path):
    from jsonschema import Draft202012Validator

    run_mbt(*EVAL, "--save", "A", "--store", store)
    run_mbt("runs", "--model", "models/orders.fsm", "--runs", "models/runs/", "--save", "R", "--store", store)
    export = tmp_path / "R.json"
    run_mbt("results", "export", "R", "-o", str(export), "--store", store)
    outputs = {
        "results-list": run_mbt("results", "list", "--format", "json", "--store", store).stdout,
        "results-show": run_mbt("results", "show", "R", "--format", "json", "--store", store).stdout,
        "results-case": run_mbt("results", "show", "A", "--case", "card-qna/3", "--format", "json", "--store",
                                store).stdout,
        "results-export": export.read_text(encoding="utf-8"),
        "results-compare": run_mbt("results", "compare", "R", "R", "--sessions", "--format", "json", "--store",
                                   store).stdout,
    }
    for name, text in outputs.items():
        schema = json.loads((Path("docs/schemas") / f"{name}.schema.json").read_text(encoding="utf-8"))
        errors = list(Draft202012Validator(schema).iter_errors(json.loads(text)))
        assert not errors, (name, errors[:3])


def test_a_run_that_fails_leaves_its_set_failed_with_why(store):
    failed = run_mbt("eval", "--goldens", "no-such-folder/", "--runs", "models/answers/runs/", "--save", "typo",
                     "--store", store)
    assert failed.returncode == 2 and failed.stderr.startswith("no-such-folder")
    shown = run_mbt("results", "show", "typo", "--store", store)
    assert "typo  (eval, failed)" in shown.stdout and "judge embedded, criteria the default" in shown.stdout
    assert "  failed: no-such-folder" in shown.stdout and "no such file" in shown.stdout
