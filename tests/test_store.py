"""The result store on SQLite and on a PostgreSQL server the tests start (tests/pg_server.py): result sets written
from `mbt eval` and `mbt runs` reports, listed and filtered as seed 001's list, shown with its overview and filtered
case list, renamed, deleted, compared (flips in order, deltas, first deviations per agent version, session diffs),
and the baseline gate."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from mbt import api
from mbt.errors import MbtError
from mbt.store.compare import compare
from mbt.store.db import Store
from mbt.store.query import (
    CaseFilters,
    SetFilters,
    case_detail,
    delete,
    list_sets,
    overview,
    rename,
    set_info,
    set_row,
    show,
)
from mbt.store.records import CaseRecord, NewSet
from mbt.store.url import parse
from mbt.store.write import SetWriter

ANSWERS = ["models/answers/goldens/"], ["models/answers/runs/"]


def record(key: str, overall: str, criteria: dict[str, str] | None = None, version: str | None = None,
           deviation: str | None = None, question: str = "q", answer: str | None = "a", turns: int = 1,
           flags: dict | None = None, transcript: list | None = None) -> CaseRecord:
    criteria = criteria if criteria is not None else {"accuracy": overall}
    return CaseRecord(case_key=key, case_id=key.rsplit("/", 1)[-1], location=f"goldens.jsonl:{key}", turns=turns,
                      question=question, answer=answer, overall=overall, search=f"{question}\n{answer}".casefold(),
                      doc={"transcript": transcript}, verdicts=[(c, v, f"why {v}", "embedded") for c, v in criteria.items()],
                      agent_version=version, first_deviation=deviation, flags=flags,
                      error="accuracy: judge timed out" if overall == "error" else None)


def overview_of(url: str, name: str):
    with Store(parse(url, "test")) as store, store.read() as conn:
        row = set_row(conn, name, store)
        return overview(conn, row["id"], set_info(row))


def write_set(url: str, name: str, records: list[CaseRecord], run_type: str = "eval", started: str = "",
              executor: str = "user:alice", finish: bool = True) -> None:
    """A set written as mbt writes one; `finish=False`: as a writer killed before the end leaves it (`running`)."""
    with Store(parse(url, "test")) as store:
        writer = SetWriter(store, NewSet(name, "suite", run_type, executor, {}, {}, started))
        writer.add(records, batch=3)
        if finish:
            writer.finish({})


def test_an_eval_set_is_kept_whole_and_shown_as_seed_001_shows_it(store_url):
    stored = api.eval_stored(*ANSWERS, save="", store=store_url)
    assert stored.saved.status == "done" and stored.saved.name.startswith("goldens_TestResult_")
    assert (stored.saved.cases_total, stored.saved.passed, stored.saved.failed, stored.saved.not_judged) == (5, 2, 2, 1)
    assert stored.saved.judge["criteria"] == {"accuracy": "1"} and stored.saved.judge["judge"] == "embedded"
    view = api.results_show(stored.saved.name, store=store_url)
    assert view.overview.cases_ok == 5 and view.overview.multi_turn == 1 and view.overview.single_turn == 4
    assert view.overview.overall.pass_rate == 40.0
    assert [c.key for c in view.cases] == [f"card-qna/{n}" for n in range(1, 6)]
    assert view.cases[2].kind == "multi" and view.cases[2].question == "I lost my card."
    # the seed's detail: explanation per criterion, question with expected and actual answer, the session
    detail = api.results_case(stored.saved.name, "card-qna/3", store=store_url)
    assert detail.verdicts[0].reason.startswith("says the opposite (lock/unlock)")
    assert detail.doc["turns"][1]["expected"] == ["Your card is now locked."]
    assert [t["answer"] for t in detail.doc["transcript"]] == ["I am sorry to hear that. Shall I lock it?",
                                                              "Your card is now unlocked."]
    # the case as the report had it: every field of CaseResult is kept, whatever the report adds
    assert set(stored.report.cases[2].model_dump()) <= set(detail.doc)


def test_show_filters_by_turns_result_and_search_in_questions_and_answers(store_url):
    name = api.eval_stored(*ANSWERS, save="qna", store=store_url).saved.name

    def keys(**filters):
        return [c.key for c in api.results_show(name, store=store_url, **filters).cases]

    assert keys(turns="multi") == ["card-qna/3"]
    assert keys(turns="single", results=("fail",)) == ["card-qna/1"]
    assert keys(results=("pass", "not_judged")) == ["card-qna/2", "card-qna/4", "card-qna/5"]
    assert keys(results=("ok",)) == [f"card-qna/{n}" for n in range(1, 6)]
    assert keys(search="UNLOCKED") == ["card-qna/3"]  # in an actual answer of a later turn, any case
    assert keys(search="chuyển khoản") == ["card-qna/4"]  # Vietnamese, in the question and the answer
    assert keys(search="CHUYỂN KHOẢN") == ["card-qna/4"]  # case-folded beyond ASCII, on both databases
    assert keys(search=unicodedata.normalize("NFD", "chuyển khoản")) == ["card-qna/4"]  # typed decomposed
    assert keys(search="100%") == [] and keys(search="_") == []  # LIKE's wildcards are taken literally
    view = api.results_show(name, store=store_url, limit=2, offset=1)
    assert view.matching == 5 and [c.seq for c in view.cases] == [2, 3]
    # a finished set's overview is the one its writer kept: the same as counting the cases again
    with Store(parse(store_url, "test")) as store, store.read() as conn:
        row = set_row(conn, name, store)
        assert json.loads(row["meta"])["overview"] == overview(conn, row["id"], set_info(row)).model_dump(mode="json")
    assert view.overview == overview_of(store_url, name)


def test_a_runs_set_keeps_verdicts_first_deviations_versions_and_metric_flags(store_url):
    stored = api.runs_stored(["models/orders.fsm"], ["models/runs/"], save="orders", store=store_url)
    report = stored.report
    assert stored.saved.cases_total == len(report.runs) == 25
    assert stored.saved.passed == report.metrics.passed and stored.saved.failed == report.metrics.deviations
    assert stored.saved.agent_version == "2.3.0, A, B"
    view = api.results_show("orders", store=store_url, limit=0)
    deviating = [c for c in view.cases if c.first_deviation]
    assert len(deviating) == report.metrics.deviations
    by_key = {c.key: c for c in view.cases}
    assert by_key["chat-ORD-0031"].kind == "multi"  # keyed by the file's name: one run in that file
    loop = api.results_case("orders", "turn-loop-s_4002", store=store_url).doc["transcript"]
    assert [t["stop_reason"] for t in loop] == ["max_budget_reached", "completed"]
    assert loop[0]["commands"] == ["orders"] and loop[0]["tokens"] == {"input": 900, "output": 60}
    compared = api.results_compare("orders", "orders", store=store_url)
    completion = next(d for d in compared.metrics if d.metric == "task completion")
    assert (completion.a_passed, completion.a_n) == (report.metrics.completed, report.metrics.fully_judged)
    # the first-deviation distribution per agent version, as mbt runs --group-by version counts it
    grouped = api.runs(["models/orders.fsm"], ["models/runs/"], group_by="version")
    expected = {g.value: g.first_deviations.by_type for g in grouped.groups}
    found = {c.agent_version: c.by_type for c in compared.deviations if c.side == "A"}
    assert found == expected and all(c.versions_split for c in compared.deviations)
    # ... and the run metrics per version as --group-by version measures them (seed 002: metrics per version)
    percent = {g.value: {"task completion": g.metrics.task_completion_rate, "intent accuracy": g.metrics.intent_accuracy,
                         "escalation success": g.metrics.escalation_success_rate,
                         "critical failures": g.metrics.critical_failures / g.metrics.runs}
               for g in grouped.groups}
    for column in (c for c in compared.deviations if c.side == "A"):
        for metric, rate in percent[column.agent_version].items():
            assert column.metrics[metric] == (None if rate is None else pytest.approx(100 * rate, abs=1e-3)), metric


def test_the_list_filters_as_seed_001s_list(store_url):
    write_set(store_url, "card-qna_TestResult_20250106-083000", [record("a/1", "pass")], started="2025-01-06T08:30:00Z")
    write_set(store_url, "orders-nightly", [record("a/1", "fail")], run_type="runs", started="2025-02-01T23:00:00Z",
              executor="github:acme/bot run 7 (ci-bot)")
    write_set(store_url, "card-qna-half", [record("a/1", "pass")], started="2025-03-01T00:00:00Z", finish=False)
    with Store(parse(store_url, "test")) as store:
        def names(**filters):
            return [s.name for s in list_sets(store, SetFilters(**filters)).sets]

        assert names() == ["card-qna-half", "orders-nightly", "card-qna_TestResult_20250106-083000"]  # newest first
        assert names(search="CARD-QNA") == ["card-qna-half", "card-qna_TestResult_20250106-083000"]
        assert names(statuses=("done",)) == ["orders-nightly", "card-qna_TestResult_20250106-083000"]
        assert names(statuses=("running",)) == ["card-qna-half"]  # its writer stopped before finishing
        assert names(run_types=("runs",)) == ["orders-nightly"]
        assert names(executor="GitHub") == ["orders-nightly"]
        assert names(since="2025-02-01", until="2025-02-01") == ["orders-nightly"]  # a date is its whole day
        assert names(until="2025-02-01T22:59:59Z") == ["card-qna_TestResult_20250106-083000"]
        assert names(since="2025-02-02T00:30:00+01:00") == ["card-qna-half"]  # another zone, converted to UTC
        assert names(limit=1) == ["card-qna-half"]
        with pytest.raises(MbtError, match="expected a date"):
            names(since="yesterday")


def test_names_are_unique_renameable_and_unknown_names_are_refused_with_a_hint(store_url):
    write_set(store_url, "release-1.4", [record("a/1", "pass")])
    with pytest.raises(MbtError, match="named `release-1.4` is in the store .* already"):
        write_set(store_url, "release-1.4", [record("a/1", "pass")])
    with Store(parse(store_url, "test")) as store:
        generated = SetWriter(store, NewSet("suite_TestResult_20250101-000000", "suite", "eval", "u", {}, {}),
                              name_given=False)
        again = SetWriter(store, NewSet("suite_TestResult_20250101-000000", "suite", "eval", "u", {}, {}),
                          name_given=False)
        assert (generated.name, again.name) == ("suite_TestResult_20250101-000000", "suite_TestResult_20250101-000000_2")
        assert rename(store, "release-1.4", "release-1.4-rc").name == "release-1.4-rc"
        with pytest.raises(MbtError, match="no result set named `release-1.4` .*did you mean `release-1.4-rc`"):
            show(store, "release-1.4", CaseFilters())
        with pytest.raises(MbtError, match="is in the store .* already"):
            rename(store, "release-1.4-rc", "suite_TestResult_20250101-000000")
        with pytest.raises(MbtError, match="control character"):
            rename(store, "release-1.4-rc", "bad\nname")
        with pytest.raises(MbtError, match="no result set named `nope`"):
            delete(store, ["release-1.4-rc", "nope"])  # all or none
        assert [s.name for s in list_sets(store, SetFilters(search="rc")).sets] == ["release-1.4-rc"]
        assert delete(store, ["release-1.4-rc"]) == ["release-1.4-rc"]
        assert [s.name for s in list_sets(store, SetFilters(search="rc")).sets] == []
        with store.read() as conn:  # its cases and verdicts went with it
            left = conn.exec_driver_sql("SELECT count(*) FROM cases").scalar_one()
            assert left == 0


def test_compare_orders_flips_pass_to_fail_first_and_measures_paired_deltas(store_url):
    before = [record("s/1", "pass"), record("s/2", "fail"), record("s/3", "pass"), record("s/4", "not_judged"),
              record("s/5", "pass"), record("s/6", "error"), record("s/7", "pass"), record("s/8", "fail")]
    after = [record("s/1", "pass"), record("s/2", "pass"), record("s/3", "not_judged"), record("s/4", "pass"),
             record("s/5", "fail"), record("s/6", "fail"), record("s/7", "fail"), record("s/9", "pass")]
    write_set(store_url, "A", before)
    write_set(store_url, "B", after)
    with Store(parse(store_url, "test")) as store:
        found = compare(store, "A", "B")
    assert [(f.key, f.before, f.after) for f in found.flips] == [
        ("s/5", "pass", "fail"), ("s/7", "pass", "fail"), ("s/2", "fail", "pass"), ("s/3", "pass", "not_judged"),
        ("s/4", "not_judged", "pass"), ("s/6", "error", "fail")]
    assert found.matched == 7 and found.only_a == ["s/8"] and found.only_b == ["s/9"]
    overall = found.metrics[0]
    assert (overall.a_passed, overall.a_n, overall.b_passed, overall.b_n) == (4, 8, 4, 8)
    # paired on the 7 cases in both: A passes s/1 s/3 s/5 s/7, B s/1 s/2 s/4: both 1, B only 2, A only 3, neither 1
    assert overall.pairs == 7 and overall.discordant == [3, 2] and overall.method.startswith("paired")
    from mbt.store.stats import mcnemar_exact, newcombe_paired

    expected = newcombe_paired(1, 2, 3, 1)
    assert (overall.delta, overall.low, overall.high) == pytest.approx(
        (100 * expected.estimate, 100 * expected.low, 100 * expected.high), abs=1e-3)
    assert overall.mcnemar_p == pytest.approx(mcnemar_exact(3, 2))
    assert [d.metric for d in found.metrics] == ["overall pass rate", "accuracy pass rate"]


def test_compare_without_shared_cases_is_unpaired_and_splits_agent_versions(store_url):
    write_set(store_url, "A", [record(f"a/{n}", "pass" if n < 6 else "fail", version="1.4",
                                      deviation=None if n < 6 else "wrong_argument") for n in range(10)])
    write_set(store_url, "B", [record(f"b/{n}", "pass" if n < 3 else "fail", version="1.5" if n % 2 else "1.4",
                                      deviation=None if n < 3 else ("premature_success" if n % 2 else "wrong_argument"))
                               for n in range(10)])
    with Store(parse(store_url, "test")) as store:
        found = compare(store, "A", "B")
    overall = found.metrics[0]
    assert overall.method.startswith("unpaired") and overall.pairs == 0
    from mbt.store.stats import newcombe_unpaired

    assert overall.delta == pytest.approx(100 * newcombe_unpaired(3, 10, 6, 10).estimate, abs=1e-3)
    columns = [(c.side, c.agent_version, c.cases, c.by_type) for c in found.deviations]
    assert columns == [("A", "1.4", 10, {"wrong_argument": 4}),
                       ("B", "1.4", 5, {"wrong_argument": 3}), ("B", "1.5", 5, {"premature_success": 4})]


def test_session_diffs_compare_turns_as_seed_003_does(store_url):
    turn = {"prompt": "cancel SO-1", "answer": "Cancelled.", "calls": ["cancel_order(order_id=\"SO-1\")"],
            "matched_tools": None, "commands": ["orders"], "stop_reason": "completed", "tokens": None}
    write_set(store_url, "A", [record("s/1", "pass", transcript=[turn, {**turn, "prompt": "thanks"}])])
    write_set(store_url, "B", [record("s/1", "fail", transcript=[{**turn, "answer": "Done!", "calls": [],
                                                                   "stop_reason": "max_turns_reached"}])])
    with Store(parse(store_url, "test")) as store:
        found = compare(store, "A", "B", sessions=["s/1"])
        with pytest.raises(MbtError, match="--case s/2: no case of that key .*did you mean `s/1`"):
            compare(store, "A", "B", sessions=["s/2"])
    (diff,) = found.sessions
    assert diff.recorded and diff.turns[0].changed == {
        "answer": ["Cancelled.", "Done!"], "calls": [["cancel_order(order_id=\"SO-1\")"], []],
        "stop_reason": ["completed", "max_turns_reached"]}
    assert diff.turns[1].changed == {"prompt": ["thanks", "(no such turn)"]}


def test_compare_refuses_sets_of_different_run_types(store_url):
    write_set(store_url, "A", [record("s/1", "pass")])
    write_set(store_url, "R", [record("s/1", "pass")], run_type="runs")
    with Store(parse(store_url, "test")) as store, pytest.raises(MbtError, match="compare sets of one run type"):
        compare(store, "A", "R")


def test_the_baseline_set_fails_the_gate_on_each_case_that_passed_there_and_does_not_now(store_url, tmp_path):
    baseline = api.eval_stored(*ANSWERS, save="baseline", store=store_url)
    assert not baseline.regressions
    runs = tmp_path / "runs"
    runs.mkdir()
    for path in Path("models/answers/runs").iterdir():
        text = path.read_text(encoding="utf-8")
        (runs / path.name).write_text(text.replace("under Cards > Unlock", "somewhere"), encoding="utf-8")
    now = api.eval_stored(["models/answers/goldens/"], [str(runs)], baseline_set="baseline", store=store_url)
    assert [(r.key, r.after) for r in now.regressions] == [("card-qna/2", "not_judged")]
    assert not now.report.gate.passed
    assert now.report.gate.failures[-1].endswith("case `card-qna/2` passed in the baseline set `baseline` and is "
                                                 "not_judged now")
    assert now.saved is None and [s.name for s in api.results_list(store=store_url).sets] == ["baseline"]
    same = api.eval_stored(*ANSWERS, baseline_set="baseline", store=store_url)
    assert same.regressions == [] and "baseline" not in " ".join(same.report.gate.failures)
    with pytest.raises(MbtError, match="a eval set; this run is runs"):
        api.runs_stored(["models/orders.fsm"], ["models/runs/"], baseline_set="baseline", store=store_url)


def test_a_runs_baseline_gate_adds_a_gate_failure(store_url, tmp_path):
    api.runs_stored(["models/orders.fsm"], ["models/runs/transcripts/"], save="runs-1", store=store_url)
    changed = tmp_path / "transcripts"
    changed.mkdir()
    for path in Path("models/runs/transcripts").iterdir():
        (changed / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    # the one run that passed now cancels another order than the one the user gave: a wrong argument
    original = api.results_show("runs-1", store=store_url, results=("pass",)).cases
    assert [c.key for c in original] == ["chat-ORD-0031"]
    run = json.loads((changed / "chat-ORD-0031.json").read_text(encoding="utf-8"))
    cancel = next(m for m in run["messages"] if m.get("tool_calls")
                  and m["tool_calls"][0]["function"]["name"] == "cancel_order")
    cancel["tool_calls"][0]["function"]["arguments"] = json.dumps({"order_id": "SO-10099"})
    (changed / "chat-ORD-0031.json").write_text(json.dumps(run), encoding="utf-8")
    now = api.runs_stored(["models/orders.fsm"], [str(changed)], baseline_set="runs-1", store=store_url)
    assert [(r.key, r.before, r.after) for r in now.regressions] == [("chat-ORD-0031", "pass", "fail")]
    failure = now.report.gate.failures[-1]
    assert failure.rule == "baseline-set" and failure.actual == 1 and not now.report.gate.passed
    with pytest.raises(MbtError, match="cannot be used with --no-gate"):
        api.runs_stored(["models/orders.fsm"], [str(changed)], baseline_set="runs-1", store=store_url,
                        use_gate=False)


def test_a_baseline_must_be_finished(store_url):
    write_set(store_url, "half", [record("card-qna/1", "pass")], finish=False)
    with pytest.raises(MbtError, match="--baseline-set half: the set is running, not done"):
        api.eval_stored(*ANSWERS, baseline_set="half", store=store_url)


def test_a_case_is_found_by_key_or_by_an_id_only_one_case_has(store_url):
    write_set(store_url, "A", [record("x/1", "pass"), record("y/1", "fail"), record("y/2", "pass")])
    with Store(parse(store_url, "test")) as store:
        assert case_detail(store, "A", "y/2").case.key == "y/2"
        assert case_detail(store, "A", "2").case.key == "y/2"
        with pytest.raises(MbtError, match="`1` names several cases"):
            case_detail(store, "A", "1")


@pytest.mark.parametrize("env, expected", [
    ({"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/shop", "GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "2",
      "GITHUB_ACTOR": "ana"}, "github:acme/shop run 42.2 (ana)"),
    ({"GITLAB_CI": "true", "CI_PROJECT_PATH": "acme/shop", "CI_JOB_ID": "977", "GITLAB_USER_LOGIN": "bo"},
     "gitlab:acme/shop job 977 (bo)"),
    ({"CI": "true"}, "ci"),
    ({}, "user:"),
])
def test_the_executor_is_the_ci_job_or_the_user(monkeypatch, env, expected):
    from mbt.store.records import executor

    for name in ("GITHUB_ACTIONS", "GITLAB_CI", "CI_JOB_ID", "CI", "BUILD_ID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    found = executor()
    assert found == expected if expected != "user:" else found.startswith("user:") and len(found) > 5


def test_default_names_follow_seed_001():
    from mbt.store.records import default_name, suite_name

    assert default_name("card-qna", "2025-01-06T08:30:05Z") == "card-qna_TestResult_20250106-083005"
    assert suite_name(["goldens/card-qna.xlsx"]) == "card-qna" and suite_name(["runs/nightly/"]) == "nightly"
