"""Seed 004's level 4 beyond usage (issue 36, item 7; docs/runs.md, "Marked runs and undocumented behaviour"): runs
marked as incidents or adversarial by a tag in the run — a transcript's `tags` or `metadata.tags`, an OpenTelemetry
`mbt.run.tags` or `app.run.kind` on a span or the resource — reported apart with their own metrics rows, in
`mbt runs` and in `mbt coverage`'s level 4; and behaviour the model neither allows nor forbids, seen in runs, listed
as candidates for the model with where each was seen."""

from __future__ import annotations

import json
from pathlib import Path

from mbt.api import runs as runs_api
from mbt.runs.marks import marks_of, parse_tags
from mbt.runs.reader import read_runs
from tests.cli_runner import run_mbt
from tests.test_runs_readers import attr, chat, document, span

ROOT = Path(__file__).resolve().parents[1]
LEVELS = ROOT / "docs" / "examples" / "levels"
MODEL = str(LEVELS / "refund-lifecycle.fsm")


def transcript(tmp_path, name, users, **wrapper):
    messages = []
    for text in users:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "好的。"}]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"id": name, "model": "refund_lifecycle", "precondition": {"paid": 100},
                                "messages": messages, **wrapper}, ensure_ascii=False), encoding="utf-8")
    return path


def test_tags_and_marks_are_read_as_documented():
    assert parse_tags(["incident", " INC-42 "]) == ("incident", "INC-42")
    assert parse_tags("adversarial, jailbreak") == ("adversarial", "jailbreak")
    assert parse_tags('["incident"]') == ("incident",)  # a JSON array in a string attribute
    assert parse_tags(None) == ()
    assert marks_of(("Incident:INC-42", "jailbreak")) == ["incident"]
    assert marks_of(("adversarial", "incident")) == ["incident", "adversarial"]
    assert marks_of(("incidental", "prod")) == []


