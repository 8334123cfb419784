"""The observed-run readers: OTLP/JSON files, JSON Lines of spans, OpenAI-style transcripts, seed 003's sessions;
valid input becomes runs of observed steps, broken input is reported with its location and the rest is read."""

from __future__ import annotations

import json
import os

import pytest

from mbt.runs.reader import read_runs


def attr(key, value):
    if isinstance(value, int) and not isinstance(value, bool):
        return {"key": key, "value": {"intValue": str(value)}}
    if not isinstance(value, str):
        value = json.dumps(value)
    return {"key": key, "value": {"stringValue": value}}


def span(trace="a" * 32, sid="0000000000000001", op="execute_tool", start=1, end=2, **attrs):
    attributes = [attr("gen_ai.operation.name", op)] if op else []
    attributes += [attr(k.replace("__", "."), v) for k, v in attrs.items()]
    out = {"spanId": sid, "name": op or "http", "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
           "attributes": attributes}
    if trace is not None:
        out["traceId"] = trace
    return out


def document(*spans, resource=None):
    return {"resourceSpans": [{"resource": {"attributes": [attr(k, v) for k, v in (resource or {}).items()]},
                               "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]}


def chat(sid, start, users, reply=None, trace="a" * 32):
    inputs = [{"role": "user", "parts": [{"type": "text", "content": u}]} for u in users]
    outputs = [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}] if reply else []
    return span(trace, sid, "chat", start, start + 1, gen_ai__input__messages=inputs,
                gen_ai__output__messages=outputs)


def tool(sid, start, name, args, result=None, error=None, trace="a" * 32, **extra):
    attrs = {"gen_ai__tool__name": name, "gen_ai__tool__call__arguments": args}
    if result is not None:
        attrs["gen_ai__tool__call__result"] = result
    if error:
        attrs["error__type"] = error
    attrs.update(extra)
    return span(trace, sid, "execute_tool", start, start + 1, **attrs)


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def test_otlp_file_becomes_one_run_per_trace_in_time_order(tmp_path):
    root = span("b" * 32, "00000000000000a0", "invoke_agent", 0, 100, mbt__model="orders", mbt__run__suite="s1",
                mbt__run__expected_intent="CANCEL_ORDER", mbt__run__precondition={"customer_id": "C-1"})
    doc = document(
        tool("0000000000000003", 30, "get_order", {"order_id": "SO-1"}, {"owner": "C-1"}, trace="b" * 32,
             mbt__tool__argument_sources={"order_id": "user_input"}, mbt__state__after={"order_status": "paid"},
             mbt__idempotency_key="k-1"),
        chat("0000000000000002", 10, ["cancel SO-1"], trace="b" * 32),
        chat("0000000000000004", 50, ["cancel SO-1", "yes"], "Done", trace="b" * 32),
        root, span("a" * 32, "0000000000000009", None, 5, 6),  # a non-GenAI span of another trace: ignored
        resource={"service.name": "shop"})
    found = read_runs([write(tmp_path, "t.json", doc)])
    assert found.invalid == []
    assert [r.id for r in found.runs] == ["a" * 32, "b" * 32]
    run = found.runs[1]
    assert (run.model, run.suite, run.expected_intent, run.precondition) == ("orders", "s1", "CANCEL_ORDER",
                                                                            {"customer_id": "C-1"})
    assert [(s.kind, s.text or s.tool) for s in run.steps] == [
        ("user", "cancel SO-1"), ("tool_call", "get_order"), ("tool_result", "get_order"), ("user", "yes"),
        ("assistant", "Done")]
    call, result = run.steps[1], run.steps[2]
    assert call.args == {"order_id": "SO-1"} and call.sources == {"order_id": "user_input"}
    assert call.idempotency_key == "k-1" and call.where == f"trace {'b' * 32} span 0000000000000003"
    assert result.ok and result.result == {"owner": "C-1"} and result.state_after == {"order_status": "paid"}
    assert found.runs[0].steps == []


def test_tool_error_from_error_type_or_span_status(tmp_path):
    failed = tool("0000000000000001", 1, "cancel_order", {"order_id": "SO-1"})
    failed["status"] = {"code": 2, "message": "TIMEOUT"}
    doc = document(tool("0000000000000002", 5, "cancel_order", {"order_id": "SO-1"}, error="AUTH_EXPIRED"), failed)
    run = read_runs([write(tmp_path, "t.json", doc)]).runs[0]
    assert [(s.ok, s.error) for s in run.steps if s.kind == "tool_result"] == [(False, "TIMEOUT"),
                                                                              (False, "AUTH_EXPIRED")]


def test_jsonl_spans_gather_by_trace_across_lines(tmp_path):
    lines = [chat("0000000000000001", 1, ["cancel SO-1"]), tool("0000000000000002", 3, "get_order", {"order_id": "x"}),
             chat("0000000000000003", 1, ["hi"], trace="c" * 32)]
    found = read_runs([write(tmp_path, "s.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")])
    assert found.invalid == []
    assert [(r.id, len(r.steps), r.format) for r in found.runs] == [("a" * 32, 3, "otlp-spans"),
                                                                    ("c" * 32, 1, "otlp-spans")]
    assert found.runs[0].where == f"{tmp_path}/s.jsonl:1"


def test_truncated_otlp_json_is_reported_with_line_and_column(tmp_path):
    text = json.dumps(document(chat("0000000000000001", 1, ["x"])), indent=1)
    found = read_runs([write(tmp_path, "t.json", text[: len(text) // 2]), write(tmp_path, "u.json",
                                                                                document(chat("01", 1, ["y"])))])
    assert len(found.runs) == 1  # the other file is read
    [bad] = found.invalid
    assert bad.where.startswith(f"{tmp_path}/t.json:") and bad.where.count(":") == 2
    assert "not valid JSON" in bad.message


def test_broken_jsonl_line_is_reported_and_the_rest_read(tmp_path):
    good = json.dumps(chat("0000000000000001", 1, ["cancel"]))
    found = read_runs([write(tmp_path, "s.jsonl", good + "\n" + good[:40] + "\n")])
    assert len(found.runs) == 1
    [bad] = found.invalid
    file, line, column = bad.where.rsplit(":", 2)
    assert (file, line) == (f"{tmp_path}/s.jsonl", "2") and 1 <= int(column) <= 41


def test_span_without_trace_id_is_reported_and_its_trace_mates_kept(tmp_path):
    doc = document(chat("0000000000000001", 1, ["cancel"]), span(None, "0000000000000002", "chat"))
    found = read_runs([write(tmp_path, "t.json", doc)])
    assert len(found.runs) == 1
    [bad] = found.invalid
    assert bad.where == f"{tmp_path}/t.json resourceSpans[0].scopeSpans[0].spans[1]"
    assert "no `traceId`" in bad.message
    line = read_runs([write(tmp_path, "s.jsonl", json.dumps({"spanId": "01", "traceId": ""}) + "\n")])
    assert line.runs == [] and "no `traceId`" in line.invalid[0].message


def test_unknown_operation_name_makes_the_run_invalid(tmp_path):
    doc = document(chat("0000000000000001", 1, ["cancel"]), span(sid="0000000000000002", op="teleport", start=3))
    found = read_runs([write(tmp_path, "t.json", doc)])
    assert found.runs == []
    [bad] = found.invalid
    assert "unknown gen_ai.operation.name `teleport`" in bad.message and "0000000000000002" in bad.message


def test_known_but_unjudged_operations_are_ignored(tmp_path):
    doc = document(chat("0000000000000001", 1, ["cancel"]), span(sid="0000000000000002", op="embeddings", start=3))
    assert [len(r.steps) for r in read_runs([write(tmp_path, "t.json", doc)]).runs] == [1]


def test_badly_typed_span_field_is_reported(tmp_path):
    bad = chat("0000000000000001", 1, ["x"])
    bad["name"] = 7
    found = read_runs([write(tmp_path, "t.json", document(bad))])
    assert found.runs == [] and "not an OTLP span" in found.invalid[0].message


def test_openai_messages_transcript(tmp_path):
    messages = {"id": "c-1", "suite": "s", "model": "orders", "precondition": {"customer_id": "C-1"}, "messages": [
        {"role": "system", "content": "be nice"},
        {"role": "user", "content": "cancel SO-1"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "SO-1"}'},
             "mbt_sources": {"order_id": "user_input"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"owner": "C-1"}'},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"error": {"type": "TIMEOUT"}}'},
        {"role": "assistant", "content": [{"type": "text", "text": "Sure"}]}]}
    run = read_runs([write(tmp_path, "c.json", messages)]).runs[0]
    assert (run.id, run.suite, run.model, run.format) == ("c-1", "s", "orders", "messages")
    assert [(s.kind, s.tool or s.text) for s in run.steps] == [
        ("user", "cancel SO-1"), ("tool_call", "get_order"), ("tool_result", "get_order"),
        ("tool_result", "get_order"), ("assistant", "Sure")]
    assert run.steps[1].args == {"order_id": "SO-1"} and run.steps[1].sources == {"order_id": "user_input"}
    assert (run.steps[2].ok, run.steps[2].result) == (True, {"owner": "C-1"})
    assert (run.steps[3].ok, run.steps[3].error) == (False, "TIMEOUT")
    assert run.steps[1].where == f"{tmp_path}/c.json message 3"


def test_bare_message_list_and_jsonl_of_transcripts(tmp_path):
    bare = read_runs([write(tmp_path, "bare.json", [{"role": "user", "content": "hi"}])]).runs
    assert [(r.id, len(r.steps)) for r in bare] == [("bare", 1)]
    lines = json.dumps({"messages": [{"role": "user", "content": "a"}]}) + "\n" + \
        json.dumps({"messages": [{"role": "wizard", "content": "b"}]}) + "\n"
    found = read_runs([write(tmp_path, "many.jsonl", lines)])
    assert [r.id for r in found.runs] == ["many:1"]
    assert found.invalid[0].where == f"{tmp_path}/many.jsonl:2 message 1"
    assert "unknown role `wizard`" in found.invalid[0].message


def test_tool_message_without_a_call_is_reported(tmp_path):
    found = read_runs([write(tmp_path, "c.json", {"messages": [{"role": "tool", "tool_call_id": "x", "content": "{}"}]})])
    assert found.runs == [] and "names no earlier tool call" in found.invalid[0].message


def test_seed_003_session_store_with_turn_results(tmp_path):
    session = {"session_id": "s_1", "messages": ["cancel SO-1", "yes"], "input_tokens": 3, "output_tokens": 4,
               "turns": [{"prompt": "cancel SO-1", "output": "Looking", "matched_tools": ["get_order"],
                          "permission_denials": [{"tool_name": "get_order", "reason": "denied"}],
                          "stop_reason": "completed"},
                         {"prompt": "yes", "output": "", "matched_tools": [], "permission_denials": [],
                          "stop_reason": "max_turns_reached"}]}
    run = read_runs([write(tmp_path, "s_1.json", session)]).runs[0]
    assert (run.id, run.format) == ("s_1", "session")
    assert [(s.kind, s.tool or s.text, s.args) for s in run.steps] == [
        ("user", "cancel SO-1", None), ("tool_call", "get_order", None), ("tool_result", "get_order", None),
        ("assistant", "Looking", None), ("user", "yes", None)]
    assert run.steps[2].error == "permission_denied"
    prompts_only = read_runs([write(tmp_path, "s_2.json", {"session_id": "s_2", "messages": ["a", "b"]})]).runs[0]
    assert [s.text for s in prompts_only.steps] == ["a", "b"]


def test_unreadable_files_in_a_folder_are_reported_never_skipped(tmp_path):
    (tmp_path / "runs").mkdir()
    write(tmp_path, "runs/notes.txt", "hello")
    write(tmp_path, "runs/other.json", {"hello": 1})
    (tmp_path / "runs" / "bin.json").write_bytes(b"\x00\x01\xff")
    found = read_runs([str(tmp_path / "runs")])
    assert found.runs == []
    messages = sorted((i.where.rsplit("/", 1)[-1], i.message.split(" (")[0]) for i in found.invalid)
    assert [m[0].split(":")[0] for m in messages] == ["bin.json", "notes.txt", "other.json"]
    assert "not a trace or transcript file" in messages[1][1]
    assert "neither an OTLP trace" in messages[2][1]


@pytest.mark.parametrize("name", ["orders-traces.json", "orders-spans.jsonl", "transcripts"])
def test_the_shipped_examples_read_cleanly(name):
    found = read_runs([f"models/runs/{name}"])
    assert found.invalid == [] and found.runs


def test_direct_span_reading_agrees_with_opentelemetry_proto():
    # The common span shape is read without protobuf's (slow) json_format; both must give the same record, and the
    # direct reader must hand every shape it is unsure of to protobuf.
    from mbt.runs.otlp import _plain_span, proto_span

    spans = [s for rs in json.load(open("models/runs/orders-traces.json"))["resourceSpans"]
             for ss in rs["scopeSpans"] for s in ss["spans"]]
    spans += [json.loads(line) for line in open("models/runs/orders-spans.jsonl")]
    odd = dict(spans[0], attributes=[attr("n", 3), {"key": "d", "value": {"doubleValue": 1}},
                                     {"key": "a", "value": {"arrayValue": {"values": [{"boolValue": True}]}}}],
               startTimeUnixNano=17, status={"code": "STATUS_CODE_ERROR", "message": "x"})
    with_events = dict(spans[0], events=[{"timeUnixNano": "5", "name": "gen_ai.user.message",
                                          "attributes": [attr("gen_ai.event.content", '{"content": "hi"}')]},
                                         {"name": "e"}])
    for raw in spans + [odd, with_events]:
        assert _plain_span(raw) == proto_span(raw)
    for unusual in (dict(spans[0], events=[{"name": 5}]), dict(spans[0], kind="SPAN_KIND_CLIENT"),
                    dict(spans[0], attributes=[{"key": "b", "value": {"bytesValue": "AA=="}}]),
                    dict(spans[0], name=7), dict(spans[0], startTimeUnixNano="soon")):
        assert _plain_span(unusual) is None


@pytest.mark.parametrize("content,fragment", [
    ({"resourceSpans": 5}, "`resourceSpans` must be a list"),
    ({"resourceSpans": [{"resource": 3}]}, "`resource` must be an object"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": 4}]}]}, "`spans` must be a list"),
    ({"resourceSpans": [{"resource": {"attributes": [{"key": "x", "value": {"intValue": "zz"}}]}}]},
     "not an OTLP resource"),
    (None, "neither an OTLP trace"),
    ({"session_id": "s", "turns": [{"prompt": 3}]}, "a turn result needs a `prompt`"),
    ({"session_id": "s", "turns": 3}, "`turns` must be a list"),
    ({"messages": [{"role": "user", "content": 5}]}, "message content must be text"),
    ({"messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]}, "a tool call needs `function.name`"),
    ({"messages": [], "precondition": [1]}, "`precondition` must be an object"),
])
def test_malformed_documents_are_reported_never_a_crash(tmp_path, content, fragment):
    found = read_runs([write(tmp_path, "x.json", json.dumps(content))])
    assert found.runs == []
    [bad] = found.invalid
    assert fragment in bad.message and bad.where.startswith(f"{tmp_path}/x.json")


@pytest.mark.parametrize("value", [
    {"intValue": "--5"},  # "--5".lstrip("-") is digits, yet no integer
    {"intValue": "-"},
    {"arrayValue": {"values": None}},  # no list to go through
    {"doubleValue": 10 ** 400},  # a JSON integer past any float
])
def test_an_odd_attribute_value_is_left_to_protobuf_never_a_crash(tmp_path, value):
    # The direct reading of the common span shape hands what it is unsure of to protobuf's parser, which decides:
    # these once escaped it as a ValueError, TypeError or OverflowError (mbt exited 3).
    from mbt.runs.otlp import SpanProblem, proto_span

    raw = span(op="chat")
    raw["attributes"].append({"key": "app.odd", "value": value})
    found = read_runs([write(tmp_path, "t.json", document(raw))])
    try:
        expected = proto_span(raw)
    except SpanProblem as err:
        assert found.runs == [] and [i.message for i in found.invalid] == [str(err)]
    else:
        assert found.invalid == [] and len(found.runs) == 1 and expected["attributes"]["app.odd"] is not None


def test_a_resource_attribute_no_float_holds_is_reported_never_a_crash(tmp_path):
    doc = document(span(op="chat"))
    doc["resourceSpans"][0]["resource"]["attributes"].append({"key": "x", "value": {"doubleValue": 10 ** 400}})
    found = read_runs([write(tmp_path, "t.json", doc)])
    [bad] = found.invalid
    assert found.runs == [] and "not an OTLP resource" in bad.message and bad.where.endswith("resourceSpans[0]")


def test_a_span_naming_the_environment_twice_gives_the_same_run_under_every_hash_seed(tmp_path):
    # `deployment.environment.name` (the conventions' name) and the older `deployment.environment` on one span: the
    # table's order decides which is the run's environment, never the order of a set of keys (the hash seed).
    import subprocess
    import sys

    raw = span(op="chat", deployment__environment__name="prod", deployment__environment="staging",
               service__version="1", app__prompt__version="p1", gen_ai__request__model="m")
    path = write(tmp_path, "t.json", document(raw))
    code = ("import sys; from mbt.runs.reader import read_runs; "
            "c = read_runs([sys.argv[1]]).runs[0].context; print(c.environment, c.service_version)")
    seen = {subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("0", "1", "2", "3", "5", "8")}
    assert seen == {"prod 1\n"}
