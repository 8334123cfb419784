"""The estimators of probe coverage (seed 004, "Synthesizer 抽样"; docs/levels.md, "Probe coverage"): a proportion
with its Wilson score interval, seeded percentile bootstraps over probes, clusters or strata, and the seed's
stratified estimator. Pure functions on counts — no file, no report — so each is checked against a hand computation
(tests/test_probes.py).

A *group* is what one bootstrap draw picks: `(covered, probes)`, a single probe `(0 or 1, 1)` or a whole cluster.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

Group = tuple[int, int]  # (covered probes, probes) of one resampling unit


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def z_value(confidence: float) -> float:
    """The two-sided normal quantile: 1.959964 for 0.95."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(covered: int, n: int, confidence: float = 0.95) -> Interval | None:
    """Wilson's score interval (1927) for covered/n, without continuity correction; None when n is 0:

        (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n),   p = covered/n.
    """
    if n == 0:
        return None
    z = z_value(confidence)
    p = covered / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    scale = 1 + z2 / n
    # The bounds are exact at 0 and 1 in theory; rounding must not put them a hair outside [0, 1].
    return Interval(max(0.0, (centre - spread) / scale), min(1.0, (centre + spread) / scale))


def binomial_se(covered: int, n: int) -> float | None:
    """The seed's standard error under the iid assumption, sqrt(p(1-p)/n); None when n is 0."""
    if n == 0:
        return None
    p = covered / n
    return math.sqrt(p * (1 - p) / n)


def percentile_interval(values: Sequence[float], confidence: float) -> Interval:
    """The percentile interval of bootstrap values: with the B values sorted (0-based), the one at ⌊B·α/2⌋ and the one
    at ⌈B·(1-α/2)⌉ - 1, α = 1 - confidence (B = 2000 at 0.95: the 51st and the 1950th smallest)."""
    ordered = sorted(values)
    b = len(ordered)
    alpha = 1 - confidence
    low = min(b - 1, math.floor(b * alpha / 2 + 1e-9))
    high = max(0, min(b - 1, math.ceil(b * (1 - alpha / 2) - 1e-9) - 1))
    return Interval(ordered[low], ordered[high])


def _resampled(groups: Sequence[Group], rng: random.Random) -> tuple[int, int]:
    """(covered, probes) over len(groups) groups drawn with replacement."""
    drawn = rng.choices(groups, k=len(groups))
    return sum(g[0] for g in drawn), sum(g[1] for g in drawn)


class _Draws:
    """One stratum's groups, ready to be resampled many times: single probes (the common case) are drawn as their
    0/1 flags, whose sum is the covered count of a resample of fixed size — the same draws, a third of the work."""

    def __init__(self, groups: Sequence[Group]):
        self.groups = groups
        self.single = all(g[1] == 1 for g in groups)
        self.flags = [g[0] for g in groups]

    def draw(self, rng: random.Random) -> float:
        """The coverage of one resample."""
        if self.single:
            return sum(rng.choices(self.flags, k=len(self.flags))) / len(self.flags)
        covered, probes = _resampled(self.groups, rng)
        return covered / probes if probes else 0.0


def bootstrap(groups: Sequence[Group], resamples: int, rng: random.Random, confidence: float = 0.95
              ) -> Interval | None:
    """The percentile interval of the coverage Σcovered / Σprobes over `resamples` resamples of the groups drawn with
    replacement: the iid bootstrap when each group is one probe, the cluster bootstrap when each is a cluster (a
    cluster's probes are drawn together). None without groups."""
    if not groups:
        return None
    draws = _Draws(groups)
    return percentile_interval([draws.draw(rng) for _ in range(resamples)], confidence)


def stratified(strata: Sequence[Sequence[Group]], weights: Sequence[float]) -> float:
    """The seed's stratified estimator, Σ_i w_i · (covered_i / m_i): the coverage within each source unit, then
    weighted across units (w_i = 1/K for equally important units). Every stratum has probes; weights sum to 1."""
    total = 0.0
    for groups, weight in zip(strata, weights):
        covered, probes = sum(g[0] for g in groups), sum(g[1] for g in groups)
        total += weight * covered / probes
    return total


def stratified_se(strata: Sequence[Sequence[Group]], weights: Sequence[float]) -> float:
    """The stratified estimator's standard error with probes independent within units:
    sqrt(Σ_i w_i² · p_i(1-p_i)/m_i)."""
    variance = 0.0
    for groups, weight in zip(strata, weights):
        covered, probes = sum(g[0] for g in groups), sum(g[1] for g in groups)
        p = covered / probes
        variance += weight * weight * p * (1 - p) / probes
    return math.sqrt(variance)


def stratified_bootstrap(strata: Sequence[Sequence[Group]], weights: Sequence[float], resamples: int,
                         rng: random.Random, confidence: float = 0.95) -> Interval:
    """The percentile interval of the stratified estimator when each unit's groups (probes, or the unit's clusters)
    are resampled with replacement within the unit, independently of the other units."""
    draws = [(_Draws(groups), weight) for groups, weight in zip(strata, weights)]
    values = [sum(weight * d.draw(rng) for d, weight in draws) for _ in range(resamples)]
    return percentile_interval(values, confidence)
