"""Mann-Whitney U and the shift interval, checked against brute force and known values."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from pytest_netbench._compare.significance import (
    mann_whitney_u,
    min_p_value,
    shift_interval,
    trials_needed,
)


def _brute_force_p(first: list[float], second: list[float]) -> float:
    """Two-sided permutation p-value of U over every split of the pooled values."""
    pooled = first + second
    n1 = len(first)

    def u_of(sample: tuple[float, ...], other: list[float]) -> float:
        return sum((a > b) + 0.5 * (a == b) for a in sample for b in other)

    observed = abs(u_of(tuple(first), second) - n1 * len(second) / 2)
    extreme = total = 0
    for idx in itertools.combinations(range(len(pooled)), n1):
        chosen = tuple(pooled[i] for i in idx)
        rest = [pooled[i] for i in range(len(pooled)) if i not in idx]
        total += 1
        if abs(u_of(chosen, rest) - n1 * len(rest) / 2) >= observed - 1e-9:
            extreme += 1
    return extreme / total


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ([1, 2, 3], [4, 5, 6]),
        ([1, 5, 9, 2], [3, 4, 6, 8, 10]),
        ([10, 20, 30, 40, 50], [15, 25, 35]),
        ([3.0, 1.0], [2.0, 4.0, 5.0]),
        ([1, 2, 2, 3], [2, 3, 3, 5]),  # ties: enumerated exactly
        ([7, 7, 7], [7, 7, 7]),
    ],
)
def test_exact_p_value_matches_brute_force(first: list[float], second: list[float]) -> None:
    result = mann_whitney_u(first, second)
    assert result.exact
    assert result.p_value == pytest.approx(_brute_force_p(first, second))


def test_u_statistic_counts_pairs_where_first_wins() -> None:
    assert mann_whitney_u([1, 2, 3], [4, 5, 6]).u == 0
    assert mann_whitney_u([4, 5, 6], [1, 2, 3]).u == 9
    assert mann_whitney_u([1, 3], [2, 2]).u == 2  # 1<2,1<2 -> 0; 3>2,3>2 -> 2


def test_large_samples_use_the_normal_approximation() -> None:
    rng = random.Random(7)
    first = [rng.gauss(0, 1) for _ in range(30)]
    second = [rng.gauss(0, 1) for _ in range(30)]
    result = mann_whitney_u(first, second)
    assert not result.exact
    # Hand-computed normal approximation with continuity correction, no ties.
    mean, sd = 450.0, math.sqrt(30 * 30 * 61 / 12)
    z = max(0.0, abs(result.u - mean) - 0.5) / sd
    assert result.p_value == pytest.approx(math.erfc(z / math.sqrt(2)))
    shifted = [v + 2 for v in second]
    assert mann_whitney_u(first, shifted).p_value < 1e-6


def test_normal_approximation_handles_all_ties() -> None:
    result = mann_whitney_u([5.0] * 20, [5.0] * 20)
    assert result.p_value == 1.0


def test_empty_side_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        mann_whitney_u([], [1.0])


def test_small_samples_have_a_floor_on_p() -> None:
    assert min_p_value(3, 3) == pytest.approx(0.1)
    assert min_p_value(4, 4) == pytest.approx(2 / 70)
    assert min_p_value(1, 5) == pytest.approx(1 / 3)
    assert trials_needed(0.05) == 4
    assert trials_needed(0.01) == 5
    # The floor is reached by perfectly separated samples.
    assert mann_whitney_u([1, 2, 3], [4, 5, 6]).p_value == pytest.approx(min_p_value(3, 3))


def test_moses_bounds_use_the_exact_u_distribution() -> None:
    # 5 vs 5: P(U <= 4) = 12/252 = 0.048 <= 0.05 < P(U <= 5) = 19/252, so the bounds are
    # the 5th smallest and 5th largest of the 25 pairwise differences.
    current = [10.0, 11.0, 12.0, 13.0, 14.0]
    baseline = [0.0, 0.1, 0.2, 0.3, 0.4]
    differences = sorted(c - b for c in current for b in baseline)
    interval = shift_interval(current, baseline, 0.05, 0.05)
    assert (interval.low, interval.high) == (differences[4], differences[-5])
    assert interval.estimate == pytest.approx(12.0 - 0.2)
    assert interval.low > 0


def test_moses_bounds_are_unbounded_when_the_trials_are_too_few() -> None:
    interval = shift_interval([2.0, 3.0, 4.0], [1.0, 1.5, 2.0], 0.01, 0.3)
    assert interval.low == -math.inf  # 3 vs 3 cannot reach 0.01 (at best 0.05)
    assert math.isfinite(interval.high)
    with pytest.raises(ValueError, match="at least one value"):
        shift_interval([], [1.0], 0.05, 0.05)
