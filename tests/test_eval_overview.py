"""Seed 001's overview of `mbt eval` (issue 34, item 8): cases run successfully and with errors, and the pass count
and rate overall and per criterion *over the cases run successfully* ("số lượng và tỷ lệ case đạt/tổng số case thành
công của Tổng thể và từng tiêu chí"), in the JSON and the text report."""

from __future__ import annotations

import json
from pathlib import Path

from tests.chat_server import ChatServer, Reply, verdict_reply
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "models" / "answers" / "goldens"
RUNS = ROOT / "models" / "answers" / "runs"


def test_the_pass_rate_counts_the_cases_run_successfully(tmp_path):
    def script(n, body, headers):  # case 1's answer breaks the judge; the others pass
        if "Refunds" in body["messages"][1]["content"]:
            return Reply(400, {"error": {"message": "bad request"}})
        return verdict_reply("pass")

    with ChatServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path)}
        args = ("eval", "--goldens", GOLDENS, "--runs", RUNS, "--judge", "openai:judge-model")
        done = run_mbt(*args, "--format", "json", cwd=ROOT, env=env)
        text = run_mbt(*args, cwd=ROOT, env=env).stdout
    report = json.loads(done.stdout)
    # 5 cases: case 1 in error, case 5 unanswered (not judged, but run without error), 2, 3 and 4 pass
    assert (report["cases_total"], report["cases_ok"], report["cases_with_errors"]) == (5, 4, 1)
    assert report["pass_rate"] == 75.0  # 3 of the 4 cases run successfully, not 3 of 5
    (accuracy,) = report["criteria"]
    assert accuracy["pass_rate"] == 75.0 and accuracy["errors"] == 1
    assert "run successfully: 4   with errors: 1" in text
    assert "overall: 3 pass, 0 fail, 1 not judged, 1 error; pass rate 75% (3 of 4 run successfully)" in text
    assert "accuracy (weight 1): 3 pass, 0 fail, 1 not judged, 1 error; pass rate 75% (3 of 4 run successfully)" in text
