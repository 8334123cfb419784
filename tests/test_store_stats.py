"""The comparison's statistics against published worked values: Newcombe's intervals for a difference of independent
proportions (Statistics in Medicine 17:873-890, 1998, method 10) and of paired proportions (17:2635-2650, 1998,
method 10), Wilson's interval, and McNemar's exact p-value against the binomial computed with exact fractions."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest

from mbt.report.results_text import _points
from mbt.store.stats import mcnemar_exact, newcombe_paired, newcombe_unpaired, wilson

# Newcombe (1998a), Table II: x1/n1 - x2/n2 and method 10's limits, to the 4 decimals the paper prints.
UNPAIRED = [((56, 70, 48, 80), 0.0524, 0.3339), ((9, 10, 3, 10), 0.1705, 0.8090)]
# Newcombe (1998b): pairs (e, f, g, h) = (both, first only, second only, neither) and method 10's limits.
PAIRED = [((36, 12, 2, 0), 0.0569, 0.3404), ((18, 12, 2, 18), 0.0562, 0.3290), ((53, 0, 0, 1), -0.0729, 0.0729),
          ((0, 30, 0, 0), 0.8395, 1.0)]


@pytest.mark.parametrize("counts, low, high", UNPAIRED)
def test_newcombe_unpaired_gives_the_papers_limits(counts, low, high):
    found = newcombe_unpaired(*counts)
    x1, n1, x2, n2 = counts
    assert found.estimate == pytest.approx(x1 / n1 - x2 / n2)
    assert (round(found.low, 4), round(found.high, 4)) == (low, high)


@pytest.mark.parametrize("table, low, high", PAIRED)
def test_newcombe_paired_gives_the_papers_limits(table, low, high):
    found = newcombe_paired(*table)
    e, f, g, h = table
    assert found.estimate == pytest.approx((f - g) / (e + f + g + h))
    assert (round(found.low, 4), round(found.high, 4)) == (low, high)


def test_wilson_matches_its_closed_form_and_stays_in_range():
    # 0 of 10: Wilson's lower limit is 0 and the upper z^2 / (n + z^2) (Wald's would collapse to [0, 0]).
    z2 = 1.959963984540054 ** 2
    none = wilson(0, 10)
    assert none.low == 0.0 and none.high == pytest.approx(z2 / (10 + z2))
    every = wilson(10, 10)
    assert every.high == 1.0 and every.low == pytest.approx(10 / (10 + z2))
    with pytest.raises(ValueError):
        wilson(1, 0)


def _exact_mcnemar(b: int, c: int) -> float:
    n, k = b + c, min(b, c)
    tail = Fraction(sum(comb(n, i) for i in range(k + 1)), 2 ** n)
    return float(min(Fraction(1), 2 * tail))


@pytest.mark.parametrize("b, c", [(12, 2), (2, 12), (0, 5), (7, 7), (1, 0), (40, 61), (300, 360)])
def test_mcnemar_exact_is_the_binomial_tail(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(_exact_mcnemar(b, c), rel=1e-9, abs=1e-15)


def test_mcnemar_exact_known_value_and_no_discordance():
    assert mcnemar_exact(12, 2) == pytest.approx(212 / 16384)  # 2 * (1 + 14 + 91) / 2^14
    assert mcnemar_exact(0, 0) == 1.0


def test_a_large_paired_difference_is_cheap_and_sensible():
    found = newcombe_paired(60_000, 3_000, 1_000, 36_000)
    assert found.low < 0.02 < found.high and found.high - found.low < 0.01
    assert mcnemar_exact(1_000, 3_000) < 1e-100


def test_a_bound_that_rounds_to_zero_keeps_its_side():
    """The demo's paired interval ends at -0.0056 points: printed to one decimal it read "-0.0", which hides that the
    interval lies below zero; a non-zero value that rounds to zero is printed with two significant digits."""
    assert [_points(v) for v in (-0.0056, 0.004, 0.0, -50.0, 12.34, None)] == [
        "-0.0056", "+0.004", "+0.0", "-50.0", "+12.3", "n/a"]
