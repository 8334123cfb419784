"""Mutation adequacy on FSMs: each operator on a hand-checked model, then the kill engine against the oracle."""

from __future__ import annotations

from pathlib import Path

from mbt.api import load_models
from mbt.goldens.loader import load_goldens
from mbt.mutate.engine import mutation_run
from tests.judge.mutation import campaign

DATA = Path(__file__).parent / "data" / "mutation"
T1, T2 = "transition:idle.go->busy", "transition:busy.stop->idle"


def tiny_run():
    _, models = load_models([str(DATA / "tiny.fsm")])
    return mutation_run(models, load_goldens([str(DATA / "tiny.jsonl")]))


def test_every_fsm_operator_on_the_tiny_model_worked_out_by_hand():
    run = tiny_run()
    (m,) = run.report.models
    got = {r.id: (r.status, r.killed_by) for r in m.results}
    g1, g2, g3 = ["g1"], ["g2"], ["g3"]
    assert got == {
        # idle -> busy on go(k) [k >= 2] / n := 1; g1 asserts state and n after go(k = 2)
        f"FTS@{T1}": ("killed", g1), f"FMT@{T1}": ("killed", g1), f"FGN@{T1}": ("killed", g1),
        f"FRO@{T1}": ("killed", g1),  # k > 2 refuses k = 2
        f"FBS@{T1}": ("survived", []),  # k >= 1: same on k = 2; only k = 1 tells
        f"FBS@{T1}~2": ("killed", g1),  # k >= 3
        f"FAD@{T1}": ("killed", g1), f"FAC@{T1}": ("killed", g1),  # n stays 0 / n := 0
        # busy -> idle on stop [n <= 3] / call note(v = n); g2 checks the call's argument, not the state
        f"FTS@{T2}": ("survived", []),  # g2 does not assert the state
        f"FMT@{T2}": ("killed", g2), f"FGN@{T2}": ("killed", g2), f"FRO@{T2}": ("killed", g2),
        f"FBS@{T2}": ("killed", g2),  # n <= 2 refuses n = 3
        f"FBS@{T2}~2": ("equivalent", []),  # n <= 4 holds for every n of int[0..3]
        f"FAD@{T2}": ("killed", g2), f"FAR@{T2}": ("killed", g2),
        "FET@busy.go": ("survived", []),  # no golden sends go in busy
        "FFR@forbidden:idle.stop": ("killed", g3),  # g3 expects stop refused in idle
    }
    assert (m.mutants, m.equivalent, m.killed, m.survived) == (18, 1, 14, 3)
    assert m.score == 14 / 17
    assert run.profiles["g4"].kills == set()  # a golden that asserts nothing kills nothing


def test_every_survivor_gets_a_witness_that_kills_it():
    (m,) = tiny_run().report.models
    witnesses = {r.id: r.witness for r in m.results if r.status == "survived"}
    assert witnesses[f"FTS@{T2}"]["turns"][0]["assert_state"]["state"] == "idle"
    assert witnesses[f"FBS@{T1}"]["turns"][0] == {"event": "go", "args": {"k": 1}, "rejected": True,
                                                   "assert_state": {"state": "idle", "n": 0}}
    assert all(w is not None for w in witnesses.values())


def test_kills_agree_with_the_brute_force_oracle_on_random_models():
    pairs, kills, problems = campaign(models=20, per_model=20, seed=20261202)
    assert pairs > 15_000 and kills > 100
    assert problems == [], "\n".join(problems[:20])


def test_tool_call_argument_operators_worked_out_by_hand():
    _, models = load_models([str(DATA / "swap.fsm")])
    run = mutation_run(models, load_goldens([str(DATA / "swap.jsonl")]))
    (m,) = run.report.models
    t = "transition:s.go->s"
    got = {r.id: (r.status, r.killed_by) for r in m.results}
    assert got == {
        f"FMT@{t}": ("killed", ["w1"]), f"FAD@{t}": ("killed", ["w1"]),  # no call at all
        f"FAS@{t}": ("survived", []),  # w1 passes a = b: swapping them changes nothing it checks
        f"FAR@{t}": ("killed", ["w1"]), f"FAR@{t}~2": ("killed", ["w1"]),  # a checked argument is missing
    }
    witness = next(r.witness for r in m.results if r.operator == "FAS")
    (turn,) = witness["turns"]
    assert turn["args"]["a"] != turn["args"]["b"]
    assert turn["tool_arguments"] == {"send": {"p": turn["args"]["a"], "q": turn["args"]["b"]}}
