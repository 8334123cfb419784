"""Element enumeration: the elements per criterion, their stable readable ids, spans, status and weights."""

from __future__ import annotations

from pathlib import Path

from mbt.elements.fsm import enumerate_fsm
from mbt.parsing.loader import load_file, parse_text

DATA = Path(__file__).parent / "data"

SMALL = """\
source doc "doc.md"
fsm small {
  var n: int[0..2] = 0
  state a initial @doc:1 "start"
  state b
  state c final severity critical
  event go(x: int[0..5])
  event stop
  a -> b on go(v) [v > 1 and n == 0] / n := n + 1   @doc:2-3 "go when big"
  a -> a on go(v) [v <= 1]                          inferred
  b -> c on stop
  b -> a on go                                      id back
  forbid a on stop effect say "stopping early" matching "stop"   severity critical
  forbid any on go [n == 2] -> c
}
"""


def small():
    return parse_text(SMALL, "small.fsm").models[0]


def by_criterion(elements):
    out = {}
    for e in elements:
        out.setdefault(e.criterion, []).append(e.id)
    return out


def test_every_criterion_has_the_expected_ids():
    ids = by_criterion(enumerate_fsm(small()))
    assert ids["state"] == ["state:a", "state:b", "state:c"]
    assert ids["transition"] == ["transition:a.go->b", "transition:a.go->a", "transition:b.stop->c",
                                 "transition:back"]
    # One guarded group (a, go): both branches, the no-branch case, each atomic condition true and false.
    assert ids["guard"] == [
        "guard:a.go->b", "guard:a.go->a", "guard:a.go:none",
        "guard:a.go->b:c1=true", "guard:a.go->b:c1=false", "guard:a.go->b:c2=true", "guard:a.go->b:c2=false",
        "guard:a.go->a:c1=true", "guard:a.go->a:c1=false"]
    assert ids["forbidden"] == ["forbidden:a.stop!say", "forbidden:any.go->c"]
    # Pairs: every transition into a state followed by every transition out of it.
    assert sorted(ids["transition-pair"]) == sorted([
        "transition-pair:a.go->b|b.stop->c", "transition-pair:a.go->b|back",
        "transition-pair:a.go->a|a.go->b", "transition-pair:a.go->a|a.go->a",
        "transition-pair:back|a.go->b", "transition-pair:back|a.go->a"])


def test_spans_status_and_weights_come_from_the_model():
    elements = {e.id: e for e in enumerate_fsm(small())}
    a = elements["state:a"]
    assert (a.span.source, a.span.line_start, a.span.quote, a.status.value) == ("doc", 1, "start", "stated")
    assert elements["state:b"].status.value == "inferred" and elements["state:b"].span is None
    assert elements["transition:a.go->b"].span.line_end == 3
    assert elements["state:c"].severity.value == "critical" and elements["state:c"].weight == 5.0
    assert elements["forbidden:any.go->c"].severity.value == "high"  # forbids default to high
    assert elements["forbidden:a.stop!say"].weight == 5.0
    assert elements["transition:b.stop->c"].weight == 2.0  # medium by default
    assert elements["transition:a.go->b"].location.line == 9


def test_ids_are_stable_across_unrelated_edits():
    before = [e.id for e in enumerate_fsm(small())]
    edited = SMALL.replace("  state b\n", "  # a comment\n\n  state b @doc:4\n").replace("event stop", "event stop\n  event unused")
    after = [e.id for e in enumerate_fsm(parse_text(edited, "small.fsm").models[0])]
    assert before == after


def test_repeated_transitions_get_numbered_ids():
    text = "fsm r {\n state a initial\n event e\n a -> a on e [true]\n a -> a on e [false]\n}\n"
    ids = [e.id for e in enumerate_fsm(parse_text(text, "r.fsm").models[0]) if e.criterion == "transition"]
    assert ids == ["transition:a.e->a", "transition:a.e->a#2"]


def test_example_model_elements_count():
    model = load_file(DATA / "reset.fsm").models[0]
    ids = by_criterion(enumerate_fsm(model))
    assert len(ids["state"]) == 6 and len(ids["transition"]) == 7 and len(ids["forbidden"]) == 3


def test_complete_models_get_a_sneak_path_element_per_unhandled_state_event():
    text = ("fsm c {\n complete\n state a initial\n state b\n state z final\n event go\n event stop\n"
            " a -> b on go\n b -> z on stop\n forbid b on go\n}\n")
    model = parse_text(text, "c.fsm").models[0]
    ids = [e.id for e in enumerate_fsm(model) if e.criterion == "forbidden"]
    # a/stop is unhandled -> sneak path; b/go is already forbidden explicitly; z is final.
    assert ids == ["forbidden:b.go", "forbidden:sneak:a.stop"]


def test_sneak_path_is_covered_by_a_golden_that_checks_the_refusal():
    from mbt.engine.fsm import CompiledFsm
    from mbt.goldens.cases import parse_case
    from mbt.goldens.replay_fsm import FsmReplayer

    text = "fsm c {\n complete\n state a initial\n state b final\n event go\n event stop\n a -> b on go\n}\n"
    model = parse_text(text, "c.fsm").models[0]
    elements = enumerate_fsm(model)
    replayer = FsmReplayer(CompiledFsm(model, elements))
    checked = replayer.replay(parse_case({"id": "S", "turns": [{"event": "stop", "rejected": True}]}, "g", 1))
    unchecked = replayer.replay(parse_case({"id": "T", "turns": [{"event": "stop"}]}, "g", 2))
    sneak = next(i for i, e in enumerate(elements) if e.id == "forbidden:sneak:a.stop")
    assert sneak in checked.verified and not checked.divergences
    assert sneak in unchecked.exercised and sneak not in unchecked.verified and unchecked.divergences
