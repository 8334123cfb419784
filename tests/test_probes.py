"""Probe coverage conditioned on a generator (issue 36, item 5; seed 004): each estimator against a case computed by
hand (the computation is in each test's docstring) and, for Wilson's interval, against Newcombe (1998)'s published
worked examples; then the probe file, its errors, the report and the command."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from mbt.errors import LocatedError
from mbt.measure import estimators
from mbt.measure.estimators import Interval
from mbt.measure.probes import Probe, estimate, read_probes
from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "refund-probes.jsonl"


def close(a: Interval | None, low: float, high: float, places: int = 4) -> bool:
    return a is not None and round(a.low, places) == round(low, places) and round(a.high, places) == round(high, places)


# ---------------------------------------------------------------- Wilson


@pytest.mark.parametrize("covered, n, low, high", [
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718),
    (29, 29, 0.8830, 1.0)])
def test_wilson_matches_newcombe_1998(covered, n, low, high):
    """Newcombe RG, "Two-sided confidence intervals for the single proportion: comparison of seven methods",
    Statistics in Medicine 17:857-872 (1998): the score method without continuity correction on his five worked
    examples, 95%, to four decimals."""
    assert close(estimators.wilson(covered, n, 0.95), low, high)


def test_wilson_by_hand():
    """2 of 4 at 95%: z = 1.959964, z² = 3.841459, p = 0.5.
    centre = p + z²/2n = 0.5 + 0.480182 = 0.980182; spread = z·sqrt(p(1-p)/n + z²/4n²) = 1.959964·sqrt(0.0625 +
    0.060023) = 1.959964 · 0.350033 = 0.686052; scale = 1 + z²/n = 1.960365.
    low = 0.294130 / 1.960365 = 0.150038; high = 1.666234 / 1.960365 = 0.849962.
    The seed's example, 73 of 100: centre = 0.73 + 0.019207 = 0.749207; spread = 1.959964·sqrt(0.001971 +
    0.0000960) = 0.089109; scale = 1.038415: [0.635679, 0.807304]. No probe: no interval."""
    assert close(estimators.wilson(2, 4), 0.150038, 0.849962, 5)
    assert close(estimators.wilson(73, 100), 0.635679, 0.807304, 5)
    assert estimators.wilson(0, 0) is None
    assert round(estimators.z_value(0.95), 6) == 1.959964


def test_the_seeds_standard_error():
    """The seed: 73 of 100 valid probes covered, Ĉ = 0.73, SE ≈ sqrt(Ĉ(1-Ĉ)/n) = sqrt(0.73 · 0.27 / 100) =
    sqrt(0.001971) = 0.044396."""
    se = estimators.binomial_se(73, 100)
    assert se is not None and round(se, 6) == 0.044396


# ---------------------------------------------------------------- bootstraps


def test_percentile_interval_picks_the_documented_ranks():
    """B = 2000 values 0..1999 at 95%: ⌊2000 · 0.025⌋ = 50 and ⌈2000 · 0.975⌉ - 1 = 1949 (0-based), the 51st and
    the 1950th smallest. At 90% with B = 10: ⌊0.5⌋ = 0 and ⌈9.5⌉ - 1 = 9."""
    assert estimators.percentile_interval([float(v) for v in reversed(range(2000))], 0.95) == Interval(50, 1949)
    assert estimators.percentile_interval([float(v) for v in range(10)], 0.90) == Interval(0, 9)


def test_iid_bootstrap_by_hand():
    """Probes 1, 1, 1, 0: a resample's coverage is X/4 with X ~ Binomial(4, 0.75): P(X=0) = 0.0039,
    P(X<=1) = 0.0508, P(X<=3) = 0.6836. The 2.5% quantile is X = 1 (0.0039 < 0.025 <= 0.0508), the 97.5% one
    X = 4 (0.6836 < 0.975): the interval is [0.25, 1.0]. With 2000 resamples the 51st smallest is X = 1 unless
    fewer than 51 of ~102 expected draws have X <= 1, and the 1950th is X = 4 (~633 expected): seeded, the same
    every run."""
    groups = [(1, 1), (1, 1), (1, 1), (0, 1)]
    assert estimators.bootstrap(groups, 2000, random.Random(0)) == Interval(0.25, 1.0)
    assert estimators.bootstrap([], 2000, random.Random(0)) is None


def test_cluster_bootstrap_by_hand_is_wider_than_the_iid_one():
    """The same four probes, the three covered ones rewrites of one another (one cluster of 3/3) and the other alone
    (0/1). Two clusters drawn with replacement: {A, A} 6/6 = 1 (p 1/4), {A, B} 3/4 = 0.75 (p 1/2), {B, B} 0/2 = 0
    (p 1/4). The 2.5% quantile is 0, the 97.5% one 1: [0, 1], wider than [0.25, 1] above, since three dependent
    probes count as one draw."""
    assert estimators.bootstrap([(3, 3), (0, 1)], 2000, random.Random(0)) == Interval(0.0, 1.0)


# ---------------------------------------------------------------- the stratified estimator


def test_stratified_estimator_by_hand():
    """The seed's Ĉ_stratified = Σ_i w_i (1/m_i) Σ_j 1[Cover(T, q_ij)]. Unit u1: 9 of 10 probes covered, u2: 0 of 2.
    Pooled (free generation): 9/12 = 0.75. Stratified, w = 1/2 each: (0.9 + 0)/2 = 0.45 — u1's many easy probes do
    not outweigh u2. Weights 3 and 1 (normalised 0.75, 0.25): 0.675.
    SE = sqrt(Σ w_i² p_i(1-p_i)/m_i) = sqrt(0.25 · 0.9 · 0.1 / 10 + 0.25 · 0) = sqrt(0.00225) = 0.047434.
    Bootstrap within units: u2 stays 0; u1 resamples to X/10, X ~ Binomial(10, 0.9), so the estimate is X/20:
    P(X<=6) = 0.0128 < 0.025 <= P(X<=7) = 0.0702 gives 7/20 = 0.35; P(X<=9) = 0.6513 < 0.975 gives 10/20 = 0.5."""
    u1 = [(1, 1)] * 9 + [(0, 1)]
    u2 = [(0, 1), (0, 1)]
    assert estimators.stratified([u1, u2], [0.5, 0.5]) == pytest.approx(0.45)
    assert estimators.stratified([u1, u2], [0.75, 0.25]) == pytest.approx(0.675)
    assert round(estimators.stratified_se([u1, u2], [0.5, 0.5]), 6) == 0.047434
    assert estimators.stratified_bootstrap([u1, u2], [0.5, 0.5], 2000, random.Random(0)) == Interval(0.35, 0.5)


def probe(unit: str, name: str, covered: bool | None, generator: str = "g", cluster: str | None = None,
          weight: float | None = None) -> Probe:
    return Probe(unit=unit, probe=name, generator=generator, cluster=cluster, covered=covered, weight=weight, line=1)


def test_the_report_per_unit_pooled_and_stratified():
    """The same u1 (9/10) and u2 (0/2), plus a u3 whose one probe was not judged: per unit m_i, k_i and Wilson; pooled
    9/12 = 0.75 with Wilson(9, 12) = [0.4677, 0.9111] (centre 0.75 + 0.160061 = 0.910061, spread 1.959964 ·
    sqrt(0.015625 + 0.006669) = 0.292646, scale 1.320122); stratified 0.45 over the two judged units, u3 not
    measured, the units' probe counts unequal (2 to 10); no cluster named: the cluster bootstrap draws source units."""
    probes = ([probe("u1", f"p{i}", i < 9) for i in range(10)] + [probe("u2", "q1", False), probe("u2", "q2", False)]
              + [probe("u3", "r1", None)])
    (g,) = estimate(probes, "x.jsonl").generators
    assert [(u.unit, u.probes, u.covered, u.not_judged) for u in g.units] == [
        ("u1", 10, 9, 0), ("u2", 2, 0, 0), ("u3", 0, 0, 1)]
    assert g.units[2].coverage is None and g.units[2].wilson is None
    assert (g.pooled.probes, g.pooled.covered, g.pooled.coverage) == (12, 9, 0.75)
    assert round(g.pooled.wilson.low, 4) == 0.4677 and round(g.pooled.wilson.high, 4) == 0.9111
    assert (g.pooled.clustered_by, g.pooled.clusters) == ("unit", 2)
    s = g.stratified
    assert s.coverage == pytest.approx(0.45) and s.units == 2 and s.not_measured == ["u3"]
    assert (s.equal_probes, s.probes_per_unit, s.weighted) == (False, (2, 10), False)
    assert s.bootstrap is not None and (s.bootstrap.low, s.bootstrap.high) == (0.35, 0.5)


