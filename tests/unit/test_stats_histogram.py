"""Histogram glue: counts exact, percentiles within 3 significant digits of a sorted list."""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter

import pytest

from pytest_netbench._model import LatencySummary
from pytest_netbench._stats.histogram import (
    HIGHEST_US,
    LOWEST_US,
    add_counts,
    at_histogram_resolution,
    count_microseconds,
    decode_histogram,
    encode_histogram,
    histogram_floor,
    histogram_from_counts,
    mean_and_stdev_us,
    new_histogram,
    percentile_ms,
    percentile_of_counts,
    values_at_percentiles,
)
from pytest_netbench._stats.merge import summarize

RELATIVE_PRECISION = 1e-3  # 3 significant digits


def exact_percentile(ordered: list[int], q: float) -> int:
    """The sample at rank ceil(q% of n), the definition HdrHistogram follows."""
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def close(measured: float, exact: float) -> bool:
    return abs(measured - exact) <= exact * RELATIVE_PRECISION


def samples_us(seed: int, n: int = 20_000) -> list[int]:
    """Latency-like values: a lognormal body from tens of µs to seconds, plus a far tail."""
    rng = random.Random(seed)
    body = [max(1, int(rng.lognormvariate(6.0, 1.5))) for _ in range(n)]
    tail = [rng.randint(1_000_000, 60_000_000) for _ in range(n // 500)]
    return body + tail


def test_count_microseconds_floors_nanoseconds_and_lifts_sub_microsecond_samples() -> None:
    counts = count_microseconds([0, 999, 1_000, 1_999, 2_000, 1_500_000_000])
    # 0 and 999 ns become 1 µs (the histogram's floor); 1000 and 1999 ns are 1 µs anyway;
    # 1.5 s is counted at the lowest value of its histogram bucket.
    assert counts == Counter({1: 4, 2: 1, histogram_floor(1_500_000): 1})
    assert histogram_floor(1_500_000) == 1_499_136
    assert 0 not in counts


def test_count_microseconds_keeps_every_sample() -> None:
    ns = [v * 1000 + 17 for v in samples_us(1)]
    counts = count_microseconds(ns)
    assert sum(counts.values()) == len(ns)
    assert counts == Counter(histogram_floor(v // 1000) for v in ns)


def test_a_value_counts_where_the_histogram_would_put_it() -> None:
    hist = new_histogram()
    for value in [*range(1, 5000), 65_537, 1_000_003, 3_599_999_999]:
        assert histogram_floor(value) == hist.get_lowest_equivalent_value(value), value
    assert at_histogram_resolution({2049: 1, 2048: 2, 100: 3}) == Counter({2048: 3, 100: 3})


def test_rounding_moves_only_the_values_past_2_ms_in_any_order() -> None:
    rng = random.Random(35)
    counts = Counter(
        rng.choice([rng.randrange(1, 2048), rng.randrange(2048, 10**7)]) for _ in range(5000)
    )
    expected: Counter[int] = Counter()
    for value, count in counts.items():
        expected[histogram_floor(value)] += count
    assert at_histogram_resolution(counts) == expected
    # a value that is its own floor, met after and before one that falls onto it
    assert at_histogram_resolution({4097: 1, 4096: 2}) == Counter({4096: 3})
    assert at_histogram_resolution({4096: 2, 4097: 1}) == Counter({4096: 3})


@pytest.mark.parametrize("into", [{}, {5: 1, 7: 2}, {5: -3, 9: 1}])
def test_add_counts_is_counter_update(into: dict[int, int]) -> None:
    counts = Counter({5: 2, 6: 1, 9: -1, 10: 0})
    expected = Counter(into)
    expected.update(counts)
    got = Counter(into)
    add_counts(got, counts)
    assert got == expected and dict(got) == dict(expected)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_percentiles_match_a_sorted_list_within_three_significant_digits(seed: int) -> None:
    values = samples_us(seed)
    ordered = sorted(values)
    hist = histogram_from_counts(Counter(values))
    assert hist.get_total_count() == len(values)
    for q in (1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100):
        exact = exact_percentile(ordered, q)
        measured_us = percentile_ms(hist, q) * 1000
        assert close(measured_us, exact), (q, measured_us, exact)


@pytest.mark.parametrize("seed", [4, 5])
def test_summary_matches_the_raw_samples(seed: int) -> None:
    values = samples_us(seed)
    ordered = sorted(values)
    summary = summarize(histogram_from_counts(Counter(values)))
    assert summary.count == len(values)
    for name, q in (("p50_ms", 50), ("p90_ms", 90), ("p99_ms", 99), ("p999_ms", 99.9)):
        assert close(getattr(summary, name) * 1000, exact_percentile(ordered, q)), name
    assert close(summary.max_ms * 1000, ordered[-1])
    assert close(summary.min_ms * 1000, ordered[0])
    assert close(summary.mean_ms * 1000, statistics.fmean(values))
    assert abs(summary.stdev_ms * 1000 - statistics.pstdev(values)) <= 0.01 * statistics.pstdev(
        values
    )
    assert summary.min_ms <= summary.p50_ms <= summary.p75_ms <= summary.p90_ms
    assert summary.p90_ms <= summary.p95_ms <= summary.p99_ms <= summary.p999_ms
    assert summary.p999_ms <= summary.max_ms


def test_small_values_are_exact() -> None:
    # Below 2048 µs every microsecond has its own bucket at 3 significant digits.
    values = list(range(1, 2001))
    hist = histogram_from_counts(Counter(values))
    assert percentile_ms(hist, 50) == 1.0
    assert percentile_ms(hist, 100) == 2.0
    assert summarize(hist).min_ms == 0.001


def test_empty_histogram_gives_nan_not_an_error() -> None:
    hist = histogram_from_counts({})
    assert math.isnan(percentile_ms(hist, 99))
    assert summarize(hist) == LatencySummary()
    assert summarize(hist).count == 0


def test_out_of_range_values_are_clamped_not_raised() -> None:
    hist = histogram_from_counts({0: 2, HIGHEST_US * 10: 1})
    assert hist.get_total_count() == 3
    assert close(percentile_ms(hist, 100) * 1000, HIGHEST_US)


def test_encoding_round_trip_keeps_counts_and_percentiles() -> None:
    values = samples_us(7)
    hist = histogram_from_counts(Counter(values))
    back = decode_histogram(encode_histogram(hist))
    assert back.get_total_count() == hist.get_total_count()
    for q in (50, 99, 99.9, 100):
        assert percentile_ms(back, q) == percentile_ms(hist, q)
    assert summarize(back) == summarize(hist)


def test_encoded_form_is_ascii_text() -> None:
    encoded = encode_histogram(histogram_from_counts({100: 5}))
    assert isinstance(encoded, str)
    assert encoded.isascii()


def test_percentile_of_counts_is_exact() -> None:
    values = samples_us(8, n=3_000)
    ordered = sorted(values)
    counts = Counter(values)
    for q in (0.1, 50, 90, 99, 99.9, 100):
        assert percentile_of_counts(counts, q) == exact_percentile(ordered, q) / 1000


def test_percentile_of_counts_edge_cases() -> None:
    assert math.isnan(percentile_of_counts({}, 99))
    assert percentile_of_counts({5: 1}, 0) == 0.005
    assert percentile_of_counts({5: 1}, 100) == 0.005
    assert percentile_of_counts({1: 99, 1000: 1}, 99) == 0.001
    assert percentile_of_counts({1: 99, 1000: 1}, 99.5) == 1.0


@pytest.mark.parametrize("seed", range(4))
def test_mean_and_stdev_are_hdrh_s_own(seed: int) -> None:
    """The one-pass figures equal hdrh's get_mean_value and get_stddev, for a histogram
    recorded here, one decoded from its encoding, and one with another added to it."""
    rnd = random.Random(seed)
    hist = new_histogram()
    for _ in range(500):
        hist.record_value(max(1, int(rnd.lognormvariate(4 + seed, 1.5))), rnd.randint(1, 9))
    if seed % 2:
        hist = decode_histogram(encode_histogram(hist))
    if seed == 2:
        other = new_histogram()
        other.record_value(123_456, 7)
        hist.add(other)
    mean, stdev = mean_and_stdev_us(hist)
    assert mean == pytest.approx(hist.get_mean_value(), rel=1e-12)
    assert stdev == pytest.approx(hist.get_stddev(), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_values_at_percentiles_are_hdrh_s_own(seed: int) -> None:
    """Equal to get_percentile_to_value_dict's, for one value, a few, thousands spread
    over decades, a decoded histogram and one with another added; percentiles in any
    order, the extremes included."""
    rnd = random.Random(seed)
    hist = new_histogram()
    for _ in range((1, 3, 40, 2000, 500, 500)[seed]):
        hist.record_value(max(1, int(rnd.lognormvariate(3 + seed, 2))), rnd.randint(1, 9))
    if seed == 4:
        hist = decode_histogram(encode_histogram(hist))
    if seed == 5:
        other = new_histogram()
        other.record_value(HIGHEST_US, 3)
        hist.add(other)
    wanted = [99.9, 50.0, 0.1, 100.0, 75.0, 33.3, 99.0, 90.0, 95.0]
    assert values_at_percentiles(hist, wanted) == hist.get_percentile_to_value_dict(wanted)


def test_an_empty_histogram_has_no_values_at_percentiles() -> None:
    assert values_at_percentiles(new_histogram(), [50.0]) == {}


def test_mean_and_stdev_of_an_empty_histogram_are_zero() -> None:
    assert mean_and_stdev_us(new_histogram()) == (0.0, 0.0)


def test_a_histogram_from_counts_is_the_one_record_value_makes() -> None:
    """``histogram_from_counts`` finds each value's slot itself (hdrh's record_value was
    1.6 us a value): the same counts, total, extremes and encoding as record_value's."""
    rng = random.Random(7)
    values = [0, 1, 2047, 2048, 2049, 4095, 4096, 65_537, 1_000_003, 3_599_999_999]
    values += [3_600_000_000, 3_600_000_001, 10**12]  # clamped to the top, as before
    values += [rng.randrange(1, 10 ** rng.randrange(1, 10)) for _ in range(3000)]
    counts = Counter({value: rng.randrange(1, 50) for value in values})
    made = histogram_from_counts(counts)
    expected = new_histogram()
    for value_us, count in counts.items():
        assert expected.record_value(min(max(value_us, LOWEST_US), HIGHEST_US), count)
    assert list(made.counts) == list(expected.counts)
    assert (made.total_count, made.min_value, made.max_value) == (
        expected.total_count,
        expected.min_value,
        expected.max_value,
    )
    assert encode_histogram(made) == encode_histogram(expected)
    empty = histogram_from_counts({})
    assert encode_histogram(empty) == encode_histogram(new_histogram())
