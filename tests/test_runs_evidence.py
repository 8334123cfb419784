"""Never green on missing evidence: runs shaped as seeds 002 and 003 show them, judged only on what they expose.

Each test builds its artifacts the way the seeds and the instrumentations write them (never mbt's own examples) and
checks that a run whose evidence is missing or renamed is `not_judged` with what it lacked, that the gate fails on
it, and that every run metric says over how many runs it was measured (docs/runs.md, "The evidence contract").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbt.api import runs as runs_api
from mbt.runs.reader import read_runs
from tests.test_runs_readers import attr, document, span, write

MODEL = "models/orders.fsm"
T = "c" * 32
ORDER = {"owner": "C-1001", "status": "paid"}


def chat(sid, start, users, reply=None, op="chat", **extra):
    inputs = [{"role": "user", "parts": [{"type": "text", "content": u}]} for u in users]
    outputs = [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}] if reply else []
    return span(T, sid, op, start, start + 1, gen_ai__input__messages=inputs, gen_ai__output__messages=outputs,
                **extra)


def tool(sid, start, name, args, result, args_key="gen_ai__tool__call__arguments", **extra):
    return span(T, sid, "execute_tool", start, start + 1, gen_ai__tool__name=name, gen_ai__tool__call__result=result,
                **{args_key: args}, **extra)


def happy_spans(args_key="gen_ai__tool__call__arguments", op="chat"):
    """Seed 002's cancel flow, complete: look up, confirm, cancel, look up again, reply."""
    return [chat("0000000000000001", 10, ["cancel SO-10001"], None, op),
            tool("0000000000000002", 20, "get_order", {"order_id": "SO-10001"}, ORDER, args_key),
            chat("0000000000000003", 30, ["cancel SO-10001"], "SO-10001 is paid. Cancel it?", op),
            chat("0000000000000004", 40, ["cancel SO-10001", "yes"], None, op),
            tool("0000000000000005", 50, "cancel_order", {"order_id": "SO-10001"}, {"ok": True}, args_key),
            tool("0000000000000006", 60, "get_order", {"order_id": "SO-10001"}, {"status": "cancelled"}, args_key),
            chat("0000000000000007", 70, ["cancel SO-10001", "yes"], "SO-10001 has been cancelled.", op)]


RESOURCE = {"mbt.model": "orders", "mbt.run.precondition": {"customer_id": "C-1001"}, "service.version": "B"}


def judged(tmp_path, name, content, gate=None, group_by=None, judge="rules"):
    """The runs of one file judged on the orders model; its `say` forbid by its phrases alone unless `judge` says
    otherwise (these tests are about the other evidence; the description's own is tested below)."""
    path = write(tmp_path, name, content)
    gate_path = write(tmp_path, "gate.yaml", gate) if gate is not None else None
    return runs_api([MODEL], [path], gate_path=gate_path, use_cache=False, group_by=group_by, jobs=1, judge=judge)


def test_a_say_forbid_whose_phrases_are_not_said_passes_though_the_embedded_judge_leaves_its_description_open(
        tmp_path):
    """By default (the embedded judge) "SO-10001 has been cancelled." says none of the forbid's phrases, and whether
    it reveals another customer's order is not decided by the judge: the phrases, the model's own test, decide."""
    report = judged(tmp_path, "t.json", document(*happy_spans(), resource=RESOURCE), judge="embedded")
    [run] = report.runs
    assert run.verdict == "pass" and run.completed and run.not_judged == []
    assert report.gate.passed


def test_a_say_forbid_with_only_a_description_the_judge_cannot_decide_leaves_a_complete_trace_not_judged(tmp_path):
    """The same forbid without `matching` phrases: nothing decides whether "SO-10001 has been cancelled." reveals
    another customer's order, so the run is not judged, with what was not decided, and the gate fails."""
    text = Path(MODEL).read_text(encoding="utf-8")
    assert ' matching "reveal", "透露"' in text
    model = tmp_path / "orders.fsm"
    model.write_text(text.replace(' matching "reveal", "透露"', ""), encoding="utf-8")
    for doc in Path("models/docs").iterdir():  # the documents the model cites, beside it as in models/
        (tmp_path / "docs").mkdir(exist_ok=True)
        (tmp_path / "docs" / doc.name).write_bytes(doc.read_bytes())
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document(*happy_spans(), resource=RESOURCE)), encoding="utf-8")
    report = runs_api([str(model)], [str(path)], use_cache=False, jobs=1, judge="embedded")
    [run] = report.runs
    assert run.verdict == "not_judged" and not run.completed
    [gap] = run.not_judged
    assert "forbidden:reveal_other_order" in gap and "2 assistant text(s)" in gap and "embedded judge" in gap
    assert not report.gate.passed and [f.rule for f in report.gate.failures] == ["not_judged_runs"]


