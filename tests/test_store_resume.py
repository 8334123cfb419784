"""Resuming an interrupted result set (`mbt eval --resume NAME`, mbt.store.write and mbt.store.checkpoint): a real
`mbt eval --save` process judging against a chat-completions server on localhost is killed midway; the cases it had
stored are kept row for row, only the rest are asked of the judge, and the set ends `done` with every case, on SQLite
and on PostgreSQL. And what is never resumed: a set whose writer is alive, a finished set, a set of other inputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mbt.errors import MbtError
from mbt.store.db import Store
from mbt.store.query import CaseFilters, SetFilters, list_sets, show
from mbt.store.records import CaseRecord, NewSet
from mbt.store.url import parse
from mbt.store.write import SetWriter
from tests.chat_server import ChatServer, verdict_reply
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
CASES = 600  # three parts of mbt.answers.evaluate.CHECKPOINT_PART (256)
NAME = "nightly"


def _suite(folder: Path) -> tuple[Path, Path]:
    """CASES goldens (seed 001's sheet) and a transcript per case: the even cases answered right."""
    sheet = folder / "qna.csv"
    sheet.write_text("No.,Question,Expected answer\n" + "".join(f"{n},Question {n}?,Answer {n}.\n"
                                                               for n in range(1, CASES + 1)), encoding="utf-8")
    runs = folder / "runs.jsonl"
    runs.write_text("".join(json.dumps({"case_id": str(n), "messages": [
        {"role": "user", "content": f"Question {n}?"},
        {"role": "assistant", "content": f"Answer {n}." if n % 2 == 0 else f"Wrong {n}."}]}) + "\n"
        for n in range(1, CASES + 1)), encoding="utf-8")
    return sheet, runs


def _judged(n: int, body: dict, headers: dict):
    return verdict_reply("fail" if "Wrong" in body["messages"][1]["content"] else "pass")


def _rows(url: str) -> list[tuple]:
    """Every stored case of the set with its verdicts: (row id, seq, key, overall, criterion, verdict)."""
    with Store(parse(url, "test")) as store, store.read() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(
            "SELECT c.id, c.seq, c.case_key, c.overall, v.criterion, v.verdict FROM cases c JOIN verdicts v ON "
            "v.case_row = c.id ORDER BY c.seq")]