def test_transcript_tags_mark_runs_and_each_mark_has_its_own_metrics_row(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    # passes: a refund of what was paid
    transcript(folder, "a-plain", ["我要退款 100 元"])
    # an incident: the second refund while the first is under way (the model neither allows nor forbids it)
    transcript(folder, "b-incident", ["我要退款 100 元", "我要退款 100 元"], tags=["incident", "INC-7"])
    # adversarial, from metadata.tags: more than was paid (a forbid refuses it: documented behaviour)
    transcript(folder, "c-attack", ["我要退款 500 元"], metadata={"tags": "adversarial, over-refund"})
    # both marks: counted in both rows
    transcript(folder, "d-both", ["我要退款 100 元"], tags="incident,adversarial")
    report = runs_api([MODEL], [str(folder)], use_gate=False)
    assert {r.id: r.tags for r in report.runs} == {"a-plain": [], "b-incident": ["incident", "INC-7"],
                                                   "c-attack": ["adversarial", "over-refund"],
                                                   "d-both": ["incident", "adversarial"]}
    rows = {row.mark: (row.runs, row.metrics.runs, row.metrics.passed, row.metrics.deviations)
            for row in report.marked}
    # by hand: incident = b (deviates), d (passes); adversarial = c (deviates), d (passes); unmarked = a (passes)
    assert rows == {"incident": (["b-incident", "d-both"], 2, 1, 1), "adversarial": (["c-attack", "d-both"], 2, 1, 1),
                    "unmarked": (["a-plain"], 1, 1, 0)}
    assert [row.mark for row in report.marked] == ["incident", "adversarial", "unmarked"]
    # the overall figures still count every run (the gate reads them): 4 runs, 2 passed
    assert (report.metrics.runs, report.metrics.passed) == (4, 2)
    by_mark = {row.mark: row.first_deviations.by_type for row in report.marked}
    assert by_mark["incident"] == {"step_not_allowed": 1} and by_mark["unmarked"] == {}


def test_no_marked_run_no_rows(tmp_path):
    transcript(tmp_path, "plain", ["我要退款 100 元"])
    report = runs_api([MODEL], [str(tmp_path)], use_gate=False)
    assert report.marked == [] and report.undocumented == []


def test_a_tags_key_is_read_not_reported_as_unread_and_a_bad_one_is_an_invalid_run(tmp_path):
    good = transcript(tmp_path, "good", ["我要退款 100 元"], tags=["incident"])
    runs = read_runs([str(good)])
    assert runs.runs[0].tags == ("incident",) and not runs.unread
    bad = transcript(tmp_path, "bad", ["我要退款 100 元"], tags={"kind": "incident"})
    invalid = read_runs([str(bad)]).invalid
    assert len(invalid) == 1 and invalid[0].where == str(bad) and "`tags`" in invalid[0].message


def test_otel_tags_from_the_resource_and_a_span_attribute(tmp_path):
    doc = document(span(op="invoke_agent", start=0, end=10, app__run__kind="adversarial"),
                   chat("0000000000000002", 1, ["我要退款 100 元"], "好的。"),
                   resource={"mbt.run.tags": "incident, INC-9", "mbt.model": "refund_lifecycle"})
    # an array value, as OTLP/JSON writes string arrays
    doc["resourceSpans"][0]["resource"]["attributes"][0] = {
        "key": "mbt.run.tags", "value": {"arrayValue": {"values": [{"stringValue": "incident"},
                                                                  {"stringValue": "INC-9"}]}}}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    read = read_runs([str(path)])
    assert not read.invalid and len(read.runs) == 1
    assert read.runs[0].tags == ("incident", "INC-9", "adversarial")
    assert not any("mbt.run.tags" in u or "app.run.kind" in u for u in read.unread), read.unread
    assert attr  # the helper module's attribute writer is the one the readers' tests use


def test_undocumented_behaviour_is_listed_with_where_each_was_seen(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    transcript(folder, "r1", ["我要退款 100 元", "我要退款 100 元"], tags=["incident"])
    transcript(folder, "r2", ["我要退款 60 元", "我要退款 60 元"])
    transcript(folder, "r3", ["我要退款 500 元"])  # refused by forbid over_refund: documented, no candidate
    transcript(folder, "r4", ["联系客服"])  # contact_support in paid_order: neither allowed nor forbidden
    report = runs_api([MODEL], [str(folder)], use_gate=False)
    found = [(c.model, c.kind, c.state, c.event, c.runs, [s.run for s in c.seen], c.marked) for c in report.undocumented]
    assert found == [
        ("refund_lifecycle", "event", "refunding", "request_refund", 2, ["r1", "r2"], {"incident": 1}),
        ("refund_lifecycle", "event", "paid_order", "contact_support", 1, ["r4"], {})]
    first = report.undocumented[0].seen[0]
    assert first.where.endswith("r1.json message 3")
    deviation = next(r.deviation for r in report.runs if r.id == "r1")
    assert deviation is not None and deviation.event == "request_refund"
    done = run_mbt("runs", "--model", MODEL, "--runs", folder, "--no-gate")
    assert done.returncode == 0, done.stderr
    assert ("Undocumented behaviour seen in 3 run(s): 2 candidate(s) for the model (steps the model neither allows "
            "nor forbids)") in done.stdout
    assert "  refund_lifecycle: `request_refund` in state `refunding`: 2 run(s) (1 incident)" in done.stdout
    assert f"    r1: {folder}/r1.json message 3" in done.stdout
    assert "Marked runs (reported apart" in done.stdout


def test_an_unexpected_call_and_an_unbound_text_are_candidates_too(tmp_path):
    from mbt.measure.level_models import Undocumented
    from mbt.runs.results import DeviationOut, RunResult
    from mbt.runs.undocumented import undocumented

    def result(rid, type_, state, **deviation):
        return RunResult(id=rid, where=f"{rid}.json", format="messages", model="m", suite=None, verdict="deviation",
                         steps=3, final_state=state, deviation=DeviationOut(
                             type=type_, where=f"{rid}.json message 2", step=2, element=f"state:{state}",
                             severity="medium", message="msg", **deviation))

    from mbt.api import load_models

    _, (model,) = load_models([MODEL])
    model = model.model_copy(update={"name": "m"})
    found = undocumented([result("x", "unexpected_call", "refunding", tool="refund_api"),
                          result("y", "unbound_step", "paid_order"),
                          result("z", "wrong_state", "refunding")], {"m": model})
    assert [(c.kind, c.state, c.tool, c.runs) for c in found] == [("call", "refunding", "refund_api", 1),
                                                                  ("text", "paid_order", None, 1)]
    assert all(isinstance(c, Undocumented) for c in found)


def test_coverage_level_four_reports_marked_runs_apart_and_lists_the_candidates(tmp_path):
    transcript(tmp_path, "r1", ["我要退款 100 元", "我要退款 100 元"], tags=["incident"])
    transcript(tmp_path, "r2", ["我要退款 100 元"], metadata={"tags": ["adversarial"]})
    transcript(tmp_path, "r3", ["我要退款 100 元"])
    done = run_mbt("coverage", "--model", MODEL, "--goldens", LEVELS / "goldens", "--runs", tmp_path, "--no-gate",
                   "--format", "json")
    assert done.returncode == 0, done.stderr
    levels = json.loads(done.stdout)["levels"]
    level4 = next(lv for lv in levels["levels"] if lv["level"] == 4)
    figures = {f["name"]: (f.get("covered"), f.get("total")) for f in level4["figures"]}
    assert figures["observed runs without a deviation"] == (2, 3)
    assert figures["incident runs without a deviation"] == (0, 1)
    assert figures["adversarial runs without a deviation"] == (1, 1)
    assert figures["unmarked runs without a deviation"] == (1, 1)
    assert "undocumented behaviour: 1 candidate(s) for the model, seen in 1 run(s)" in figures
    assert not any("incident" in why for why in level4["not_measured"])
    assert [(c["event"], c["state"], c["seen"][0]["run"]) for c in levels["undocumented"]] == [
        ("request_refund", "refunding", "r1")]
    text = run_mbt("coverage", "--model", MODEL, "--goldens", LEVELS / "goldens", "--runs", tmp_path, "--no-gate")
    assert "Level 4: undocumented behaviour seen in 1 run(s): 1 candidate(s) for the model" in text.stdout
    assert f"    r1: {tmp_path}/r1.json message 3" in text.stdout


def test_coverage_without_marked_runs_says_why_nothing_is_apart(tmp_path):
    transcript(tmp_path, "r3", ["我要退款 100 元"])
    done = run_mbt("coverage", "--model", MODEL, "--goldens", LEVELS / "goldens", "--runs", tmp_path, "--no-gate")
    assert ("not measured: incidents and adversarial runs reported apart: no run is marked (a tag `incident` or "
            "`adversarial` in the run: docs/runs.md)") in done.stdout
    assert "undocumented behaviour: none in the runs' first deviations" in done.stdout
    bare = run_mbt("coverage", "--model", MODEL, "--goldens", LEVELS / "goldens", "--no-gate")
    assert ("not measured: usage, incidents and adversarial runs, undocumented behaviour: no runs given (--runs PATH)"
            in bare.stdout)


def test_a_saved_runs_set_keeps_each_runs_tags_and_the_marked_rows(tmp_path):
    from mbt import api

    transcript(tmp_path, "r1", ["我要退款 100 元", "我要退款 100 元"], tags=["incident"])
    transcript(tmp_path, "r3", ["我要退款 100 元"])
    url = f"sqlite:///{tmp_path / 'results.db'}"
    stored = api.runs_stored([MODEL], [str(tmp_path)], save="marked", store=url)
    assert [row.mark for row in stored.report.marked] == ["incident", "unmarked"]
    case = api.results_case("marked", "r1", store=url).doc
    assert case["tags"] == ["incident"] and case["deviation"]["event"] == "request_refund"
