"""Autobench's three graphs of a rate sweep, side by side, one line per sweep:

- achieved rate against the demanded one: requests sent per second (dashed; on the grey
  diagonal when the generator kept up) and ok responses per second inside the measured
  window (solid; it flattens where the server saturates), with the standard deviation of
  the per-second rows as error bars (seed 001's stability measure);
- latency against the demanded rate: p50, p90 and p99, corrected (from when each request
  was due), a line style per percentile and a colour per sweep;
- errors against the demanded rate, as a share of the requests sent.

Steps whose result is invalid (the generator fell behind, ran out of CPU or fds) are
circled in black: their figures may describe the generator, not the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_netbench._experiment.slo import error_rate
from pytest_netbench._experiment.sweep import SweepResult, answered_rate
from pytest_netbench._report.plots.canvas import (
    colour,
    from_zero,
    legend_columns,
    new_figure,
    style_axes,
    wide_range,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PERCENTILES: tuple[tuple[str, str], ...] = (("p50", ":"), ("p90", "--"), ("p99", "-"))
RATE_LABEL = "demanded rate (req/s)"
OK_LABEL = "ok responses (bars: ±sd per row)"


def sweep_figure(sweeps: Sequence[tuple[str, SweepResult]], *, title: str) -> Figure:
    """The three graphs for (label, sweep) pairs; a legend names the sweeps when several."""
    figure = new_figure(15, 4.8)
    achieved_axes, latency_axes, error_axes = figure.subplots(1, 3)
    top_rate = 0.0
    latencies: list[float] = []
    error_shares: list[float] = []
    any_invalid = False
    for index, (label, result) in enumerate(sweeps):
        steps = result.steps
        rates = [s.rate for s in steps]
        shade = colour(index)
        name = label or None
        achieved = [s.achieved_rate for s in steps]
        answered = [answered_rate(s.result) for s in steps]
        achieved_axes.plot(rates, achieved, linestyle="--", marker=".", color=shade)
        spread = [s.result.rps_stdev for s in steps]
        achieved_axes.errorbar(
            rates, answered, yerr=spread, marker="o", capsize=3, color=shade, label=name
        )
        for key, style in PERCENTILES:
            values = [getattr(s.result, f"{key}_ms") for s in steps]
            latencies += values
            latency_axes.plot(rates, values, linestyle=style, marker=".", color=shade)
        shares = [100.0 * error_rate(s.result) for s in steps]
        error_shares += shares
        error_axes.plot(rates, shares, marker="o", color=shade, label=name)
        invalid = [i for i, s in enumerate(steps) if not s.valid]
        any_invalid = any_invalid or bool(invalid)
        for axes, ys in ((achieved_axes, answered), (error_axes, shares)):
            _circle(axes, [rates[i] for i in invalid], [ys[i] for i in invalid])
        top_rate = max([top_rate, *rates, *achieved])
    handles, labels = achieved_axes.get_legend_handles_labels()  # one per named sweep
    _achieved_panel(achieved_axes, top_rate)
    _latency_panel(latency_axes, latencies, multiple=len(sweeps) > 1)
    from_zero(error_axes, [*error_shares, 1.0])
    style_axes(error_axes, xlabel=RATE_LABEL, ylabel="errors (% of requests sent)", title="errors")
    if any_invalid:
        handles.append(_circle(achieved_axes, [], []))
        labels.append("invalid step")
    if len(sweeps) > 1 or any_invalid:
        columns = legend_columns(labels, figure.get_figwidth())
        figure.legend(handles, labels, loc="outside lower center", ncols=columns, fontsize="small")
    figure.suptitle(title)
    return figure


def _achieved_panel(axes: Axes, top_rate: float) -> None:
    limit = top_rate * 1.05 if top_rate > 0 else 1.0
    axes.plot([0, limit], [0, limit], color="grey", linewidth=4, alpha=0.25)
    axes.set_xlim(0, limit)
    axes.set_ylim(0, limit)
    for style, text in (("--", "sent"), ("-", OK_LABEL)):
        axes.plot([], [], linestyle=style, color="black", label=text)
    handles, labels = axes.get_legend_handles_labels()
    keep = [i for i, text in enumerate(labels) if text in ("sent", OK_LABEL)]
    axes.legend([handles[i] for i in keep], [labels[i] for i in keep], fontsize="small")
    style_axes(
        axes,
        xlabel=RATE_LABEL,
        ylabel="achieved rate (req/s)",
        title="achieved vs demanded (grey: equal)",
    )


def _latency_panel(axes: Axes, latencies: list[float], *, multiple: bool) -> None:
    if wide_range(latencies):
        axes.set_yscale("log")  # past saturation the queue takes latency up by decades
    else:
        from_zero(axes, latencies)
    # The line styles stand for the percentiles; the colours, as elsewhere, for the sweeps.
    for key, style in PERCENTILES:
        axes.plot([], [], linestyle=style, color="black", label=key)
    axes.legend(fontsize="small", loc="upper left", title="corrected" if not multiple else None)
    style_axes(axes, xlabel=RATE_LABEL, ylabel="latency (ms)", title="latency (corrected)")


def _circle(axes: Axes, xs: list[float], ys: list[float]) -> object:
    return axes.scatter(
        xs, ys, s=110, facecolors="none", edgecolors="black", linewidths=1.2, zorder=5
    )
