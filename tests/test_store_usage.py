"""What the LLM judges cost, in every report they serve and in the result store (issue 37, item 5): `mbt eval --save`
keeps each judge's usage and the budget with the set, on SQLite and on PostgreSQL; `mbt results show`, `export`,
`compare` and `site` show them (a set without an LLM judge is `not measured`, never $0); a retry adds its cost as the
set's next run; a store written before the usage had tables of its own opens with its sets' usage; the Excel eval
report, `mbt runs --judge openai:MODEL`, `mbt judge calibrate` and `mbt judge sensitivity` carry the same figures.
The judge is asked over HTTP: a scripted chat-completions server on localhost whose replies report their tokens."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import openpyxl
from sqlalchemy import create_engine, select

from mbt.store.db import Store
from mbt.store.schema import CURRENT, judge_budgets, judge_usage
from mbt.store.url import parse
from tests.chat_server import ChatServer, Reply, completion
from tests.cli_runner import run_mbt
from tests.data.store.make_v2 import V2_FILE, write_v2

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = str(ROOT / "models" / "answers" / "goldens")
RUNS = str(ROOT / "models" / "answers" / "runs")
ENV = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": "sk-test"}
PRICE = (2.5, 10.0)  # dollars per million input / output tokens: the configuration file's price of judge-model


def _cost(prompt_tokens: int, completion_tokens: int) -> float:
    return (prompt_tokens * PRICE[0] + completion_tokens * PRICE[1]) / 1_000_000


def _config(folder: Path, server: ChatServer, retries: int = 3) -> None:
    """The LLM judge's settings: the scripted server, one request at a time, no cache, judge-model priced."""
    (folder / "mbt.yaml").write_text(
        f"llm:\n  base_url: {server.base_url}\n  concurrency: 1\n  cache: false\n  retries: {retries}\n"
        f"  prices: {{judge-model: {{input_per_mtok: {PRICE[0]}, output_per_mtok: {PRICE[1]}}}}}\n", encoding="utf-8")


def _replying(tokens: list[tuple[int, int]]):
    """A script whose replies pass and report the tokens `tokens[0]` says (a test changes it between runs)."""
    def script(n, body, headers):
        return completion('{"verdict": "pass", "reason": "scripted"}', *tokens[0])
    return script


