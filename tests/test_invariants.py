"""Invariants: the DSL and its resolution, Dwyer's patterns on hand-written runs, exploration with the shortest
replayed counterexample, and trigger coverage (antecedent coverage) from goldens."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
import yaml

from mbt.analysis import invariant_checks
from mbt.analysis.check import CheckOptions, run_checks
from mbt.analysis.explore import Explorer
from mbt.analysis.invariant_checks import analyse, check_invariants, search
from mbt.engine.temporal import Monitor, Position, judge
from mbt.errors import LocatedError
from mbt.goldens.cases import parse_case
from mbt.kind import support
from mbt.model.invariant import InvariantModel
from mbt.parsing.grammar import grammar_dir, parser
from mbt.parsing.loader import load_file, load_paths, parse_text

CASES = Path(__file__).parent / "cases" / "invariants"
PATTERNS = yaml.safe_load((CASES / "patterns.yaml").read_text(encoding="utf-8"))["cases"]
REFERENCE = Path(__file__).parents[1] / "docs" / "dsl-reference.md"

BOOLS = "fsm m {\n  var p: bool\n  var s: bool\n  var a: bool\n  var q: bool\n  var r: bool\n  state x initial\n}\n"


def models(text: str) -> tuple:
    """(fsm, invariants) of a file holding one fsm and one invariants block."""
    fsm, inv = parse_text(text, "m.fsm").models
    return fsm, inv


def monitor_for(pattern: str) -> Monitor:
    _, inv = models(BOOLS + f"invariants for m {{\n  it: {pattern}\n}}\n")
    return Monitor(inv.invariants[0])


# ---------------------------------------------------------------- patterns and scopes on hand-written runs


@pytest.mark.parametrize("case", PATTERNS, ids=lambda c: f"{c['inv']} on {' | '.join(c['run'])}")
def test_pattern_verdict_on_a_hand_written_run(case):
    monitor = monitor_for(case["inv"])
    positions = [Position({**{v: v in pos.split() for v in "psaqr"}, "state": "x"}) for pos in case["run"]]
    verdict = judge(monitor, positions, case["complete"]).verdict
    assert (verdict.position if verdict else None) == case["violated_at"]


def test_every_pattern_and_scope_has_a_holding_and_a_violated_case():
    seen: dict[tuple[str, str], set[bool]] = {}
    for case in PATTERNS:
        inv = monitor_for(case["inv"]).inv
        seen.setdefault((inv.pattern, inv.scope.kind), set()).add(case["violated_at"] is None)
    for pattern in ("universality", "absence", "existence", "bounded-existence", "precedence", "response"):
        for scope in ("global", "before", "after", "between", "after-until"):
            assert seen.get((pattern, scope)) == {True, False}, (pattern, scope)


# ---------------------------------------------------------------- the DSL


def test_every_rule_of_the_invariant_grammar_is_used_by_the_construct_case():
    text = (grammar_dir() / "invariant.lark").read_text(encoding="utf-8")
    wanted = set(re.findall(r"->\s*(\w+)", text)) | {"invariants_model", "invariant_decl"}
    used = {t.data for t in parser().parse((CASES / "every_construct.fsm").read_text(encoding="utf-8")).iter_subtrees()}
    assert wanted <= used, sorted(wanted - used)


def test_the_construct_case_resolves_with_its_patterns_scopes_and_annotations():
    (fsm, inv) = load_file(CASES / "every_construct.fsm").models
    assert isinstance(inv, InvariantModel) and (inv.name, inv.fsm, inv.fsm_model) == ("rules", "shop", fsm)
    got = {i.key: (i.pattern, i.scope.kind) for i in inv.invariants}
    assert got == {
        "bounded": ("universality", "global"), "implied": ("universality", "global"),
        "absent": ("absence", "global"), "exists": ("existence", "after"),
        "at_most": ("bounded-existence", "before"), "every_cancel": ("universality", "global"),
        "ordered": ("precedence", "between"), "answered": ("response", "after-until"),
        "literal": ("universality", "after"), "discarded": ("absence", "global"),
    }
    by_key = {i.key: i for i in inv.invariants}
    assert by_key["absent"].matching == ["cancel too much", "过多"]
    assert by_key["absent"].severity.value == "critical"
    assert by_key["exists"].status.value == "unspecified" and by_key["implied"].status.value == "inferred"
    assert by_key["bounded"].span.describe() == "doc:1"
    assert by_key["at_most"].bound == 1


def test_canonical_text_reads_back_as_the_same_invariant():
    (_, inv) = load_file(CASES / "every_construct.fsm").models
    base = (CASES / "every_construct.fsm").read_text(encoding="utf-8").split("invariants rules")[0]
    again = "".join(f"  {i.name}: {i.text()}\n" for i in inv.invariants)
    (_, reread) = parse_text(base + "invariants rules for shop {\n" + again + "}\n", "x.fsm").models
    assert [i.text() for i in reread.invariants] == [i.text() for i in inv.invariants]


def test_an_inv_file_finds_its_fsm_in_another_file(tmp_path):
    (tmp_path / "door.fsm").write_text("fsm door {\n  state shut initial\n  event knock\n  shut -> shut on knock\n}\n")
    (tmp_path / "door.inv").write_text("invariants for door {\n  quiet: never state == shut after on knock\n}\n")
    files = load_paths([str(tmp_path)])
    names = sorted(m.name for f in files for m in f.models)
    assert names == ["door", "door_invariants"]
    with pytest.raises(LocatedError) as err:  # read alone, the .inv file names an fsm nobody declared
        load_paths([str(tmp_path / "door.inv")])
    problem = err.value.problems[0]
    assert (problem.line, problem.column) == (1, 16)
    assert "invariants for unknown fsm `door`: no file read declares it" in problem.message


def test_an_invariant_block_cannot_take_the_name_of_another_model(tmp_path):
    with pytest.raises(LocatedError) as err:
        parse_text(BOOLS + "invariants m for m {\n  it: always p\n}\n", "x.fsm")
    assert "model `m` is declared twice" in err.value.problems[0].message


INVALID = [
    # (invariant lines, line, column, message fragment)
    ("  it: always y > 1", 10, 14, "unknown name `y`"),
    ("  it: never call nope", 10, 13, "fsm `m` never calls tool `nope`"),
    ("  it: eventually on gone", 10, 18, "fsm `m` has no event `gone`"),
    ("  it: always state == nowhere", 10, 23, "fsm `m` has no state `nowhere`"),
    ("  it: never call t [args.zz == 1]", 10, 21, "tool `t` is never called with argument `zz`"),
    ("  it: always on go == true", 10, 14, "`on go` is a condition; it cannot be compared or added"),
    ("  it: always state > x", 10, 14, "`state` can only be compared with == or !="),
    ("  it: always p\n  it: never p", 11, 3, "invariant `it` is declared twice"),
    ("  it: never call t [on go]", 10, 24, "unexpected `go`; expected `]`"),  # brackets hold plain conditions
    ("  always p", 10, 3, "an invariant starts with its name and a colon"),
    ("  it: alwys p", 10, 7, "unknown pattern `alwys`"),
    ("  it: always p until on go", 10, 16, "`until` only ends an `after` scope"),
    ("  it: never call t(n)", 10, 19, "a call's arguments are not listed here"),
    ("  it: always p\n  between: always p", 11, 3, "`between` is a keyword here, so it cannot name an invariant"),
    ("  it: always p @nowhere:1", 10, 16, "span cites unknown source `nowhere`"),
]
TOOL_FSM = ("fsm m {\n  var p: bool\n  var n: int[0..3] = 0\n  state x initial\n  event go\n"
            "  x -> x on go / call t(e = 1)\n}\n\ninvariants for m {\n")


@pytest.mark.parametrize("lines, line, column, fragment", INVALID, ids=[c[3] for c in INVALID])
def test_a_bad_invariant_gives_one_clear_located_error(lines, line, column, fragment):
    with pytest.raises(LocatedError) as err:
        parse_text(TOOL_FSM + lines + "\n}\n", "x.fsm")
    first = err.value.problems[0]
    assert fragment in first.message, err.value.render()
    assert (first.line, first.column) == (line, column), err.value.render()
    assert "Traceback" not in err.value.render() and "__ANON" not in err.value.render()


def test_damaged_invariant_files_never_crash():
    text = (CASES / "every_construct.fsm").read_text(encoding="utf-8")
    rnd = random.Random(4)
    failures = 0
    for _ in range(300):
        at = rnd.randrange(len(text))
        damaged = rnd.choice([text[:at] + text[at + 1:], text[:at] + rnd.choice("{}[]():-=@\"x ") + text[at:]])
        try:
            parse_text(damaged, "x.fsm")
        except LocatedError as err:
            failures += 1
            lines = damaged.splitlines()
            for p in err.problems:
                assert 1 <= p.line <= len(lines) and 1 <= p.column <= len(lines[p.line - 1]) + 1, err.render()
    assert failures > 50


def test_every_invariant_example_in_the_reference_parses():
    text = REFERENCE.read_text(encoding="utf-8")
    base = re.findall(r"```mbt\n(.*?)```", text, re.S)[0]
    blocks = re.findall(r"```mbt-invariants\n(.*?)```", text, re.S)
    assert blocks
    for block in blocks:
        (_, inv) = parse_text(base + "\ninvariants for recovery {\n" + block + "}\n", "dsl-reference.md").models
        assert len(inv.invariants) == block.count(": ")


# ---------------------------------------------------------------- exploration and counterexamples

SHORTCUT = """\
fsm m {
  var n: int[0..5] = 0
  state a initial
  state b
  state bad final
  event slow
  event boom
  event fast
  a -> a on slow [n < 4] / n := n + 1
  a -> bad on boom [n == 4]
  a -> b on fast
  b -> bad on boom
}
invariants for m {
  safe: never state == bad
}
"""


def findings_for(text: str, depth: int | None = None, tmp_path: Path | None = None):
    path = (tmp_path or Path("/nonexistent")) / "m.fsm"
    path.write_text(text, encoding="utf-8")
    return [f for f in run_checks([load_file(path)], CheckOptions(depth=depth or 20)) if f.code.startswith("INV")]


def test_the_counterexample_is_the_shortest_run_not_the_first_declared(tmp_path):
    (finding,) = findings_for(SHORTCUT, tmp_path=tmp_path)
    ce = finding.counterexample
    assert finding.code == "INV001" and ce.replayed
    assert [s.event for s in ce.steps[1:]] == ["fast", "boom"]  # not slow, slow, slow, slow, boom
    assert [s.state for s in ce.steps] == ["a", "b", "bad"]
    assert ce.violated_at == 2
    assert ce.golden == {"id": "CE-safe", "model": "m", "turns": [{"event": "fast"}, {"event": "boom"}]}


def test_the_counterexample_reads_like_a_minimal_failing_example(tmp_path):
    (finding,) = findings_for(SHORTCUT, tmp_path=tmp_path)
    assert finding.render().replace(str(tmp_path), "X") == """\
