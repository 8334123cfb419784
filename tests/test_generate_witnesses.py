"""Witnesses: shortest runs whose guards all hold (hand-computed), the reasons when there is none, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbt.analysis.smt import Solver
from mbt.engine.fsm import run_events
from mbt.generate.symbolic import SymbolicFsm
from mbt.generate.witnesses import NoWitness, Witness, WitnessFinder, candidate_values
from mbt.kind import support
from mbt.model.types import ValueType
from mbt.parsing.loader import load_file, parse_text

EXAMPLE = Path(__file__).resolve().parents[1] / "models" / "recovery.fsm"

COUNTER = """
fsm counter {
  var n: int[0..3] = 0
  state a initial
  state b
  state c final
  state lost
  event inc
  event go
  event finish
  a -> a on inc [n < 3] / n := n + 1
  a -> b on go [n >= 2]
  b -> c on finish
  lost -> c on finish
}
"""

PICK = """
fsm pick {
  var code: string? = none
  state a initial
  state b
  state c final
  event set(x: string)
  event check(y: string)
  a -> b on set(x) / code := x
  b -> c on check(y) [y == code and y != "admin"]
}
"""


def model(text: str):
    return parse_text(text, "m.fsm").models[0]


def events(w: Witness) -> list[tuple[str, dict]]:
    return [(e, dict(a)) for e, a in w.events]


def test_the_shortest_run_loops_until_the_guards_hold():
    # Ignoring guards `finish` is two steps away (go, finish); `go` needs n >= 2, so two `inc` first.
    w = WitnessFinder(model(COUNTER)).find("transition:b.finish->c")
    assert isinstance(w, Witness)
    assert events(w) == [("inc", {}), ("inc", {}), ("go", {}), ("finish", {})]


def test_arguments_satisfy_every_guard_and_are_canonical():
    m = model(PICK)
    w = WitnessFinder(m).find("transition:b.check->c")
    assert isinstance(w, Witness)
    # `y` must equal what `set` stored: the solver's pair of equal values becomes one readable value.
    assert events(w) == [("set", {"x": "x-1"}), ("check", {"y": "x-1"})]
    snapshots = run_events(m, support("fsm").enumerate(m), w.events)
    assert [s.state for s in snapshots] == ["b", "c"]


def test_a_condition_false_witness_makes_exactly_that_atom_false():
    m = model(PICK)
    w = WitnessFinder(m).find("guard:b.check->c:c2=false")
    assert isinstance(w, Witness)
    # `y != "admin"` false needs y = "admin"; nothing asks x to be anything in particular.
    assert events(w) == [("set", {"x": "x-1"}), ("check", {"y": "admin"})]


def test_an_unreachable_state_is_reported_as_such():
    w = WitnessFinder(model(COUNTER)).find("transition:lost.finish->c")
    assert isinstance(w, NoWitness) and w.reason == "unreachable"
    assert "`lost`" in w.message and "even ignoring guards" in w.message


def test_a_pair_no_run_allows_is_proven_unsatisfiable():
    m = load_file(EXAMPLE).models[0]
    w = WitnessFinder(m).find("transition-pair:retry_once|retry_once")
    assert isinstance(w, NoWitness) and w.reason == "unsatisfiable"


def test_the_depth_bound_stops_the_search_and_says_so():
    w = WitnessFinder(model(COUNTER), max_depth=3).find("transition:b.finish->c")
    assert isinstance(w, NoWitness) and w.reason == "depth"
    assert "--max-depth 3" in w.message and "ignoring guards it takes 2 steps" in w.message


def test_search_always_terminates_on_an_unbounded_symbolic_space():
    text = """
    fsm grow {
      var x: int[0..100] = 0
      state a initial
      state b final
      event add(k: int[1..5])
      event done
      a -> a on add(k) / x := x + k
      a -> b on done [x == 99 and x != 99 + 0]
    }
    """
    for depth in (5, 12):
        w = WitnessFinder(model(text), max_depth=depth, max_paths=300).find("transition:a.done->b")
        assert isinstance(w, NoWitness) and w.reason in ("depth", "limit", "unsatisfiable")


def test_a_declared_precondition_is_a_start_runs_may_use():
    m = model(COUNTER)
    assert isinstance(WitnessFinder(m).find("transition:lost.finish->c"), NoWitness)
    w = WitnessFinder(m, preconditions=[{"state": "lost"}]).find("transition:lost.finish->c")
    assert isinstance(w, Witness) and w.start.precondition == {"state": "lost"} and events(w) == [("finish", {})]
    # ... and a precondition that puts n at 2 shortens the run to `go`.
    w = WitnessFinder(m, preconditions=[{"n": 2}]).find("transition:a.go->b")
    assert w.start.precondition == {"n": 2} and events(w) == [("go", {})]


def test_a_forbidden_call_is_witnessed_where_a_transition_would_make_it():
    """The run ends where the reset tool would be called with the discarded address if the guard let it."""
    m = load_file(EXAMPLE).models[0]
    w = WitnessFinder(m).find("forbidden:discarded_email_to_tool")
    assert isinstance(w, Witness)
    assert events(w) == [("provide_email", {"email": "email-1"}), ("correct_email", {"email": "email-1"})]


def test_refusals_and_states_have_one_step_witnesses_where_possible():
    m = load_file(EXAMPLE).models[0]
    finder = WitnessFinder(m)
    assert events(finder.find("state:idle")) == [("request_reset", {})]
    w = finder.find("forbidden:reset_without_email")
    assert events(w) == [("request_reset", {}), ("confirm_email", {})]


def test_witnesses_do_not_depend_on_what_the_solver_was_asked_before():
    m = load_file(EXAMPLE).models[0]
    ids = [e.id for e in support("fsm").enumerate(m)]
    first = {i: getattr(WitnessFinder(m).find(i), "args", None) for i in ids}
    busy = Solver()
    SymbolicFsm(m, busy)  # another engine on the same solver first; then a fresh finder, elements in reverse
    finder = WitnessFinder(m)
    second = {i: getattr(finder.find(i), "args", None) for i in reversed(ids)}
    assert first == second


@pytest.mark.parametrize("vtype, expected", [
    (ValueType("bool"), [False, True]),
    (ValueType("int", -2, 5), [0, -1, 1, -2, 2, 3, 4, 5]),
    (ValueType("enum", values=("B", "A")), ["B", "A"]),
    (ValueType("string", optional=True), ["v-1", "v-2", "v-3", "", "k", None]),
])
def test_candidate_values_come_in_a_fixed_readable_order(vtype, expected):
    assert candidate_values("v", vtype, [3, "k"]) == expected


def _outcome(result):
    if isinstance(result, NoWitness):
        return result.reason, result.message
    return [(s.event, s.outcome) for s in result.plan], result.args


def test_a_search_resumed_after_a_smaller_budget_finds_what_a_fresh_one_finds():
    # A finder keeps each search and goes on where a smaller budget stopped; asked with any budget, in any order,
    # it must answer exactly what a fresh finder asked once with that budget answers.
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
    import synth

    m = parse_text(synth.generate_model(40, 400, 5).text(), "synth.fsm").models[0]
    elements = [e.id for e in support("fsm").enumerate(m) if e.criterion in ("transition", "state", "guard")][::2]
    small = 20
    kept, only_small, only_full = (WitnessFinder(m, max_paths=400) for _ in range(3))
    changed = 0
    for element in elements:
        first, full, again = kept.find(element, small), kept.find(element), kept.find(element, small)
        assert _outcome(first) == _outcome(again) == _outcome(only_small.find(element, small)), element
        assert _outcome(full) == _outcome(only_full.find(element)), element
        changed += _outcome(first) != _outcome(full)
    assert changed  # some searches did stop at the small budget and were taken further
