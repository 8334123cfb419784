"""Invariant mutants decided by bounded model checking (issue 36, item 6a), worked out by hand.

A mutant of an invariant changes no step of the FSM, only which runs break the invariant; a golden kills it when its
run breaks the mutant and not the original. So the search is over runs of the FSM from its initial state, as `mbt
check` explores them: a run that breaks the mutant and not the original is a witness (the mutant lives), no such run
within the bound makes the mutant equivalent — on every run when the state space was exhausted, else only within
the bound, and the reason says which.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest

from mbt.api import load_models
from mbt.goldens.loader import load_goldens
from mbt.mutate.engine import mutation_run
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "mutation"


def invariant_results(paths: list[Path], goldens: Path):
    _, models = load_models([str(p) for p in paths])
    run = mutation_run(models, load_goldens([str(goldens)]))
    return {m.model: m for m in run.report.models if m.kind == "invariant"}


def test_mbt_mutate_decides_the_example_invariant_mutants():
    """`mbt mutate` on the shipped invariants. Read by hand:

    * IAW on an `every call T [C]` invariant drops its antecedent `call T`: `always every call T [C]` holds where T is
      not called (no call to check), so the mutant breaks on exactly the runs the original breaks on: equivalent, on
      every run (`mbt check` explores both FSMs completely: 377 and 184 configurations). recovery has two such
      invariants (current_email_only, handoff_with_current_email), orders two (own_order_only, looked_up_number).
    * ISC on reset_concludes (`eventually state in {link_sent, handed_off} after state == reset_started`, made
      global): a run is complete only in a final state (link_sent, handed_off), and both are reached only through
      reset_started, so every complete run satisfies both: equivalent, on every run.
    * The other mutants are killed by the goldens, as before: recovery 4 of 7, orders 3 of 5.

    So invariant.mutation is 7 killed of 12 - 5 equivalent = 100%; before the search it was 7/12 = 58.3%, every
    survivor "not decided".
    """
    r = run_mbt("mutate", "--model", ROOT / "models" / "recovery.fsm", "--model", ROOT / "models" / "recovery.inv",
                "--model", ROOT / "models" / "orders.fsm", "--model", ROOT / "models" / "orders.inv",
                "--goldens", ROOT / "models" / "goldens", "--format", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["kinds"]["invariant"] == 1.0
    models = {m["model"]: m for m in report["models"] if m["kind"] == "invariant"}
    got = {(name, x["id"]): x for name, m in models.items() for x in m["results"]}
    equivalent = {key for key, x in got.items() if x["status"] == "equivalent"}
    assert equivalent == {
        ("recovery_invariants", "IAW@trigger:current_email_only"),
        ("recovery_invariants", "IAW@trigger:handoff_with_current_email"),
        ("recovery_invariants", "ISC@trigger:reset_concludes"),
        ("orders_invariants", "IAW@trigger:own_order_only"),
        ("orders_invariants", "IAW@trigger:looked_up_number")}
    for key in equivalent:
        assert "on every run" in got[key]["reason"] and "exhausted" in got[key]["reason"], got[key]["reason"]
    assert not any("not decided" in x["reason"] for x in got.values())
    assert (models["recovery_invariants"]["killed"], models["recovery_invariants"]["equivalent"]) == (4, 3)
    assert (models["orders_invariants"]["killed"], models["orders_invariants"]["equivalent"]) == (3, 2)


def test_a_live_invariant_mutant_gets_the_shortest_witness_that_kills_it():
    """door.fsm's `quiet: never state == open after on leave` made global (ISC): `never state == open` breaks at the
    first push (shut -> open), while the original, scoped after a leave that ends the run in `gone`, never does. The
    one golden (a tick) does not push: the mutant lives, and its witness is the one-step run `push`."""
    results = invariant_results([DATA / "door.fsm"], DATA / "door.jsonl")["door_invariants"].results
    quiet = next(x for x in results if x.id == "ISC@trigger:quiet")
    assert quiet.status == "survived"
    assert quiet.witness is not None and quiet.witness["turns"] == [{"event": "push"}]
    assert "1 step" in quiet.reason
    r = run_mbt("mutate", "--model", DATA / "door.fsm", "--goldens", DATA / "door.jsonl", "--show-survivors", "all")
    assert "(push): it breaks the mutant, not the original; its witness golden" in r.stdout


def test_an_equivalence_found_within_the_bound_says_so():
    """door.fsm's `low: always state == open -> n < 25` without its antecedent (IAW): `always n < 25` breaks only
    after 25 ticks; the door opens only while n < 10, so the original never breaks. The default bound is 20 steps and
    the counter's 31 values x 3 states are not all reached within it (the state space is not exhausted), so the
    search finds no difference and can only say: equivalent within the bound of 20 steps — which is all a bounded
    search proves (here it is even wrong beyond the bound: 25 ticks tell them apart)."""
    results = invariant_results([DATA / "door.fsm"], DATA / "door.jsonl")["door_invariants"]
    low = next(x for x in results.results if x.id == "IAW@trigger:low")
    assert low.status == "equivalent"
    assert "within the bound" in low.reason and "20 steps" in low.reason and "not exhausted" in low.reason


def test_a_mutant_told_apart_only_by_runs_breaking_the_original_survives_without_witness():
    """door.fsm's `knocked: eventually on knock after on push` made global (ISC): `eventually on knock`. Every
    complete run ends in `gone`, reached only from `open`, so it pushed. Where the mutant breaks (no knock at all) the
    original breaks too (no knock after the push); only the reverse differs: knock, push, leave breaks the original
    and not the mutant. A golden on that run contradicts the model and kills nothing: the mutant is not equivalent,
    survives, and has no witness; the reason says why (and `mbt check` reports the broken invariant)."""
    results = invariant_results([DATA / "door.fsm"], DATA / "door.jsonl")["door_invariants"]
    knocked = next(x for x in results.results if x.id == "ISC@trigger:knocked")
    assert knocked.status == "survived" and knocked.witness is None
    assert "break the original model" in knocked.reason
    assert (results.killed, results.equivalent, results.survived) == (0, 1, 2)


# ---------------------------------------------------------------- the search against brute force


def kill_lengths(base, replayer, fsm, elements, key: str, depth: int) -> tuple[int | None, bool]:
    """By brute force over every event sequence of 1 to `depth` steps, each replayed as a golden on both models: the
    fewest steps of a golden that kills the mutant (agrees with the original, contradicted on the mutant), and
    whether some golden's run breaks invariant `key` on one model and not on the other."""
    from mbt.engine.fsm import run_events
    from mbt.goldens.cases import parse_case
    from mbt.mutate.engine import killed

    def breaks(run) -> bool:
        return any(c.path == f"invariant:{key}" for c in run.contradictions)

    moves = [("go", {"up": True}), ("go", {"up": False}), ("flip", {})]
    kill, differ = None, False
    for length in range(1, depth + 1):  # a golden has at least one turn
        for seq in itertools.product(moves, repeat=length):
            if not all(s.transition is not None for s in run_events(fsm, elements, list(seq))):
                continue  # a refused event is no step: the same run is enumerated without it
            case = parse_case({"id": "x", "model": fsm.name,
                               "turns": [{"event": e, "args": a} if a else {"event": e} for e, a in seq]}, "x", 1)
            on_original, on_mutant = base.replay(case), replayer.replay(case)
            if killed(on_mutant) and not killed(on_original) and kill is None:
                kill = length
            differ |= breaks(on_original) != breaks(on_mutant)
    return kill, differ


