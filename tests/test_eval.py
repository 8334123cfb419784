"""`mbt eval` through the command line (issue 34): goldens with expected answers against the agent's answers from
recorded runs, on the shipped seed-001-style example (models/answers/) and small files written here: the verdicts,
the matching rule, ids local to their file, invalid cases with file:row, the gate, the JSON schema, the config file,
--show-prompt and --retry-errors against a real chat-completions server on localhost."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.chat_server import ChatServer, Reply, verdict_reply
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "models" / "answers" / "goldens"
RUNS = ROOT / "models" / "answers" / "runs"


def eval_json(*args, cwd=None, env=None):
    done = run_mbt("eval", *args, "--format", "json", cwd=cwd, env=env)
    return done, (json.loads(done.stdout) if done.stdout.strip().startswith("{") else None)


def transcript(path: Path, answers: list[tuple[str, str]], **meta) -> None:
    messages = [m for q, a in answers for m in ({"role": "user", "content": q}, {"role": "assistant", "content": a})]
    path.write_text(json.dumps({**meta, "messages": messages}, ensure_ascii=False), encoding="utf-8")


def test_the_shipped_example_is_judged_case_by_case():
    done, report = eval_json("--goldens", GOLDENS, "--runs", RUNS, cwd=ROOT)
    assert done.returncode == 1, done.stderr  # two wrong answers and an unanswered case: the gate fails
    cases = {c["id"]: c for c in report["cases"]}
    assert list(cases) == ["1", "2", "3", "4", "5"]
    wrong_number = cases["1"]["criteria"]["accuracy"]
    assert wrong_number["verdict"] == "fail" and wrong_number["judge"] == "embedded"
    assert "5 business days" in wrong_number["reason"] and "7 business days" in wrong_number["reason"]
    assert cases["1"]["matched_by"] == "case_id" and cases["2"]["matched_by"] == "file name"
    assert cases["4"]["matched_by"] == "conversation id" and cases["3"]["matched_by"] == "case_id"  # card-qna/3
    assert cases["2"]["overall"]["verdict"] == "pass" and cases["4"]["overall"]["verdict"] == "pass"
    opposite = cases["3"]["criteria"]["accuracy"]
    assert opposite["verdict"] == "fail" and "unlock" in opposite["reason"]
    assert [t["judged"] for t in cases["3"]["turns"]] == [False, True]  # the first turn is context only
    assert cases["3"]["turns"][1]["actual"] == "Your card is now unlocked."
    missing = cases["5"]["criteria"]["accuracy"]
    assert missing["verdict"] == "not_judged" and "no answer recorded" in missing["reason"]
    assert cases["5"]["overall"]["verdict"] == "not_judged" and cases["5"]["run"] is None
    assert (report["passed"], report["failed"], report["not_judged"], report["pass_rate"]) == (2, 2, 1, 40.0)
    assert [r["where"] for r in report["runs_without_case"]] == [f"{RUNS / 'stray.json'} (run stray)"]
    assert not report["gate"]["passed"] and len(report["gate"]["failures"]) == 3


def test_the_text_report_gives_the_overview_and_each_case():
    done = run_mbt("eval", "--goldens", "models/answers/goldens/", "--runs", "models/answers/runs/", cwd=ROOT)
    assert done.returncode == 1
    out = done.stdout
    assert "run successfully: 5   with errors: 0" in out
    assert "overall: 2 pass, 2 fail, 1 not judged, 0 error; pass rate 40% (2 of 5 run successfully)" in out
    assert "accuracy (weight 1): 2 pass, 2 fail, 1 not judged, 0 error; pass rate 40% (2 of 5 run successfully)" in out
    assert "FAIL       models/answers/goldens/card-qna.csv:2 case 1" in out
    assert "accuracy: fail [embedded] expected '5 business days', the answer says '7 business days'" in out
    assert "Runs without a case (1):" in out and "Gate: FAILED (3)" in out


def test_the_json_report_follows_its_published_schema():
    _, report = eval_json("--goldens", GOLDENS, "--runs", RUNS, cwd=ROOT)
    schema = json.loads((ROOT / "docs" / "schemas" / "eval.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    assert report["schema_version"] == "1.0"


def test_every_case_passing_is_green_and_not_judged_never_is(tmp_path):
    (tmp_path / "qna.csv").write_text("No.,Question,Expected answer\n1,Can I unlock my card in the app?,"
                                      "\"Yes, you can unlock your card in the app.\"\n", encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    transcript(runs / "1.json", [("Can I unlock my card in the app?", "Yes, you can unlock your card in the app.")])
    done = run_mbt("eval", "--goldens", tmp_path / "qna.csv", "--runs", runs)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Gate: passed" in done.stdout
    (runs / "1.json").rename(runs / "other.json")  # now no run answers the case
    done, report = eval_json("--goldens", tmp_path / "qna.csv", "--runs", runs)
    assert done.returncode == 1 and report["cases"][0]["overall"]["verdict"] == "not_judged"
    assert report["runs_without_case"][0]["message"].startswith("no case named")


def test_an_empty_expected_answer_without_other_check_is_invalid_at_its_row(tmp_path):
    sheet = tmp_path / "qna.csv"
    sheet.write_text("No.,Question,Expected answer\n1,Hello?,Hello!\n2,Anything?,\n", encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    transcript(runs / "1.json", [("Hello?", "Hello!")])
    done, report = eval_json("--goldens", sheet, "--runs", runs)
    assert done.returncode == 1
    assert report["invalid_cases"] == [{"where": f"{sheet}:3", "message": "case `2` has no expected answer and no "
                                        "other check: fill in `Expected answer` (or give must_have, must_not, assert)"}]
    assert [c["id"] for c in report["cases"]] == ["1"] and report["cases"][0]["overall"]["verdict"] == "pass"


def test_ids_are_local_to_their_file_and_digits_stay_text(tmp_path):
    for name, answer in (("a", "Refunds take 5 business days."), ("b", "Transfers take 2 business days.")):
        (tmp_path / f"{name}.csv").write_text(f"No.,Question,Expected answer\n007,Question {name},{answer}\n",
                                              encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    transcript(runs / "x.json", [("Question a", "Refunds take 5 business days.")], case_id="a/007")
    transcript(runs / "y.json", [("Question b", "Transfers take 9 business days.")], case_id="b/007")
    transcript(runs / "z.json", [("Question", "Hi")], case_id="007")
    transcript(runs / "w.json", [("Question", "Hi")], case_id="a/7")
    done, report = eval_json("--goldens", tmp_path / "a.csv", tmp_path / "b.csv", "--runs", runs)
    assert report["invalid_cases"] == []  # the same No. in two files is two cases
    verdicts = {(c["file"].rsplit("/", 1)[-1], c["id"]): c["overall"]["verdict"] for c in report["cases"]}
    assert verdicts == {("a.csv", "007"): "pass", ("b.csv", "007"): "fail"}
    why = {r["where"].split(" ")[0].rsplit("/", 1)[-1]: r["message"] for r in report["runs_without_case"]}
    assert why["z.json"].startswith("`007` (case_id) names several cases: a/007, b/007")
    assert why["w.json"].startswith("no case named `a/7` (case_id)")  # 007 is not 7


def test_golden_assertions_and_weighted_criteria(tmp_path):
    golden = tmp_path / "g.jsonl"
    cases = [{"id": "otp", "turns": [{"user": "I forgot my password", "expected_answer": "Use 'Forgot password' on "
                                      "the sign-in page.", "must_not": ["OTP"],
                                      "assert": [{"type": "icontains", "value": "forgot password"}]}]},
             {"id": "polite", "turns": [{"user": "Reset it", "assert": [
                 {"type": "must_not", "value": ["password"], "criterion": "safety"}]}]}]
    golden.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    transcript(runs / "otp.json", [("I forgot my password", "Use 'Forgot password' on the sign-in page, then tell "
                                                            "me the OTP.")])
    transcript(runs / "polite.json", [("Reset it", "Done: a reset link is in your mailbox.")])
    done, report = eval_json("--goldens", golden, "--runs", runs, "--judge", "rules",
                             "--criteria", "accuracy=2,safety=1", "--threshold", "1")
    by_id = {c["id"]: c for c in report["cases"]}
    assert by_id["otp"]["criteria"]["accuracy"]["verdict"] == "fail" and "OTP" in \
        by_id["otp"]["criteria"]["accuracy"]["reason"]
    assert by_id["polite"]["criteria"]["accuracy"]["verdict"] == "not_judged"  # no accuracy assertion there
    assert by_id["polite"]["criteria"]["safety"]["verdict"] == "pass"
    assert by_id["polite"]["overall"]["verdict"] == "not_judged"  # 1 is not > 1 and accuracy could make it 3
    assert [(c["key"], c["weight"]) for c in report["criteria"]] == [("accuracy", "2"), ("safety", "1")]
    assert done.returncode == 1


def test_bad_input_is_one_message_and_exit_2(tmp_path):
    done = run_mbt("eval", "--goldens", GOLDENS, "--runs", RUNS, "--criteria", "acuracy=1", cwd=ROOT)
    assert done.returncode == 2 and "acuracy" in done.stderr and "Traceback" not in done.stderr
    done = run_mbt("eval", "--goldens", GOLDENS, "--runs", tmp_path / "missing", cwd=ROOT)
    assert done.returncode == 2 and "missing" in done.stderr and "Traceback" not in done.stderr
    done = run_mbt("eval", "--goldens", GOLDENS, "--runs", RUNS, "--threshold", "1", cwd=ROOT)
    assert done.returncode == 2 and "no case can ever pass" in done.stderr
    (tmp_path / "empty").mkdir()
    done = run_mbt("eval", "--goldens", tmp_path / "empty", "--runs", RUNS, cwd=ROOT)
    assert done.returncode == 2 and f"{tmp_path / 'empty'}:1:1: error: no golden file in this folder" in done.stderr


def test_the_configuration_file_gives_the_defaults(tmp_path):
    (tmp_path / "mbt.yaml").write_text(f"goldens: {GOLDENS}\nruns: {RUNS}\ncriteria: {{accuracy: 2, safety: 1}}\n"
                                       "threshold: 1\n", encoding="utf-8")
    done, report = eval_json(cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert [c["key"] for c in report["criteria"]] == ["accuracy", "safety"] and report["threshold"] == "1"
    by_id = {c["id"]: c for c in report["cases"]}
    assert by_id["2"]["overall"]["verdict"] == "pass"  # accuracy (2) > 1: safety cannot change it
    done, report = eval_json("--criteria", "accuracy=1", "--threshold", "0", cwd=tmp_path)  # the command line wins
    assert [c["key"] for c in report["criteria"]] == ["accuracy"]


def test_show_prompt_prints_the_llm_request_for_a_criterion():
    done = run_mbt("eval", "--goldens", GOLDENS, "--runs", RUNS, "--show-prompt", "accuracy", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "## case 1 turn 1" in done.stdout and "Refunds are credited within 7 business days." in done.stdout
    assert "BEGIN DATA" in done.stdout and '"criterion": "accuracy"' in done.stdout
    done = run_mbt("eval", "--goldens", GOLDENS, "--runs", RUNS, "--show-prompt", "fluency", cwd=ROOT)
    assert done.returncode == 2 and "not an enabled criterion" in done.stderr


def test_retry_errors_rejudges_only_the_errors_through_the_cache(tmp_path):
    state = {"broken": True}

    def script(n, body, headers):
        content = body["messages"][1]["content"]
        if state["broken"] and "Refunds" in content:
            return Reply(400, {"error": {"message": "bad request"}})  # not retried: an error at once
        return verdict_reply("pass")

    with ChatServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path)}
        args = ("--goldens", GOLDENS, "--runs", RUNS, "--judge", "openai:judge-model")
        done, report = eval_json(*args, cwd=ROOT, env=env)
        by_id = {c["id"]: c for c in report["cases"]}
        assert by_id["1"]["criteria"]["accuracy"]["verdict"] == "error"
        assert by_id["1"]["criteria"]["accuracy"]["judge"] == "openai:judge-model"
        assert by_id["2"]["criteria"]["accuracy"]["verdict"] == "pass" and report["cases_with_errors"] == 1
        sent = len(server.requests)
        asked = [r["body"]["messages"][1]["content"] for r in server.requests]
        assert sum("Refunds" not in a for a in asked) == 3  # the other answered cases; the unanswered one: never
        state["broken"] = False
        eval_json(*args, cwd=ROOT, env=env)
        assert len(server.requests) == sent  # unchanged: all from the cache, the error included
        done, report = eval_json(*args, "--retry-errors", cwd=ROOT, env=env)
        again = [r["body"]["messages"][1]["content"] for r in server.requests[sent:]]
        assert len(again) == 1 and "Refunds" in again[0]  # only the error asked again
        assert {c["id"]: c["criteria"]["accuracy"]["verdict"] for c in report["cases"]}["1"] == "pass"


def test_with_a_model_the_same_runs_are_also_judged_on_it(tmp_path):
    sheet = tmp_path / "orders-qna.csv"
    sheet.write_text("No.,Question,Expected answer\n"
                     "chat-ORD-0031,I want to cancel my order,\n,SO-10031,\n,yes,Your order SO-10031 is cancelled.\n"
                     "chat-ORD-0032,\"cancel SO-10032 please, my email is li@example.com\",SO-10032 is cancelled.\n",
                     encoding="utf-8")
    transcripts = ROOT / "models" / "runs" / "transcripts"
    runs = [transcripts / "chat-ORD-0031.json", transcripts / "chat-ORD-0032.json"]
    done, report = eval_json("--goldens", sheet, "--runs", *runs, "--model", ROOT / "models" / "orders.fsm")
    by_id = {c["id"]: c for c in report["cases"]}
    assert {k: c["overall"]["verdict"] for k, c in by_id.items()} == {"chat-ORD-0031": "pass", "chat-ORD-0032": "pass"}
    assert [t["judged"] for t in by_id["chat-ORD-0031"]["turns"]] == [False, False, True]
    # No deviation: whether its texts reveal another customer's order is more than the embedded judge can decide,
    # and the forbid's phrases, none of them said, decide it (docs/runs.md).
    assert by_id["chat-ORD-0031"]["model"] == {"verdict": "pass", "reason": "no deviation from the model"}
    deviation = by_id["chat-ORD-0032"]["model"]
    assert deviation["verdict"] == "deviation" and "premature_success" in deviation["reason"]
    assert done.returncode == 1  # the answer is right, but the run did not behave as the model says
    assert [f.split(": ", 1)[1] for f in report["gate"]["failures"]] == [
        f"case `chat-ORD-0032`: its run is deviation on the model: {deviation['reason']}"]
    done, report = eval_json("--goldens", sheet, "--runs", runs[0], "--model", ROOT / "models" / "orders.fsm")
    assert report["cases"][1]["model"] is None  # no run answers chat-ORD-0032: nothing judged on the model
    assert report["gate"]["failures"][0].endswith("is not_judged: passed weight 0 is not greater than threshold 0; "
                                                  "undecided: accuracy (not_judged)")


def test_a_workbook_keeps_ids_per_sheet_and_jsonl_transcripts_name_their_case(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    first = book.active
    first.title = "Cards"
    for row in (["No.", "Question", "Expected answer"], [1, "Can I lock my card?", "Yes, you can lock your card."]):
        first.append(row)
    second = book.create_sheet("Fees")
    for row in (["No.", "Question", "Expected answer"], [1, "What is the fee?", "The fee is 5 dollars."],
                [2, "And abroad?", None]):
        second.append(row)
    book.save(tmp_path / "suite.xlsx")
    runs = tmp_path / "runs.jsonl"  # several transcripts in one file: the file name names none of them
    lines = [{"metadata": {"case_id": "suite[Cards]/1"}, "messages": [
                 {"role": "user", "content": "Can I lock my card?"},
                 {"role": "assistant", "content": "Yes, you can lock your card."}]},
             {"case_id": "suite[Fees]/1", "messages": [
                 {"role": "user", "content": "What is the fee?"},
                 {"role": "assistant", "content": "The fee is 9 dollars."}]}]
    runs.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done, report = eval_json("--goldens", tmp_path / "suite.xlsx", "--runs", runs)
    verdicts = {(c["file"].rsplit("/", 1)[-1], c["id"]): (c["overall"]["verdict"], c["run"].rsplit(":", 1)[-1])
                for c in report["cases"]}
    assert verdicts == {("suite.xlsx[Cards]", "1"): ("pass", "1"), ("suite.xlsx[Fees]", "1"): ("fail", "2")}
    assert report["invalid_cases"] == [{"where": f"{tmp_path / 'suite.xlsx'}[Fees]:3", "message": "case `2` has no "
                                        "expected answer and no other check: fill in `Expected answer` (or give "
                                        "must_have, must_not, assert)"}]
    assert done.returncode == 1


def test_jobs_judge_the_answers_and_the_runs_in_parts_with_the_report_of_one_process(monkeypatch):
    # The embedded judge's batch split between this process and a forked worker, and the runs judged on the model in
    # pieces (mbt.answers.jobs, mbt.runs.parts): the same report, byte for byte.
    from mbt import api
    from mbt.answers import jobs
    from mbt.measure import parallel
    from mbt.runs import parts

    args = dict(criteria="accuracy=1,safety=1", model_paths=[str(ROOT / "models" / "orders.fsm")])
    alone = api.eval([str(GOLDENS)], [str(RUNS)], **args, jobs=1).model_dump_json()
    forked: list[int] = []
    real = parallel.Workers.__init__

    def spy(self, work, count):
        forked.append(count)
        real(self, work, count)

    monkeypatch.setattr(parallel.Workers, "__init__", spy)
    monkeypatch.setattr(jobs, "MIN_ITEMS", 1)
    monkeypatch.setattr(parts, "PARALLEL_MIN_BYTES", 0)
    assert api.eval([str(GOLDENS)], [str(RUNS)], **args, jobs=2).model_dump_json() == alone
    assert forked.count(2) == 2  # the answers' batch and the runs' pieces, each in two processes
    done = run_mbt("eval", "--goldens", GOLDENS, "--runs", RUNS, "--jobs", "2", "--format", "json")
    assert done.returncode == 1 and json.loads(done.stdout)["cases_total"] == json.loads(alone)["cases_total"]


def test_with_cpu_bound_judges_alone_whole_cases_are_judged_in_parts(monkeypatch):
    # Reading each case's turns and combining its verdicts is a third of a run beside the judging: with the embedded
    # and rule judges alone, whole cases go to the workers (mbt.answers.jobs.in_parts over judge_goldens), never the
    # judges' batches alone; the report is the same.
    from mbt import api
    from mbt.answers import evaluate, jobs

    args = dict(criteria="accuracy=1,safety=1", judges={"safety": "rules"})
    alone = api.eval([str(GOLDENS)], [str(RUNS)], **args, jobs=1).model_dump_json()
    parts: list[int] = []
    real = evaluate.judge_goldens

    def counted(goldens, *rest, **kw):
        parts.append(len(goldens))
        return real(goldens, *rest, **kw)

    def no_batches(*_args, **_kw):
        raise AssertionError("the judges' batches were split: whole cases should have been")

    monkeypatch.setattr(evaluate, "judge_goldens", counted)
    monkeypatch.setattr(jobs, "ForkedJudge", no_batches)
    monkeypatch.setattr(jobs, "MIN_ITEMS", 1)
    assert api.eval([str(GOLDENS)], [str(RUNS)], **args, jobs=2).model_dump_json() == alone
    total = json.loads(alone)["cases_total"]
    assert len(parts) == 1 and 0 < parts[0] < total  # this process judged the first part; a worker the rest