def test_weights_from_the_file_rename_the_estimate():
    """u1 (9/10) with weight 3 and u2 (0/2) with weight 1: normalised 0.75 and 0.25, 0.75 · 0.9 = 0.675, reported as
    weighted probe coverage, not as the unweighted stratified one (the seed: the name must change with the weights)."""
    from mbt.report.probes_text import probes_text

    probes = [probe("u1", f"p{i}", i < 9, weight=3) for i in range(10)] + [probe("u2", f"q{i}", False, weight=1)
                                                                          for i in range(2)]
    report = estimate(probes, "x.jsonl")
    s = report.generators[0].stratified
    assert s.weighted and s.coverage == pytest.approx(0.675)
    assert [u.weight for u in report.generators[0].units] == pytest.approx([0.75, 0.25])
    assert "weighted (the file's unit weights): 67.5% over 2 unit(s)" in probes_text(report)


def test_leave_one_generator_out_by_hand():
    """g1 made the candidate goldens: its probes u1 2/2, u2 2/2 (own coverage 1.0). g2: u1 1/2, u2 0/2; g3: u1 1/2,
    u2 1/2. Without g1, per unit over g2 and g3: u1 2/4, u2 1/4, stratified (0.5 + 0.25)/2 = 0.375, a gap of
    1.0 - 0.375 = 0.625 (generator bias). Without g2: u1 3/4, u2 3/4 = 0.75 (own (0.5 + 0)/2 = 0.25). Without g3:
    u1 3/4, u2 2/4 = 0.625 (own 0.5)."""
    probes = []
    for gen, (c1, c2) in {"g1": (2, 2), "g2": (1, 0), "g3": (1, 1)}.items():
        probes += [probe("u1", f"{gen}-a{i}", i < c1, gen) for i in range(2)]
        probes += [probe("u2", f"{gen}-b{i}", i < c2, gen) for i in range(2)]
    report = estimate(probes, "x.jsonl", candidates_from="g1")
    got = {h.generator: (h.own, h.others.coverage, h.difference) for h in report.leave_one_generator_out}
    assert got["g1"] == pytest.approx((1.0, 0.375, 0.625))
    assert got["g2"] == pytest.approx((0.25, 0.75, -0.5))
    assert got["g3"] == pytest.approx((0.5, 0.625, -0.125))
    single = estimate([p for p in probes if p.generator == "g1"], "x.jsonl")
    assert single.leave_one_generator_out == [] and "leave-one-generator-out: not measured" in single.notes[0]


