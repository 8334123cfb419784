"""The FSM judge (tests/judge/fsm.py) against `mbt coverage`: hand-checked verdicts, then a bounded random campaign."""

from __future__ import annotations

import random
from pathlib import Path

from mbt.api import load_models
from mbt.goldens.cases import parse_case
from tests.judge.fsm import campaign, judge, random_model

SHOP = Path(__file__).parent / "data" / "verdicts" / "shop.fsm"


def verdict_of(raw):
    (model,) = load_models([str(SHOP)])[1]
    return judge(model, parse_case(raw, "g.jsonl", 1))


def test_the_worked_example_of_the_rules_page():
    """docs/coverage-rules/fsm.md, "Worked example": golden G2."""
    v = verdict_of({"id": "G2", "turns": [{"event": "ask", "args": {"e": "a@b.c"}},
                                          {"event": "stop", "must_not_call": ["send"]}]})
    verified = {e for e, s in v.statuses.items() if s == "verified"}
    assert verified == {"state:asked", "transition:asked.stop->idle", "state:idle",
                        "transition-pair:idle.ask->asked|asked.stop->idle", "forbidden:asked.stop!call:send"}
    assert v.statuses["transition:idle.ask->asked"] == "exercised"
    assert v.statuses["forbidden:any.*!say"] == "exercised"


def test_the_judge_sees_a_golden_expecting_the_forbidden_call():
    v = verdict_of({"id": "G1", "turns": [{"event": "ask", "args": {"e": "a@b.c"}},
                                          {"event": "stop", "tool_arguments": {"send": {"to": "a@b.c"}}}]})
    assert v.expected_forbidden == {(2, "forbidden:asked.stop!call:send")} and v.contradicted
    assert "verified" not in v.statuses.values()


def test_the_generator_writes_models_mbt_reads_with_every_kind_of_forbid(tmp_path):
    rng = random.Random(3)
    shapes = set()
    for i in range(30):
        path = tmp_path / f"m{i}.fsm"
        path.write_text(random_model(rng), encoding="utf-8")
        (model,) = load_models([str(path)])[1]
        shapes |= {"call-if" if f.effect is not None and f.effect.condition is not None else
                   f.effect.kind if f.effect is not None else "target" if f.target else "event" for f in model.forbids}
    assert shapes == {"call", "call-if", "say", "target", "event"}


def test_judge_and_mbt_agree_on_random_models_and_goldens():
    result = campaign(400, seed=20261201)
    assert result.cases == 400 and result.elements > 2000
    assert result.disagreements == [], "\n".join(result.disagreements[:20])
