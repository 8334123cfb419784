"""Grounding (issue 34, item 5): seed 000's RAG trace and GenAI retrieval spans read as runs with retrieval evidence,
judged on the contract (docs/runs.md, "Grounding"): an unapproved or expired document is never used even when it
scored higher, every claim is grounded in an approved, active, retrieved, allowed source, an ungrounded claim that
states a status, a result or a time is a critical hallucination; every fact the rules need and the run does not
record is not judged, never passed; `grounding_failures` and `critical_hallucinations` are measured, reported beside
seed 000's gate and gateable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mbt import api
from mbt.cache import Loaded
from mbt.judges.verdicts import Verdict as AnswerVerdict
from mbt.report.runs_text import runs_text
from mbt.runs.contract_judge import ContractRunJudge
from mbt.runs.grounding import GroundingProblem, critical_kinds, item_rule, judge_grounding
from mbt.runs.reader import read_runs
from mbt.runs.results import RunsReport
from tests.contract_stand_in import contract_elements, load_contract, register_contract_kind, restore_contract_kind
from tests.test_runs_readers import attr, document, span, write

ROOT = Path(__file__).resolve().parents[1]
SEED_TRACE = "models/traces/recovery-example.json"
FAILING_TRACE = "models/traces/recovery-expired-source.json"
SEED_GATE = "models/gates/seed-000-release.yaml"
V3 = {"document_id": "account-recovery-v3", "approved": True, "status": "active", "score": 0.91}
V1 = {"document_id": "account-recovery-v1", "approved": False, "status": "expired", "score": 0.94}


def seed_trace() -> dict:
    return json.loads(open(SEED_TRACE, encoding="utf-8").read())


@pytest.fixture
def contract_kind():
    previous = register_contract_kind()
    yield load_contract()
    restore_contract_kind(previous)


def judged(monkeypatch, contract, paths, gate=None, tmp_path=None) -> RunsReport:
    """`mbt.api.runs` on the contract (loaded by the stand-in: the contract kind's reader is another branch's)."""
    monkeypatch.setattr(api, "load_compiled", lambda model_paths, use_cache=True: Loaded([], [contract]))
    return api.runs([contract.file], paths, gate_path=gate, use_cache=False, jobs=1)


def judge(contract, raw: dict, tmp_path, name="t.json"):
    [run] = read_runs([write(tmp_path, name, raw)]).runs
    return ContractRunJudge(contract, contract_elements(contract)).judge(run)


# ---------------------------------------------------------------- reading


def test_seed_rag_trace_is_read_as_a_run_with_retrieval_evidence():
    """Seed 000's RAG trace, unchanged: refused by `mbt runs` before ("neither an OTLP trace nor a transcript")."""
    found = read_runs([SEED_TRACE])
    assert found.invalid == [] and found.unread == []
    [run] = found.runs
    assert (run.id, run.case_id, run.format) == ("RAG-RECOVERY-001", "RAG-RECOVERY-001", "rag")
    assert [(s.kind, s.text) for s in run.steps] == [("user", "forgot pwd，登不上了")]
    assert not run.records_tool_calls and not run.records_assistant_texts
    r = run.retrieval
    assert r.route == "account_recovery" and r.queries == ["forgot pwd，登不上了"] and r.documents_recorded
    assert [(d.id, d.approved, d.status, d.score) for d in r.documents] == [
        ("account-recovery-v3", True, "active", 0.91), ("account-recovery-v1", False, "expired", 0.94)]
    assert r.selected == ("account-recovery-v3",)
    assert [(c.text, c.grounded_in) for c in r.claims] == [("重置链接会发送到注册邮箱", ("account-recovery-v3",))]
    assert [text for _, text in r.must_not] == ["引用 account-recovery-v1", "生成来源中不存在的处理时限"]


def test_rag_traces_as_json_lines_and_their_unread_keys(tmp_path):
    lines = [dict(seed_trace(), case_id="A", contract="password-reset-v1", suite="grounding_and_hallucination",
                  answer="请查看注册邮箱。"),
             dict(seed_trace(), case_id="B", retrieved=[dict(V3, title="v3")], extra=1)]
    found = read_runs([write(tmp_path, "rag.jsonl", "".join(json.dumps(x) + "\n" for x in lines))])
    a, b = found.runs
    assert (a.model, a.suite, a.where) == ("password-reset-v1", "grounding_and_hallucination", f"{tmp_path}/rag.jsonl:1")
    assert [(s.kind, s.text) for s in a.steps][-1] == ("assistant", "请查看注册邮箱。") and a.records_assistant_texts
    assert b.retrieval.documents[0].id == "account-recovery-v3"
    assert found.unread == [f"{tmp_path}/rag.jsonl: key `extra` of a RAG trace on 1 occasion(s): read as nothing",
                            f"{tmp_path}/rag.jsonl: key `title` of a retrieved document on 1 occasion(s): read as nothing"]


