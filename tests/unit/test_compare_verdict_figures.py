"""Every figure a verdict row shows is the one the verdict read (issue 20, item 2): the
change is the Hodges-Lehmann estimate, the interval is the one the verdict was read from
at the level shown, an "ok" from the estimate alone says so, and a metric shown but not
gated never calls a decided test undecided."""

from __future__ import annotations

import math
import statistics

import pytest

from pytest_netbench._compare.family import GateRule
from pytest_netbench._compare.gate import Comparison, Threshold, compare_values
from pytest_netbench._compare.metric_verdict import compare_metrics
from pytest_netbench._compare.sequential import SequentialDesign
from pytest_netbench._report.comparison import comparison_rows

BASE = [10.0, 10.4, 9.8, 10.1, 10.3, 9.9]


def _hodges_lehmann(current: list[float], baseline: list[float]) -> float:
    return math.expm1(statistics.median(math.log(c / b) for c in current for b in baseline))


def test_the_change_is_the_estimate_the_verdict_read_not_the_change_of_medians() -> None:
    # Medians 10.05 -> 10.6 (+5.5 %); the shift trial against trial is smaller.
    current = [10.5, 10.55, 10.6, 10.62, 11.9, 12.0]
    item = compare_values("k", "p50_ms", current, BASE, Threshold("p50_ms", 0.05))
    assert item.change == pytest.approx(_hodges_lehmann(current, BASE), rel=1e-12)
    medians = statistics.median(current) / statistics.median(BASE) - 1
    assert abs(item.change - medians) > 0.001
    (row,) = comparison_rows(Comparison((item,), thresholds=(Threshold("p50_ms", 0.05),)))
    assert row[1][3] == f"{item.change * 100:+.1f}%"


def test_an_ok_read_from_the_interval_shows_that_interval_and_its_level() -> None:
    """At an early look of a sequential design the regression bound's level is too small
    for the trials (its interval unbounded); the ok stop reads its own bound, and that is
    the interval shown."""
    design = SequentialDesign.every(3, 18)
    rule = GateRule(design=design)
    current = [10.1, 10.3, 9.9, 10.2, 10.0, 10.4]
    (item,) = compare_metrics("k", {"p50_ms": (current, BASE)}, [Threshold("p50_ms", 0.5)], rule)
    assert item.verdict == "ok" and not item.by_estimate and not item.final_look
    assert item.change_ci is not None and item.level is not None
    low, high = item.change_ci
    assert math.isfinite(low) and high <= 0.5  # rules a rise past 50 % out
    assert item.level > design.nominal_level(rule.alpha, 6, 6)  # the ok stop's level


def test_an_ok_from_the_estimate_alone_says_so() -> None:
    """At the last look a change within the limit passes though its interval reaches past
    the limit: the row says it was read from the estimate. With trials twice as noisy the
    same limit is below what 6 trials a side can show: undetectable, not ok."""
    current = [10.2, 11.0, 9.9, 10.7, 10.0, 10.8]
    item = compare_values("k", "p50_ms", current, BASE, Threshold("p50_ms", 0.05))
    assert item.verdict == "ok" and item.by_estimate
    assert item.change <= 0.05
    assert item.change_ci is not None and item.change_ci[1] > 0.05
    (row,) = comparison_rows(Comparison((item,), thresholds=(Threshold("p50_ms", 0.05),)))
    assert row[1][-1] == "ok (est.)"
    noisier = [10.2, 11.6, 9.4, 10.9, 10.0, 11.1]
    item = compare_values("k", "p50_ms", noisier, BASE, Threshold("p50_ms", 0.05))
    assert item.verdict == "undetectable" and not item.by_estimate and not item.fails
    assert item.detectable > 0.05 and item.note.startswith("p50_ms: this runner's noise")
    (row,) = comparison_rows(Comparison((item,), thresholds=(Threshold("p50_ms", 0.05),)))
    assert row[1][-1] == "undetectable"


def test_metrics_shown_not_gated_are_judged_at_the_trials_there_are() -> None:
    """A test stopped at an early look by a regression: the metrics beside it hold no
    trials back, so they are judged once, get a finite interval, and no note says more
    trials are needed."""
    rule = GateRule(design=SequentialDesign.every(3, 9))
    slow = [v * 1.5 for v in BASE]
    values = {"p50_ms": (slow, BASE), "p99_ms": (BASE[::-1], BASE)}
    p50, p99 = compare_metrics("k", values, [Threshold("p50_ms", 0.05)], rule)
    assert p50.verdict == "regression"
    assert p99.threshold is None and p99.final_look and not p99.note
    assert p99.change_ci is not None and all(map(math.isfinite, p99.change_ci))


def test_a_gated_metric_left_open_by_another_ones_regression_says_why() -> None:
    # At 0.05 a test, each of two metrics' share reaches 6 trials a side at the second look.
    rule = GateRule(alpha=0.05, design=SequentialDesign.every(3, 9))
    slow = [v * 1.5 for v in BASE]
    noisy = [10.0, 13.0, 8.0, 12.5, 9.0, 11.8]
    values = {"p50_ms": (slow, BASE), "p99_ms": (noisy, BASE)}
    thresholds = [Threshold("p50_ms", 0.05), Threshold("p99_ms", 0.10)]
    p50, p99 = compare_metrics("k", values, thresholds, rule)
    assert p50.verdict == "regression"
    assert p99.verdict == "unclear"
    assert "another gated metric of the test regressed" in p99.note


def test_trials_of_each_side_show_when_they_differ() -> None:
    item = compare_values("k", "p50_ms", BASE + BASE[:3], BASE[:5], Threshold("p50_ms", 0.5))
    (row,) = comparison_rows(Comparison((item,), thresholds=(Threshold("p50_ms", 0.5),)))
    assert row[1][6] == "9/5"
