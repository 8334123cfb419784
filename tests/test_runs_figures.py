"""The runs report's figures gathered piece by piece (mbt.runs.metrics.RunFigures, mbt.runs.undocumented.Sightings:
issue 37, "merge tallies, not results"): however the rows are split into pieces, the merged figures are those of all
the rows at once, and those follow docs/runs.md's rules, counted here a second way, plainly, from the rows."""

from __future__ import annotations

import random
from math import fsum
from pathlib import Path

import pytest

from mbt.api import load_models
from mbt.model.fsm import FsmModel
from mbt.runs.marks import marks_of
from mbt.runs.metrics import RunFigures
from mbt.runs.results import DeviationOut, GroundingFailureOut, GroundingOut, RunResult
from mbt.runs.steps import RunContext
from mbt.runs.undocumented import Sightings

ROOT = Path(__file__).resolve().parents[1]
DEVIATIONS = ("wrong_state", "unexpected_call", "forbidden_call", "unbound_step", "missing_call")


def random_rows(rnd: random.Random, count: int) -> list[RunResult]:
    rows = []
    for n in range(count):
        verdict = rnd.choice(("pass", "deviation", "not_judged", "invalid"))
        timed = rnd.random() < 0.7
        context = RunContext(
            input_tokens=rnd.choice((None, rnd.randint(0, 900))), output_tokens=rnd.choice((None, rnd.randint(0, 90))),
            wall_ms=rnd.uniform(0, 1e4) if timed else None, model_ms=rnd.choice((None, rnd.uniform(0, 1e3) / 3)),
            tool_ms=rnd.uniform(0, 1e-3) * 1e7 / 7, retries=rnd.randint(0, 2), retry_ms=rnd.random() / 10)
        deviation = None
        if verdict == "deviation":
            kind = rnd.choice(DEVIATIONS)
            deviation = DeviationOut(type=kind, where=f"t{n}.json: span {n}", step=rnd.randint(0, 5),
                                     element=rnd.choice((None, "t:a->b", "forbidden:x")), severity="high",
                                     message=f"message {n}", tool=rnd.choice((None, "refund")),
                                     source=rnd.choice((None, "model_inference")))
        grounding = None
        if rnd.random() < 0.3:
            grounding = GroundingOut(judged=rnd.random() < 0.5, hallucinations_judged=rnd.random() < 0.5,
                                     critical_hallucinations=rnd.randint(0, 1),
                                     failures=[GroundingFailureOut(type="ungrounded_claim", where="w", message="m")]
                                     if rnd.random() < 0.5 else [])
        rows.append(RunResult(
            id=f"run-{n}", where=f"t{n % 7}.json", file=f"t{n % 7}.json", format="otlp", model="m",
            suite=rnd.choice((None, "smoke", "handoff", "regression")), verdict=verdict, steps=3,
            expected_intent=rnd.choice((None, "refund", "cancel")), intent=rnd.choice((None, "refund", "cancel")),
            completed=rnd.random() < 0.4, handed_off=rnd.random() < 0.3, escalation_expected=rnd.random() < 0.3,
            escalated=rnd.random() < 0.5, critical=rnd.random() < 0.2, path_judged=rnd.random() < 0.8,
            final_state=rnd.choice((None, "open", "closed")), deviation=deviation, grounding=grounding,
            context=context, tags=rnd.choice(([], ["incident"], ["adversarial", "incident:INC-7"], ["prod"]))))
    return rows


def figures_of(pieces: list[list[RunResult]], models: dict) -> tuple[RunFigures, Sightings]:
    """As mbt.runs.parts does: each piece gathered apart, the pieces merged in order."""
    merged, sightings = RunFigures(), Sightings()
    for piece in pieces:
        part, seen = RunFigures(), Sightings()
        for r in piece:
            part.add(r)
            if r.deviation is not None:
                seen.add(r, models)
        merged.merge(part)
        sightings.merge(seen)
    return merged, sightings