@pytest.mark.parametrize("change, where, message", [
    ({"retrieved": {"document_id": "x"}}, "retrieved", "`retrieved` must be a list"),
    ({"retrieved": [V3, {"approved": True}]}, "retrieved[1]", "needs a `document_id`"),
    ({"retrieved": [dict(V3, approved="yes")]}, "retrieved[0]", "`approved` must be true or false"),
    ({"retrieved": [dict(V3, score="high")]}, "retrieved[0]", "`score` must be a number"),
    ({"claims": [{"grounded_in": "account-recovery-v3"}]}, "claims[0]", "a claim needs its `text`"),
    ({"claims": [{"text": "t", "grounded_in": 3}]}, "claims[0]", "`grounded_in` must be a document id"),
    ({"selected_source": {"id": "v3"}}, "selected_source", "`selected_source` must be a document id"),
    ({"must_not": "引用 v1"}, "must_not", "`must_not` must be a list of texts"),
])
def test_a_broken_rag_trace_is_invalid_at_its_field_and_the_rest_is_read(tmp_path, change, where, message):
    path = write(tmp_path, "bad.jsonl", json.dumps(dict(seed_trace(), **change)) + "\n" + json.dumps(seed_trace()))
    found = read_runs([path])
    assert [r.id for r in found.runs] == ["RAG-RECOVERY-001"]
    [bad] = found.invalid
    assert bad.where == f"{path}:1 {where}" and message in bad.message


def retrieval_span(documents, trace="d" * 32, sid="00000000000000d1", **extra):
    return span(trace, sid, "retrieval", 20, 30, gen_ai__data_source__id="kb", gen_ai__retrieval__top_k=2,
                gen_ai__retrieval__query__text="forgot pwd", gen_ai__retrieval__documents=documents, **extra)


def test_the_current_conventions_retrieval_span_and_mbt_grounding_attributes(tmp_path):
    docs = [{"id": "account-recovery-v3", "score": 0.91, "metadata": {"approved": True, "status": "active"}},
            {"document": {"id": "account-recovery-v1", "score": 0.94, "content": "旧流程",
                          "metadata": {"approved": False, "status": "expired"}}}]
    claims = [{"text": "重置链接会发送到注册邮箱", "grounded_in": "account-recovery-v3"}]
    root = span("d" * 32, "00000000000000d0", "invoke_agent", 0, 100, mbt__grounding__selected_source="account-recovery-v3",
                mbt__grounding__claims=claims, mbt__grounding__must_not=["引用 account-recovery-v1"],
                mbt__run__route="account_recovery")
    found = read_runs([write(tmp_path, "t.json", document(root, retrieval_span(docs)))])
    assert found.invalid == [] and found.unread == []
    r = found.runs[0].retrieval
    assert r.queries == ["forgot pwd"] and r.route == "account_recovery" and r.selected == ("account-recovery-v3",)
    assert [(d.id, d.approved, d.status, d.score, d.content) for d in r.documents] == [
        ("account-recovery-v3", True, "active", 0.91, None), ("account-recovery-v1", False, "expired", 0.94, "旧流程")]
    assert [c.where for c in r.claims] == [f"trace {'d' * 32} claims[0]"]
    assert r.must_not == [(f"trace {'d' * 32} must_not[0]", "引用 account-recovery-v1")]


