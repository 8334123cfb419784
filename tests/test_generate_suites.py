"""Full suites: tour and path-cover lengths equal the optimum computed by hand on small graphs."""

from __future__ import annotations

from pathlib import Path

from mbt.engine.fsm import run_events
from mbt.generate.suites import SuiteBuilder, optimal_cover
from mbt.generate.witnesses import WitnessFinder
from mbt.kind import support
from mbt.parsing.loader import load_file, parse_text

EXAMPLE = Path(__file__).resolve().parents[1] / "models" / "recovery.fsm"


def suite(text: str, criterion: str = "transition"):
    m = parse_text(text, "m.fsm").models[0]
    return m, SuiteBuilder(WitnessFinder(m)).build(criterion)


def check_runs(m, s) -> set[str]:
    """Every run replays on the model taking exactly its planned transitions; the transitions it took."""
    elements = support("fsm").enumerate(m)
    taken = set()
    for run in s.runs:
        snapshots = run_events(m, elements, run.events, run.start.precondition.get("state"),
                               {k: v for k, v in run.start.precondition.items() if k != "state"})
        assert [snap.transition for snap in snapshots] == [m.transitions[p.outcome].key for p in run.plan]
        taken |= {snap.transition for snap in snapshots}
    return taken


def test_a_strongly_connected_model_gets_the_chinese_postman_tour():
    # a->b, b->a, b->c, c->b: balanced, so the closed tour a b c b a takes every edge once, in one run.
    m, s = suite("""
    fsm loop {
      state a initial
      state b
      state c
      event x
      event y
      a -> b on x
      b -> a on y
      b -> c on x
      c -> b on y
    }""")
    assert (s.method, s.strongly_connected) == ("chinese-postman", True)
    assert (s.lower_bound, s.optimum_steps, s.optimum_tests) == (4, 4, 1)
    assert (s.steps, len(s.runs)) == (4, 1)
    assert check_runs(m, s) == {t.key for t in m.transitions}
    assert m.transitions[s.runs[0].plan[-1].outcome].target == "a"


def test_a_strongly_connected_model_gets_runs_with_resets_when_they_are_shorter():
    # a->b, b->c, c->a, a->c: a closed tour must repeat c->a (5 steps); a run need not come back: a b c a c is
    # every edge once, 4 steps in 1 run.
    m, s = suite("""
    fsm loop {
      state a initial
      state b
      state c
      event x
      event y
      a -> b on x
      b -> c on x
      c -> a on x
      a -> c on y
    }""")
    assert (s.method, s.strongly_connected) == ("path-cover", True)
    assert (s.lower_bound, s.optimum_steps, s.optimum_tests) == (4, 4, 1)
    assert (s.steps, len(s.runs)) == (4, 1)
    assert check_runs(m, s) == {t.key for t in m.transitions}
    assert optimal_cover(["a", "b", "c"], [("a", "b", 1), ("b", "c", 2), ("c", "a", 3), ("a", "c", 4)], "a",
                         closed=True).steps == 5


def test_pairs_the_guards_rule_out_do_not_break_the_pair_tour():
    # Strongly connected, but no run takes `pay` then `ok` (last <= 10 after pay): the line graph of the feasible
    # pairs is not strongly connected, and the suite is a path cover of it (was: an internal error).
    m, s = suite("""
    fsm data {
      var last: int[0..300] = 0
      state s0 initial
      state s1
      event pay(amount: int[0..10])
      event big
      event ok
      s0 -> s1 on pay / last := amount
      s0 -> s1 on big / last := 200
      s1 -> s0 on ok [last > 100]
    }""", "transition-pair")
    assert [x.element for x in s.missing] == ["transition-pair:s0.pay->s1|s1.ok->s0"]
    # By hand: the pairs big.ok, ok.big, ok.pay in one run: big ok big ok pay (ok.big, then ok.pay) = 5 steps.
    assert (s.lower_bound, s.steps, len(s.runs)) == (3, 5, 1)
    check_runs(m, s)


def test_terminal_states_get_a_path_cover_with_resets():
    # Two ways out of a, both ending in the final d: two runs of two steps; the edges count is the optimum.
    m, s = suite("""
    fsm fork {
      state a initial
      state b
      state c
      state d final
      event go
      event left
      event right
      a -> b on left
      a -> c on right
      b -> d on go
      c -> d on go
    }""")
    assert (s.method, s.strongly_connected) == ("path-cover", False)
    assert (s.lower_bound, s.optimum_steps, s.optimum_tests, s.steps, len(s.runs)) == (4, 4, 2, 4, 2)
    assert check_runs(m, s) == {t.key for t in m.transitions}


