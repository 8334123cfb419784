"""Decision-table analysis, as data (tests/cases/checks/tables.yaml): exactly the findings expected on hand-built
tables; every witness replayed on the evaluator; the sweep cross-checked against brute force and against z3."""

from __future__ import annotations

import itertools
import random
import zlib
from pathlib import Path

import pytest
import yaml

from mbt.analysis.table_checks import check_table
from mbt.engine.table import TableEvaluator
from mbt.parsing.loader import parse_text
from mbt.tables.analysis import Analyser, analyse

# Shared with tests/test_checks.py, which checks the (code, line) pairs; here also witnesses, messages, severities.
CASES = yaml.safe_load((Path(__file__).parent / "cases" / "checks" / "tables.yaml").read_text(encoding="utf-8"))
CASES = CASES["cases"]


def load(text: str):
    return parse_text(text, "t.dt").models[0]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_findings_are_exact(case):
    model = load(case["model"])
    findings = check_table(model)
    got = sorted([f.code, f.location.line] for f in findings)
    assert got == sorted(case["expect"]), [f.render() for f in findings]
    first = {}
    for f in findings:
        first.setdefault(f.code, f)
        assert "mbt bug" not in f.message, f.render()  # every witness replayed as claimed
    for code, witness in (case.get("witness") or {}).items():
        assert first[code].witness == witness
    for code, fragment in (case.get("message") or {}).items():
        assert fragment in first[code].message, first[code].message
    for code, severity in (case.get("severity") or {}).items():
        assert first[code].severity == severity


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_witnesses_behave_as_claimed_on_the_evaluator(case):
    model = load(case["model"])
    a = analyse(model)
    ev = TableEvaluator(model)
    for gap in a.gaps:
        assert ev.matches(gap.witness) == ()
    for o in a.overlaps:
        matched = ev.matches(o.witness)
        assert o.first in matched and o.second in matched
    for m in a.masked:
        d = ev.decide(m.witness)
        assert m.rule in d.matched and m.rule not in d.contributing


def all_inputs(model):
    """Every input of a small table: each column's whole (small) domain."""
    domains = []
    for c in model.inputs:
        t = c.type
        if t.values is not None:
            values = list(t.values)
        else:
            values = list(range(t.lo, t.hi + 1))
        domains.append(values + ([None] if t.optional else []))
    return itertools.product(*domains)


def random_table(rng: random.Random, hit: str) -> str:
    lines = [f"table r {{\n  hit {hit}", "  input a: integer [0..12]", "  input b: integer [0..8]",
             '  input c: string? {"x", "y", "z"}', '  output o: string {"p", "q", "s"}']
    for i in range(rng.randint(2, 9)):
        def num(hi):
            x, y = sorted(rng.randint(0, hi) for _ in range(2))
            return rng.choice(["-", "-", f"< {y}", f">= {x}", f"[{x}..{y}]", f"not({x})",
                               f"({x}..{y}]" if x < y else f"{x}"])
        c = rng.choice(["-", '"x"', '"y", "z"', 'not("x")', "none"])
        out = rng.choice(['"p"', '"q"', '"s"'])
        lines.append(f"  rule r{i}: {num(12)} | {num(8)} | {c} -> {out}")
    return "\n".join(lines) + "\n}\n"


@pytest.mark.parametrize("hit", ["unique", "any", "first", "priority", "rule_order"])
def test_analysis_agrees_with_brute_force_on_random_small_tables(hit):
    """Small domains can be enumerated: gaps, overlaps and masked rules must be exactly what enumeration says."""
    rng = random.Random(zlib.crc32(hit.encode()) % 1000)  # not hash(): it changes with PYTHONHASHSEED
    for _ in range(25):
        model = load(random_table(rng, hit))
        a = Analyser(model).run()
        ev = TableEvaluator(model)
        uncovered, pairs, contributes = False, set(), set()
        for values in all_inputs(model):
            d = ev.decide(values)
            uncovered |= not d.matched
            pairs |= {(i, j) for i in d.matched for j in d.matched if i < j}
            contributes |= set(d.contributing)
        assert (a.gap_count > 0) == uncovered
        if hit == "unique":
            assert {(o.first, o.second) for o in a.overlaps} == pairs
        live = set(range(len(model.rules))) - set(a.never_matches)
        if model.single_hit:
            assert {m.rule for m in a.masked} == live - contributes
        else:
            assert not a.masked
        never = {i for i in range(len(model.rules))
                 if not any(i in ev.matches(v) for v in all_inputs(model))}
        assert set(a.never_matches) == never


