"""The LLM judge's API key never leaves for anywhere but the server (issue 34, item 2): a key planted in the
configuration file, the environment and the server's own replies is looked for in every output of `mbt eval` (text,
JSON, Excel, --show-prompt), of `mbt judge calibrate` and `mbt judge sensitivity`, in stderr, in every log record
at DEBUG (mbt's, the openai client's, its HTTP library's), in error messages about the settings, in every byte of the
verdict cache's files, and in the result store (every table, the LLM judges' usage among them) and its views."""

from __future__ import annotations

import json
import logging
import sqlite3
import zipfile
from pathlib import Path

from tests.chat_server import ChatServer, Reply, completion
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "models" / "answers" / "goldens"
RUNS = ROOT / "models" / "answers" / "runs"
LABELS = ROOT / "models" / "answers" / "labels.jsonl"
PLANTED = "sk-PLANTED-7f3a9c1e5b2d4680"


def echoing(n, body, headers):
    """A server that repeats the request's Authorization header back: in an error, in a verdict's reason."""
    said = headers.get("authorization", "")
    content = body["messages"][1]["content"]
    if "Refunds" in content:
        return Reply(401, {"error": {"message": f"invalid key: {said}"}})
    return completion(json.dumps({"verdict": "fail" if n % 2 else "pass", "reason": f"checked with {said}"}))


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_the_planted_key_is_in_no_output_log_message_or_cache_file(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)  # every logger, every level
    out = tmp_path / "out"
    out.mkdir()
    outputs: list[str] = []
    with ChatServer(echoing) as server:
        (tmp_path / "mbt.yaml").write_text(
            f"goldens: {GOLDENS}\nruns: {RUNS}\njudge: openai:judge-model\ncriteria: accuracy=1,safety=1\n"
            f"llm: {{base_url: '{server.base_url}', api_key: {PLANTED}, retries: 1, cache: cache/v.sqlite3}}\n",
            encoding="utf-8")
        env = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}
        runs = [
            ("eval", "--format", "text", "--format", f"json:{out / 'eval.json'}",
             "--format", f"xlsx:{out / 'eval.xlsx'}"),
            ("eval", "--retry-errors"),
            ("eval", "--show-prompt", "accuracy"),
            ("judge", "calibrate", "--labels", LABELS),
            ("judge", "calibrate", "--labels", LABELS, "--format", "json"),
            ("judge", "sensitivity", "--goldens", GOLDENS, "--format", "json"),
            # the result store: each LLM judge's usage and the budget kept with the set, and every view of them
            ("eval", "--save", "qna", "--max-requests", "50", "--store", "store/results.db"),
            ("results", "show", "qna", "--store", "store/results.db"),
            ("results", "show", "qna", "--format", "json", "--store", "store/results.db"),
            ("results", "export", "qna", "--store", "store/results.db"),
            ("results", "compare", "qna", "qna", "--store", "store/results.db"),
        ]
        for args in runs:
            done = run_mbt(*args, cwd=tmp_path, env=env)
            assert done.returncode in (0, 1), (args, done.stderr)
            outputs += [done.stdout, done.stderr]
        assert server.requests and all(r["headers"]["authorization"] == f"Bearer {PLANTED}" for r in server.requests)
    report = json.loads((out / "eval.json").read_text(encoding="utf-8"))
    reasons = [c["criteria"][k]["reason"] for c in report["cases"] for k in c["criteria"]]
    assert any("invalid key: Bearer ***" in r for r in reasons)  # the server's echo, cleaned
    assert any("checked with Bearer ***" in r for r in reasons)
    outputs.append((out / "eval.json").read_text(encoding="utf-8"))
    with zipfile.ZipFile(out / "eval.xlsx") as book:
        outputs += [book.read(name).decode("utf-8", "replace") for name in book.namelist()]
    outputs += [record.getMessage() for record in caplog.records]
    assert caplog.records  # the loggers did speak
    cache_files = files_under(tmp_path / "cache")
    assert cache_files
    store_files = files_under(tmp_path / "store")
    with sqlite3.connect(tmp_path / "store" / "results.db") as db:  # the usage was stored: the test looks at it
        assert db.execute("SELECT requests FROM judge_usage").fetchall()
        outputs += [json.dumps(db.execute(f"SELECT * FROM {table}").fetchall())  # noqa: S608 - the store's tables
                    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()]
    for text in outputs:
        assert PLANTED not in text
    for path in cache_files + store_files:
        assert PLANTED.encode() not in path.read_bytes(), path


def test_no_message_about_the_settings_repeats_the_key(tmp_path):
    args = ("eval", "--goldens", GOLDENS, "--runs", RUNS)
    (tmp_path / "mbt.yaml").write_text(f"llm: {{api_key: {PLANTED}, timeout: soon}}\n", encoding="utf-8")
    done = run_mbt(*args, cwd=tmp_path)
    assert done.returncode == 2 and "`timeout` is a number of seconds" in done.stderr
    assert PLANTED not in done.stderr + done.stdout
    (tmp_path / "mbt.yaml").write_text(f"llm: {{api_key: [{PLANTED}]}}\n", encoding="utf-8")
    done = run_mbt(*args, cwd=tmp_path)
    assert done.returncode == 2 and "`api_key` is a text" in done.stderr and PLANTED not in done.stderr
    (tmp_path / "mbt.yaml").unlink()
    for option in (f"api_key={PLANTED}", f"api_key:{PLANTED}", f"api_key {PLANTED}"):
        done = run_mbt(*args, "--llm", option, cwd=tmp_path)
        assert done.returncode == 2 and PLANTED not in done.stderr + done.stdout, option
    assert "never given on the command line" in run_mbt(*args, "--llm", f"api_key={PLANTED}", cwd=tmp_path).stderr