def test_openinference_retriever_and_openllmetry_vector_results(tmp_path):
    oi = span("e" * 32, "00000000000000e1", None, 10, 20, openinference__span__kind="RETRIEVER")
    oi["attributes"] += [attr("input.value", "forgot pwd"),
                         attr("retrieval.documents.1.document.id", "account-recovery-v1"),
                         attr("retrieval.documents.1.document.metadata",
                              json.dumps({"approved": False, "status": "expired"})),
                         attr("retrieval.documents.0.document.id", "account-recovery-v3"),
                         attr("retrieval.documents.0.document.score", "0.91"),
                         attr("retrieval.documents.0.document.metadata", json.dumps({"approved": True,
                                                                                      "status": "active"}))]
    oi["attributes"][-2]["value"] = {"doubleValue": 0.91}
    vector = span("f" * 32, "00000000000000f1", None, 10, 20, db__system="chroma")
    vector["events"] = [{"name": "db.query.result", "timeUnixNano": "15", "attributes": [
        attr("db.query.result.id", "account-recovery-v3"), {"key": "db.query.result.score", "value": {"doubleValue": 0.9}},
        attr("db.query.result.metadata", json.dumps({"approved": True, "status": "active"})),
        attr("db.query.result.document", "重置链接会发送到注册邮箱")]}]
    found = read_runs([write(tmp_path, "t.json", document(oi, vector))])
    assert found.invalid == [] and found.unread == []
    by_id = {run.id: run.retrieval for run in found.runs}
    assert [(d.id, d.approved, d.status, d.score) for d in by_id["e" * 32].documents] == [
        ("account-recovery-v3", True, "active", 0.91), ("account-recovery-v1", False, "expired", None)]
    assert by_id["e" * 32].queries == ["forgot pwd"] and by_id["e" * 32].claims is None
    [doc] = by_id["f" * 32].documents
    assert (doc.id, doc.score, doc.approved, doc.content) == ("account-recovery-v3", 0.9, True, "重置链接会发送到注册邮箱")


def test_a_renamed_retrieval_attribute_is_loud_and_its_documents_are_not_recorded(tmp_path):
    renamed = span("d" * 32, "00000000000000d1", "retrieval", 20, 30, gen_ai__retrieval__docs=[{"id": "x"}])
    found = read_runs([write(tmp_path, "t.json", document(renamed))])
    r = found.runs[0].retrieval
    assert not r.documents_recorded and r.documents == []
    assert found.unread == [f"{tmp_path}/t.json: attribute `gen_ai.retrieval.docs` on 1 span(s): read as nothing"]


# ---------------------------------------------------------------- the rules


def test_the_seed_trace_is_grounded_and_its_own_must_not_items_are_kept():
    g = judge_grounding(seed_trace(), ["account-recovery-v3"], where="RAG-RECOVERY-001")
    assert g.passed and g.judged and g.hallucinations_judged
    assert (g.failures, g.gaps, g.used, g.claims, g.claims_grounded) == ([], [], ["account-recovery-v3"], 1, 1)
    assert [(i.text, i.verdict) for i in g.must_not] == [("引用 account-recovery-v1", "kept"),
                                                        ("生成来源中不存在的处理时限", "kept")]


def test_the_expired_document_that_scored_higher_is_never_used():
    raw = dict(seed_trace(), selected_source="account-recovery-v1",
               claims=[{"text": "重置链接会发送到注册邮箱", "grounded_in": ["account-recovery-v3", "account-recovery-v1"]}])
    g = judge_grounding(raw, ["account-recovery-v3"])
    assert [(f.type, f.where, f.source) for f in g.failures] == [
        ("unapproved_source", "evidence selected_source", "account-recovery-v1"),
        ("unapproved_source", "evidence claims[0]", "account-recovery-v1")]
    assert "not approved and is expired" in g.failures[0].message
    assert "scored higher than `account-recovery-v3` (0.94 > 0.91)" in g.failures[0].message
    assert g.claims_grounded == 1 and g.critical == []  # the claim has a usable source too; v1's use still fails
    assert [(i.verdict, i.reason) for i in g.must_not][0] == (
        "violated", "`account-recovery-v1` is used: it is the selected source; it grounds the claim '重置链接会发送到注册邮箱'")


@pytest.mark.parametrize("doc, kind", [
    (dict(V3, approved=False), "unapproved_source"), (dict(V3, status="retired"), "expired_source"),
    (dict(V3, document_id="account-recovery-v2"), "source_not_retrieved"),
])
def test_each_unusable_source_fails(doc, kind):
    raw = dict(seed_trace(), retrieved=[doc, V1])
    g = judge_grounding(raw, ["account-recovery-v3"])
    assert g.failures[0].type == kind and not g.passed
    assert [f.type for f in g.failures][-1] == "ungrounded_claim"  # its only source is unusable