def test_a_complete_trace_passes_so_the_others_fail_for_their_evidence(tmp_path):
    report = judged(tmp_path, "t.json", document(*happy_spans(), resource=RESOURCE))
    [run] = report.runs
    assert run.verdict == "pass" and run.completed and run.not_judged == []
    assert report.gate.passed and report.unread == []
    assert run.context.service_version == "B"


def test_a_renamed_operation_name_is_not_judged_and_said_loudly(tmp_path):
    spans = happy_spans()
    for s in spans:  # an instrumentation upgrade renames gen_ai.operation.name
        for a in s["attributes"]:
            if a["key"] == "gen_ai.operation.name":
                a["key"] = "gen_ai.operation"
    report = judged(tmp_path, "t.json", document(*spans, resource=RESOURCE))
    [run] = report.runs
    assert run.verdict == "not_judged" and run.steps == 0
    assert "the run shows no step" in run.not_judged[0]
    assert any("`gen_ai.operation.name` absent" in u and "on 7 span(s)" in u for u in report.unread)
    assert any("attribute `gen_ai.operation`" in u for u in report.unread)
    assert report.metrics.passed == 0 and report.metrics.not_judged == 1
    assert not report.gate.passed
    assert any(f.rule == "not_judged_runs" for f in report.gate.failures)


def test_renamed_tool_arguments_are_not_judged_and_completion_is_not_counted(tmp_path):
    report = judged(tmp_path, "t.json", document(*happy_spans("gen_ai__tool__arguments"), resource=RESOURCE))
    [run] = report.runs
    assert run.verdict == "not_judged" and not run.completed
    assert any("records no arguments of get_order" in g for g in run.not_judged)
    assert any("attribute `gen_ai.tool.arguments` on 3 span(s)" in u for u in report.unread)
    assert report.metrics.task_completion_rate is None and report.metrics.fully_judged == 0


def test_a_waiver_in_the_gate_file_lets_not_judged_runs_through(tmp_path):
    report = judged(tmp_path, "t.json", document(*happy_spans("gen_ai__tool__arguments"), resource=RESOURCE),
                    gate="not_judged_runs: 1\ntask_completion_rate: '>= 0'\n")
    assert [f.rule for f in report.gate.failures] == ["task_completion_rate"]  # n/a over all runs: never green


def openllmetry_spans(inferred_order=False):
    """The same flow as OpenLLMetry writes it: indexed prompt / completion attributes, tool calls requested in the
    completion, tool results in the next prompt, and a @tool span for each tool the agent runs."""
    def llm(sid, start, prompts, completion=None, calls=()):
        attrs = {"llm__request__type": "chat", "gen_ai__system": "openai", "gen_ai__request__model": "gpt-4o",
                 "gen_ai__usage__prompt_tokens": 100, "gen_ai__usage__completion_tokens": 20}
        for i, (role, content) in enumerate(prompts):
            attrs[f"gen_ai__prompt__{i}__role"] = role
            attrs[f"gen_ai__prompt__{i}__content"] = content
        attrs["gen_ai__completion__0__role"] = "assistant"
        if completion:
            attrs["gen_ai__completion__0__content"] = completion
        for j, (name, args) in enumerate(calls):
            attrs[f"gen_ai__completion__0__tool_calls__{j}__name"] = name
            attrs[f"gen_ai__completion__0__tool_calls__{j}__arguments"] = json.dumps(args)
        return span(T, sid, None, start, start + 1, **attrs)

    def tool_span(sid, start, name, kwargs, output, sources=None):
        attrs = {"traceloop__span__kind": "tool", "traceloop__entity__name": name,
                 "traceloop__entity__input": json.dumps({"args": [], "kwargs": kwargs}),
                 "traceloop__entity__output": json.dumps(output)}
        if sources:
            attrs["mbt__tool__argument_sources"] = sources
        return span(T, sid, None, start, start + 1, **attrs)

    order = "SO-10009" if inferred_order else "SO-10001"
    return [llm("0000000000000001", 10, [("user", "cancel SO-10001")], None, [("get_order", {"order_id": order})]),
            tool_span("0000000000000002", 20, "get_order", {"order_id": order}, ORDER,
                      {"order_id": "model_inference" if inferred_order else "user_input"}),
            llm("0000000000000003", 30, [("user", "cancel SO-10001")], "SO-10001 is paid. Cancel it?")]


