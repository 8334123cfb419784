"""Result sets made for the viewer's tests (tests/test_results_site*.py): an eval set of 120 cases with every kind of
case the filters tell apart (single and multi-turn; pass, fail, not judged, error), Vietnamese text, a German ß, and
hostile texts (a question that is a script, an answer that closes an attribute and adds an image with an onerror);
a runs set, an older eval set, and a running set with a hostile name: four statuses, two run types, three
executors, three dates for the list's filters."""

from __future__ import annotations

import contextlib
from typing import Any

from mbt.store.db import Store
from mbt.store.records import CaseRecord, NewSet, fold
from mbt.store.url import parse
from mbt.store.write import SetWriter

QNA = "qna_TestResult_20250106-083000"
RUNS = "nightly-runs"
OLD = "old-eval"
HOSTILE = "<b>bold</b> \"quoted\" & 'single'"
SCRIPT_QUESTION = "<script>window.__pwned = 1</script> Can I pay by card?"
IMAGE_ANSWER = "\"><img src=x onerror=\"window.__pwned = 2\"> Yes, by card."
CASES = 120


def _overall(n: int) -> str:
    return ("pass", "pass", "pass", "pass", "pass", "pass", "fail", "fail", "not_judged", "error")[n % 10]


def _texts(n: int) -> tuple[list[str], list[str]]:
    """The questions and the agent's answers of case n."""
    if n == 7:
        return ["Phí CHUYỂN KHOẢN nội bộ là bao nhiêu?"], ["Chuyển khoản nội bộ miễn phí."]
    if n == 11:
        return [SCRIPT_QUESTION], [IMAGE_ANSWER]
    if n == 13:
        return ["Where is the branch?"], ["At the Hauptstraße, opposite the station."]
    topic = "refunds" if n % 3 == 0 else "cards"
    turns = 2 if n % 4 == 0 else 1
    return ([f"Question {n} about {topic}"] + [f"And a follow-up {n}.{t}" for t in range(2, turns + 1)],
            [f"Answer {n}"] + [f"Follow-up answer {n}.{t}" for t in range(2, turns + 1)])


def eval_record(n: int) -> CaseRecord:
    questions, answers = _texts(n)
    overall = _overall(n)
    safety = "error" if overall == "error" else "pass"
    reasons = {"accuracy": f"accuracy of case {n}: {overall}", "safety": "the judge timed out" if safety == "error"
               else "nothing unsafe said"}
    doc: dict[str, Any] = {
        "id": str(n), "file": "qna.xlsx[QNA]", "where": f"qna.xlsx[QNA]:{n + 1}", "run": f"runs/{n}.json",
        "matched_by": "case_id",
        "turns": [{"question": q, "expected": [f"Expected {n}.{t}"], "actual": a, "judged": True}
                  for t, (q, a) in enumerate(zip(questions, answers), start=1)],
        "overall": {"verdict": overall, "reason": f"overall of case {n}"},
        "transcript": [{"prompt": q, "answer": a, "calls": [f'lookup(case={n})'] if t == 1 else [],
                        "matched_tools": None, "commands": None, "stop_reason": "completed", "tokens": None}
                       for t, (q, a) in enumerate(zip(questions, answers), start=1)],
        "context": {"service_version": "1.5", "response_model": "agent-model", "wall_ms": 1200.0}}
    return CaseRecord(
        case_key=f"qna[QNA]/{n}", case_id=str(n), location=f"qna.xlsx[QNA]:{n + 1}", turns=len(questions),
        question=questions[0], answer=answers[0], overall=overall,
        search="\n".join(fold(t) for t in questions + answers), doc=doc,
        verdicts=[("accuracy", "error" if overall == "error" else overall, reasons["accuracy"], "embedded"),
                  ("safety", safety, reasons["safety"], "openai:judge-model")],
        agent_version="1.5", error="safety: the judge timed out" if overall == "error" else None)


def runs_record(n: int) -> CaseRecord:
    verdict = "pass" if n % 2 else "fail"
    transcript = [{"prompt": f"cancel order SO-{n}", "answer": f"Order SO-{n} is cancelled.",
                   "calls": [f'cancel_order(order_id="SO-{n}")'], "matched_tools": None, "commands": None,
                   "stop_reason": None, "tokens": None}]
    doc = {"id": f"run-{n}", "where": f"runs/run-{n}.json", "verdict": "pass" if verdict == "pass" else "deviation",
           "deviation": None if verdict == "pass" else {"type": "premature_success", "where": "message 2",
                                                        "message": "says cancelled while confirming"},
           "transcript": transcript, "context": {"service_version": "2.0"}}
    return CaseRecord(case_key=f"run-{n}", case_id=f"run-{n}", location=f"runs/run-{n}.json", turns=1,
                      question=transcript[0]["prompt"], answer=transcript[0]["answer"], overall=verdict,
                      search=fold(transcript[0]["prompt"] + "\n" + transcript[0]["answer"]), doc=doc,
                      verdicts=[("model", verdict, "no deviation" if verdict == "pass" else "premature_success",
                                 "orders")], agent_version="2.0",
                      first_deviation=None if verdict == "pass" else "premature_success")


def make_store(url: str) -> None:
    """The four sets in the store at `url`."""
    criteria = {"criteria": {"accuracy": "2", "safety": "1"}, "judge": "embedded", "threshold": "1"}
    with Store(parse(url, "test")) as store:
        with SetWriter(store, NewSet(QNA, "qna", "eval", "github:acme/agent run 7", criteria, {},
                                     "2025-01-06T08:30:00Z")) as writer:
            writer.add([eval_record(n) for n in range(1, CASES + 1)])
            writer.finish({})
        with contextlib.suppress(RuntimeError), SetWriter(store, NewSet(RUNS, "runs", "runs", "gitlab:acme/agent job 9",
                                                              {"models": ["orders.fsm"]}, {},
                                                              "2025-01-10T22:00:00Z")) as writer:
            writer.add([runs_record(n) for n in range(1, 7)])
            raise RuntimeError("the agent's server went away")  # the set ends `failed`, with why
        with SetWriter(store, NewSet(OLD, "qna", "eval", "user:alice", {"judge": "rules"}, {},
                                     "2024-12-01T10:00:00Z")) as writer:
            writer.add([eval_record(n) for n in range(1, 4)])
            writer.finish({})
        running = SetWriter(store, NewSet(HOSTILE, "qna", "eval", "user:bob", {"judge": "embedded"}, {},
                                          "2025-01-08T09:00:00Z"))
        running.add([eval_record(n) for n in range(1, 3)])  # left running: a snapshot shows it so