def test_a_source_outside_the_contracts_allowed_sources_fails_and_none_named_allows_any():
    raw = dict(seed_trace(), retrieved=[V3, V1, dict(V3, document_id="faq-7")], selected_source="faq-7",
               claims=[{"text": "重置链接会发送到注册邮箱", "grounded_in": "faq-7"}])
    assert [f.type for f in judge_grounding(raw, ["account-recovery-v3"]).failures] == [
        "source_not_allowed", "source_not_allowed", "ungrounded_claim"]
    assert judge_grounding(raw, []).passed and judge_grounding(raw, None).passed


@pytest.mark.parametrize("claim, kinds", [
    ("重置申请会在24小时内处理完成", ("time",)), ("您的账户已锁定", ("status",)), ("我已为您重置密码", ("result",)),
    ("Your account has been locked.", ("status",)), ("I have reset your password.", ("result",)),
    ("The link expires within 24 hours.", ("time",)), ("Tài khoản của bạn đã bị khóa", ("status",)),
    ("Chúng tôi đã gửi liên kết", ("result",)), ("Liên kết hết hạn trong vòng 3 ngày", ("time",)),
    ("Phí là 50.000 đồng", ("quantity",)), ("Your reset was completed on 2026-12-01", ("result", "time")),
])
def test_an_ungrounded_claim_stating_a_status_result_or_time_is_a_critical_hallucination(claim, kinds):
    assert critical_kinds(claim) == kinds
    g = judge_grounding(dict(seed_trace(), claims=[{"text": claim, "grounded_in": None}]), ["account-recovery-v3"])
    [f] = g.failures
    assert (f.type, f.kinds) == ("critical_hallucination", kinds)
    grounded = judge_grounding(dict(seed_trace(), claims=[{"text": claim, "grounded_in": "account-recovery-v3"}]),
                               ["account-recovery-v3"])
    assert grounded.failures == []


@pytest.mark.parametrize("claim", ["重置链接会发送到注册邮箱", "Please check your registered mailbox.",
                                   "Vui lòng kiểm tra hộp thư đăng ký"])
def test_an_ungrounded_claim_stating_none_of_them_is_ungrounded_not_critical(claim):
    assert critical_kinds(claim) == ()
    [f] = judge_grounding(dict(seed_trace(), claims=[{"text": claim, "grounded_in": []}])).failures
    assert f.type == "ungrounded_claim"


def test_a_claims_time_must_be_in_its_sources_recorded_content():
    docs = [dict(V3, content="重置链接在24小时内有效。"), V1]
    said = [{"text": "重置链接48小时内有效", "grounded_in": "account-recovery-v3"}]
    g = judge_grounding(dict(seed_trace(), retrieved=docs, claims=said))
    assert [(f.type, f.kinds) for f in g.failures] == [("critical_hallucination", ("time",))]
    assert "'48小时'" in g.failures[0].message and g.must_not[1].verdict == "violated"
    g = judge_grounding(dict(seed_trace(), retrieved=docs, claims=[dict(said[0], text="重置链接24小时内有效")]))
    assert g.passed and g.must_not[1].verdict == "kept"
    # without the content, the time is taken on the trace's word for the rule, but the trace's item about a time
    # "not in the sources" cannot be decided
    g = judge_grounding(dict(seed_trace(), claims=[dict(said[0], text="重置链接24小时内有效")]))
    assert g.failures == [] and g.must_not[1].verdict == "not_judged" and not g.passed


@pytest.mark.parametrize("change, gap", [
    ({"claims": None}, "records no claims"),
    ({"claims": [{"text": "重置链接会发送到注册邮箱"}]}, "does not record what grounds the claim"),
    ({"retrieved": [{"document_id": "account-recovery-v3", "status": "active"}]}, "whose approval the run does not "
                                                                                    "record"),
    ({"retrieved": [{"document_id": "account-recovery-v3", "approved": True}]}, "whose status the run does not record"),
    ({"retrieved": [dict(V3, status="pending-review")]}, "records as `pending-review`"),
    ({"retrieved": None}, "records no retrieved documents"),
])
def test_a_fact_the_rules_need_and_the_run_does_not_record_is_not_judged_never_passed(change, gap):
    raw = {k: v for k, v in dict(seed_trace(), **change).items() if v is not None}
    g = judge_grounding(raw, ["account-recovery-v3"])
    assert g.failures == [] and not g.passed and not g.judged
    assert any(gap in x for x in g.gaps), g.gaps


