"""Runs of every shape seeds 002 and 003 show, complete and with evidence missing or renamed, judged by `mbt runs`:
how many of each shape were tried and what each gave (issue 32's figures). Prints; never asserts.

    .venv/bin/python tests/bench/run_shapes.py            # 50 runs per shape
    .venv/bin/python tests/bench/run_shapes.py --runs 200

Each shape's runs are seed 002's cancel flow on models/orders.fsm, varied by a seeded random: the order number, and
in about a third of the runs one mistake an agent makes (an order id the model inferred, success claimed before the
second lookup). A shape whose evidence is complete must give pass or a deviation; a shape with missing or renamed
evidence must give no pass (the line says so when one does). A second table does the same for grounding (issue 34):
seed 000's RAG trace and the retrieval spans, complete and with claims, approval or documents missing, judged by the
grounding rules against the contract's allowed source.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mbt.api import runs as runs_api  # noqa: E402

MODEL = str(Path(__file__).resolve().parents[2] / "models" / "orders.fsm")
PRE = {"customer_id": "C-1001"}


def attr(key, value):
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        value = json.dumps(value)
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def span(trace, n, start, attrs, events=None):
    out = {"traceId": trace, "spanId": f"{n:016x}", "name": "s", "startTimeUnixNano": str(start),
           "endTimeUnixNano": str(start + 1000), "attributes": [attr(k, v) for k, v in attrs.items()]}
    if events:
        out["events"] = events
    return out


def flow(rng):
    """One run's facts: the order, the id the agent passes, whether it claims success too early."""
    order = f"SO-{rng.randrange(10000, 99999)}"
    mistake = rng.random()
    passed = f"SO-{rng.randrange(10000, 99999)}" if mistake < 0.15 else order
    return order, passed, "model_inference" if passed != order else "user_input", 0.15 <= mistake < 0.33


def current(trace, rng, rename_op=False, rename_args=False, drop_replies=False):
    order, passed, source, early = flow(rng)
    op = "gen_ai.operation" if rename_op else "gen_ai.operation.name"
    args = "gen_ai.tool.arguments" if rename_args else "gen_ai.tool.call.arguments"

    def chat(n, t, users, reply):
        a = {op: "chat", "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": u}]}
                                                   for u in users]}
        if reply and not drop_replies:
            a["gen_ai.output.messages"] = [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}]
        return span(trace, n, t, a)

    def tool(n, t, name, arguments, result):
        return span(trace, n, t, {op: "execute_tool", "gen_ai.tool.name": name, args: arguments,
                                  "gen_ai.tool.call.result": result,
                                  "mbt.tool.argument_sources": {"order_id": source}})

    spans = [chat(1, 10_000, [f"cancel {order}"], None),
             tool(2, 20_000, "get_order", {"order_id": passed}, {"owner": "C-1001", "status": "paid"}),
             chat(3, 30_000, [f"cancel {order}"], f"{order} is paid. Cancel it?"),
             chat(4, 40_000, [f"cancel {order}", "yes"], None),
             tool(5, 50_000, "cancel_order", {"order_id": passed}, {"ok": True})]
    if early:
        spans.append(chat(6, 55_000, [f"cancel {order}", "yes"], f"{order} has been cancelled."))
    spans += [tool(7, 60_000, "get_order", {"order_id": passed}, {"status": "cancelled"}),
              chat(8, 70_000, [f"cancel {order}", "yes"], f"{order} has been cancelled.")]
    return spans


def openllmetry(trace, rng):
    order, passed, source, early = flow(rng)

    def llm(n, t, prompts, completion=None, calls=()):
        a = {"llm.request.type": "chat", "gen_ai.usage.prompt_tokens": 120, "gen_ai.usage.completion_tokens": 30}
        for i, (role, content, call_id) in enumerate(prompts):
            a[f"gen_ai.prompt.{i}.role"] = role
            a[f"gen_ai.prompt.{i}.content"] = content
            if call_id:
                a[f"gen_ai.prompt.{i}.tool_call_id"] = call_id
        if completion:
            a["gen_ai.completion.0.content"] = completion
        for j, (call_id, name, args) in enumerate(calls):
            a[f"gen_ai.completion.0.tool_calls.{j}.id"] = call_id
            a[f"gen_ai.completion.0.tool_calls.{j}.name"] = name
            a[f"gen_ai.completion.0.tool_calls.{j}.arguments"] = json.dumps(args)
        if calls:
            a["mbt.tool.argument_sources"] = {"order_id": source}
        return span(trace, n, t, a)

    u1, u2 = ("user", f"cancel {order}", None), ("user", "yes", None)
    found = ("tool", json.dumps({"owner": "C-1001", "status": "paid"}), "c1")
    steps = [llm(1, 10_000, [u1], None, [("c1", "get_order", {"order_id": passed})]),
             llm(2, 20_000, [u1, found], f"{order} is paid. Cancel it?"),
             llm(3, 30_000, [u1, found, u2], None, [("c2", "cancel_order", {"order_id": passed})]),
             llm(4, 40_000, [u1, found, u2, ("tool", '{"ok": true}', "c2")],
                 f"{order} has been cancelled." if early else None, [("c3", "get_order", {"order_id": passed})]),
             llm(5, 50_000, [u1, found, u2, ("tool", '{"ok": true}', "c2"), ("tool", '{"status": "cancelled"}', "c3")],
                 f"{order} has been cancelled.")]
    return steps


