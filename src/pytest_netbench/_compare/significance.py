"""Is a difference between two small sets of trials real? Pure Python, no SciPy.

Two tools, both distribution-free because per-trial throughput and tail latency are
rarely normal on a shared machine:

* the Mann-Whitney U test (two-sided). Exact p-values for small samples (the common case:
  3-10 trials a side), by counting rank arrangements; the normal approximation with tie
  and continuity corrections beyond that.
* the Hodges-Lehmann estimate of a shift with Moses' bounds (:func:`shift_interval`), the
  interval the gate decides from; deterministic, so a CI gate never flaps on its own
  randomness.

Note the floor on small samples: with n trials a side the smallest possible two-sided
exact p-value is ``2 / C(2n, n)``: 0.33 for 2 vs 2, 0.10 for 3 vs 3, 0.029 for 4 vs 4.
:func:`min_p_value` says so up front, so callers can answer "more trials needed" honestly.
"""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

_EXACT_MAX_COMBINATIONS = 50_000  # enumerate arrangements below this, else approximate


@dataclass(frozen=True, slots=True)
class MannWhitney:
    u: float  # U statistic of the first sample
    p_value: float  # two-sided
    exact: bool


def _ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        average = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = average
        i = j + 1
    return ranks


def _u_of_first(first: Sequence[float], second: Sequence[float]) -> tuple[float, list[float]]:
    ranks = _ranks([*first, *second])
    n1 = len(first)
    return sum(ranks[:n1]) - n1 * (n1 + 1) / 2, ranks


@functools.lru_cache(maxsize=512)
def _exact_counts_without_ties(n1: int, n2: int) -> tuple[int, ...]:
    """How many rank arrangements give each U value (0..n1*n2), by the classic recurrence
    f(n1, n2, u) = f(n1 - 1, n2, u - n2) + f(n1, n2 - 1, u)."""
    # table[j][u] for the current i; built up over i = 0..n1
    table = [[1] + [0] * (n1 * n2) for _ in range(n2 + 1)]  # i = 0: only U = 0
    for i in range(1, n1 + 1):
        new = [[0] * (n1 * n2 + 1) for _ in range(n2 + 1)]
        new[0][0] = 1
        for j in range(1, n2 + 1):
            for u in range(i * j + 1):
                from_smaller_i = table[j][u - j] if u >= j else 0
                new[j][u] = from_smaller_i + new[j - 1][u]
        table = new
    return tuple(table[n2])


def mann_whitney_u(first: Sequence[float], second: Sequence[float]) -> MannWhitney:
    """Two-sided Mann-Whitney U test of ``first`` against ``second``."""
    n1, n2 = len(first), len(second)
    if n1 == 0 or n2 == 0:
        raise ValueError("Mann-Whitney U needs at least one value on each side")
    u1, ranks = _u_of_first(first, second)
    mean_u = n1 * n2 / 2
    has_ties = len(set(ranks)) < len(ranks)
    combinations = math.comb(n1 + n2, n1)
    if combinations <= _EXACT_MAX_COMBINATIONS:
        if not has_ties:
            counts = _exact_counts_without_ties(n1, n2)
            k = round(u1)
            lower = sum(counts[: k + 1])
            upper = sum(counts[k:])
            p = min(1.0, 2 * min(lower, upper) / combinations)
            return MannWhitney(u1, p, exact=True)
        # With ties, enumerate every split of the pooled ranks (a permutation test on U).
        deviation = abs(u1 - mean_u)
        offset = n1 * (n1 + 1) / 2
        extreme = 0
        for picked in itertools.combinations(ranks, n1):
            if abs(sum(picked) - offset - mean_u) >= deviation - 1e-9:
                extreme += 1
        return MannWhitney(u1, min(1.0, extreme / combinations), exact=True)
    n = n1 + n2
    tie_term = 0.0
    for rank in set(ranks):
        t = ranks.count(rank)
        tie_term += t**3 - t
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:
        return MannWhitney(u1, 1.0, exact=False)  # every value identical
    distance = max(0.0, abs(u1 - mean_u) - 0.5)  # continuity correction
    z = distance / math.sqrt(variance)
    return MannWhitney(u1, min(1.0, math.erfc(z / math.sqrt(2))), exact=False)


def min_p_value(n1: int, n2: int) -> float:
    """The smallest two-sided p-value any data could give with these sample sizes."""
    if n1 == 0 or n2 == 0:
        return 1.0
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def trials_needed(alpha: float) -> int:
    """Trials a side (equal sizes) before p < alpha is reachable at all."""
    n = 1
    while min_p_value(n, n) >= alpha:
        n += 1
    return n


# Exact counts of U below this many cells (n1 * n2); the normal approximation above.
_EXACT_MAX_CELLS = 400


@dataclass(frozen=True, slots=True)
class ShiftInterval:
    """The shift ``current - baseline``: its Hodges-Lehmann estimate (the median of every
    pairwise difference) and distribution-free bounds, each one-sided at its level
    (-inf / +inf when the trials are too few for that level)."""

    estimate: float
    low: float
    high: float


def shift_interval(
    current: Sequence[float], baseline: Sequence[float], low_level: float, high_level: float
) -> ShiftInterval:
    """Hodges-Lehmann shift with Moses' bounds (Hollander & Wolfe, "Nonparametric
    Statistical Methods", section 4.3): the k-th smallest and k-th largest pairwise
    difference, k from the null distribution of U, so that each bound misses the true
    shift with probability at most its level whatever the distribution's shape."""
    if not current or not baseline:
        raise ValueError("a shift needs at least one value on each side")
    differences = sorted(c - b for c in current for b in baseline)
    estimate = statistics.median(differences)
    k_low = _moses_rank(len(current), len(baseline), low_level)
    k_high = _moses_rank(len(current), len(baseline), high_level)
    low = differences[k_low - 1] if k_low >= 1 else -math.inf
    high = differences[len(differences) - k_high] if k_high >= 1 else math.inf
    return ShiftInterval(estimate, low, high)


@functools.lru_cache(maxsize=4096)
def _moses_rank(n1: int, n2: int, level: float) -> int:
    """The largest k with P(U <= k - 1) <= level under no shift (0: no bound)."""
    if level <= 0:
        return 0
    cells = n1 * n2
    if cells <= _EXACT_MAX_CELLS:
        counts = _exact_counts_without_ties(n1, n2)
        total = math.comb(n1 + n2, n1)
        below = 0  # arrangements with U <= k - 1
        k = 0
        while k < len(counts) and below + counts[k] <= level * total:
            below += counts[k]
            k += 1
        return min(k, (cells + 1) // 2)
    from pytest_netbench._compare.sequential import normal_quantile

    if level >= 0.5:
        return (cells + 1) // 2
    spread = math.sqrt(cells * (n1 + n2 + 1) / 12)
    k = math.floor(cells / 2 - normal_quantile(1 - level) * spread + 0.5)
    return max(0, min(k, (cells + 1) // 2))