def test_a_path_cover_repeats_only_what_it_must():
    # a->b, b->a, b->c (final), a->d (final): c and d end runs, so two runs; a->b is needed in both: 5 steps.
    m, s = suite("""
    fsm back {
      state a initial
      state b
      state c final
      state d final
      event e1
      event e2
      event e3
      event e4
      a -> b on e1
      b -> a on e2
      b -> c on e3
      a -> d on e4
    }""")
    assert (s.lower_bound, s.optimum_steps, s.optimum_tests, s.steps, len(s.runs)) == (4, 5, 2, 5, 2)
    assert check_runs(m, s) == {t.key for t in m.transitions}


def test_unsatisfiable_guarded_edges_are_reported_and_left_out_of_the_optimum():
    m, s = suite("""
    fsm guarded {
      var n: int[0..1] = 0
      state a initial
      state b
      state c final
      event go
      event stop
      event never
      a -> b on go
      b -> c on stop
      b -> c on never [n == 1]
      a -> c on never [false]
    }""")
    # `n == 1` can hold for some n but no run sets n; `false` never holds: neither is in the flow.
    assert (s.lower_bound, s.optimum_steps, s.optimum_tests, s.steps, len(s.runs)) == (2, 2, 1, 2, 1)
    reasons = {x.element: x.reason for x in s.missing}
    assert reasons == {"transition:b.never->c": "unsatisfiable", "transition:a.never->c": "unsatisfiable"}


def test_guards_force_steps_beyond_the_guard_free_optimum():
    # Ignoring guards one step per transition (3); `go` needs two `inc` first, and the suite takes them.
    m, s = suite("""
    fsm counter {
      var n: int[0..3] = 0
      state a initial
      state b
      state c final
      event inc
      event go
      event finish
      a -> a on inc [n < 3] / n := n + 1
      a -> b on go [n >= 2]
      b -> c on finish
    }""")
    assert (s.lower_bound, s.optimum_steps, s.optimum_tests) == (3, 3, 1)
    assert (s.steps, len(s.runs)) == (4, 1)
    assert [p.event for p in s.runs[0].plan] == ["inc", "inc", "go", "finish"]


def test_transition_pairs_are_covered_over_the_line_graph():
    # Pairs: ab|bb, ab|bc, bb|bb, bb|bc. `a` starts every run and never comes back, so ab|bc and ab|bb need two
    # runs: a b c (2 steps) and a b b b c (4 steps) = 6.
    m, s = suite("""
    fsm chain {
      state a initial
      state b
      state c final
      event go
      event stay
      a -> b on go
      b -> b on stay
      b -> c on go
    }""", "transition-pair")
    assert (s.items, s.lower_bound, s.optimum_steps, s.optimum_tests) == (4, 4, 6, 2)
    assert (s.steps, len(s.runs)) == (6, 2)
    covered = {c for run in s.runs for c in run.covers}
    assert len(covered) == 4


def test_the_example_transition_suite_reaches_the_optimum_despite_its_guards():
    m = load_file(EXAMPLE).models[0]
    s = SuiteBuilder(WitnessFinder(m)).build("transition")
    assert (s.lower_bound, s.optimum_steps, s.optimum_tests) == (14, 17, 3)
    assert (s.steps, len(s.runs), s.missing) == (17, 3, [])
    assert check_runs(m, s) == {t.key for t in m.transitions}


def test_the_example_pair_suite_reports_the_pairs_no_run_can_take():
    m = load_file(EXAMPLE).models[0]
    s = SuiteBuilder(WitnessFinder(m)).build("transition-pair")
    impossible = {"transition-pair:retry_once|retry_once",
                  "transition-pair:confirming_email.correct_email->reset_started|handoff_after_retry",
                  "transition-pair:confirming_email.confirm_email->reset_started|handoff_after_retry",
                  "transition-pair:collecting_email.off_topic->suspended|suspended.resume->confirming_email",
                  "transition-pair:confirming_email.off_topic->suspended|suspended.resume->collecting_email"}
    assert {x.element for x in s.missing} == impossible and {x.reason for x in s.missing} == {"unsatisfiable"}
    assert s.lower_bound == s.items - len(impossible) == 29
    assert s.steps >= s.optimum_steps
    covered = [c for run in s.runs for c in run.covers]
    assert len(covered) == len(set(covered)) == 29
    check_runs(m, s)


def test_the_flow_optimum_is_realised_by_the_euler_circuit():
    edges = [("a", "b", 1), ("b", "a", 2), ("b", "c", 3), ("a", "d", 4), ("c", "b", 5)]
    tour = optimal_cover(["a", "b", "c", "d"], edges, "a")
    runs = tour.runs()
    assert sum(len(r) for r in runs) == tour.steps and len(runs) == tour.tests
    assert sorted({k for r in runs for k in r}) == [1, 2, 3, 4, 5]
    for ordering in range(1, 5):  # other circuits: other orders, same optimum
        assert sum(len(r) for r in tour.runs(ordering)) == tour.steps
