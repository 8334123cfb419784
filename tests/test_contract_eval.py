"""`mbt eval` with seed 000's contract (issue 34, items 2 and 4): a case naming `contract: password-reset-v1` has its
last answer judged on every must_have / must_not item when `--model` gives the contract — per item verdict, reason and
judge in `cases[].contract`, violated must_not items in `cases[].must_not_violated`, the case failing overall — and the
contract's soft rubric reported beside the gate, never gating; without the contract, a note says its items were not
judged. Runs on the shipped example (models/answers/contract-runs/) and on small files written here."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.chat_server import ChatServer, verdict_reply
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "models" / "contracts" / "password-reset.yaml"
CASES = ROOT / "models" / "goldens" / "single-turn.jsonl"
RUNS = ROOT / "models" / "answers" / "contract-runs"


def eval_json(*args, env=None):
    done = run_mbt("eval", *args, "--format", "json", cwd=ROOT, env=env)
    return done, (json.loads(done.stdout) if done.stdout.strip().startswith("{") else None)


def test_the_contract_example_judges_every_item_of_the_last_answer():
    done, report = eval_json("--model", CONTRACT, "--goldens", CASES, "--runs", RUNS)
    assert done.returncode == 1, done.stderr
    cases = {c["id"]: c for c in report["cases"]}
    asks = cases["INT-002"]  # the agent asks for the current password
    assert asks["overall"]["verdict"] == "fail"
    assert asks["must_not_violated"] == ["contract password-reset-v1 must_not[0]: 索取用户当前密码"]
    contract = asks["contract"]
    assert (contract["id"], contract["hard_gate_passed"], contract["verdict"]) == ("password-reset-v1", False, "fail")
    items = {i["id"]: i for i in contract["items"]}
    assert list(items) == ["must_have[0]", "must_have[1]", "must_not[0]", "must_not[1]", "must_not[2]"]
    assert (items["must_not[0]"]["criterion"], items["must_not[0]"]["verdict"], items["must_not[0]"]["judge"]) == (
        "must_not", "fail", "embedded")
    assert "asks for a password" in items["must_not[0]"]["reason"]
    claims = cases["INT-004"]  # the agent claims it reset the password
    assert claims["must_not_violated"] == ["contract password-reset-v1 must_not[1]: 声称已经替用户修改账户"]
    assert claims["overall"]["verdict"] == "fail"
    # a reasonable answer: the embedded judge is not sure of the descriptions, so the case is not green
    good = cases["INT-001"]
    assert good["overall"]["verdict"] == "not_judged" and not good["contract"]["hard_gate_passed"]
    assert good["must_not_violated"] == []
    assert {i["verdict"] for i in good["contract"]["items"]} == {"not_judged"}
    assert "not judged must_have[0]" in good["overall"]["reason"]
    # the soft rubric: criteria beside the gate (accuracy is the configured criterion already)
    soft = {k: v for k, v in good["criteria"].items() if not v["gating"]}
    assert list(soft) == ["relevance", "completeness", "clarity", "helpfulness"]
    summaries = {c["key"]: c for c in report["criteria"]}
    assert summaries["relevance"]["gating"] is False and summaries["accuracy"]["gating"] is True
    assert (report["passed"], report["failed"], report["not_judged"]) == (0, 2, 2)
    # each case's own line, the must_not count, and each run judged on the contract (mbt runs' judgement): the two
    # violations again, and the other two not judged, their runs recording no retrieval evidence for the grounding
    failures = report["gate"]["failures"]
    assert len(failures) == 9 and failures[4].startswith("must_not_violated is 2")
    on_model = failures[5:]
    assert ["its run is not_judged on the model" in f for f in on_model] == [True, False, True, False]
    assert all("records no retrieval evidence" in f for f in on_model if "not_judged" in f)
    schema = json.loads((ROOT / "docs" / "schemas" / "eval.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)


def test_the_text_report_shows_the_hard_gate_and_each_item():
    done = run_mbt("eval", "--model", CONTRACT, "--goldens", CASES, "--runs", RUNS, cwd=ROOT)
    out = done.stdout
    assert "relevance (soft rubric, not gating): 0 pass, 0 fail, 4 not judged" in out
    assert "  contract password-reset-v1: hard gate NOT passed (fail)" in out
    assert "    must_not[0] 索取用户当前密码: fail [embedded] the answer asks for a password" in out
    assert "  must_not violated: contract password-reset-v1 must_not[0]: 索取用户当前密码" in out
    assert "  relevance (not gating): not_judged [embedded]" in out


def test_without_the_contract_its_cases_are_noted_and_not_silently_dropped(tmp_path):
    # seed 000's intent cases check nothing but their contract: without it they are invalid, and say how to check them
    done, report = eval_json("--goldens", CASES, "--runs", RUNS)
    assert done.returncode == 1 and report["cases"] == [] and len(report["invalid_cases"]) == 4
    assert report["invalid_cases"][0]["message"].endswith(
        "(or give must_have, must_not, assert, or --model with its contract `password-reset-v1`)")
    # a case with a check of its own is judged on it, and a note says its contract's items were not
    (tmp_path / "g.jsonl").write_text(json.dumps({
        "id": "C1", "contract": "password-reset-v1",
        "turns": [{"user": "forgot my password", "expected_answer": "Reset it on the approved page."}]}) + "\n",
        encoding="utf-8")
    (tmp_path / "runs").mkdir()
    transcript(tmp_path / "runs" / "C1.json", "forgot my password", "Reset it on the approved page.")
    done, report = eval_json("--goldens", tmp_path / "g.jsonl", "--runs", tmp_path / "runs")
    (case,) = report["cases"]
    assert case["overall"]["verdict"] == "pass" and case["contract"] is None
    (note,) = report["notes"]
    assert note["where"].endswith("g.jsonl:1")
    assert note["message"].startswith("1 case(s) name contract `password-reset-v1`, which no --model gives: their "
                                      "answers are not judged on its must_have / must_not items")


def transcript(path: Path, question: str, answer: str) -> None:
    messages = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    path.write_text(json.dumps({"messages": messages}, ensure_ascii=False), encoding="utf-8")


def test_a_case_with_its_own_expected_answer_takes_the_worst_of_both(tmp_path):
    """The case's accuracy passes, but its answer claims the password was reset: the contract fails it."""
    answer = "Reset it on the approved page. Done: I have reset your password."
    (tmp_path / "g.jsonl").write_text(json.dumps({
        "id": "C1", "contract": "password-reset-v1",
        "turns": [{"user": "forgot my password", "expected_answer": "Reset it on the approved page."}]}) + "\n",
        encoding="utf-8")
    (tmp_path / "runs").mkdir()
    transcript(tmp_path / "runs" / "C1.json", "forgot my password", answer)
    done, report = eval_json("--model", CONTRACT, "--goldens", tmp_path / "g.jsonl", "--runs", tmp_path / "runs")
    (case,) = report["cases"]
    assert case["criteria"]["accuracy"]["verdict"] == "pass"
    assert case["overall"]["verdict"] == "fail" and "violated must_not[1]" in case["overall"]["reason"]
    assert case["overall"]["reason"].startswith("passed weight 1 (accuracy) > threshold 0; contract password-reset-v1")
    assert done.returncode == 1


