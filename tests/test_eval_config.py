"""`mbt eval`'s settings from the configuration file and the command line (issue 34, items 1-3): custom criteria
with a rubric, a judge per criterion (`judges:` / `--judge KEY=NAME`), the LLM judge's options (`llm:` / `--llm`)
with their precedence, and the API key kept out of every output and the cache."""

from __future__ import annotations

import json
from pathlib import Path

from tests.chat_server import ChatServer, verdict_reply
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "models" / "answers" / "goldens"
RUNS = ROOT / "models" / "answers" / "runs"


# The variables the LLM judge reads, empty (as unset) unless a test sets them: the machine's own never leak in.
BLANK = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}


def eval_json(*args, cwd, env=None):
    done = run_mbt("eval", *args, "--format", "json", cwd=cwd, env={**BLANK, **(env or {})})
    return done, (json.loads(done.stdout) if done.stdout.strip().startswith("{") else None)


def test_a_custom_criterion_takes_its_rubric_from_the_configuration_file(tmp_path):
    (tmp_path / "mbt.yaml").write_text(
        f"goldens: {GOLDENS}\nruns: {RUNS}\njudge: rules\n"
        "criteria:\n  accuracy: 1\n  politeness: {weight: 1, rubric: \"The answer thanks the customer.\"}\n",
        encoding="utf-8")
    done, report = eval_json(cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert [(c["key"], c["weight"]) for c in report["criteria"]] == [("accuracy", "1"), ("politeness", "1")]
    # the rule judge has no assertion for politeness: not judged, never passed
    assert {c["criteria"]["politeness"]["verdict"] for c in report["cases"]} == {"not_judged"}


def _asked(server) -> list[str]:
    return [r["body"]["messages"][1]["content"].split("\n", 1)[0] for r in server.requests]


def test_a_judge_per_criterion_from_the_file_and_the_command_line(tmp_path):
    (tmp_path / "mbt.yaml").write_text(
        f"goldens: {GOLDENS}\nruns: {RUNS}\ncriteria: accuracy=1,safety=1\nthreshold: 1\n"
        "judges: {safety: \"openai:judge-model\"}\n", encoding="utf-8")
    with ChatServer(lambda n, body, headers: verdict_reply("pass", "nothing unsafe")) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path)}
        done, report = eval_json(cwd=tmp_path, env=env)
        assert done.returncode == 1, done.stderr
        # only safety goes to the LLM judge, once per answered case; accuracy stays with the default judge
        assert _asked(server) == ["Criterion: safety"] * 4
        assert {c["key"]: c["judge"] for c in report["criteria"]} == {"accuracy": "embedded",
                                                                      "safety": "openai:judge-model"}
        by_id = {c["id"]: c for c in report["cases"]}
        assert by_id["2"]["criteria"]["safety"]["judge"] == "openai:judge-model"
        assert by_id["1"]["criteria"]["accuracy"]["judge"] == "embedded"
        sent = len(server.requests)
        # --judge KEY=NAME replaces the file's entry for that key; the plain --judge replaces the default
        done, report = eval_json("--judge", "safety=rules", "--judge", "openai:judge-model", cwd=tmp_path, env=env)
        assert {c["key"]: c["judge"] for c in report["criteria"]} == {"accuracy": "openai:judge-model",
                                                                      "safety": "rules"}
        assert _asked(server)[sent:] == ["Criterion: accuracy"] * 4