def test_clusters_named_in_the_file_are_resampled_whole():
    probes = [probe("u1", "a", True, cluster="r1"), probe("u1", "b", True, cluster="r1"),
              probe("u1", "c", True, cluster="r1"), probe("u1", "d", False)]
    (g,) = estimate(probes, "x.jsonl").generators
    assert (g.pooled.clustered_by, g.pooled.clusters, g.pooled.few_clusters) == ("cluster", 2, True)
    assert (g.pooled.cluster_bootstrap.low, g.pooled.cluster_bootstrap.high) == (0.0, 1.0)  # the hand case above
    assert (g.pooled.bootstrap.low, g.pooled.bootstrap.high) == (0.25, 1.0)


# ---------------------------------------------------------------- the file


def test_jsonl_and_csv_read_the_same_probes(tmp_path):
    (tmp_path / "p.jsonl").write_text(
        '{"unit": "u1", "probe": "a", "generator": "g", "covered": true, "question": "退款能超过实付吗？"}\n\n'
        '{"unit": "u1", "probe": "b", "covered": "no", "cluster": "c1"}\n'
        '{"unit": "u2", "probe": "c", "covered": null}\n', encoding="utf-8")
    (tmp_path / "p.csv").write_text("unit,probe,generator,covered,cluster,question\nu1,a,g,yes,,退款能超过实付吗？\n"
                                    "u1,b,,0,c1,\nu2,c,,not_judged,,\n", encoding="utf-8")
    for name in ("p.jsonl", "p.csv"):
        got = [(p.unit, p.probe, p.generator, p.cluster, p.covered) for p in read_probes(str(tmp_path / name))]
        assert got == [("u1", "a", "g", None, True), ("u1", "b", "unnamed", "c1", False),
                       ("u2", "c", "unnamed", None, None)], name