def dumped(figures: RunFigures, sightings: Sightings, handoff: frozenset[str]) -> dict:
    return {"metrics": figures.metrics(handoff).model_dump(), "suites": {
        s: m.model_dump() for s, m in figures.by_suite(handoff).items()},
        "distribution": figures.distribution().model_dump(),
        "marked": [m.model_dump() for m in figures.marked(handoff)],
        "separately": [s.model_dump() for s in figures.separately(
            ["fallback_rate", "context_failures", "grounding_failures", "critical_hallucinations", "odd"], 3)],
        "undocumented": [u.model_dump() for u in sightings.candidates()]}


def plain_metrics(rows: list[RunResult], handoff: frozenset[str]) -> dict:
    """docs/runs.md's run metrics, counted the obvious way (invalid runs left out; completion and escalation over the
    fully judged runs; a hand-off completes a task in a hand-off suite; times summed exactly)."""
    read = [r for r in rows if r.verdict != "invalid"]
    full = [r for r in read if r.verdict in ("pass", "deviation")]
    with_path = [r for r in full if r.path_judged]
    timed = [r for r in read if r.context.wall_ms is not None]
    completed = sum(r.completed or (r.handed_off and r.suite in handoff) for r in with_path)
    return {"runs": len(read), "passed": sum(r.verdict == "pass" for r in read),
            "deviations": sum(r.verdict == "deviation" for r in read), "completion_runs": len(with_path),
            "completed": completed, "escalation_runs": sum(r.escalation_expected for r in full),
            "escalated": sum(r.escalation_expected and r.escalated for r in full),
            "critical_failures": sum(r.critical for r in read),
            "intent_correct": sum(r.expected_intent is not None and r.intent == r.expected_intent for r in read),
            "timed_runs": len(timed), "wall_ms": fsum(r.context.wall_ms or 0.0 for r in timed),
            "model_ms": fsum(r.context.model_ms or 0.0 for r in timed),
            "tool_ms": fsum(r.context.tool_ms or 0.0 for r in timed)}


@pytest.mark.parametrize("seed", range(6))
def test_figures_merged_from_any_pieces_are_those_of_all_runs(seed):
    rnd = random.Random(seed)
    rows = random_rows(rnd, 300)
    model = load_models([str(ROOT / "docs" / "examples" / "levels" / "refund-lifecycle.fsm")])[1][0]
    assert isinstance(model, FsmModel)
    models = {"m": model}
    handoff = frozenset({"handoff"})
    whole = dumped(*figures_of([rows], models), handoff)
    assert whole["undocumented"] and len(whole["marked"]) == 3 and whole["metrics"]["timed_runs"] > 100
    for _ in range(5):
        cuts = sorted(rnd.sample(range(1, len(rows)), rnd.randint(1, 12)))
        pieces = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)])]
        assert dumped(*figures_of(pieces, models), handoff) == whole
    expected = plain_metrics(rows, handoff)
    assert {key: whole["metrics"][key] for key in expected} == expected
    for mark in whole["marked"]:  # the runs of each mark, and their metrics, counted again
        chosen = [r for r in rows if r.verdict != "invalid" and (
            mark["mark"] in marks_of(r.tags) if mark["mark"] != "unmarked" else not marks_of(r.tags))]
        assert mark["runs"] == [r.id for r in chosen]
        assert {key: mark["metrics"][key] for key in expected} == plain_metrics(chosen, handoff)
    for suite, m in whole["suites"].items():
        assert {key: m[key] for key in expected} == plain_metrics([r for r in rows if r.suite == suite], handoff)
    assert whole["distribution"]["by_type"] == {
        kind: n for kind, n in sorted(((k, sum(r.deviation is not None and r.deviation.type == k for r in rows))
                                       for k in DEVIATIONS), key=lambda kv: (-kv[1], kv[0])) if n}