def test_judge_grounding_on_evidence_without_retrieval_judges_nothing():
    g = judge_grounding({"query": "forgot pwd"}, ["account-recovery-v3"])
    assert not g.passed and not g.judged and g.gaps == [
        "evidence: no retrieval evidence (`retrieved`, `selected_source`, `claims`): grounding is not judged"]
    with pytest.raises(GroundingProblem, match="evidence retrieved"):
        judge_grounding({"retrieved": 3})


@pytest.mark.parametrize("text, rule", [
    ("引用 account-recovery-v1", ("document", "account-recovery-v1")),
    ("cite account-recovery-v1", ("document", "account-recovery-v1")),
    ("引用 account-recovery-v3 以外的文档", None),
    ("生成来源中不存在的处理时限", ("time", None)), ("make up a processing time limit", ("time", None)),
    ("bịa ra thời hạn xử lý", ("time", None)), ("承诺处理时限", None),
    ("编造账户状态或重置结果", ("status_result", None)), ("fabricate an account status", ("status_result", None)),
    ("声称已经替用户修改账户", None), ("索取用户当前密码", None),
])
def test_which_must_not_items_the_grounding_rules_decide(text, rule):
    assert item_rule(text, {"account-recovery-v1", "account-recovery-v3"}) == rule


# ---------------------------------------------------------------- the contract's run judge


def test_the_seed_trace_on_the_contract_is_not_judged_for_its_items_and_grounding_passes(tmp_path):
    contract = load_contract()
    v = judge(contract, seed_trace(), tmp_path)
    assert v.deviation is None and v.not_judged and not v.passed
    assert v.grounding.passed
    items = {key: verdict for key, verdict, _ in v.items}
    assert items == {"must_not[0]": "not_judged", "must_not[1]": "not_judged", "must_not[2]": "pass",
                     "must_have[0]": "not_judged", "must_have[1]": "not_judged"}
    assert [g.split(" is not judged: ")[0].split(": ", 1)[1] for g in v.gaps] == [
        "must_not '索取用户当前密码' (must_not[0])", "must_not '声称已经替用户修改账户' (must_not[1])",
        "must_have '指向批准的密码重置入口' (must_have[0])", "must_have '说明用户下一步需要查看注册邮箱' (must_have[1])"]
    elements = contract_elements(contract)
    assert "grounding.allowed_sources[0]" in {elements[i].id for i in v.exercised}


def test_the_failing_trace_deviates_first_on_the_expired_source_a_critical_failure(tmp_path):
    contract = load_contract()
    v = judge(contract, json.loads(open(FAILING_TRACE, encoding="utf-8").read()), tmp_path)
    d = v.deviation
    assert (d.type, d.element, d.severity, d.actual) == ("unapproved_source", "grounding.allowed_sources[0]", "high",
                                                         "account-recovery-v1")
    assert [f.type for f in v.grounding.failures] == ["unapproved_source", "unapproved_source", "ungrounded_claim",
                                                      "critical_hallucination"]
    assert [i.verdict for i in v.grounding.must_not] == ["violated", "violated"]


def transcript(answer, **extra):
    return {"id": "T1", "messages": [{"role": "user", "content": "forgot pwd，登不上了"},
                                     {"role": "assistant", "content": answer}], **extra}


def test_an_answer_asking_for_the_current_password_violates_must_not(tmp_path):
    v = judge(load_contract(), transcript("请告诉我您当前的密码，我帮您查看。", **seed_trace()), tmp_path)
    assert (v.deviation.type, v.deviation.element) == ("must_not_violated", "must_not[0]")
    assert v.deviation.where == f"{tmp_path}/t.json message 2"


def test_the_exposed_intent_is_judged_against_intent_if_exposed(tmp_path):
    contract = load_contract()
    v = judge(contract, transcript("请查看注册邮箱。", intent="ACCOUNT_UNLOCK", **seed_trace()), tmp_path)
    assert (v.deviation.type, v.deviation.element, v.deviation.expected) == ("wrong_intent", "intent_if_exposed",
                                                                             "PASSWORD_RESET")
    v = judge(contract, transcript("请查看注册邮箱。", intent="PASSWORD_RESET", **seed_trace()), tmp_path)
    assert v.deviation is None and ("intent_if_exposed", "pass", "intent `PASSWORD_RESET`") in v.items