def test_the_solver_path_decides_like_the_sweep():
    """Masked rules past the sweep's budget are decided by z3 (SAT over region choices): same answers."""
    rng = random.Random(9)
    for _ in range(20):
        model = load(random_table(rng, "first"))
        analyser = Analyser(model)
        p = analyser.p
        for j, masks in enumerate(p.rule_masks):
            earlier = (1 << j) - 1
            if any(m == 0 for m in masks) or not earlier:
                continue
            count, _, finished = analyser.sweep(masks, earlier, 1, first_only=True)
            assert finished
            cell = analyser.uncovered_cell(masks, earlier)
            assert (cell is None) == (count == 0)
            if cell is not None:
                point = p.point(cell)
                assert j in TableEvaluator(model).matches(point)
                assert not any(i < j for i in TableEvaluator(model).matches(point))


def test_the_incremental_question_decides_like_the_sweep_and_the_solver():
    """`escapes` (one incremental z3 problem per table) answers as the sweep and uncovered_cell do, for every rule
    against the rules before it and against every other rule, questions asked in any order on one analyser."""
    rng = random.Random(17)
    for _ in range(20):
        model = load(random_table(rng, "first"))
        analyser = Analyser(model)
        p = analyser.p
        questions = [(j, (1 << j) - 1) for j in range(len(p.rule_masks))]
        questions += [(j, p.all_rules & ~(1 << j)) for j in range(len(p.rule_masks))]
        rng.shuffle(questions)
        for j, active in questions:
            masks = p.rule_masks[j]
            if any(m == 0 for m in masks) or not active:
                continue
            count, _, finished = analyser.sweep(masks, active, 1, first_only=True)
            assert finished
            assert analyser.escapes(masks, active) == (count > 0) == (analyser.uncovered_cell(masks, active) is not None)


def test_gap_regions_are_disjoint_and_uncovered():
    model = load("""table t {
  input age: integer [0..100]
  input region: string {"EU", "US", "APAC"}
  output o: string
  rule a: < 18 | "EU" -> "x"
  rule b: >= 18 | "EU", "US" -> "y"
  rule c: [30..40] | - -> "z"
}
""")
    a = analyse(model)
    ev = TableEvaluator(model)
    covered_by_gaps = {}
    for gap in a.gaps:
        for values in all_inputs(model):
            regions = [col.region_of(v) for col, v in zip(a.partition.columns, values)]
            if all(m >> r & 1 for m, r in zip(gap.masks, regions)):
                assert values not in covered_by_gaps  # disjoint
                covered_by_gaps[values] = gap
                assert ev.matches(values) == ()
    expected = {v for v in all_inputs(model) if not ev.matches(v)}
    assert set(covered_by_gaps) == expected


def test_gaps_found_by_the_solver_when_the_sweep_stops_early(monkeypatch):
    """With no sweep budget, z3 finds the gaps cell by cell, each grown into a box no rule touches."""
    from mbt.tables import analysis as engine

    monkeypatch.setattr(engine, "SWEEP_BUDGET", 0)
    rng = random.Random(21)
    for _ in range(25):
        model = load(random_table(rng, "first"))
        a = Analyser(model).run()
        ev = TableEvaluator(model)
        uncovered = {v for v in all_inputs(model) if not ev.matches(v)}
        assert bool(a.gaps) == bool(uncovered)
        in_boxes = set()
        for gap in a.gaps:
            assert gap.replayed
            for values in all_inputs(model):
                regions = [col.region_of(v) for col, v in zip(a.partition.columns, values)]
                if all(m >> r & 1 for m, r in zip(gap.masks, regions)):
                    assert values in uncovered  # the whole box is a gap
                    in_boxes.add(values)
        if a.gap_count_exact:
            assert in_boxes == uncovered  # every gap is in a listed box