@pytest.mark.parametrize("lines, where, message", [
    (['{"unit": "u", "probe": "a", "covered": true}', '{"unit": "u", "probe": "a", "covered": false}'], 2,
     "probe `a` of generator `unnamed` is also on line 1"),
    (['{"unit": "u", "probe": "a", "covered": "maybe"}'], 1, '`covered` is "maybe": it is true or false'),
    (['{"probe": "a", "covered": true}'], 1, "the probe has no `unit`"),
    (['{"unit": "u", "probe": "a"}'], 1, "the probe has no `covered`"),
    (['{"unit": "u", "probe": "a", "covered": true, "clustr": "x"}'], 1,
     "unknown field `clustr` (did you mean `cluster`?)"),
    (['{"unit": "u", "probe": "a", "covered": true, "weight": 2}', '{"unit": "u", "probe": "b", "covered": true}'], 2,
     "unit `u` has weight none here and 2 on line 1"),
    (['{"unit": "u", "probe": "a", "covered": true, "weight": 2}', '{"unit": "v", "probe": "b", "covered": true}'], 2,
     "unit `v` has no weight while other units have one"),
    (['{"unit": "u", "probe": "a", "covered": true, "weight": -1}'], 1, "a unit's weight is a number, 0 or more"),
    (['{"unit": "u", "probe": "a", "covered": true', ], 1, "not valid JSON"),
])
def test_a_bad_probe_is_one_located_error(tmp_path, lines, where, message):
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(LocatedError) as err:
        read_probes(str(path))
    (problem,) = err.value.problems
    assert problem.line == where and message in problem.message, problem.render()


def test_the_command_text_json_and_bad_input(tmp_path):
    r = run_mbt("probes", EXAMPLE, "--candidates-from", "synth-a")
    assert r.returncode == 0, r.stderr
    assert "generator `synth-b`: 12 judged probe(s), 1 not judged (left out)" in r.stdout
    assert "without `synth-a`: 41.7% [8.3%, 68.3%] over 3 unit(s); on its own probes 83.3% (+41.7 points)" in r.stdout
    report = json.loads(run_mbt("probes", EXAMPLE, "--format", "json").stdout)
    assert [g["pooled"]["coverage"] for g in report["generators"]] == pytest.approx([10 / 12, 5 / 12])
    bad = tmp_path / "p.jsonl"
    bad.write_text('{"unit": "u", "probe": "a", "covered": "perhaps"}\n', encoding="utf-8")
    r = run_mbt("probes", bad)
    assert r.returncode == 2 and "p.jsonl:1:1: error: `covered` is \"perhaps\"" in r.stderr
    assert "Traceback" not in r.stderr
    r = run_mbt("probes", EXAMPLE, "--candidates-from", "nobody")
    assert r.returncode == 2 and "generator `nobody`, which made no probe" in r.stderr


def test_the_docs_show_what_the_command_prints():
    """docs/levels.md's worked example is the command's output, as printed."""
    text = (ROOT / "docs" / "levels.md").read_text(encoding="utf-8")
    shown = text.split("$ mbt probes docs/examples/refund-probes.jsonl --candidates-from synth-a\n", 1)[1]
    shown = shown.split("```", 1)[0]
    printed = run_mbt("probes", "docs/examples/refund-probes.jsonl", "--candidates-from", "synth-a", cwd=ROOT).stdout
    assert shown == printed


def test_the_estimates_do_not_depend_on_the_hash_seed():
    outputs = set()
    for seed in ("1", "7"):
        done = subprocess.run([sys.executable, "-m", "mbt", "probes", str(EXAMPLE), "--format", "json"],
                              capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed}, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