def single_invariant_models(text: str) -> list[str]:
    """The random model once with all its invariants, then once per invariant alone (without the others broken,
    far more mutants can be killed)."""
    head, block = text.split("invariants for m {\n")
    lines = [line for line in block.splitlines() if line.startswith("  i")]
    return [text] + [f"{head}invariants for m {{\n{line}\n}}\n" for line in lines]


@pytest.mark.parametrize("seed", range(8))
def test_the_distinguishing_search_agrees_with_brute_force(seed):
    """tests/test_invariant_differential.py's random models (3 states, n: int[0..2], a flag, 12 invariants of every
    pattern and scope, then each invariant alone): for every invariant mutant, the search's verdict at depth 4
    against every event sequence of 1 to 4 steps replayed as a golden: a witness exactly as long as the shortest
    killing golden (one that breaks no invariant of the original); "only runs that break the original" exactly when
    no golden kills and the mutated invariant is broken on some run on one model only; equivalent exactly when no
    such run exists."""
    from mbt.elements.fsm import enumerate_fsm
    from mbt.goldens.replay_invariant import InvariantReplayer
    from mbt.kind import support
    from mbt.mutate.invariant import distinguish, invariant_mutants, mutant_replayer
    from mbt.parsing.loader import parse_text
    from tests.test_invariant_differential import DEPTH, random_model

    seen: Counter[str] = Counter()
    for text in single_invariant_models(random_model(seed)):
        fsm, invariants = parse_text(text, "m.fsm").models
        base = InvariantReplayer(invariants, support("invariant").elements(invariants))
        elements = enumerate_fsm(fsm)
        for mutant in invariant_mutants(invariants):
            replayer = mutant_replayer(base, mutant)
            found = distinguish(base, replayer, mutant, depth=DEPTH)
            key = invariants.invariants[mutant.data["index"]].key
            kill, differ = kill_lengths(base, replayer, fsm, elements, key, DEPTH)
            where = (seed, mutant.id, mutant.description, found.reason)
            if kill is not None:
                assert found.witness is not None and len(found.witness["turns"]) == kill, where
                seen["witness"] += 1
            elif differ:
                assert found.witness is None and not found.equivalent and "break the original" in found.reason, where
                seen["only breaking"] += 1
            else:
                assert found.equivalent, where
                seen["equivalent"] += 1
    assert seen["witness"] and seen["equivalent"], seen  # both verdicts are exercised on every seed
