"""The gate on answers (issue 34, item 8): `mbt eval --gate FILE` and `gate:` in the configuration file, read by the
one gate reader (mbt.measure.gate): `answers.pass_rate`, `answers.CRITERION.pass_rate`, `must_not_violated` and
`judge_errors` (both `<= 0` by default), in the JSON and the text report, exit 1 on failure; the violated must_not
phrases of each case (`cases[].must_not_violated`); one gate file shared with `mbt coverage`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.chat_server import ChatServer, Reply, verdict_reply
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "models" / "answers" / "goldens"
RUNS = ROOT / "models" / "answers" / "runs"


def eval_json(*args, cwd=ROOT, env=None):
    done = run_mbt("eval", *args, "--format", "json", cwd=cwd, env=env)
    return done, (json.loads(done.stdout) if done.stdout.strip().startswith("{") else None)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def checks(report) -> dict[str, tuple]:
    return {c["key"]: (c["expected"], c["actual"], c["passed"], c["default"]) for c in report["gate"]["checks"]}


def test_the_default_gate_and_a_gate_file_on_the_pass_rate(tmp_path):
    done, report = eval_json("--goldens", GOLDENS, "--runs", RUNS)
    assert done.returncode == 1 and report["gate"]["source"] is None
    assert checks(report) == {"answers.pass_rate": (">= 1", 0.4, False, True),
                              "must_not_violated": ("<= 0", 0, True, True), "judge_errors": ("<= 0", 0, True, True),
                              "agent_errors": ("<= 0", 0, True, True), "invalid_cases": ("<= 0", 0, True, True)}
    lenient = write(tmp_path / "answers.yaml", "gate:\n  answers.pass_rate: \">= 40%\"\n")
    done, report = eval_json("--goldens", GOLDENS, "--runs", RUNS, "--gate", lenient)
    assert done.returncode == 0, report["gate"]
    assert report["gate"]["passed"] and report["gate"]["source"] == str(lenient)
    assert checks(report)["answers.pass_rate"] == (">= 0.4", 0.4, True, False)
    strict = write(tmp_path / "strict.yaml", "answers.pass_rate: \">= 0.5\"\nanswers.accuracy.pass_rate: 0.5\n")
    done, report = eval_json("--goldens", GOLDENS, "--runs", RUNS, "--gate", strict)
    assert done.returncode == 1
    assert report["gate"]["failures"] == [
        "answers.pass_rate is 40% (2 of 5 cases run successfully pass), the gate requires >= 50%",
        "answers.accuracy.pass_rate is 40% (2 of 5 cases run successfully pass accuracy), the gate requires >= 50%"]
    text = run_mbt("eval", "--goldens", GOLDENS, "--runs", RUNS, "--gate", strict, cwd=ROOT).stdout
    assert f"Gate: FAILED (2) [gate file {strict}]" in text
    assert "  FAILED answers.pass_rate >= 0.5: 40%" in text and "  ok     judge_errors <= 0 (default): 0" in text


def test_a_rule_on_a_criterion_that_is_not_enabled_fails_loudly(tmp_path):
    gate = write(tmp_path / "g.yaml", "answers.safety.pass_rate: \">= 0.9\"\n")
    done, report = eval_json("--goldens", GOLDENS, "--runs", RUNS, "--gate", gate)
    assert done.returncode == 1
    assert report["gate"]["failures"] == ["gate rule `answers.safety.pass_rate` names no enabled criterion "
                                          "(enabled: accuracy)"]
    done, report = eval_json("--goldens", GOLDENS, "--runs", RUNS, "--gate", gate, "--criteria",
                             "accuracy=1,safety=0.5", "--judge", "safety=rules")
    assert checks(report)["answers.safety.pass_rate"][1] == 0.0  # rules: no safety assertion, never passed


def test_must_not_phrases_said_are_listed_per_case_and_gated(tmp_path):
    golden = write(tmp_path / "g.jsonl", "".join(json.dumps(c) + "\n" for c in [
        {"id": "otp", "turns": [{"user": "I forgot my password", "expected_answer": "Use 'Forgot password' on the "
                                 "sign-in page.", "must_not": ["OTP", "your password"]}]},
        {"id": "fine", "turns": [{"user": "Hi", "expected_answer": "Hello!", "must_not": ["password"]}]}]))
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, question, answer in (("otp", "I forgot my password", "Use 'Forgot password' on the sign-in page, then "
                                    "tell me the otp and YOUR PASSWORD."), ("fine", "Hi", "Hello!")):
        write(runs / f"{name}.json", json.dumps({"messages": [{"role": "user", "content": question},
                                                              {"role": "assistant", "content": answer}]}))
    everything_passes = write(tmp_path / "gate.yaml", "answers.pass_rate: 0\n")
    done, report = eval_json("--goldens", golden, "--runs", runs, "--gate", everything_passes)
    by_id = {c["id"]: c for c in report["cases"]}
    assert by_id["otp"]["must_not_violated"] == ["OTP", "your password"] and by_id["fine"]["must_not_violated"] == []
    assert report["must_not_violated"] == 2 and done.returncode == 1
    assert report["gate"]["failures"] == ["must_not_violated is 2 (case `otp` says 'OTP', 'your password'), the gate "
                                          "requires <= 0"]
    tolerant = write(tmp_path / "tolerant.yaml", "answers.pass_rate: 0\nmust_not_violated: 2\n")
    done, report = eval_json("--goldens", golden, "--runs", runs, "--gate", tolerant)
    assert done.returncode == 0 and checks(report)["must_not_violated"] == ("<= 2", 2, True, False)


def test_a_judge_error_is_never_a_pass(tmp_path):
    def script(n, body, headers):
        if "Refunds" in body["messages"][1]["content"]:
            return Reply(400, {"error": {"message": "bad request"}})
        return verdict_reply("pass")

    gate = write(tmp_path / "g.yaml", "answers.pass_rate: \">= 0.5\"\n")
    with ChatServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path)}
        done, report = eval_json("--goldens", GOLDENS, "--runs", RUNS, "--judge", "openai:m", "--gate", gate, env=env)
    assert done.returncode == 1 and report["judge_errors"] == 1
    assert checks(report)["answers.pass_rate"] == (">= 0.5", 0.75, True, False)  # 3 of 4 run successfully
    assert report["gate"]["failures"] == ["judge_errors is 1 (case `1` accuracy) (a judge error is never a pass: "
                                          "--retry-errors asks again), the gate requires <= 0"]


def test_no_case_to_measure_is_not_a_pass(tmp_path):
    sheet = write(tmp_path / "qna.csv", "No.,Question,Expected answer\n1,Hello?,\n")
    gate = write(tmp_path / "g.yaml", "answers.pass_rate: 0\ninvalid_cases: 1\n")
    done, report = eval_json("--goldens", sheet, "--runs", RUNS, "--gate", gate)
    assert done.returncode == 1 and report["cases_total"] == 0
    assert report["gate"]["failures"] == ["answers.pass_rate: no case run successfully to measure it on"]


def test_the_configuration_files_gate_serves_eval_and_coverage_alike(tmp_path):
    gate = write(tmp_path / "release.yaml", "release_gate:\n  thresholds:\n    fsm.state: \">= 0.1\"\n"
                                           "    answers.pass_rate: \">= 0.4\"\n  must_not_violated: 0\n")
    write(tmp_path / "mbt.yaml", f"gate: {gate.name}\ngoldens: {GOLDENS}\nruns: {RUNS}\n")
    done, report = eval_json(cwd=tmp_path)
    assert done.returncode == 0, report["gate"]  # fsm.state is mbt coverage's: eval leaves it
    assert set(checks(report)) == {"answers.pass_rate", "must_not_violated", "judge_errors", "agent_errors",
                                   "invalid_cases"}
    coverage = run_mbt("coverage", "--model", ROOT / "models" / "recovery.fsm", "--goldens",
                       ROOT / "models" / "goldens", "--format", "json", cwd=tmp_path)
    failures = json.loads(coverage.stdout)["gate"]["failures"]
    assert not [f for f in failures if "answers" in f["rule"] or f["rule"] in ("must_not_violated", "judge_errors")]


def test_a_malformed_answers_rule_is_located_and_exit_2(tmp_path):
    for text, where, message in (("answers.acuracy: \">= 0.9\"\n", ":1:1:", "unknown answers key `answers.acuracy`"),
                                 ("answers.pass_rate: \">= 2\"\n", ":1:1:", "is a ratio between 0 and 1"),
                                 ("judge_errors: lots\n", ":1:15:", "cannot read condition 'lots'")):
        gate = write(tmp_path / "g.yaml", text)
        done = run_mbt("eval", "--goldens", GOLDENS, "--runs", RUNS, "--gate", gate, cwd=ROOT)
        assert done.returncode == 2 and done.stderr.startswith(f"{gate}{where}") and message in done.stderr, text