def test_openllmetry_attributes_are_read(tmp_path):
    report = judged(tmp_path, "t.json", document(*openllmetry_spans(), resource=RESOURCE), group_by="model")
    [run] = report.runs
    assert run.evidence.user_texts == 1 and run.evidence.tool_calls == 1 and run.evidence.assistant_texts == 1
    assert run.verdict == "pass", run.not_judged
    assert run.context.input_tokens == 200 and run.context.request_model == "gpt-4o"
    assert report.unread == []
    assert [(g.value, g.metrics.runs) for g in report.groups] == [(None, 1)]  # no gen_ai.response.model


def test_openllmetry_wrong_argument_carries_its_source(tmp_path):
    report = judged(tmp_path, "t.json", document(*openllmetry_spans(inferred_order=True), resource=RESOURCE))
    d = report.runs[0].deviation
    assert (d.type, d.source, d.actual) == ("wrong_argument", "model_inference", "SO-10009")


def test_the_earlier_span_event_form_is_read(tmp_path):
    def event(name, body, t):
        return {"timeUnixNano": str(t), "name": name, "attributes": [attr("gen_ai.event.content", body)]}

    def model_span(sid, start, events):
        out = span(T, sid, None, start, start + 1, gen_ai__system="openai")
        out["events"] = events
        return out

    spans = [model_span("0000000000000001", 10, [
                 event("gen_ai.system.message", {"content": "You are the shop's assistant."}, 10),
                 event("gen_ai.user.message", {"content": "cancel SO-10001"}, 10),
                 event("gen_ai.choice", {"index": 0, "finish_reason": "tool_calls", "message": {"tool_calls": [
                     {"id": "c1", "type": "function",
                      "function": {"name": "get_order", "arguments": '{"order_id": "SO-10001"}'}}]}}, 11)]),
             model_span("0000000000000002", 20, [
                 event("gen_ai.user.message", {"content": "cancel SO-10001"}, 20),
                 event("gen_ai.tool.message", {"id": "c1", "content": json.dumps(ORDER)}, 20),
                 event("gen_ai.choice", {"index": 0, "message": {"content": "SO-10001 is paid. Cancel it?"}}, 21)])]
    report = judged(tmp_path, "t.json", document(*spans, resource=RESOURCE))
    [run] = report.runs
    found = read_runs([str(tmp_path / "t.json")]).runs[0]
    assert [(s.kind, s.tool or s.text) for s in found.steps] == [
        ("user", "cancel SO-10001"), ("tool_call", "get_order"), ("tool_result", "get_order"),
        ("assistant", "SO-10001 is paid. Cancel it?")]
    assert run.verdict == "pass" and report.unread == []