def span_events(trace, rng, body_key="gen_ai.event.content"):
    order, passed, source, early = flow(rng)

    def ev(name, body, t):
        return {"timeUnixNano": str(t), "name": name, "attributes": [attr(body_key, body)]}

    def model(n, t, events):
        return span(trace, n, t, {"gen_ai.system": "openai"}, events)

    def call(call_id, name):
        return {"index": 0, "message": {"tool_calls": [{"id": call_id, "type": "function", "function": {
            "name": name, "arguments": json.dumps({"order_id": passed})}}]}}

    user = ev("gen_ai.user.message", {"content": f"cancel {order}"}, 1)
    yes = ev("gen_ai.user.message", {"content": "yes"}, 1)
    found = ev("gen_ai.tool.message", {"id": "c1", "content": json.dumps({"owner": "C-1001", "status": "paid"})}, 1)
    ok = ev("gen_ai.tool.message", {"id": "c2", "content": '{"ok": true}'}, 1)
    checked = ev("gen_ai.tool.message", {"id": "c3", "content": '{"status": "cancelled"}'}, 1)
    said = ev("gen_ai.choice", {"index": 0, "message": {"content": f"{order} has been cancelled."}}, 2)
    return [model(1, 10_000, [user, ev("gen_ai.choice", call("c1", "get_order"), 2)]),
            model(2, 20_000, [user, found, ev("gen_ai.choice", {"index": 0, "message": {
                "content": f"{order} is paid. Cancel it?"}}, 2)]),
            model(3, 30_000, [user, found, yes, ev("gen_ai.choice", call("c2", "cancel_order"), 2)]),
            model(4, 40_000, [user, found, yes, ok] + ([said] if early else [])
                  + [ev("gen_ai.choice", call("c3", "get_order"), 2)]),
            model(5, 50_000, [user, found, yes, ok, checked, said])]


def transcript(rng, drop_args=False):
    order, passed, source, early = flow(rng)

    def call(call_id, name):
        fn = {"name": name} if drop_args else {"name": name, "arguments": json.dumps({"order_id": passed})}
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": fn, "mbt_sources": {"order_id": source}}]}

    messages = [{"role": "user", "content": f"cancel {order}"}, call("c1", "get_order"),
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"owner": "C-1001", "status": "paid"})},
                {"role": "assistant", "content": f"{order} is paid. Cancel it?"},
                {"role": "user", "content": "yes"}, call("c2", "cancel_order"),
                {"role": "tool", "tool_call_id": "c2", "content": '{"ok": true}'}]
    if early:
        messages.append({"role": "assistant", "content": f"{order} has been cancelled."})
    messages += [call("c3", "get_order"), {"role": "tool", "tool_call_id": "c3", "content": '{"status": "cancelled"}'},
                 {"role": "assistant", "content": f"{order} has been cancelled."}]
    return {"precondition": PRE, "messages": messages}


def stored_session(n, rng):
    order = f"SO-{rng.randrange(10000, 99999)}"
    return {"session_id": f"s_{n}", "precondition": PRE, "messages": [f"cancel {order}", "yes"],
            "input_tokens": rng.randrange(100, 5000), "output_tokens": rng.randrange(10, 500)}


def turn_records(n, rng, as_list=False):
    order = f"SO-{rng.randrange(10000, 99999)}"
    stop = "max_budget_reached" if rng.random() < 0.3 else "completed"
    turns = [{"prompt": f"cancel {order}", "output": "Looking it up.", "matched_commands": ["orders"],
              "matched_tools": ["get_order", "cancel_order"], "permission_denials": [],
              "usage": {"input_tokens": 300, "output_tokens": 40}, "stop_reason": stop},
             {"prompt": f"cancel {order} [turn 2]", "output": "Still looking.", "matched_commands": ["orders"],
              "matched_tools": ["get_order", "cancel_order"], "permission_denials": [],
              "usage": {"input_tokens": 340, "output_tokens": 30}, "stop_reason": "completed"}]
    return turns if as_list else {"session_id": f"t_{n}", "precondition": PRE, "messages": [], "turns": turns}