def test_a_bad_judge_choice_is_one_message_and_exit_2(tmp_path):
    args = ("eval", "--goldens", GOLDENS, "--runs", RUNS)
    done = run_mbt(*args, "--judge", "safty=rules", cwd=tmp_path)
    assert done.returncode == 2 and "`safty`" in done.stderr and "did you mean `safety`" in done.stderr
    done = run_mbt(*args, "--judge", "embedded", "--judge", "rules", cwd=tmp_path)
    assert done.returncode == 2 and "two default judges" in done.stderr
    done = run_mbt(*args, "--judge", "accuracy=", cwd=tmp_path)
    assert done.returncode == 2 and "name the judge after `=`" in done.stderr
    (tmp_path / "mbt.yaml").write_text("judges: [embedded]\n", encoding="utf-8")
    done = run_mbt(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("mbt.yaml:1:1: error: `judges`: expected a mapping")


def test_the_llm_judge_takes_its_settings_from_the_configuration_file(tmp_path):
    def script(n, body, headers):
        if "Refunds" in body["messages"][1]["content"]:
            return verdict_reply("pass")
        return verdict_reply("fail", "scripted")

    with ChatServer(script) as server:
        (tmp_path / "mbt.yaml").write_text(
            f"goldens: {GOLDENS}\nruns: {RUNS}\njudge: openai:judge-model\n"
            f"llm:\n  base_url: {server.base_url}\n  api_key_env: MY_JUDGE_KEY\n  timeout: 5\n  concurrency: 1\n"
            "  retries: 0\n  cache: cache/verdicts.sqlite3\n", encoding="utf-8")
        env = {"MY_JUDGE_KEY": "sk-from-my-variable", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
        done, report = eval_json(cwd=tmp_path, env=env)
        assert done.returncode == 1, done.stderr
        assert len(server.requests) == 4 and server.most_in_flight == 1  # concurrency 1
        assert {r["headers"]["authorization"] for r in server.requests} == {"Bearer sk-from-my-variable"}
        assert (tmp_path / "cache" / "verdicts.sqlite3").is_file()  # the cache file the settings name ...
        assert not (tmp_path / "xdg").exists()  # ... not mbt's cache folder
        eval_json(cwd=tmp_path, env=env)
        assert len(server.requests) == 4  # an unchanged re-run: every verdict from that cache
        eval_json("--llm", "cache=false", cwd=tmp_path, env=env)
        assert len(server.requests) == 8  # no cache: asked again


def test_retries_from_the_file_and_the_command_line(tmp_path):
    from tests.chat_server import Reply

    with ChatServer(lambda n, body, headers: Reply(500, {"error": {"message": "model crashed"}})) as server:
        (tmp_path / "mbt.yaml").write_text(
            f"goldens: {GOLDENS}\nruns: {RUNS}\njudge: openai:judge-model\n"
            f"llm: {{base_url: '{server.base_url}', retries: 0, cache: false}}\n", encoding="utf-8")
        done, report = eval_json(cwd=tmp_path, env={"OPENAI_API_KEY": "sk-test"})
        assert len(server.requests) == 4  # retries 0: one attempt per answered case
        reason = {c["id"]: c for c in report["cases"]}["1"]["criteria"]["accuracy"]["reason"]
        assert reason == "HTTP 500: model crashed after 1 attempt"
        eval_json("--llm", "retries=1", cwd=tmp_path, env={"OPENAI_API_KEY": "sk-test"})
        assert len(server.requests) == 4 + 8  # the command line wins: two attempts each


def test_the_command_line_wins_over_the_environment_which_wins_over_the_file(tmp_path):
    dead = "http://127.0.0.1:9/v1"  # nothing listens on the discard port: a request there fails at once
    with ChatServer(lambda n, body, headers: verdict_reply("pass")) as server:
        (tmp_path / "mbt.yaml").write_text(
            f"goldens: {GOLDENS}\nruns: {RUNS}\njudge: openai:judge-model\n"
            f"llm: {{base_url: '{dead}', api_key: sk-from-the-file, retries: 0, cache: false}}\n", encoding="utf-8")
        eval_json(cwd=tmp_path, env={"OPENAI_BASE_URL": server.base_url})  # the environment's server wins
        assert len(server.requests) == 4
        assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-from-the-file"  # no variable: the file
        eval_json(cwd=tmp_path, env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-from-env"})
        assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-from-env"  # the variable wins
        eval_json("--llm", "api_key_env=OTHER_KEY", cwd=tmp_path,
                  env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-from-env", "OTHER_KEY": "sk-other"})
        assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-other"  # the variable named wins
        count = len(server.requests)
        eval_json("--llm", f"base_url={server.base_url}", cwd=tmp_path, env={"OPENAI_BASE_URL": dead})
        assert len(server.requests) == count + 4  # the command line's server wins over the environment's


def test_bad_llm_settings_are_located_and_exit_2(tmp_path):
    args = ("eval", "--goldens", GOLDENS, "--runs", RUNS)
    (tmp_path / "mbt.yaml").write_text("judge: rules\nllm:\n  timout: 3\n", encoding="utf-8")
    done = run_mbt(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("mbt.yaml:2:1: error: `llm`: unknown LLM setting `timout`")
    assert "did you mean `timeout`" in done.stderr
    (tmp_path / "mbt.yaml").unlink()
    for option, message in (("concurrency=0", "`concurrency` is a whole number of at least 1"),
                            ("base_url=localhost:8000", "`base_url` is an http:// or https:// address"),
                            ("timeout", "--llm takes KEY=VALUE")):
        done = run_mbt(*args, "--llm", option, cwd=tmp_path)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, option
    done = run_mbt(*args, "--judge", "openai:m", "--llm", "api_key_env=UNSET_JUDGE_KEY", cwd=tmp_path)
    assert done.returncode == 2 and "UNSET_JUDGE_KEY (named by api_key_env) is not set" in done.stderr
    done = run_mbt(*args, "--llm", "api_key_env=UNSET_JUDGE_KEY", "--format", "json", cwd=tmp_path)
    assert done.returncode == 1  # the embedded judge needs no key: the variable is never read


def test_the_llm_judges_cost_and_cache_hits_are_in_every_report_and_the_budget_stops_cleanly(tmp_path):
    from tests.chat_server import completion

    def script(n, body, headers):
        return completion('{"verdict": "pass", "reason": "ok"}', prompt_tokens=1000, completion_tokens=10)

    with ChatServer(script) as server:
        (tmp_path / "mbt.yaml").write_text(
            f"goldens: {GOLDENS}\nruns: {RUNS}\njudge: openai:judge-model\n"
            f"llm:\n  base_url: {server.base_url}\n  concurrency: 1\n  cache: cache.sqlite3\n"
            "  prices: {judge-model: {input_per_mtok: 2.5, output_per_mtok: 10}}\n", encoding="utf-8")
        env = {"OPENAI_API_KEY": "sk-test"}
        done, report = eval_json("--max-requests", "3", cwd=tmp_path, env=env)
        assert done.returncode == 1 and len(server.requests) == 3
        [usage] = report["judge_usage"]
        assert (usage["asked"], usage["requests"], usage["prompt_tokens"], usage["completion_tokens"]) == (3, 3, 3000, 30)
        assert usage["cost"] == 3 * (1000 * 2.5 + 10 * 10) / 1e6 and usage["cache_hit_rate"] == 0
        assert usage["not_asked"] == 1 and "at $2.5 / $10 per million" in usage["cost_note"]
        assert report["budget"] == {"max_cost": None, "max_requests": 3, "requests": 3,
                                    "reached": "the budget was reached: 3 requests, --max-requests 3"}
        verdicts = [c["criteria"]["accuracy"] for c in report["cases"] if c["run"]]
        assert [v["verdict"] for v in verdicts].count("not_judged") == 1 and report["passed"] == 3
        assert "budget was reached" in next(v["reason"] for v in verdicts if v["verdict"] == "not_judged")
        text = run_mbt("eval", cwd=tmp_path, env={**BLANK, **env}).stdout  # again: 3 from the cache, 1 asked
        assert "openai:judge-model: 1 verdict(s) asked in 1 request(s) (0 retried), 3 from the cache (hit rate " \
               "75.0%); 1000 input + 10 output tokens; $0.0026 at $2.5 / $10 per million" in text
        assert len(server.requests) == 4


def test_max_cost_without_a_price_and_bad_prices_exit_2(tmp_path):
    args = ("eval", "--goldens", GOLDENS, "--runs", RUNS, "--judge", "openai:m")
    done = run_mbt(*args, "--max-cost", "1", cwd=tmp_path, env={**BLANK, "OPENAI_API_KEY": "k"})
    assert done.returncode == 2 and "--max-cost needs the price of model `m`" in done.stderr
    (tmp_path / "mbt.yaml").write_text("llm:\n  prices: {m: {input_per_mtok: 1}}\n", encoding="utf-8")
    done = run_mbt(*args, cwd=tmp_path, env={**BLANK, "OPENAI_API_KEY": "k"})
    assert done.returncode == 2 and done.stderr.startswith("mbt.yaml:1:1: error: `llm`: the price of `m` is")
    (tmp_path / "mbt.yaml").unlink()
    done = run_mbt(*args, "--max-requests", "0", cwd=tmp_path)
    assert done.returncode == 2 and "--max-requests" in done.stderr