def test_seed_002_forbidden_call_keeps_its_source_and_a_forbid_may_name_one(tmp_path):
    """Version B cancels after a multi-candidate lookup with the order id inferred by the model."""
    model = tmp_path / "orders.fsm"
    text = open(MODEL, encoding="utf-8").read()
    text = text.replace("source policy \"docs/order-cancellation-v1.md\"",
                        "source policy \"" + str((__import__("pathlib").Path(MODEL).parent
                                                  / "docs/order-cancellation-v1.md").resolve()) + "\"")
    text = text.rstrip().rstrip("}") + (
        '  forbid confirming on order_found effect call cancel_order when args.order_id from model_inference\n'
        '    inferred severity critical id cancel_inferred_order\n'
        '  forbid any on confirm effect call cancel_order when args.order_id from model_inference\n'
        '    inferred severity critical id cancel_inferred_after_confirm\n}\n')
    model.write_text(text, encoding="utf-8")
    spans = happy_spans()[:4] + [
        tool("0000000000000005", 50, "cancel_order", {"order_id": "SO-10001"}, {"ok": True},
             mbt__tool__argument_sources={"order_id": "model_inference"})]
    path = write(tmp_path, "t.json", document(*spans, resource=RESOURCE))
    report = runs_api([str(model)], [path], use_cache=False, jobs=1, group_by="version")
    d = report.runs[0].deviation
    # The call is owed by the model after "yes", but the id came from the model: forbidden, with its source.
    assert (d.type, d.element, d.source) == ("forbidden_call", "forbidden:cancel_inferred_after_confirm",
                                             "model_inference")
    assert d.sources == {"order_id": "model_inference"}
    [group] = report.groups
    assert group.value == "B" and group.first_deviations.by_signature == {
        "forbidden_call at forbidden:cancel_inferred_after_confirm, source model_inference": 1}
    # Recorded from the user, the same call is the model's own: no deviation there.
    spans[-1] = tool("0000000000000005", 50, "cancel_order", {"order_id": "SO-10001"}, {"ok": True},
                     mbt__tool__argument_sources={"order_id": "user_input"})
    path = write(tmp_path, "t.json", document(*spans, resource=RESOURCE))
    again = runs_api([str(model)], [path], use_cache=False, jobs=1).runs[0]
    assert again.deviation is None or again.deviation.type != "forbidden_call"
    # Without a recorded source the forbid cannot be judged: said, never passed over silently.
    spans[-1] = tool("0000000000000005", 50, "cancel_order", {"order_id": "SO-10001"}, {"ok": True})
    path = write(tmp_path, "t.json", document(*spans, resource=RESOURCE))
    unknown = runs_api([str(model)], [path], use_cache=False, jobs=1).runs[0]
    assert any("records no source of cancel_order's `order_id`" in g for g in unknown.not_judged)


def test_forbidden_call_by_condition_reports_the_recorded_source(tmp_path):
    spans = [chat("0000000000000001", 10, ["cancel SO-10001"]),
             tool("0000000000000002", 20, "get_order", {"order_id": "SO-10001"}, {"owner": "C-9", "status": "paid"}),
             tool("0000000000000003", 30, "cancel_order", {"order_id": "SO-10001"}, {"ok": True},
                  mbt__tool__argument_sources={"order_id": "model_inference"})]
    report = judged(tmp_path, "t.json", document(*spans, resource=RESOURCE))
    d = report.runs[0].deviation
    assert (d.type, d.source) == ("forbidden_call", "model_inference")


# ---------------------------------------------------------------- seed 003's turn loop, as it records itself


def stored_session(**extra):
    """What `persist_session()` writes to .port_sessions/<id>.json: no per-turn records."""
    return {"session_id": "s_1", "messages": ["I want to cancel SO-10001", "yes"], "input_tokens": 120,
            "output_tokens": 40, **extra}