def _eval(folder: Path, *args: str) -> dict:
    done = run_mbt("eval", "--goldens", GOLDENS, "--runs", RUNS, *args, "--format", "json", cwd=folder, env=ENV)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _shown(url: str, name: str) -> dict:
    done = run_mbt("results", "show", name, "--store", url, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_eval_save_keeps_each_judges_usage_and_the_budget_and_every_results_view_shows_them(store_url, tmp_path):
    with ChatServer(_replying([(1000, 10)])) as server:
        _config(tmp_path, server)
        report = _eval(tmp_path, "--judge", "openai:judge-model", "--max-requests", "3", "--save", "qna",
                       "--store", store_url)
    [usage] = report["judge_usage"]
    assert (usage["requests"], usage["prompt_tokens"], usage["completion_tokens"]) == (3, 3000, 30)
    assert usage["cost"] == _cost(3000, 30) and usage["not_asked"] == 1
    # the store's own rows: one per judge of the run, and the run's budget
    with Store(parse(store_url, "test")) as store, store.read() as conn:
        rows = [dict(r) for r in conn.execute(select(judge_usage)).mappings()]
        budgets = [dict(r) for r in conn.execute(select(judge_budgets)).mappings()]
    assert [(r["run"], r["judge"], r["asked"], r["requests"], r["prompt_tokens"], r["completion_tokens"], r["cost"],
             r["not_asked"]) for r in rows] == [(1, "openai:judge-model", 3, 3, 3000, 30, usage["cost"], 1)]
    assert [(b["run"], b["max_cost"], b["max_requests"], b["requests"], b["reached"]) for b in budgets] == [
        (1, None, 3, 3, "the budget was reached: 3 requests, --max-requests 3")]
    # results show (JSON): the eval report's figures, as they were
    shown = _shown(store_url, "qna")["usage"]
    assert shown["judges"] == report["judge_usage"] and shown["runs"] == 1
    assert shown["budgets"] == [{**report["budget"], "run": 1}]
    assert (shown["totals"]["requests"], shown["totals"]["cost"], shown["totals"]["cache_hit_rate"]) == (
        3, usage["cost"], 0.0)
    # results show (text)
    text = run_mbt("results", "show", "qna", "--store", store_url).stdout
    assert ("  LLM judges:\n    openai:judge-model: 3 verdict(s) asked in 3 request(s) (0 retried), 0 from the cache "
            "(hit rate 0.0%); 3000 input + 30 output tokens; $0.0078 at $2.5 / $10 per million") in text
    assert "    budget (--max-requests 3): the budget was reached: 3 requests, --max-requests 3\n" in text
    # results export: JSON (the usage beside the summary, which no longer repeats it) and Excel
    exported = tmp_path / "qna.json"
    assert run_mbt("results", "export", "qna", "-o", str(exported), "--store", store_url).returncode == 0
    doc = json.loads(exported.read_text(encoding="utf-8"))
    assert doc["usage"] == shown and "judge_usage" not in doc["summary"] and "budget" not in doc["summary"]
    workbook = tmp_path / "qna.xlsx"
    assert run_mbt("results", "export", "qna", "-o", str(workbook), "--store", store_url).returncode == 0
    rows_shown = list(openpyxl.load_workbook(workbook)["Overview"].iter_rows(values_only=True))
    judge_row = next(r for r in rows_shown if r[0] == "openai:judge-model")
    assert judge_row[:9] == ("openai:judge-model", 3, 3, 0, 0, 0, 3000, 30, usage["cost"])
    assert next(r for r in rows_shown if r[0] == "Budget")[:3] == (
        "Budget", "--max-requests 3", "the budget was reached: 3 requests, --max-requests 3")
    # results site: the set's page
    site = tmp_path / "site"
    assert run_mbt("results", "site", str(site), "--store", store_url).returncode == 0
    (page,) = [p for p in site.glob("sets/*/index.html")]
    html = page.read_text(encoding="utf-8")
    assert "What the LLM judges cost" in html and "<td class=\"num\">$0.0078</td>" in html
    assert "Budget (--max-requests 3): the budget was reached: 3 requests, --max-requests 3." in html


def test_compare_shows_each_sets_totals_and_their_difference_and_never_takes_a_missing_cost_as_0(store_url,
                                                                                                   tmp_path):
    tokens = [(1000, 10)]
    with ChatServer(_replying(tokens)) as server:
        _config(tmp_path, server)
        first = _eval(tmp_path, "--judge", "openai:judge-model", "--save", "a", "--store", store_url)
        tokens[0] = (2000, 30)
        second = _eval(tmp_path, "--judge", "openai:judge-model", "--save", "b", "--store", store_url)
        unpriced = _eval(tmp_path, "--judge", "openai:other-model", "--save", "unpriced", "--store", store_url)
    _eval(tmp_path, "--save", "embedded", "--store", store_url)  # the embedded judge: no LLM judge, nothing to cost
    [a], [b], [u] = first["judge_usage"], second["judge_usage"], unpriced["judge_usage"]
    assert a["cost"] == _cost(4000, 40) and b["cost"] == _cost(8000, 120) and u["cost"] is None

    def compared(x: str, y: str) -> tuple[dict, str]:
        done = run_mbt("results", "compare", x, y, "--store", store_url, "--format", "json")
        assert done.returncode == 0, done.stderr
        return (json.loads(done.stdout)["usage"],
                run_mbt("results", "compare", x, y, "--store", store_url).stdout)

    deltas, text = compared("a", "b")
    found = {d["metric"]: (d["a"], d["b"], d["delta"]) for d in deltas}
    assert found == {"verdicts asked": (4, 4, 0), "requests": (4, 4, 0), "input tokens": (4000, 8000, 4000),
                     "output tokens": (40, 120, 80), "cost": (a["cost"], b["cost"], round(b["cost"] - a["cost"], 10))}
    assert "  cost: A $0.0104, B $0.0212; change +$0.0108\n" in text
    assert "  input tokens: A 4000, B 8000; change +4000\n" in text
    deltas, text = compared("b", "embedded")  # a set without an LLM judge: not measured, and so is the change
    assert all(d["b"] is None and d["delta"] is None for d in deltas)
    assert "  cost: A $0.0212, B not measured; change not measured\n" in text
    deltas, text = compared("a", "unpriced")  # a cost without a price: not measured; the requests are
    found = {d["metric"]: (d["a"], d["b"], d["delta"]) for d in deltas}
    assert found["cost"] == (a["cost"], None, None) and found["requests"] == (4, 4, 0)
    _, text = compared("embedded", "embedded")
    assert "LLM judges' cost: not measured in either set (neither holds an LLM judge's usage)" in text


def test_a_retry_adds_its_cost_to_the_set_as_its_next_run(store_url, tmp_path):
    failing = [True]

    def script(n, body, headers):  # while `failing`, every other request is a server error: those cases err
        if failing[0] and n % 2 == 0:
            return Reply(500, {"error": {"message": "scripted outage"}})
        return completion('{"verdict": "pass", "reason": "scripted"}', 1000, 10)

    with ChatServer(script) as server:
        _config(tmp_path, server, retries=0)
        first = _eval(tmp_path, "--judge", "openai:judge-model", "--save", "qna", "--store", store_url)
        assert first["errors"] == 2
        failing[0] = False
        retried = _eval(tmp_path, "--judge", "openai:judge-model", "--retry-errors", "qna", "--max-requests", "5",
                        "--store", store_url)
    [one], [two] = first["judge_usage"], retried["judge_usage"]
    assert (one["requests"], two["requests"]) == (4, 2)
    shown = _shown(store_url, "qna")
    assert shown["set"]["errors"] == 0 and shown["usage"]["runs"] == 2
    [judge] = shown["usage"]["judges"]
    assert (judge["asked"], judge["requests"], judge["prompt_tokens"], judge["completion_tokens"]) == (
        one["asked"] + two["asked"], one["requests"] + two["requests"], one["prompt_tokens"] + two["prompt_tokens"],
        one["completion_tokens"] + two["completion_tokens"])
    assert judge["cost"] == one["cost"] + two["cost"] == _cost(4000, 40)
    assert shown["usage"]["budgets"] == [{**retried["budget"], "run": 2}]  # the retry's budget, under its run
    text = run_mbt("results", "show", "qna", "--store", store_url).stdout
    assert "  LLM judges (over 2 runs: the first, then each resumed or retried one):\n" in text
    assert "    budget of run 2 (--max-requests 5): not reached, 2 request(s) sent\n" in text


def test_a_store_written_before_the_usage_tables_opens_with_its_sets_usage(store_url):
    if store_url.endswith(".db"):  # SQLite: the file mbt wrote at schema version 2, as it is in the repository
        shutil.copy(V2_FILE, store_url)
    else:
        engine = create_engine(parse(store_url, "test").url)
        with engine.begin() as conn:
            write_v2(conn)
        engine.dispose()
    with Store(parse(store_url, "test")) as store:
        assert store.migrated == (2, CURRENT) and CURRENT == 3
    # the LLM judge's usage and budget, as the set's summary kept them, are the set's run 1
    source = create_engine(f"sqlite:///{V2_FILE}")
    with source.connect() as conn:
        summary = json.loads(conn.exec_driver_sql("SELECT summary FROM result_sets WHERE name = 'qna-llm'").scalar_one())
    source.dispose()
    shown = _shown(store_url, "qna-llm")["usage"]
    assert shown["judges"] == summary["judge_usage"] and shown["judges"][0]["cost"] == _cost(3000, 30)
    assert shown["budgets"] == [{**summary["budget"], "run": 1}] and shown["runs"] == 1
    assert _shown(store_url, "qna-embedded")["usage"] is None  # judged by the embedded judge: not measured
    done = run_mbt("results", "compare", "qna-embedded", "qna-llm", "--store", store_url)
    assert "  cost: A not measured, B $0.0078; change not measured\n" in done.stdout
    with Store(parse(store_url, "test")) as store:
        assert store.migrated == (CURRENT, CURRENT)  # opened again: nothing more to migrate


def test_the_excel_eval_report_shows_each_llm_judges_totals_and_the_budget(tmp_path):
    with ChatServer(_replying([(1000, 10)])) as server:
        _config(tmp_path, server)
        book = tmp_path / "eval.xlsx"
        report = _eval(tmp_path, "--judge", "openai:judge-model", "--judge", "safety=openai:unpriced-model",
                       "--criteria", "accuracy=1,safety=1", "--max-requests", "6", "--format", f"xlsx:{book}")
    rows = list(openpyxl.load_workbook(book)["Overview"].iter_rows(values_only=True))
    header = next(n for n, r in enumerate(rows) if r[0] == "LLM judge")
    assert rows[header][:11] == ("LLM judge", "Verdicts asked", "Requests", "Retried", "From the cache",
                                 "Cache hit rate (%)", "Input tokens", "Output tokens", "Cost ($)", "Cost note",
                                 "Not asked (budget)")
    by_judge = {u["judge"]: u for u in report["judge_usage"]}
    for row in rows[header + 1:header + 3]:
        u = by_judge[row[0]]
        assert row[1:9] == (u["asked"], u["requests"], u["retries"], u["cache_hits"], 0,
                            u["prompt_tokens"], u["completion_tokens"], u["cost"] if u["cost"] is not None
                            else "not measured")
    assert by_judge["openai:unpriced-model"]["cost"] is None and by_judge["openai:judge-model"]["cost"] > 0
    budget = rows[header + 3]
    assert budget[:3] == ("Budget", "--max-requests 6", report["budget"]["reached"] or "not reached")


def test_mbt_runs_with_an_llm_judge_reports_and_stores_what_it_cost(store_url, tmp_path):
    # The orders model without the phrases of its `reveal_other_order` forbid: only the description is left, which
    # the answer judge decides on each assistant text (tests/test_sayings_runs.py).
    text = (ROOT / "models" / "orders.fsm").read_text(encoding="utf-8")
    shutil.copytree(ROOT / "models" / "docs", tmp_path / "docs")
    (tmp_path / "orders.fsm").write_text(text.replace(' matching "reveal", "透露"', ""), encoding="utf-8")
    transcript = str(ROOT / "models" / "runs" / "transcripts" / "chat-ORD-0031.json")
    args = ("runs", "--model", str(tmp_path / "orders.fsm"), "--runs", transcript, "--no-gate",
            "--judge", "openai:judge-model")
    with ChatServer(_replying([(500, 20)])) as server:
        _config(tmp_path, server)
        done = run_mbt(*args, "--format", "json", "--format", f"xlsx:{tmp_path / 'runs.xlsx'}",
                       "--format", f"markdown:{tmp_path / 'runs.md'}", "--save", "r", "--store", store_url,
                       cwd=tmp_path, env=ENV)
        asked = len(server.requests)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    [usage] = report["judge_usage"]
    assert asked > 0 and (usage["requests"], usage["prompt_tokens"], usage["completion_tokens"]) == (
        asked, 500 * asked, 20 * asked)
    assert usage["cost"] == _cost(500 * asked, 20 * asked) and "configuration file's price" in usage["cost_note"]
    assert _shown(store_url, "r")["usage"]["judges"] == report["judge_usage"]
    rows = list(openpyxl.load_workbook(tmp_path / "runs.xlsx")["Overview"].iter_rows(values_only=True))
    assert next(r for r in rows if r[0] == "openai:judge-model")[2] == asked
    assert f"- openai:judge-model: {asked} verdict(s) asked in {asked} request(s)" in (
        tmp_path / "runs.md").read_text(encoding="utf-8")
    with ChatServer(_replying([(500, 20)])) as server:
        _config(tmp_path, server)
        shown = run_mbt(*args, cwd=tmp_path, env=ENV).stdout
    assert (f"LLM judge (--judge):\n  openai:judge-model: {asked} verdict(s) asked in {asked} request(s) (0 retried), "
            f"0 from the cache (hit rate 0.0%); {500 * asked} input + {20 * asked} output tokens; "
            f"${usage['cost']:.4f} at $2.5 / $10") in shown


def test_judge_calibrate_and_sensitivity_report_what_the_llm_judge_cost(tmp_path):
    labels = str(ROOT / "models" / "answers" / "labels.jsonl")
    with ChatServer(_replying([(300, 7)])) as server:
        _config(tmp_path, server)
        calibrated = json.loads(run_mbt("judge", "calibrate", "--labels", labels, "--judge", "openai:judge-model",
                                        "--format", "json", cwd=tmp_path, env=ENV).stdout)
        asked = len(server.requests)
        text = run_mbt("judge", "calibrate", "--labels", labels, "--judge", "openai:judge-model",
                       "--llm", "max_requests=2", cwd=tmp_path, env=ENV).stdout
    [usage] = calibrated["judge_usage"]
    assert (usage["requests"], usage["prompt_tokens"], usage["completion_tokens"], usage["cost"]) == (
        asked, 300 * asked, 7 * asked, _cost(300 * asked, 7 * asked))
    assert calibrated["budget"] is None
    assert ("\nLLM judges:\n  openai:judge-model: 2 verdict(s) asked in 2 request(s) (0 retried), 0 from the cache "
            "(hit rate 0.0%); 600 input + 14 output tokens; $0.0016 at $2.5 / $10") in text
    assert "  budget (--max-requests 2): the budget was reached: 2 requests, --max-requests 2\n" in text
    with ChatServer(_replying([(300, 7)])) as server:
        _config(tmp_path, server)
        sensed = json.loads(run_mbt("judge", "sensitivity", "--goldens", GOLDENS, "--judge", "openai:judge-model",
                                    "--format", "json", cwd=tmp_path, env=ENV).stdout)
        asked = len(server.requests)
    [usage] = sensed["judge_usage"]
    assert asked > 0 and (usage["requests"], usage["cost"]) == (asked, _cost(300 * asked, 7 * asked))


def test_mbt_runs_honours_the_llm_budget_and_leaves_the_rest_not_judged(store_url, tmp_path):
    # The same judged transcript: each assistant text is one verdict asked. With a budget of one request, the first
    # is asked and the rest are not judged, never passed; the budget comes from --max-requests or from `llm:`.
    text = (ROOT / "models" / "orders.fsm").read_text(encoding="utf-8")
    shutil.copytree(ROOT / "models" / "docs", tmp_path / "docs")
    (tmp_path / "orders.fsm").write_text(text.replace(' matching "reveal", "透露"', ""), encoding="utf-8")
    transcripts = str(ROOT / "models" / "runs" / "transcripts")
    args = ("runs", "--model", str(tmp_path / "orders.fsm"), "--runs", transcripts, "--no-gate",
            "--judge", "openai:judge-model", "--format", "json")
    with ChatServer(_replying([(500, 20)])) as server:
        _config(tmp_path, server)
        unbounded = json.loads(run_mbt(*args, cwd=tmp_path, env=ENV).stdout)
        wanted = len(server.requests)
    said = {r["id"] for r in unbounded["runs"] if (r["deviation"] or {}).get("type") == "forbidden_saying"}
    assert wanted > 1 and said  # the scripted judge finds each asked text saying what the forbid describes
    for how in ("option", "configuration file"):
        with ChatServer(_replying([(500, 20)])) as server:
            _config(tmp_path, server)
            extra: tuple[str, ...] = ("--max-requests", "1")
            if how == "configuration file":
                extra = ()
                with (tmp_path / "mbt.yaml").open("a", encoding="utf-8") as config:
                    config.write("  max_requests: 1\n")
            done = run_mbt(*args, *extra, cwd=tmp_path, env=ENV)
            sent = len(server.requests)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert sent == 1, how
        [usage] = report["judge_usage"]
        # the verdicts not asked: at least the other requests (texts the same as one asked are asked once)
        assert usage["requests"] == 1 and usage["not_asked"] >= wanted - 1, how
        assert report["budget"]["max_requests"] == 1 and "max-requests" in report["budget"]["reached"], how
        # the texts not asked are gaps of their runs, named with the reason; the deviations they would have decided
        # are not claimed, and no run passes for want of a verdict
        gaps = {r["id"] for r in report["runs"] if any("the budget was reached" in g for g in r["not_judged"])}
        now = {r["id"] for r in report["runs"] if (r["deviation"] or {}).get("type") == "forbidden_saying"}
        assert gaps and now < said and not gaps & now, how
        assert not any(r["verdict"] == "pass" for r in report["runs"]), how
    with ChatServer(_replying([(500, 20)])) as server:
        _config(tmp_path, server)
        text = run_mbt(*args[:-2], "--max-requests", "1", "--save", "bounded", "--store", store_url, cwd=tmp_path,
                       env=ENV).stdout
    assert [b["max_requests"] for b in _shown(store_url, "bounded")["usage"]["budgets"]] == [1]
    assert f"\n  budget (--max-requests 1): {report['budget']['reached']}\n" in text


def test_mbt_api_runs_closes_the_llm_judge_it_made(tmp_path):
    # api.runs makes the judge from its name: its cache file (and HTTP client) are closed when the call returns, so a
    # program calling it again and again does not keep a file open per call.
    import os

    from mbt import api
    from mbt.judges.llm import LLMSettings

    text = (ROOT / "models" / "orders.fsm").read_text(encoding="utf-8")
    shutil.copytree(ROOT / "models" / "docs", tmp_path / "docs")
    (tmp_path / "orders.fsm").write_text(text.replace(' matching "reveal", "透露"', ""), encoding="utf-8")
    cache = tmp_path / "judges.sqlite3"

    def open_on_cache() -> int:
        fds = Path("/proc/self/fd")
        return sum(1 for fd in fds.iterdir() if os.path.realpath(fd).startswith(str(cache)))

    with ChatServer(_replying([(500, 20)])) as server:
        settings = LLMSettings(base_url=server.base_url, api_key="sk-test", cache=str(cache))
        for _ in range(3):
            report = api.runs([str(tmp_path / "orders.fsm")], [str(ROOT / "models" / "runs" / "transcripts")],
                              use_gate=False, judge="openai:judge-model", llm=settings)
            assert report.judge_usage and report.judge_usage[0].asked + report.judge_usage[0].cache_hits > 0
            assert open_on_cache() == 0
    assert cache.exists()


def test_a_budget_without_an_llm_judge_is_a_usage_error_not_ignored(tmp_path):
    # --max-cost / --max-requests bound LLM judges; given with none chosen, they would bound nothing, silently.
    for args in (("eval", "--goldens", GOLDENS, "--runs", RUNS), ("eval", "--goldens", GOLDENS, "--runs", RUNS,
                                                                   "--judge", "rules"),
                 ("runs", "--model", str(ROOT / "models" / "orders.fsm"), "--runs", str(ROOT / "models" / "runs"))):
        for budget in (("--max-cost", "1"), ("--max-requests", "5")):
            done = run_mbt(*args, *budget, cwd=tmp_path, env=ENV)
            assert done.returncode == 2 and done.stdout == "", (args, budget, done.stdout[:200])
            assert done.stderr == (f"error: {budget[0]} bounds what LLM judges cost, and no LLM judge is chosen: add "
                                   "--judge openai:MODEL\n"), done.stderr
