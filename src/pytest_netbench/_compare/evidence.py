"""From per-trial figures to what the stopping rule reads: the change, in the threshold's
own unit and direction, with its interval.

A relative threshold (``p99_ms:10%``) is judged on the log scale, where "10 % slower" is
the same shift whatever the baseline's size and a ratio's interval stays a ratio; an
absolute one (``errors_total:0``, ``p50_ms:2ms``) on the figures themselves. Either way
the result is in "worsening" units: positive is worse, whichever way the metric points.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_netbench._compare.sequential import Evidence
from pytest_netbench._compare.significance import shift_interval
from pytest_netbench._compare.thresholds import Threshold


@dataclass(frozen=True, slots=True)
class Measured:
    """One metric's evidence at one look, and the change as people read it: relative
    (``+0.12`` = 12 % higher than the baseline) or absolute, with its interval at the
    regression level and at the level of an "ok" stop."""

    evidence: Evidence
    limit: float  # in the same worsening units as the evidence
    change: float
    change_low: float
    change_high: float
    relative: bool
    ok_low: float = math.nan
    ok_high: float = math.nan
    # Judged on the log scale (a relative threshold, every figure positive): the evidence
    # and the limit are shifts of the log, in the unit of a trial's relative spread.
    logs: bool = False


def measure_change(
    current: Sequence[float],
    baseline: Sequence[float],
    threshold: Threshold,
    regression_level: float,
    ok_level: float,
) -> Measured:
    """The shift of ``current`` from ``baseline``: its interval at ``regression_level``
    (each bound one-sided) and its upper worsening bound at ``ok_level``."""
    sign = 1.0 if threshold.higher_is_worse else -1.0
    logs = threshold.relative and all(v > 0 for v in (*current, *baseline))
    if logs:
        cur = [math.log(v) for v in current]
        base = [math.log(v) for v in baseline]
        limit = _log_limit(threshold)
        scale, relative = 1.0, True
    else:
        cur, base = list(current), list(baseline)
        middle = abs(statistics.median(baseline))
        # A relative limit on figures that touch zero: a fraction of the baseline median
        # (from a zero median, any worsening is past it, as Threshold.worsening says).
        relative = threshold.relative and middle > 0
        scale = middle if relative else 1.0
        limit = threshold.limit if not threshold.relative or middle > 0 else 0.0
    # Worsening is the shift for a metric where higher is worse, its negation otherwise;
    # the "ok" bound is the upper worsening bound, at its own level.
    shift = shift_interval(cur, base, regression_level, regression_level)
    at_ok_level = shift_interval(cur, base, ok_level, ok_level)
    if sign > 0:
        bounds = (shift.estimate, shift.low, shift.high, at_ok_level.high)
    else:
        bounds = (-shift.estimate, -shift.high, -shift.low, -at_ok_level.low)
    worsening = Evidence(*(x / scale for x in bounds))

    # Shown: the estimate, and the intervals a verdict may be read from (the regression
    # level's, an "ok" stop's), as a relative change or in the metric's unit.
    def shown(x: float) -> float:
        return _expm1(x) if logs else x / scale

    change, low, high = (shown(x) for x in (shift.estimate, shift.low, shift.high))
    ok_low, ok_high = shown(at_ok_level.low), shown(at_ok_level.high)
    return Measured(worsening, limit, change, low, high, relative, ok_low, ok_high, logs)


def _log_limit(threshold: Threshold) -> float:
    """A relative limit as a shift of the log: +10 % is log(1.1); a 5 % drop, -log(0.95)."""
    if threshold.higher_is_worse:
        return math.log1p(threshold.limit)
    return math.inf if threshold.limit >= 1 else -math.log1p(-threshold.limit)


def _expm1(x: float) -> float:
    if math.isinf(x):
        return math.inf if x > 0 else -1.0
    return math.expm1(x)