X/m.fsm:15:3: error: invariant `safe` is violated: `state == bad` holds [INV001 invariant-violated]
    counterexample: 2 steps, the shortest within depth 20 (replayed on the model)
      start            in a: n = 0
       1. fast()       -> b
       2. boom()       -> bad
          violated at step 2: `state == bad` holds
      as a golden case (add the assertions you expect):
        {"id": "CE-safe", "model": "m", "turns": [{"event": "fast"}, {"event": "boom"}]}"""


def test_the_depth_bounds_the_search(tmp_path):
    (held,) = findings_for(SHORTCUT, depth=1, tmp_path=tmp_path)
    assert held.code == "INV002"
    assert held.message == "invariant `safe` holds on every run of up to 1 steps (3 configurations explored)"
    (violated,) = findings_for(SHORTCUT, depth=2, tmp_path=tmp_path)
    assert violated.code == "INV001" and len(violated.counterexample.steps) == 3


RESEND = """\
fsm m {
  var cur: string? = none
  var old: string? = none
  var older: string? = none
  state s initial
  state done final
  event give(e: string)
  event submit
  s -> s on give(e) [e != cur] / older := old, old := cur, cur := e
  s -> done on submit / call send(to = cur)
}
invariants for m {
  no_resend: never call send [args.to == older and older != none]
}
"""


def test_strings_need_only_held_values_and_one_fresh_value(tmp_path):
    # Three distinct addresses are involved; the exploration reuses a held one where the violation needs it.
    (finding,) = findings_for(RESEND, tmp_path=tmp_path)
    ce = finding.counterexample
    assert [(s.event, s.args) for s in ce.steps[1:]] == [
        ("give", {"e": "e1"}), ("give", {"e": "e2"}), ("give", {"e": "e1"}), ("submit", {})]
    assert ce.steps[-1].calls[0].args == {"to": "e1"}
    assert ce.replayed


def test_a_counterexample_pasted_as_a_golden_replays_to_the_same_violation(tmp_path):
    (finding,) = findings_for(RESEND, tmp_path=tmp_path)
    fsm, inv = load_file(tmp_path / "m.fsm").models
    case = parse_case(finding.counterexample.golden, "pasted.jsonl", 1)
    elements = support("invariant").enumerate(inv)
    run = support("invariant").replayer(inv, elements).replay(case)
    (contradiction,) = run.contradictions
    assert contradiction.path == "invariant:no_resend" and contradiction.turn == 4


def test_a_counterexample_that_does_not_replay_says_so(tmp_path, monkeypatch):
    real = invariant_checks.run_events

    def tampered(model, elements, events, **options):
        snapshots = real(model, elements, events, **options)
        snapshots[-1].state = "s"  # the engine "disagrees" with the exploration
        return snapshots

    monkeypatch.setattr(invariant_checks, "run_events", tampered)
    (finding,) = findings_for(RESEND, tmp_path=tmp_path)
    assert not finding.counterexample.replayed
    assert "NOT reproduced by the replay engine" in finding.render()


def test_event_occurrences_count_per_step_and_state_occurrences_per_entry(tmp_path):
    text = ("fsm m {\n  state a initial\n  state b\n  event go\n  event jump\n  a -> a on go\n  a -> b on jump\n"
            "  b -> b on go\n}\ninvariants for m {\n  one_go: at most 1 on go\n  one_b: at most 1 state == b\n}\n")
    found = {f.message.split("`")[1]: f for f in findings_for(text, tmp_path=tmp_path)}
    assert found["one_go"].code == "INV001"
    assert [s.event for s in found["one_go"].counterexample.steps[1:]] == ["go", "go"]
    assert found["one_b"].code == "INV002"  # staying in b is one occurrence


def test_existence_is_owed_only_by_complete_runs_and_dead_ends_count_as_ends(tmp_path):
    text = ("fsm m {\n  state a initial\n  state loop\n  state stuck\n  event go\n  event spin\n  event jam\n"
            "  a -> loop on go\n  loop -> loop on spin\n  loop -> stuck on jam\n}\n"
            "invariants for m {\n  reaches: eventually state == stuck\n  escapes: eventually state == a after on jam\n}\n")
    found = {f.message.split("`")[1]: f for f in findings_for(text, tmp_path=tmp_path)}
    # `loop` can spin forever, but no run ends there: only `stuck` (nothing accepted any more) ends a run.
    assert found["reaches"].code == "INV002"
    assert found["escapes"].code == "INV001"
    assert [s.event for s in found["escapes"].counterexample.steps[1:]] == ["go", "jam"]
    assert found["escapes"].counterexample.reason == "`state == a` never held by the end of the run"


def test_search_explores_each_configuration_and_monitor_state_once():
    fsm, inv = models(SHORTCUT.replace("safe: never state == bad", "safe: always n <= 5"))
    graph = Explorer(fsm).explore(20)
    # a with n = 0..4; b and bad, each with every n that leads there
    assert graph.complete and len(graph.nodes) == 15 and graph.edge_count == 15
    outcome = search(graph, Monitor(inv.invariants[0]), 20)
    assert outcome.verdict is None and outcome.every_run and outcome.explored == 15


def test_wide_int_parameters_are_sampled_around_the_constants_and_the_claim_is_bounded(tmp_path):
    text = ("fsm m {\n  var x: int[0..1000] = 0\n  state a initial\n  event set(k: int[0..1000])\n"
            "  a -> a on set / x := k\n}\ninvariants for m {\n  not_999: always x != 999\n"
            "  in_range: always x <= 1000\n}\n")
    violated, held = findings_for(text, depth=2, tmp_path=tmp_path)
    assert violated.code == "INV001"  # the invariant's own constant is among the sampled values
    assert [s.args for s in violated.counterexample.steps[1:]] == [{"k": 999}]
    assert held.code == "INV002" and "some int parameters were sampled" in held.message


def test_the_check_report_carries_the_counterexample_as_data(tmp_path):
    (finding,) = findings_for(SHORTCUT, tmp_path=tmp_path)
    data = json.loads(finding.model_dump_json())
    assert data["counterexample"]["steps"][1] == {"step": 1, "event": "fast", "args": {}, "transition": "a.fast->b",
                                                  "state": "b", "changed": {}, "calls": []}


def test_analysis_is_cached_per_model_and_depth():
    _, inv = models(SHORTCUT)
    assert analyse(inv, 5) is analyse(inv, 5)
    assert analyse(inv, 5) is not analyse(inv, 6)
    assert check_invariants(inv, CheckOptions(depth=2))[0].code == "INV001"


# ---------------------------------------------------------------- trigger coverage from goldens

TRIGGERS = """\
fsm t {
  var locked: bool = false
  state s initial
  state mid
  state end final
  event q
  event r
  event x
  event y
  event lock
  event to_mid
  event quit
  s -> s on q
  s -> s on r
  s -> s on x
  s -> s on y / call ack(n = 1)
  s -> s on lock / locked := true
  s -> mid on to_mid
  mid -> mid on y / call ack(n = 2)
  s -> end on quit
}
invariants for t {
  resp: on x leads to call ack between on q and on r
  guarded: always locked -> state == s
  quiet: never call ack [args.n == 2] matching "no second acknowledgement"
  ordered: on x precedes call ack [args.n == 2]
}
"""


def coverage_of(cases: list[dict]) -> tuple[dict[str, dict[str, list[str]]], list]:
    """element id -> {"exercised": [...], "verified": [...]}, and the contradictions, for the TRIGGERS model."""
    _, inv = models(TRIGGERS)
    elements = support("invariant").enumerate(inv)
    replayer = support("invariant").replayer(inv, elements)
    found = {e.id: {"exercised": [], "verified": []} for e in elements}
    contradictions = []
    for n, raw in enumerate(cases, start=1):
        run = replayer.replay(parse_case(raw, "g.jsonl", n))
        for i in run.exercised:
            found[elements[i].id]["exercised"].append(raw["id"])
        for i in run.verified:
            found[elements[i].id]["verified"].append(raw["id"])
        contradictions.extend(run.contradictions)
    return found, contradictions


def turn(event: str, **expect) -> dict:
    return {"event": event, **expect}


ACK = {"tool_arguments": {"ack": {"n": 1}}}


def test_a_vacuous_pass_covers_nothing():
    # The scope opens and closes, an ack is asserted, but no x ever needs an answer.
    found, contradictions = coverage_of([{"id": "VAC", "turns": [turn("q"), turn("y", **ACK), turn("r")]}])
    assert found["trigger:resp"] == {"exercised": [], "verified": []}
    assert contradictions == []


def test_the_trigger_and_the_asserted_consequent_must_share_one_opening_of_the_scope():
    cross = {"id": "CROSS", "turns": [turn("q"), turn("x"), turn("y"), turn("r"),  # answered, never checked
                                      turn("q"), turn("y", **ACK), turn("r")]}    # checked, but nothing asked
    same = {"id": "SAME", "turns": [turn("q"), turn("x"), turn("y", **ACK), turn("r")]}
    found, _ = coverage_of([cross, same])
    assert found["trigger:resp"] == {"exercised": ["CROSS", "SAME"], "verified": ["SAME"]}


def test_a_between_interval_that_r_never_closes_is_not_counted():
    found, _ = coverage_of([{"id": "OPEN", "turns": [turn("q"), turn("x"), turn("y", **ACK)]}])
    assert found["trigger:resp"] == {"exercised": [], "verified": []}


def test_final_tool_arguments_assert_calls_made_at_any_step():
    found, _ = coverage_of([{"id": "FINAL", "turns": [turn("q"), turn("x"), turn("y"), turn("r")],
                             "assertions": ACK}])
    assert found["trigger:resp"]["verified"] == ["FINAL"]


def test_antecedent_coverage_needs_the_antecedent_and_the_consequent_asserted():
    never_locked = {"id": "NEVER", "turns": [turn("q", assert_state={"state": "s"})]}
    locked_unchecked = {"id": "LOCKED", "turns": [turn("lock", assert_state={"locked": True})]}
    locked_checked = {"id": "CHECKED", "turns": [turn("lock", assert_state={"state": "s"})]}
    found, _ = coverage_of([never_locked, locked_unchecked, locked_checked])
    assert found["trigger:guarded"] == {"exercised": ["LOCKED", "CHECKED"], "verified": ["CHECKED"]}


def test_a_must_not_phrase_asserts_an_absence():
    found, _ = coverage_of([{"id": "PHRASE", "turns": [turn("x", must_not=["No second acknowledgement is sent"])]},
                            {"id": "WORDS", "turns": [turn("x", must_not=["anything rude"])]}])
    assert found["trigger:quiet"] == {"exercised": ["PHRASE", "WORDS"], "verified": ["PHRASE"]}


def test_a_golden_that_breaks_an_invariant_is_a_contradiction_and_verifies_nothing():
    found, contradictions = coverage_of([{"id": "BREAK", "turns": [turn("q"), turn("x", **ACK), turn("r")]}])
    (c,) = contradictions
    assert (c.case, c.path, c.turn, c.model) == ("BREAK", "invariant:resp", 3, "t_invariants")
    assert "`on x` was not followed by `call ack` before the scope closed (`on r`)" in c.message
    assert found["trigger:resp"] == {"exercised": ["BREAK"], "verified": []}


def test_a_precondition_hides_history_so_only_history_free_verdicts_are_reported():
    # Starting in `mid`, nobody knows whether x happened before: `precedes` is not judged; `never` is.
    found, contradictions = coverage_of([{"id": "MID", "precondition": {"state": "mid"},
                                          "turns": [turn("y", tool_arguments={"ack": {"n": 2}})]}])
    assert [c.path for c in contradictions] == ["invariant:quiet"]
    assert "(the case starts from its precondition)" in contradictions[0].message
    assert found["trigger:ordered"] == {"exercised": ["MID"], "verified": []}


def test_goldens_for_the_fsm_apply_to_its_invariants():
    from mbt.api import applies

    _, inv = models(TRIGGERS)
    assert applies(inv, parse_case({"id": "A", "model": "t", "turns": [turn("q")]}, "g", 1))
    assert not applies(inv, parse_case({"id": "B", "model": "other", "turns": [turn("q")]}, "g", 2))


def test_a_precondition_in_the_initial_state_is_context_so_every_verdict_is_judged():
    _, contradictions = coverage_of([{"id": "CTX", "precondition": {"locked": True},
                                      "turns": [turn("to_mid"), turn("y")]}])
    assert [(c.path, c.turn) for c in contradictions] == [
        ("invariant:guarded", 1), ("invariant:quiet", 2), ("invariant:ordered", 2)]
    assert not any("precondition" in c.message for c in contradictions)


def test_an_exploration_stopped_at_its_limit_says_what_was_checked():
    """Issue 14: INV002 said "holds on every run of up to N steps" while INV004 said only part was explored."""
    from types import SimpleNamespace

    root = Path(__file__).parents[1] / "models"
    model = next(m for f in load_paths([str(root / "recovery.fsm"), str(root / "recovery.inv")]) for m in f.models
                 if m.kind == "invariant")
    limited = check_invariants(model, SimpleNamespace(depth=20, max_configurations=5))
    full = check_invariants(model, SimpleNamespace(depth=20, max_configurations=None))
    assert [f.code for f in limited].count("INV004") == 1 and "INV004" not in [f.code for f in full]
    holds = [f.message for f in limited if f.code == "INV002"]
    assert holds and all("every run" not in m and "stopped at its limit" in m for m in holds)
    assert any("every run" in f.message for f in full if f.code == "INV002")
