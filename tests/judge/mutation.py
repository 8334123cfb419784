"""The kill oracle: every mutant x every golden, each replayed in full by the FSM judge (tests/judge/fsm.py).

It shares no code with mbt's kill engine (no footprints, no compiled slots, no skipped goldens): a golden kills a
mutant when the judge finds it agreeing with the original (valid, no contradiction, no forbidden outcome expected)
and contradicting the mutated model (a contradiction or a forbidden outcome expected). The mutated models are the
ones mbt's operators build; the operators themselves are checked by hand in tests/test_mutation.py.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from mbt.api import load_models
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.kind import support
from mbt.mutate.engine import mutation_run
from tests.judge.fsm import judge, random_case, random_model


def disagrees(verdict) -> bool:
    return verdict.contradicted or bool(verdict.expected_forbidden)


def oracle_kills(original, mutated, case) -> bool:
    first = judge(original, case)
    if first.invalid or disagrees(first):
        return False
    second = judge(mutated, case)
    return not second.invalid and disagrees(second)


def campaign(models: int, per_model: int, seed: int) -> tuple[int, int, list[str]]:
    """(mutant x golden pairs judged, kills, disagreements) over random models and goldens."""
    rng = random.Random(seed)
    pairs = kills = 0
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        for number in range(models):
            path = Path(folder) / f"m{number}.fsm"
            path.write_text(random_model(rng), encoding="utf-8")
            (model,) = load_models([str(path)])[1]
            cases = [parse_case(random_case(rng, model, k), "judge.jsonl", k) for k in range(per_model)]
            run = mutation_run([model], GoldenSet(cases=cases))
            results = {r.id: r for r in run.report.models[0].results}
            for mutant in support("fsm").mutation.mutants(model):
                got = set(results[mutant.id].killed_by)
                expected = set()
                for case in cases:
                    pairs += 1
                    if oracle_kills(model, mutant.model, case):
                        expected.add(case.id)
                kills += len(expected)
                if got != expected:
                    problems.append(f"{path.name} {mutant.id}: mbt {sorted(got)}, oracle {sorted(expected)}")
                status = results[mutant.id].status
                if status == "equivalent" and expected:
                    problems.append(f"{path.name} {mutant.id}: called equivalent, the oracle sees it killed")
                witness = results[mutant.id].witness
                if witness is not None and not oracle_kills(model, mutant.model, parse_case(witness, "w", 1)):
                    problems.append(f"{path.name} {mutant.id}: the witness does not kill it for the oracle")
    return pairs, kills, problems


def table_kills(original, mutated, case) -> bool:
    from tests.judge.table import judgement

    first = judgement(original, case, elements=[])  # as policy_kills: a kill needs no element statuses
    if first.invalid or first.contradicted:
        return False
    second = judgement(mutated, case, elements=[])
    return not second.invalid and second.contradicted


def table_campaign(tables: int, per_table: int, seed: int) -> tuple[int, int, list[str]]:
    """As `campaign`, on random decision tables and decision goldens, with the table judge (tests/judge/table.py)."""
    import json
    from decimal import Decimal

    from tests.judge.table import json_text, random_golden, random_table

    rng = random.Random(seed)
    pairs = kills = 0
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        for number in range(tables):
            table = random_table(rng)
            path = Path(folder) / f"t{number}.dt"
            path.write_text(table.dsl, encoding="utf-8")
            (model,) = load_models([str(path)])[1]
            raw = [random_golden(rng, model, number * 100 + k, set(table.features)) for k in range(per_table)]
            cases = [parse_case(json.loads(json_text(g), parse_float=Decimal), "judge.jsonl", k + 1)
                     for k, g in enumerate(raw)]
            run = mutation_run([model], GoldenSet(cases=cases))
            results = {r.id: r for r in run.report.models[0].results}
            for mutant in support("table").mutation.mutants(model):
                got = set(results[mutant.id].killed_by)
                expected = set()
                for case in cases:
                    pairs += 1
                    if table_kills(model, mutant.model, case):
                        expected.add(case.id)
                kills += len(expected)
                if got != expected:
                    problems.append(f"{path.name} {mutant.id}: mbt {sorted(got)}, oracle {sorted(expected)}")
                if results[mutant.id].status == "equivalent" and expected:
                    problems.append(f"{path.name} {mutant.id}: called equivalent, the oracle sees it killed")
    return pairs, kills, problems


def policy_kills(original, mutated, case) -> bool:
    from tests.judge.policy import judgement

    # A kill depends only on contradiction and validity, never on element statuses: no elements to judge (their
    # enumeration decides each rule's reachability with z3, most of the campaign's time otherwise).
    _, contradicted, invalid = judgement(original, case, elements=[])
    if invalid or contradicted:
        return False
    _, contradicted, invalid = judgement(mutated, case, elements=[])
    return not invalid and contradicted


def policy_campaign(policies: int, per_policy: int, seed: int) -> tuple[int, int, list[str]]:
    """As `campaign`, on random policies and request goldens, with the policy judge (tests/judge/policy.py)."""
    from tests.judge.policy import Generator, read_request

    rng = random.Random(seed)
    pairs = kills = 0
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        for number in range(policies):
            gen = Generator(rng)
            path = Path(folder) / f"p{number}.policy"
            path.write_text(gen.policy(""), encoding="utf-8")
            (model,) = load_models([str(path)])[1]
            cases = []
            for k in range(per_policy):
                attributes = gen.request(model)
                raw = {"id": f"R{k}", "policy": model.name, "request": attributes}
                gen.expectation(model, raw, read_request(model, attributes))
                cases.append(parse_case(raw, "judge.yaml", k + 1))
            run = mutation_run([model], GoldenSet(cases=cases))
            results = {r.id: r for r in run.report.models[0].results}
            for mutant in support("policy").mutation.mutants(model):
                got = set(results[mutant.id].killed_by)
                expected = set()
                for case in cases:
                    pairs += 1
                    if policy_kills(model, mutant.model, case):
                        expected.add(case.id)
                kills += len(expected)
                if got != expected:
                    problems.append(f"{path.name} {mutant.id}: mbt {sorted(got)}, oracle {sorted(expected)}")
                if results[mutant.id].status == "equivalent" and expected:
                    problems.append(f"{path.name} {mutant.id}: called equivalent, the oracle sees it killed")
    return pairs, kills, problems
