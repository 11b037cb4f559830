"""A cold start over time: the rate of ok responses from the very first request, at the
run's resolution (100 ms rows by default), above the rows' p50 latency.

Marked on each panel: the steady value (the median of the last half of the run) with the
tolerance band around it, and the settle time (from when the rate, or the p50, stayed
within that band). Settling is judged on stretches of ``settle_window_s`` (1 s), not row
by row, so each panel also draws the stretch that starts at each row (thin grey line):
the settle time is where that line enters the band for good. A run that never settled
says so in the panel's legend.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pytest_netbench._experiment.cold_start import ColdStartResult
from pytest_netbench._report.plots.canvas import (
    colour,
    from_zero,
    new_figure,
    number,
    style_axes,
    thousands,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def cold_start_figure(result: ColdStartResult, *, title: str) -> Figure:
    rows = result.rows
    span = result.resolution_s
    xs = [row.start_s + span / 2 for row in rows]  # a row drawn at its middle
    figure = new_figure(9, 6.5)
    rate_axes, latency_axes = figure.subplots(2, 1, sharex=True)
    rates = [row.rate for row in rows]
    rate_axes.plot(xs, rates, marker="o", markersize=2.5, linewidth=1.2, color=colour(0))
    width = _stretch_rows(result)
    stretch = f"over the next {width * span:g} s"
    starts = [row.start_s for row in rows[: len(rows) - width + 1]]
    rate_axes.plot(
        starts, _stretches(rates, width, _mean), color="dimgrey", lw=0.8, label=f"mean {stretch}"
    )
    _mark(rate_axes, result, result.steady_rate, result.settle_s, "steady rate", "req/s")
    from_zero(rate_axes, [*rates, result.steady_rate])
    thousands(rate_axes)
    ratio = result.first_second_ratio
    heading = title
    if math.isfinite(ratio):
        heading += f"\nfirst second at {ratio:.0%} of the steady rate"
    style_axes(rate_axes, xlabel="", ylabel="ok responses (req/s)", title=heading)
    p50s = [row.p50_ms for row in rows]
    latency_axes.plot(xs, p50s, marker="o", markersize=2.5, linewidth=1.2, color=colour(3))
    latency_axes.plot(
        starts, _stretches(p50s, width, _median), color="dimgrey", lw=0.8, label=f"median {stretch}"
    )
    _mark(latency_axes, result, result.steady_p50_ms, result.p50_settle_s, "steady p50", "ms")
    from_zero(latency_axes, [*p50s, result.steady_p50_ms])
    style_axes(
        latency_axes,
        xlabel=f"time since the first request (s; rows of {span:g} s)",
        ylabel="p50 latency per row (ms)",
    )
    latency_axes.set_xlim(0.0, result.duration_s)
    return figure


def _mark(
    axes: Axes, result: ColdStartResult, steady: float, settle_s: float, name: str, unit: str
) -> None:
    """The steady value, its tolerance band and the settle time, named in a legend."""
    if math.isfinite(steady):
        band = result.settle_tolerance * steady
        axes.axhspan(steady - band, steady + band, color="grey", alpha=0.15)
        axes.axhline(
            steady,
            color="grey",
            linestyle="--",
            label=f"{name} {number(steady)} {unit} (band: ±{result.settle_tolerance:.0%})",
        )
    if math.isfinite(settle_s):
        axes.axvline(settle_s, color="black", linestyle=":", label=f"settled at {settle_s:g} s")
    else:
        axes.plot([], [], linestyle="", label="never settled")
    axes.legend(fontsize="small", loc="best")


def _stretch_rows(result: ColdStartResult) -> int:
    return max(1, round(result.settle_window_s / result.resolution_s))


def _stretches(
    values: Sequence[float], width: int, reduce: Callable[[Sequence[float]], float]
) -> list[float]:
    """``reduce`` over each run of ``width`` values, one per starting position."""
    return [reduce(values[i : i + width]) for i in range(len(values) - width + 1)]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _median(values: Sequence[float]) -> float:
    present = [v for v in values if not math.isnan(v)]
    return statistics.median(present) if present else math.nan