def test_a_transcript_without_retrieval_evidence_leaves_grounding_not_judged(tmp_path):
    v = judge(load_contract(), transcript("请查看注册邮箱。"), tmp_path)
    assert v.grounding is None and v.not_judged
    assert any("records no retrieval evidence" in g for g in v.gaps)


class Scripted:
    """An answer judge that decides both ways (as an LLM judge does), from a table: (item, answer) -> whether the
    answer does what the item describes (`pass`: it does). It is asked on the item's criterion (mbt.judges.behaviour),
    whose verdict for a forbidden behaviour is the other way round: pass when the answer does not do it."""

    name, version = "scripted", "1"

    def __init__(self, table):
        self.table = table

    def judge(self, item):
        does = self.table.get((item.criterion.behaviour, item.actual), "not_judged")
        verdict = {"pass": "fail", "fail": "pass"}.get(does, does) if item.criterion.forbidden else does
        return AnswerVerdict(verdict, "", self.name, "1")

    def judge_many(self, items):
        return [self.judge(i) for i in items]


def test_a_judge_that_decides_both_ways_can_pass_a_run_and_fail_a_missing_must_have(tmp_path):
    contract = load_contract()
    answer = "请通过官方重置入口操作，然后查看注册邮箱。"
    table = {(i.text, answer): "fail" for i in contract.must_not}
    table.update({(i.text, answer): "pass" for i in contract.must_have})
    [run] = read_runs([write(tmp_path, "t.json", transcript(answer, **seed_trace()))]).runs
    v = ContractRunJudge(contract, contract_elements(contract), Scripted(table)).judge(run)
    assert v.passed, v.gaps
    table[(contract.must_have[1].text, answer)] = "fail"
    v = ContractRunJudge(contract, contract_elements(contract), Scripted(table)).judge(run)
    assert (v.deviation.type, v.deviation.element) == ("must_have_missing", "must_have[1]")