def _wait_for_cases(url: str, process: subprocess.Popen, at_least: int, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Path(url).exists() or "://" in url:
            try:
                with Store(parse(url, "test"), create=False) as store, store.read() as conn:
                    if conn.exec_driver_sql("SELECT count(*) FROM cases").scalar_one() >= at_least:
                        return
            except MbtError:
                pass  # not made yet
        if process.poll() is not None:
            raise AssertionError(f"the run ended first: {process.stderr.read() if process.stderr else ''}")
        time.sleep(0.05)
    raise AssertionError(f"fewer than {at_least} cases stored in {timeout} s")


def _interrupted_run(url: str, tmp_path: Path, server: ChatServer, how: signal.Signals) -> list[str]:
    """`mbt eval --save NAME` in a process of its own, stopped by `how` once a first part of cases is stored;
    returns the eval arguments, to run again with --resume."""
    sheet, runs = _suite(tmp_path)
    args = ["--goldens", str(sheet), "--runs", str(runs), "--judge", "openai:judge-model", "--llm", "cache=false",
            "--store", url]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
    process = subprocess.Popen([sys.executable, "-m", "mbt", "eval", *args, "--save", NAME], cwd=tmp_path, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_cases(url, process, 256)
        process.send_signal(how)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return args


def _requests_per_run(url: str) -> dict[int, int]:
    """The LLM judge's requests each run that wrote the set has stored with its cases (mbt.store.write)."""
    with Store(parse(url, "test")) as store, store.read() as conn:
        return dict(conn.exec_driver_sql("SELECT run, requests FROM judge_usage ORDER BY run").all())


def _resumed(url: str, tmp_path: Path, server: ChatServer, args: list[str], stopped_as: str) -> None:
    before = _rows(url)
    with Store(parse(url, "test")) as store:
        (found,) = list_sets(store, SetFilters()).sets
    assert found.status == stopped_as and 256 <= len(before) < CASES and len(before) % 256 == 0  # whole parts only
    # what the stopped run's judge cost is kept with each part it stored: a request per case stored
    assert _requests_per_run(url) == {1: len(before)}
    asked = len(server.requests)
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
    done = run_mbt("eval", *args, "--resume", NAME, "--format", "json", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stderr  # the odd cases fail the gate
    assert f"resumed: {len(before)} case(s) kept, {CASES - len(before)} judged now" in done.stderr
    assert len(server.requests) - asked == CASES - len(before)  # only the cases not stored were judged
    report = json.loads(done.stdout)
    assert (report["cases_total"], report["passed"], report["failed"]) == (CASES, CASES // 2, CASES // 2)
    after = _rows(url)
    assert after[:len(before)] == before  # the stored cases kept row for row: same rows, verdicts and places
    assert [r[1] for r in after] == list(range(1, CASES + 1))  # the rest added after them, each case once
    assert [r[2] for r in after] == [f"qna/{n}" for n in range(1, CASES + 1)]
    assert all(r[3] == ("pass" if int(r[2].split("/")[1]) % 2 == 0 else "fail") for r in after)
    with Store(parse(url, "test")) as store:
        (found,) = list_sets(store, SetFilters()).sets
    assert (found.status, found.cases_total, found.passed, found.error) == ("done", CASES, CASES // 2, None)
    # the resumed run's cost is the set's run 2: every case's request counted once over the two runs
    assert _requests_per_run(url) == {1: len(before), 2: CASES - len(before)}
    with Store(parse(url, "test")) as store:
        usage = show(store, NAME, CaseFilters(limit=1)).usage
    assert usage is not None and (usage.runs, usage.totals.requests, usage.totals.asked) == (2, CASES, CASES)


def test_a_killed_eval_run_is_resumed_keeping_what_it_stored(store_url, tmp_path):
    with ChatServer(_slow) as server:
        args = _interrupted_run(store_url, tmp_path, server, signal.SIGKILL)
        _resumed(store_url, tmp_path, server, args, "running")


def test_a_run_stopped_with_ctrl_c_is_resumed_too(tmp_path):
    url = str(tmp_path / "results.db")
    with ChatServer(_slow) as server:
        args = _interrupted_run(url, tmp_path, server, signal.SIGINT)
        _resumed(url, tmp_path, server, args, "cancelled")


def _slow(n: int, body: dict, headers: dict):
    reply = _judged(n, body, headers)
    reply.delay = 0.03  # 4 requests at once: about 2 s a part, time to stop the run after its first
    return reply


# ------------------------------------------------------------------ what is never resumed


def _record(n: int) -> CaseRecord:
    return CaseRecord(case_key=f"qna/{n}", case_id=str(n), location=f"qna.csv:{n + 1}", turns=1, question="q",
                      answer="a", overall="pass", search="q a", doc={}, verdicts=[("accuracy", "pass", "r", "j")])


JUDGE = {"judge": "embedded"}
INPUTS = {"goldens": ["qna.csv"], "runs": ["runs/"], "models": []}


def _new(store: Store, name: str = NAME, heartbeat: bool = False) -> SetWriter:
    return SetWriter(store, NewSet(name, "qna", "eval", "user:test", dict(JUDGE), dict(INPUTS)), heartbeat=heartbeat)


def _set_writer_meta(store: Store, name: str, **writer) -> None:
    with store.write() as conn:
        meta = json.loads(conn.exec_driver_sql("SELECT meta FROM result_sets WHERE name = ?" if store.url.dialect ==
                                               "sqlite" else "SELECT meta FROM result_sets WHERE name = %s",
                                               (name,)).scalar_one())
        meta["writer"].update(writer)
        conn.exec_driver_sql("UPDATE result_sets SET meta = ? WHERE name = ?" if store.url.dialect == "sqlite" else
                             "UPDATE result_sets SET meta = %s WHERE name = %s", (json.dumps(meta), name))


def test_a_set_whose_writer_is_alive_is_never_taken_over(store_url):
    with Store(parse(store_url, "test")) as store:
        live = _new(store)
        live.add([_record(1)])
        with pytest.raises(MbtError, match=f"its writer, process {os.getpid()} on this machine, is still running"):
            SetWriter.resume(store, NAME, "eval", JUDGE, INPUTS)
        # On another machine, a heartbeat younger than the lease means alive; an older one, gone.
        _set_writer_meta(store, NAME, host="ci-runner-7", heartbeat=time.time() - 5)
        with pytest.raises(MbtError, match=r"its writer, process \d+ on ci-runner-7, was heard from 5 s ago"):
            SetWriter.resume(store, NAME, "eval", JUDGE, INPUTS)
        _set_writer_meta(store, NAME, host="ci-runner-7", heartbeat=time.time() - 120)
        with SetWriter.resume(store, NAME, "eval", JUDGE, INPUTS, heartbeat=False) as taker:
            assert (taker.kept, taker.seq) == (1, 1)
            # The first writer wakes up: its set is no longer its own, and it neither adds to it nor marks it.
            with pytest.raises(MbtError, match="was resumed by another writer"):
                live.add([_record(2)])
            live.__exit__(RuntimeError, RuntimeError("late"), None)
            taker.add([_record(2)])
            taker.finish({}, expected=2)
        (found,) = list_sets(store, SetFilters()).sets
        assert (found.status, found.cases_total) == ("done", 2)


def test_finished_sets_other_options_and_other_kinds_are_refused(store_url):
    with Store(parse(store_url, "test")) as store:
        with _new(store, "finished") as writer:
            writer.add([_record(1)])
            writer.finish({})
        with pytest.raises(MbtError, match="it is done: only an interrupted set"):
            SetWriter.resume(store, "finished", "eval", JUDGE, INPUTS)
        with pytest.raises(MbtError, match="it is a set of `mbt eval`, not of `mbt runs`"):
            SetWriter.resume(store, "finished", "runs", JUDGE, INPUTS)
        with pytest.raises(RuntimeError), _new(store, "broken") as writer:
            writer.add([_record(1)])
            raise RuntimeError("the judge's server went away")
        with pytest.raises(MbtError, match=r"started with the judge configuration \{\"judge\":\"embedded\"\}"):
            SetWriter.resume(store, "broken", "eval", {"judge": "openai:m"}, INPUTS)
        with pytest.raises(MbtError, match=r"started with goldens \[\"qna.csv\"\] and this run gives \[\"other.csv\"\]"):
            SetWriter.resume(store, "broken", "eval", JUDGE, {**INPUTS, "goldens": ["other.csv"]})
        with pytest.raises(MbtError, match="no result set named `brokn`.*did you mean `broken`"):
            SetWriter.resume(store, "brokn", "eval", JUDGE, INPUTS)
        # A failed set is resumed as it stands; it never ends `done` holding other than the run's cases (here one
        # is missing): the error ends it `failed` again, saying why.
        with pytest.raises(MbtError, match="holds 1 case\\(s\\) where the run has 2: it is not marked done"), \
                SetWriter.resume(store, "broken", "eval", JUDGE, INPUTS, heartbeat=False) as writer:
            assert writer.kept == 1
            writer.finish({}, expected=2)
        found = {s.name: s for s in list_sets(store, SetFilters()).sets}
        assert found["broken"].status == "failed" and "not marked done" in (found["broken"].error or "")


def test_a_heartbeat_keeps_a_live_writer_from_being_given_up(tmp_path, monkeypatch):
    from mbt.store import write

    monkeypatch.setattr(write, "HEARTBEAT_S", 0.05)
    with Store(parse(str(tmp_path / "r.db"), "test")) as store:
        with _new(store, heartbeat=True) as writer:
            _set_writer_meta(store, NAME, host="elsewhere", heartbeat=0.0)
            time.sleep(0.5)  # beats since then: the heartbeat is fresh again
            with store.read() as conn:
                beat = json.loads(conn.exec_driver_sql("SELECT meta FROM result_sets").scalar_one())["writer"]
            assert time.time() - beat["heartbeat"] < 1
            writer.add([_record(1)])
            writer.finish({})
        with store.read() as conn:
            assert "writer" not in json.loads(conn.exec_driver_sql("SELECT meta FROM result_sets").scalar_one())


def test_resume_refuses_goldens_that_are_not_the_sets(tmp_path):
    sheet = tmp_path / "qna.csv"
    sheet.write_text("No.,Question,Expected answer\n1,Hello?,Hello!\n", encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "1.json").write_text(json.dumps({"messages": [{"role": "user", "content": "Hello?"},
                                                         {"role": "assistant", "content": "Hello!"}]}))
    url = str(tmp_path / "r.db")
    with Store(parse(url, "test")) as store:
        with pytest.raises(RuntimeError), SetWriter(store, NewSet(NAME, "qna", "eval", "u", {"judge": "embedded"}, {
                "goldens": [str(sheet)], "runs": [str(runs)], "models": []})) as writer:
            writer.add([_record(7)])  # a case these goldens do not have
            raise RuntimeError("stopped")
    done = run_mbt("eval", "--goldens", sheet, "--runs", runs, "--resume", NAME, "--store", url)
    assert done.returncode == 2, done.stderr
    assert "result set `nightly` holds 1 case(s) the goldens given do not have, such as `qna/7`" in done.stderr
    both = run_mbt("eval", "--goldens", sheet, "--runs", runs, "--resume", NAME, "--save", "x", "--store", url)
    assert both.returncode == 2 and "give one of them" in both.stderr
    # The judge configuration is compared as it judges: `--criteria accuracy=1` is the default, a threshold is not.
    same = run_mbt("eval", "--goldens", sheet, "--runs", runs, "--resume", NAME, "--criteria", "accuracy=1",
                   "--store", url)
    assert "holds 1 case(s) the goldens given do not have" in same.stderr  # past the judge's check
    other = run_mbt("eval", "--goldens", sheet, "--runs", runs, "--resume", NAME, "--threshold", "0.5", "--store", url)
    assert other.returncode == 2 and ('started with the judge configuration {"criteria":{"accuracy":"1"},"judge":'
                                      '"embedded","threshold":"0"} and this run gives {"criteria":{"accuracy":"1"},'
                                      '"judge":"embedded","threshold":"0.5"}') in other.stderr


def test_a_resumed_agent_run_sends_only_the_cases_the_set_lacks(tmp_path):
    """`mbt eval --agent SPEC --resume NAME`: the cases the set holds are neither sent to the agent again nor judged
    again; the others are, and the set ends done. (The set is interrupted here by taking two of its three cases out
    and marking it cancelled, as a Ctrl-C after the first part would leave it.)"""
    from tests.test_agents import answer_last, goldens

    sheet = goldens(tmp_path)
    url = str(tmp_path / "r.db")
    with ChatServer(lambda n, body, headers: _completion(answer_last(body))) as server:
        args = ["--goldens", str(sheet), "--agent", f"openai-chat:{server.base_url}", "--store", url]
        first = run_mbt("eval", *args, "--save", NAME, cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        with Store(parse(url, "test")) as store, store.write() as conn:
            kept = conn.exec_driver_sql("SELECT id, case_key FROM cases ORDER BY seq").all()[0]
            for table, column in (("verdicts", "case_row"), ("case_docs", "case_row"), ("cases", "id")):
                conn.exec_driver_sql(f"DELETE FROM {table} WHERE {column} IN (SELECT id FROM cases WHERE case_key "
                                     "!= 'qna/Q1')")
            conn.exec_driver_sql("UPDATE result_sets SET status = 'cancelled'")
        sent = len(server.requests)
        done = run_mbt("eval", *args, "--resume", NAME, "--format", "json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        asked = [r["body"]["messages"][-1]["content"] for r in server.requests[sent:]]
    assert sorted(asked) == ["Can I pay by card?", "I want to block my card", "thanks"]  # Q2, and Q3's two turns
    assert "resumed: 1 case(s) kept, 2 judged now" in done.stderr
    assert json.loads(done.stdout)["passed"] == 3
    with Store(parse(url, "test")) as store:
        (found,) = list_sets(store, SetFilters()).sets
        with store.read() as conn:
            rows = conn.exec_driver_sql("SELECT id, case_key, seq FROM cases ORDER BY seq").all()
    assert (found.status, found.cases_total) == ("done", 3)
    assert tuple(rows[0][:2]) == tuple(kept) and [r[1] for r in rows] == ["qna/Q1", "qna/Q2", "qna/Q3"]


def _completion(text: str):
    from tests.chat_server import completion

    return completion(text)
