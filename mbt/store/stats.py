"""Confidence intervals for a change in a pass rate, and McNemar's exact test (`mbt results compare`).

- One proportion: Wilson's score interval (Wilson 1927), no continuity correction.
- Two result sets of the same cases (paired: each case passed or not in A and in B): Newcombe's hybrid score
  interval for a difference of paired proportions, method 10 of Newcombe (1998), "Improved confidence intervals for
  the difference between binomial proportions based on paired data", Statistics in Medicine 17:2635-2650, with its
  correlation estimate corrected as that paper gives it; and McNemar's exact test on the discordant cases (a binomial
  test of b against b + c at one half), whose p-value says whether the flips lean one way more than chance would.
- Two result sets of different cases (unpaired): Newcombe's hybrid score interval for a difference of independent
  proportions, method 10 of Newcombe (1998), "Interval estimation for the difference between independent
  proportions: comparison of eleven methods", Statistics in Medicine 17:873-890.

Both of Newcombe's intervals combine the two Wilson intervals; they stay inside [-1, 1], behave at 0 and n (where the
Wald interval collapses), and need no iteration. tests/test_store_stats.py checks them against the papers' worked
examples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float


def wilson(successes: int, n: int, z: float = Z95) -> Interval:
    """Wilson's score interval for successes / n (n > 0)."""
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"wilson: need 0 <= successes <= n and n > 0, not {successes}/{n}")
    p = successes / n
    z2 = z * z
    centre = (successes + z2 / 2) / (n + z2)
    half = z * math.sqrt(successes * (n - successes) / n + z2 / 4) / (n + z2)
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


def newcombe_unpaired(x1: int, n1: int, x2: int, n2: int, z: float = Z95) -> Interval:
    """The difference x1/n1 - x2/n2 of two independent proportions, with Newcombe's method 10 interval."""
    a, b = wilson(x1, n1, z), wilson(x2, n2, z)
    d = a.estimate - b.estimate
    low = d - math.sqrt((a.estimate - a.low) ** 2 + (b.high - b.estimate) ** 2)
    high = d + math.sqrt((a.high - a.estimate) ** 2 + (b.estimate - b.low) ** 2)
    return Interval(d, max(-1.0, low), min(1.0, high))


def newcombe_paired(both: int, first_only: int, second_only: int, neither: int, z: float = Z95) -> Interval:
    """The difference p1 - p2 of two paired proportions, from the 2x2 table of pairs: `both` pairs a success in
    each, `first_only` a success in the first only, `second_only` in the second only, `neither` in none
    (Newcombe's e, f, g, h); p1 = (e + f) / n, p2 = (e + g) / n. Newcombe's method 10."""
    e, f, g, h = both, first_only, second_only, neither
    n = e + f + g + h
    if n <= 0 or min(e, f, g, h) < 0:
        raise ValueError(f"newcombe_paired: counts must be >= 0 with n > 0, not {(e, f, g, h)}")
    first, second = wilson(e + f, n, z), wilson(e + g, n, z)
    d = (f - g) / n
    margins = (e + f) * (g + h) * (e + g) * (f + h)
    if margins == 0:
        phi = 0.0
    else:
        # The correlation of the two proportions, corrected toward 0 by n/2 when positive (Newcombe 1998).
        cross = e * h - f * g
        phi = (max(cross - n / 2, 0.0) if cross > 0 else cross) / math.sqrt(margins)
    l1, u1 = first.estimate - first.low, first.high - first.estimate
    l2, u2 = second.estimate - second.low, second.high - second.estimate
    low = d - math.sqrt(max(l1 * l1 - 2 * phi * l1 * u2 + u2 * u2, 0.0))
    high = d + math.sqrt(max(u1 * u1 - 2 * phi * u1 * l2 + l2 * l2, 0.0))
    return Interval(d, max(-1.0, low), min(1.0, high))


def mcnemar_exact(b: int, c: int) -> float:
    """McNemar's exact two-sided p-value for b and c discordant pairs: 2 P(X <= min(b, c)), X ~ Bin(b + c, 1/2),
    at most 1. Summed in logarithms, so 100,000 discordant cases cost no big integers."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    log_half = n * math.log(2.0)
    log_n = math.lgamma(n + 1)
    terms = [log_n - math.lgamma(i + 1) - math.lgamma(n - i + 1) - log_half for i in range(k + 1)]
    top = max(terms)
    tail = math.exp(top) * math.fsum(math.exp(t - top) for t in terms)
    return min(1.0, 2.0 * tail)