def test_a_tool_failure_makes_recovery_apply_and_judged_by_the_answers_after_it(tmp_path):
    contract = load_contract()
    answer = "暂时无法完成重置，已为您转人工客服。"
    messages = [{"role": "user", "content": "帮我重置密码"},
                {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "start_password_reset",
                                                                                "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"error": "TIMEOUT"})},
                {"role": "assistant", "content": answer}]
    [run] = read_runs([write(tmp_path, "t.json", {"id": "T2", "messages": messages})]).runs
    v = ContractRunJudge(contract, contract_elements(contract)).judge(run)
    assert ("recovery.tool_failure" in {key for key, _, _ in v.items})
    assert any("recovery.tool_failure" in g and "applies (step 3)" in g for g in v.gaps)
    table = {(contract.recovery[2].text, answer): "fail"}
    v = ContractRunJudge(contract, contract_elements(contract), Scripted(table)).judge(run)
    assert v.deviation.type == "recovery_missed"
    assert ("recovery.tool_failure", "fail", "no answer after the situation does it") in v.items


# ---------------------------------------------------------------- through `mbt runs`: metrics, gate, reports


def test_runs_fill_grounding_failures_and_critical_hallucinations_beside_seed_000s_gate(monkeypatch, contract_kind):
    """Before: both figures printed "not measured: no rule for it in docs/runs.md"."""
    report = judged(monkeypatch, contract_kind, ["models/traces/"], SEED_GATE)
    m = report.metrics
    assert (m.retrieval_runs, m.grounding_runs, m.grounding_failures) == (2, 2, 1)
    assert (m.hallucination_runs, m.critical_hallucinations) == (2, 1)
    assert (m.completion_runs, m.task_completion_rate) == (0, None)  # a contract has no path to complete
    separately = {s.name: s for s in report.separately}
    assert (separately["grounding_failures"].value, separately["grounding_failures"].runs) == (1, 2)
    assert (separately["critical_hallucinations"].value, separately["critical_hallucinations"].runs) == (1, 2)
    assert "not measured" not in separately["grounding_failures"].note
    by_id = {r.id: r for r in report.runs}
    assert by_id["RAG-RECOVERY-001"].verdict == "not_judged" and by_id["RAG-RECOVERY-001"].grounding.judged
    failing = by_id["RAG-RECOVERY-002"]
    assert failing.verdict == "deviation" and failing.critical and failing.grounding.critical_hallucinations == 1
    assert [i.verdict for i in failing.grounding.must_not] == ["fail", "fail"]
    assert report.regressions_skipped == [
        f"{FAILING_TRACE} (RAG-RECOVERY-002): unapproved_source on contract `password-reset-v1`: regression goldens "
        "are written for fsm models only"]
    text = runs_text(report)
    assert "grounding_failures: 1  (runs with a grounding failure / runs whose grounding was judged (1 of 2))" in text
    assert "critical_hallucinations: 1  (runs with a critical hallucination / runs whose claims were judged (1 of 2))" \
        in text
    assert ("Grounding: 2 run(s) with retrieval evidence: 1 with a grounding failure (of 2 judged on it); 1 with a "
            "critical hallucination (of 2 whose claims were judged)") in text
    assert "    - critical_hallucination (time): models/traces/recovery-expired-source.json claims[1]: " in text
    dumped = json.loads(report.model_dump_json())
    assert dumped["schema_version"] == "2.3"
    assert dumped["runs"][1]["grounding"]["failures"][3]["kinds"] == ["time"]


def test_a_gate_fails_on_the_grounding_figures_and_on_them_not_measured(monkeypatch, contract_kind, tmp_path):
    gate = write(tmp_path, "gate.yaml", 'grounding_failures: "<= 0"\ncritical_hallucinations: 0\n'
                                        "not_judged_runs: 5\n")
    report = judged(monkeypatch, contract_kind, ["models/traces/"], gate)
    assert [(f.rule, f.actual, f.message) for f in report.gate.failures] == [
        ("critical_failures", 1, "critical_failures is 1, the gate requires <= 0"),
        ("grounding_failures", 1, "grounding_failures is 1 of 2 run(s) judged on their grounding, the gate requires "
                                  "<= 0"),
        ("critical_hallucinations", 1, "critical_hallucinations is 1 of 2 run(s) whose claims were judged, the gate "
                                       "requires <= 0")]
    seed_only = judged(monkeypatch, contract_kind, [SEED_TRACE], gate)
    assert seed_only.gate.passed
    # no run with retrieval evidence: not measured, so the written limit fails (never green on what was not measured)
    runs = api.runs(["models/orders.fsm"], ["models/runs/orders-spans.jsonl"], gate_path=gate, use_cache=False, jobs=1)
    assert runs.metrics.grounding_failures is None and runs.metrics.retrieval_runs == 0
    assert [f.message for f in runs.gate.failures if f.rule in ("grounding_failures", "critical_hallucinations")] == [
        "grounding_failures is not measured (no run had retrieval evidence), the gate requires <= 0",
        "critical_hallucinations is not measured (no run had retrieval evidence), the gate requires <= 0"]


def test_without_retrieval_evidence_the_figures_say_not_measured_and_why():
    report = api.runs(["models/orders.fsm"], ["models/runs/orders-spans.jsonl"], gate_path=SEED_GATE,
                      use_cache=False, jobs=1)
    notes = {s.name: (s.value, s.note) for s in report.separately}
    assert notes["grounding_failures"] == (None, "not measured: no run had retrieval evidence")
    assert notes["critical_hallucinations"] == (None, "not measured: no run had retrieval evidence")


def test_retrieval_evidence_judged_on_an_fsm_is_kept_and_not_judged(tmp_path):
    """A trace judged on a model that is not a contract: its evidence is reported, its grounding is not measured."""
    path = write(tmp_path, "rag.json", dict(seed_trace(), model="orders"))
    report = api.runs(["models/orders.fsm"], [path], gate_path=SEED_GATE, use_cache=False, jobs=1)
    [run] = report.runs
    assert run.grounding is not None and not run.grounding.judged
    assert run.grounding.not_judged == [f"{path}: retrieval evidence is judged on a contract model; `orders` is "
                                        "not one"]
    notes = {s.name: s.note for s in report.separately}
    assert notes["grounding_failures"] == ("not measured: 1 run(s) with retrieval evidence, none of them judged on "
                                           "it (each says what it lacked)")


def test_the_figures_are_measured_per_suite_and_stay_deterministic(monkeypatch, contract_kind, tmp_path):
    lines = [dict(seed_trace(), case_id="A", suite="grounding_and_hallucination"),
             dict(json.loads(open(FAILING_TRACE, encoding="utf-8").read()), case_id="B", suite="account_recovery")]
    path = write(tmp_path, "rag.jsonl", "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    report = judged(monkeypatch, contract_kind, [path])
    assert report.suites["grounding_and_hallucination"].grounding_failures == 0
    assert report.suites["account_recovery"].grounding_failures == 1
    again = judged(monkeypatch, contract_kind, [path])
    assert again.model_dump_json() == report.model_dump_json()


def test_a_positional_folder_leaves_rag_traces_out_of_the_goldens(tmp_path):
    from mbt.paths import RAG_TRACE_FILE, left_out

    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "trace.json").write_text(json.dumps(seed_trace()), encoding="utf-8")
    assert left_out([str(folder)], []) == {str((folder / "trace.json").resolve()): RAG_TRACE_FILE}



def test_an_otel_trace_with_a_retrieval_span_is_judged_on_the_contract(monkeypatch, contract_kind, tmp_path):
    """The conventions' shapes end to end: a chat span's answer, a retrieval span's documents, mbt's grounding
    attributes; the answer asks for the password (must_not[0]) and a claim uses the expired v1."""
    trace = "9" * 32
    docs = [{"id": "account-recovery-v3", "score": 0.91, "metadata": {"approved": True, "status": "active"}},
            {"id": "account-recovery-v1", "score": 0.94, "metadata": {"approved": False, "status": "expired"}}]
    chat = span(trace, "0000000000000092", "chat", 40, 50,
                gen_ai__input__messages=[{"role": "user", "parts": [{"type": "text", "content": "forgot pwd"}]}],
                gen_ai__output__messages=[{"role": "assistant", "parts": [
                    {"type": "text", "content": "请提供您当前的密码，我来帮您重置。"}]}])
    root = span(trace, "0000000000000090", "invoke_agent", 0, 100, mbt__grounding__selected_source="account-recovery-v3",
                mbt__grounding__claims=[{"text": "重置链接会发送到注册邮箱", "grounded_in": "account-recovery-v1"}])
    path = write(tmp_path, "t.json", document(root, retrieval_span(docs, trace=trace, sid="0000000000000091"), chat))
    report = judged(monkeypatch, contract_kind, [path])
    [run] = report.runs
    assert report.unread == [] and run.verdict == "deviation"
    assert (run.deviation.type, run.deviation.where) == ("unapproved_source", f"trace {trace} claims[0]")
    assert [f.type for f in run.grounding.failures] == ["unapproved_source", "ungrounded_claim"]
    assert ("must_not[0]", "fail", "the answer does it") in [(i.item, i.verdict, i.reason) for i in run.items]
    assert report.metrics.grounding_failures == 1 and report.metrics.critical_hallucinations == 0


def test_the_grounding_report_is_the_same_under_any_hash_seed():
    script = ("import json, sys\n"
              "from unittest import mock\n"
              "from mbt import api\n"
              "from mbt.cache import Loaded\n"
              "from tests.contract_stand_in import load_contract, register_contract_kind\n"
              "register_contract_kind()\n"
              "contract = load_contract()\n"
              "with mock.patch.object(api, 'load_compiled', lambda paths, use_cache=True: Loaded([], [contract])):\n"
              "    report = api.runs([contract.file], ['models/traces/'], gate_path='models/gates/seed-000-release.yaml',"
              " use_cache=False, jobs=1)\n"
              "sys.stdout.write(report.model_dump_json())\n")
    outputs = set()
    for seed in ("1", "7"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "MBT_NO_CACHE": "1"}
        done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                              check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1 and '"grounding_failures":1' in outputs.pop()


@pytest.mark.parametrize("claim", ["Your account is linked to your e-mail address.", "账户绑定了注册邮箱"])
def test_a_sentence_about_an_account_is_not_a_status_by_itself(claim):
    assert critical_kinds(claim) == ()


def test_a_trace_of_retrieval_alone_is_judged_on_its_grounding(tmp_path):
    raw = {k: v for k, v in seed_trace().items() if k != "query"}
    contract = load_contract()
    [run] = read_runs([write(tmp_path, "t.json", raw)]).runs
    v = ContractRunJudge(contract, contract_elements(contract)).judge(run)
    assert run.steps == [] and v.grounding.passed and v.judged_steps == 1
    assert not any("shows no step" in g for g in v.gaps)