def turn(prompt, output, stop="completed", tools=("get_order", "cancel_order"), commands=("orders",), denied=(),
         tokens=(50, 10)):
    return {"prompt": prompt, "output": output, "matched_commands": list(commands), "matched_tools": list(tools),
            "permission_denials": [{"tool_name": t, "reason": "not allowed"} for t in denied],
            "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]}, "stop_reason": stop}


def test_a_stored_session_is_judged_on_prompts_only_never_a_false_missing_call(tmp_path):
    report = judged(tmp_path, "s_1.json", {**stored_session(), "precondition": {"customer_id": "C-1001"}})
    [run] = report.runs
    assert run.verdict == "not_judged" and run.deviation is None
    assert run.evidence.records_tool_calls is False and run.context.input_tokens == 120
    assert any("the model calls get_order" in g and "records no tool calls" in g for g in run.not_judged)
    assert any("records no assistant text" in g for g in run.not_judged)


def test_a_bare_turn_result_list_is_read(tmp_path):
    turns = [turn("cancel SO-10001", "Looking it up", stop="max_turns_reached"),
             turn("cancel SO-10001 [turn 2]", "Still looking")]
    found = read_runs([write(tmp_path, "loop.json", turns)])
    assert found.invalid == []
    [run] = found.runs
    assert run.format == "turns" and [t.stop_reason for t in run.turns] == ["max_turns_reached", "completed"]
    # the router's candidates are not calls
    assert [s.kind for s in run.steps] == ["user", "assistant", "user", "assistant"]


def test_a_loop_that_goes_on_after_its_budget_stop_is_a_deviation(tmp_path):
    session = {"session_id": "s_2", "precondition": {"customer_id": "C-1001"}, "messages": [],
               "input_tokens": 999_999, "output_tokens": 0,
               "turns": [turn("cancel SO-10001", "not json {", stop="max_budget_reached"),
                         turn("cancel SO-10001 [turn 2]", "not json {")]}
    report = judged(tmp_path, "s_2.json", session)
    d = report.runs[0].deviation
    assert (d.type, d.step) == ("continued_after_stop", 3)
    gate = "turn_loop:\n  max_budget_tokens: 20000\n  structured_output: true\n"
    one_turn = dict(session, turns=session["turns"][:1])
    d = judged(tmp_path, "s_2.json", one_turn, gate=gate).runs[0].deviation
    # both at the answer (the session's totals are judged at its end): the budget, found first, is the first
    assert (d.type, d.expected, d.actual) == ("over_token_budget", 20000, 999_999)
    ordered = judged(tmp_path, "s_2.json", dict(one_turn, input_tokens=10), gate=gate).runs[0].deviation
    assert ordered.type == "invalid_structured_output" and "not JSON" in ordered.message


def test_a_token_budget_is_judged_at_the_turn_that_passes_it(tmp_path):
    session = {"session_id": "s_3", "precondition": {"customer_id": "C-1001"}, "messages": [],
               "config": {"max_budget_tokens": 100},
               "turns": [turn("cancel SO-10001", '{"a": 1}', tokens=(40, 10)),
                         turn("cancel SO-10001 [turn 2]", '{"a": 2}', tokens=(40, 20))]}
    d = judged(tmp_path, "s_3.json", session).runs[0].deviation
    assert (d.type, d.expected, d.actual, d.step) == ("over_token_budget", 100, 110, 3)


def test_structured_output_validates_against_a_declared_schema(tmp_path):
    (tmp_path / "answer.schema.json").write_text(json.dumps(
        {"type": "object", "required": ["action"], "properties": {"action": {"enum": ["RETRY", "HANDOFF"]}}}))
    session = {"session_id": "s_4", "precondition": {"customer_id": "C-1001"}, "messages": [],
               "turns": [turn("cancel SO-10001", '{"action": "GUESS"}')]}
    d = judged(tmp_path, "s_4.json", session, gate="turn_loop:\n  output_schema: answer.schema.json\n"
               ).runs[0].deviation
    assert d.type == "invalid_structured_output" and "action" in d.message


def test_router_candidates_and_stable_commands_when_declared(tmp_path):
    gate = "turn_loop:\n  calls_within_candidates: true\n  stable_commands: true\n"
    outside = {"session_id": "s_5", "precondition": {"customer_id": "C-1001"}, "messages": [],
               "turns": [turn("cancel SO-10001", "ok", tools=("get_order",), denied=("refund_order",))]}
    d = judged(tmp_path, "s_5.json", outside, gate=gate).runs[0].deviation
    assert (d.type, d.actual) == ("call_outside_candidates", "refund_order")
    unstable = {"session_id": "s_6", "precondition": {"customer_id": "C-1001"}, "messages": [],
                "turns": [turn("cancel SO-10001", "ok"), turn("cancel SO-10001 [turn 2]", "ok", commands=("x",))]}
    d = judged(tmp_path, "s_6.json", unstable, gate=gate).runs[0].deviation
    assert d.type == "unstable_routing"


def test_a_bad_turn_loop_section_is_a_located_error(tmp_path):
    from mbt.errors import LocatedError

    with pytest.raises(LocatedError) as err:
        judged(tmp_path, "s.json", stored_session(), gate="turn_loop:\n  max_turns: many\n")
    [problem] = err.value.problems
    assert (problem.path.endswith("gate.yaml"), problem.line, problem.column) == (True, 2, 14)
    assert "expected a whole number" in problem.message


# ---------------------------------------------------------------- the report says what it measured


def test_runs_without_goldens_say_so_and_name_each_run_by_its_file(tmp_path):
    from mbt.report.runs_text import runs_text

    report = judged(tmp_path, "t.json", document(*happy_spans("gen_ai__tool__arguments"), resource=RESOURCE))
    text = runs_text(report)
    assert "verified by goldens" not in text and "no goldens given (--goldens)" in text
    assert f"{T} ({tmp_path}/t.json)" in text
    assert "Runs not judged: 1" in text and "Unread telemetry" in text


def test_a_transcript_key_nothing_reads_is_said_never_dropped(tmp_path):
    """Seed 000 keeps assertions beside a run; mbt runs does not judge them, and says so once per file."""
    transcript = {"id": "ACC-REC-001", "assertions": {"must_not": ["索取当前密码"]}, "precondition": {},
                  "messages": [{"role": "user", "content": "forgot pwd", "reasoning": "..."}]}
    found = read_runs([write(tmp_path, "acc.json", transcript)])
    assert [u.split(": ", 1)[1] for u in found.unread] == [
        "key `assertions` of a transcript on 1 occasion(s): read as nothing",
        "key `reasoning` of a message on 1 occasion(s): read as nothing"]


def test_a_refusal_owed_to_a_starting_configuration_the_run_does_not_record_is_not_judged(tmp_path):
    """A bare TurnResult list records no precondition: the model refuses a cancel request of a customer not signed
    in (customer_id is none at the start), which the run cannot show either way."""
    turns = [turn("cancel SO-10001", "Looking it up")]
    report = judged(tmp_path, "loop.json", turns)
    [run] = report.runs
    assert run.verdict == "not_judged"
    assert "by a guard over customer_id, which the run never sets" in run.not_judged[0]
    # With the precondition recorded, the same refusal is the run's: a deviation.
    report = judged(tmp_path, "s.json", {"session_id": "s", "precondition": {}, "messages": [], "turns": turns})
    assert report.runs[0].deviation.type == "step_not_allowed"


def test_a_span_event_whose_body_is_under_another_name_is_read_as_nothing_and_said(tmp_path):
    def model_span(sid, start, name, body):
        out = span(T, sid, None, start, start + 1, gen_ai__system="openai")
        out["events"] = [{"timeUnixNano": str(start), "name": name, "attributes": [attr("gen_ai.event.body", body)]}]
        return out

    spans = [model_span("0000000000000001", 10, "gen_ai.user.message", {"content": "cancel SO-10001"}),
             model_span("0000000000000002", 20, "gen_ai.choice", {"message": {"content": "Looking"}})]
    report = judged(tmp_path, "t.json", document(*spans, resource=RESOURCE))
    assert report.runs[0].verdict == "not_judged" and report.runs[0].steps == 0
    assert any("attribute `gen_ai.event.body` of span event `gen_ai.user.message`" in u for u in report.unread)


def test_a_correct_hand_off_completes_the_task_of_a_hand_off_suite(tmp_path):
    """Seed 000's human_handoff suite: its runs end by handing off, never in a claimed success state."""
    def call(call_id, name, **args):
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}

    messages = [{"role": "user", "content": "cancel SO-10001"}, call("c1", "get_order", order_id="SO-10001"),
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps(ORDER)},
                {"role": "assistant", "content": "SO-10001 is paid. Cancel it?"}, {"role": "user", "content": "yes"},
                call("c2", "cancel_order", order_id="SO-10001"),
                {"role": "tool", "tool_call_id": "c2", "content": json.dumps({"error": {"type": "UNAVAILABLE"}})},
                call("c3", "handoff_to_human", order_id="SO-10001", reason="cancel_failed"),
                {"role": "assistant", "content": "A colleague will take over."}]
    transcript = {"id": "H-1", "suite": "human_handoff", "precondition": {"customer_id": "C-1001"},
                  "messages": messages}
    plain = judged(tmp_path, "h.json", transcript)
    [run] = plain.runs
    assert run.verdict == "pass" and run.final_state == "handed_off" and run.handed_off and not run.completed
    assert plain.suites["human_handoff"].task_completion_rate == 0.0
    gate = "handoff_suites: [human_handoff]\n"
    handed = judged(tmp_path, "h.json", transcript, gate=gate)
    assert handed.suites["human_handoff"].task_completion_rate == 1.0
    assert handed.suites["human_handoff"].escalation_success_rate == 1.0
    # A hand-off with the wrong reason is a deviation: it completes nothing, whatever the suite.
    messages[7] = call("c3", "handoff_to_human", order_id="SO-10001", reason="other")
    wrong = judged(tmp_path, "h.json", transcript, gate=gate)
    assert wrong.runs[0].deviation.type == "wrong_argument"
    assert wrong.suites["human_handoff"].task_completion_rate == 0.0