def otlp(spans_by_trace):
    resource = {"attributes": [attr("mbt.model", "orders"), attr("mbt.run.precondition", PRE)]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}
                              for spans in spans_by_trace]}


# shape -> (evidence complete?, writer of one file holding `count` runs into a folder)
def shapes(count: int, seed: int):
    def traces(make):
        def write(folder):
            rng = random.Random(seed)
            (folder / "t.json").write_text(json.dumps(otlp([make(f"{i + 1:032x}", rng) for i in range(count)])))
        return write

    def files(make, suffix=".json"):
        def write(folder):
            rng = random.Random(seed)
            for i in range(count):
                (folder / f"r{i}{suffix}").write_text(json.dumps(make(i, rng)))
        return write

    return {
        "otlp, current conventions": (True, traces(lambda t, r: current(t, r))),
        "otlp, gen_ai.operation.name renamed": (False, traces(lambda t, r: current(t, r, rename_op=True))),
        "otlp, tool arguments renamed": (False, traces(lambda t, r: current(t, r, rename_args=True))),
        "otlp, replies not recorded": (False, traces(lambda t, r: current(t, r, drop_replies=True))),
        "otlp, OpenLLMetry attributes": (True, traces(openllmetry)),
        "otlp, earlier span events": (True, traces(span_events)),
        "otlp, span events, body renamed": (False, traces(lambda t, r: span_events(t, r, "gen_ai.event.body"))),
        "transcript, OpenAI messages": (True, files(lambda i, r: transcript(r))),
        "transcript, calls without arguments": (False, files(lambda i, r: transcript(r, drop_args=True))),
        "seed 003 StoredSession": (False, files(stored_session)),
        "seed 003 TurnResult list": (False, files(lambda i, r: turn_records(i, r, as_list=True))),
        "seed 003 session with turns": (False, files(turn_records)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50, help="runs per shape")
    parser.add_argument("--seed", type=int, default=2)
    options = parser.parse_args()
    print(f"run shapes: {options.runs} runs per shape, seed {options.seed}, model {Path(MODEL).name}")
    print(f"{'shape':<40} {'evidence':<9} {'runs':>5} {'pass':>5} {'deviation':>10} {'not judged':>11} "
          f"{'invalid':>8}  first deviations / what was not judged")
    total_false_green = 0
    for name, (complete, write) in shapes(options.runs, options.seed).items():
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            write(folder)
            report = runs_api([MODEL], [str(folder)], use_gate=False, jobs=1, use_cache=False)
        verdicts = Counter(r.verdict for r in report.runs)
        invalid = verdicts["invalid"] + len(report.invalid)
        kinds = Counter(r.deviation.type for r in report.runs if r.deviation is not None)
        gaps = Counter(re.sub(r"'[^']*'|SO-\d+", "…", g.split(": ", 1)[-1])[:70] for r in report.runs
                       if r.verdict == "not_judged" for g in r.not_judged[:1])
        detail = ", ".join(f"{k} {n}" for k, n in kinds.most_common(3))
        if gaps:
            detail += ("; " if detail else "") + "; ".join(f"{n}x {g}" for g, n in gaps.most_common(1))
        flag = ""
        if not complete and verdicts["pass"]:
            flag = "  <- PASS ON MISSING EVIDENCE"
            total_false_green += verdicts["pass"]
        print(f"{name:<40} {'complete' if complete else 'missing':<9} {len(report.runs):>5} {verdicts['pass']:>5} "
              f"{verdicts['deviation']:>10} {verdicts['not_judged']:>11} {invalid:>8}  {detail}{flag}")
        if report.unread:
            print(f"{'':<40} unread: {'; '.join(u.split(': ', 1)[1] for u in report.unread[:2])}")
    print(f"runs with missing or renamed evidence that passed: {total_false_green}")
    grounding_shapes(options.runs, options.seed)


# ---------------------------------------------------------------- grounding (seed 000's RAG trace, retrieval spans)

ALLOWED = ["account-recovery-v3"]


def rag_facts(rng):
    """One answer's facts: the documents retrieved (v1 expired, scoring higher), which one it used, its claims; in
    about a third of the runs one mistake (the expired v1 used, or a time limit no source gives)."""
    docs = [{"document_id": "account-recovery-v3", "approved": True, "status": "active", "score": 0.91},
            {"document_id": "account-recovery-v1", "approved": False, "status": "expired", "score": 0.94}]
    mistake = rng.random()
    used = "account-recovery-v1" if mistake < 0.15 else "account-recovery-v3"
    claims = [{"text": "重置链接会发送到注册邮箱", "grounded_in": used}]
    if 0.15 <= mistake < 0.33:
        claims.append({"text": f"重置申请会在{rng.choice([12, 24, 48])}小时内处理完成", "grounded_in": None})
    return docs, used, claims


def rag_trace(n, rng, drop=None):
    docs, used, claims = rag_facts(rng)
    if drop == "approval":
        docs = [{k: v for k, v in d.items() if k != "approved"} for d in docs]
    raw = {"case_id": f"RAG-{n}", "query": "forgot pwd，登不上了", "route": "account_recovery", "retrieved": docs,
           "selected_source": used, "claims": claims, "must_not": ["引用 account-recovery-v1"]}
    if drop == "claims":
        del raw["claims"]
    return raw


def retrieval_trace(trace, rng, shape="current", rename=False):
    docs, used, claims = rag_facts(rng)
    grounding = {"mbt.grounding.selected_source": used, "mbt.grounding.claims": claims}
    if shape == "current":
        as_docs = [{"id": d["document_id"], "score": d["score"],
                    "metadata": {"approved": d["approved"], "status": d["status"]}} for d in docs]
        key = "gen_ai.retrieval.docs" if rename else "gen_ai.retrieval.documents"
        spans = [span(trace, 1, 10, {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "forgot pwd",
                                     key: as_docs, **grounding})]
    else:  # OpenInference's RETRIEVER span
        attrs = {"openinference.span.kind": "RETRIEVER", "input.value": "forgot pwd", **grounding}
        for i, d in enumerate(docs):
            attrs[f"retrieval.documents.{i}.document.id"] = d["document_id"]
            attrs[f"retrieval.documents.{i}.document.metadata"] = {"approved": d["approved"], "status": d["status"]}
        spans = [span(trace, 1, 10, attrs)]
    return spans


def grounding_shapes(count: int, seed: int) -> None:
    """The grounding rules on every retrieval shape, complete and with evidence missing or renamed: a complete
    shape gives a pass or a failure per run; a shape with evidence missing must never pass."""
    from mbt.runs.grounding import judge_retrieval
    from mbt.runs.reader import read_runs

    def rag(drop=None):
        def write(folder):
            rng = random.Random(seed)
            (folder / "rag.jsonl").write_text("".join(json.dumps(rag_trace(n, rng, drop), ensure_ascii=False) + "\n"
                                                      for n in range(count)), encoding="utf-8")
        return write

    def otel(shape, rename=False):
        def write(folder):
            rng = random.Random(seed)
            traces = [retrieval_trace(f"{n + 1:032x}", rng, shape, rename) for n in range(count)]
            (folder / "t.json").write_text(json.dumps(otlp(traces)), encoding="utf-8")
        return write

    cases = {"rag trace (seed 000)": (True, rag()), "rag trace, claims not recorded": (False, rag("claims")),
             "rag trace, approval not recorded": (False, rag("approval")),
             "otlp, gen_ai retrieval span": (True, otel("current")),
             "otlp, retrieval documents renamed": (False, otel("current", rename=True)),
             "otlp, OpenInference RETRIEVER": (True, otel("openinference"))}
    print()
    print(f"grounding shapes: {count} runs per shape, seed {seed}, allowed sources {', '.join(ALLOWED)}")
    print(f"{'shape':<40} {'evidence':<9} {'runs':>5} {'pass':>5} {'failure':>8} {'critical':>9} {'not judged':>11}")
    false_green = 0
    for name, (complete, write) in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            write(Path(tmp))
            found = read_runs([tmp])
        results = [judge_retrieval(r.retrieval, ALLOWED) for r in found.runs if r.retrieval is not None]
        passed = sum(g.passed for g in results)
        failed = sum(bool(g.failures) for g in results)
        critical = sum(bool(g.critical) for g in results)
        open_ = sum(not g.failures and not g.passed for g in results)
        flag = ""
        if not complete and passed:
            flag, false_green = "  <- PASS ON MISSING EVIDENCE", false_green + passed
        print(f"{name:<40} {'complete' if complete else 'missing':<9} {len(found.runs):>5} {passed:>5} {failed:>8} "
              f"{critical:>9} {open_:>11}{flag}")
    print(f"grounding judged passed on missing or renamed evidence: {false_green}")


if __name__ == "__main__":
    main()