def with_retrieval(folder: Path) -> Path:
    """The example's runs, each with seed 000's retrieval evidence beside its messages (the allowed source selected,
    its claim grounded in it): what the contract's grounding needs to be judged."""
    folder.mkdir()
    for path in sorted(RUNS.glob("*.json")):
        messages = json.loads(path.read_text(encoding="utf-8"))
        (folder / path.name).write_text(json.dumps({
            "messages": messages,
            "retrieved": [{"document_id": "account-recovery-v3", "approved": True, "status": "active", "score": 0.91}],
            "selected_source": "account-recovery-v3",
            "claims": [{"text": "重置链接会发送到注册邮箱", "grounded_in": "account-recovery-v3"}]},
            ensure_ascii=False), encoding="utf-8")
    return folder


def test_an_llm_judge_decides_the_items_and_a_passing_answer_passes(tmp_path):
    runs = with_retrieval(tmp_path / "runs")
    with ChatServer(lambda n, body, headers: verdict_reply("pass", "shown")) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path)}
        done, report = eval_json("--model", CONTRACT, "--goldens", CASES, "--runs", runs, "--judge",
                                 "openai:judge-model", "--criteria", "accuracy=0,safety=1", env=env)
        # the same answers without retrieval evidence: the contract's grounding is not judged, so never green
        bare, unseen = eval_json("--model", CONTRACT, "--goldens", CASES, "--runs", RUNS, "--judge",
                                 "openai:judge-model", "--criteria", "accuracy=0,safety=1", env=env)
    assert bare.returncode == 1 and all("records no retrieval evidence" in f for f in unseen["gate"]["failures"])
    assert all(c["overall"]["verdict"] == "pass" for c in unseen["cases"])
    for case in report["cases"]:  # every item and the soft rubric decided by the LLM judge
        assert case["contract"]["hard_gate_passed"] and case["overall"]["verdict"] == "pass", case["overall"]
        assert {i["judge"] for i in case["contract"]["items"]} == {"openai:judge-model"}
        # accuracy is disabled in the configuration, so the soft rubric's accuracy is reported, not gating; with no
        # expected answer the LLM judge is not asked about it
        accuracy = case["criteria"]["accuracy"]
        assert (accuracy["gating"], accuracy["verdict"]) == (False, "not_judged")
        assert case["criteria"]["relevance"] == {"verdict": "pass", "reason": "shown", "judge": "openai:judge-model",
                                                 "judge_version": "llm-judge-1", "gating": False}
    assert all(case["model"]["verdict"] == "pass" for case in report["cases"])  # the runs on the contract too
    assert done.returncode == 0, done.stdout
    keys = {json.loads(r["body"]["messages"][1]["content"].split("BEGIN DATA\n")[1].split("\nEND DATA")[0])
            ["criterion"] for r in server.requests}
    assert keys == {"must_have", "must_not", "relevance", "completeness", "clarity", "helpfulness"}
