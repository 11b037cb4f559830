"""Pictures of one load: its latency spectrum (a mix's: one line per request kind and the
whole load's) and its timeline.

The spectrum is HdrHistogram's percentile distribution: latency (ms) against the
percentile, with the x axis as ``1 / (1 - q)`` on a log scale, so 90 %, 99 %, 99.9 % ...
each get a decade and the tail is as wide as the body. The line stops where the count of
responses stops supporting a finer percentile (1,000 responses reach 99.9 %), at most
99.999 %.

The timeline is the result's rows (a second each by default): ok responses per second,
errors per second and the rows' p99 (and p50) latency, over the measured window only --
an open loop's drain (answers after the deadline) is not part of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_netbench._model import LoadResult, RequestStats, TimelineRow
from pytest_netbench._report.cells import rate_unit
from pytest_netbench._report.plots.canvas import (
    PALETTE,
    colour,
    from_zero,
    new_figure,
    number,
    style_axes,
    thousands,
)
from pytest_netbench._stats.histogram import decode_histogram

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_NINES = 5  # 99.999 %
_POINTS_PER_DECADE = 40
# A row "inside" the window may end this much after it (the last timer tick).
_ROW_SLACK_S = 0.05
# Fewer rows than this show no course over time; the timeline says so on its face.
FEW_ROWS = 3
# A ramp's target: a wide pale band drawn under what was achieved.
_TARGET_STYLE: dict[str, Any] = {"color": "#b0b0b0", "linewidth": 5, "alpha": 0.7, "zorder": 1}


@dataclass(frozen=True, slots=True)
class Spectrum:
    """Points of a latency spectrum: ``x`` is ``1 / (1 - q)``, ``ms`` the latency there."""

    x: tuple[float, ...]
    ms: tuple[float, ...]
    count: int


def spectrum(result: LoadResult | RequestStats) -> Spectrum:
    """The percentile spectrum of the ok responses of a load or of one request kind of its
    mix (empty without a histogram)."""
    if not result.latency_histogram:
        return Spectrum((), (), 0)
    hist = decode_histogram(result.latency_histogram)
    count = int(hist.get_total_count())
    if count == 0:
        return Spectrum((), (), 0)
    decades = min(float(MAX_NINES), math.log10(count))
    steps = max(1, int(decades * _POINTS_PER_DECADE))
    xs = [10 ** (decades * i / steps) for i in range(steps + 1)]
    # The last point is the highest latency, so the line ends at the max as HdrHistogram's
    # plots do (at x = count, 1 - 1/q falls one response short of it).
    quantiles = [100.0 * (1.0 - 1.0 / x) for x in xs[:-1]] + [100.0]
    values_us = hist.get_percentile_to_value_dict(quantiles)
    return Spectrum(tuple(xs), tuple(values_us[q] / 1000.0 for q in quantiles), count)


def percentile_label(x: float) -> str:
    """The tick text at ``x = 1 / (1 - q)``: 1 -> "0%", 10 -> "90%", 1000 -> "99.9%"."""
    q = 100.0 * (1.0 - 1.0 / x)
    nines = round(math.log10(x))
    return f"{q:.{max(0, nines - 2)}f}%"


def spectrum_figure(series: Sequence[tuple[str, LoadResult]], *, title: str) -> Figure:
    """One line per (label, result); the label is left out of the legend when alone."""
    figure = new_figure(8, 4.8)
    axes = figure.add_subplot(1, 1, 1)
    top = 1.0
    for index, (label, result) in enumerate(series):
        points = spectrum(result)
        if not points.x:
            continue
        top = max(top, points.x[-1])
        legend = f"{label} ({points.count:,} responses)" if label else None
        axes.plot(points.x, points.ms, color=colour(index), linewidth=1.6, label=legend)
        if not label:
            axes.text(
                0.02,
                0.95,
                f"{points.count:,} ok responses; max {number(result.max_ms)} ms"
                + ("\nlatency from when each request was due" if result.mode == "open" else ""),
                transform=axes.transAxes,
                va="top",
                fontsize="small",
            )
    _percentile_axes(axes, top, title=title)
    if len(series) > 1:
        axes.legend(fontsize="small", loc="upper left")
    return figure


# A mix of more kinds than the palette has colours: the next ones dash-dotted, then dotted.
_KIND_STYLES = ("-", "-.", ":")


def mix_spectrum_figure(result: LoadResult, *, title: str) -> Figure:
    """A mix's spectra on one graph: a line per request kind, in the mix's order, and the
    load's own (every kind together) in black, dashed, so one kind's tail shows beside the
    others' and against the whole."""
    figure = new_figure(8, 4.8)
    axes = figure.add_subplot(1, 1, 1)
    top = 1.0
    for index, (name, part) in enumerate(result.by_request.items()):
        style = _KIND_STYLES[index // len(PALETTE) % len(_KIND_STYLES)]
        points = spectrum(part)
        if not points.x:
            # Still in the legend, so a kind that never succeeded is seen missing.
            why = f"{part.errors_total:,} errors" if part.errors_total else "no answer"
            axes.plot(
                [], [], color=colour(index), ls=style, label=f"{name} (no ok response: {why})"
            )
            continue
        top = max(top, points.x[-1])
        label = f"{name} ({points.count:,} ok, max {number(points.ms[-1])} ms)"
        axes.plot(points.x, points.ms, color=colour(index), ls=style, linewidth=1.6, label=label)
    whole = spectrum(result)
    if whole.x:
        top = max(top, whole.x[-1])
        label = f"all requests ({whole.count:,} ok, max {number(whole.ms[-1])} ms)"
        axes.plot(whole.x, whole.ms, color="black", linewidth=1.2, linestyle="--", label=label)
    _percentile_axes(axes, top, title=title)
    legend = axes.legend(fontsize="small", loc="upper left")
    if result.mode == "open":
        legend.set_title("latency from when each request was due")
        legend.get_title().set_fontsize("small")
    return figure


def _percentile_axes(axes: Axes, top: float, *, title: str) -> None:
    """The x axis as percentiles (a decade per nine) up to ``top``, latency from zero."""
    if top == 1.0:
        axes.text(0.5, 0.5, "no ok responses", transform=axes.transAxes, ha="center")
    axes.set_xscale("log")
    ticks = [10.0**k for k in range(0, MAX_NINES + 1) if 10.0**k <= top * 1.0001]
    axes.set_xticks(ticks, [percentile_label(t) for t in ticks])
    axes.minorticks_off()
    axes.set_xlim(1.0, max(top, 10.0))
    axes.set_ylim(bottom=0.0)
    style_axes(axes, xlabel="percentile", ylabel="latency (ms)", title=title)


@dataclass(frozen=True, slots=True)
class TimelineSeries:
    """The rows of the measured window as rates: a row cut short by the window's end is
    divided by the time it covered, so it does not read as a drop. ``middle_s``: where
    each row is drawn, the middle of the time it covered."""

    start_s: tuple[float, ...]
    middle_s: tuple[float, ...]
    ok_per_s: tuple[float, ...]
    errors_per_s: tuple[float, ...]
    p99_ms: tuple[float, ...]
    p50_ms: tuple[float, ...]


def timeline_series(result: LoadResult) -> TimelineSeries:
    # A row that begins at the deadline holds the drain's answers, not the window's: read
    # as a rate over the instant it overlaps, it would dwarf every other row.
    rows = [r for r in result.timeline if r.start_s < result.duration_s - _ROW_SLACK_S]
    spans = [_covered(r, result.duration_s) for r in rows]
    return TimelineSeries(
        start_s=tuple(r.start_s for r in rows),
        middle_s=tuple(r.start_s + s / 2 for r, s in zip(rows, spans, strict=True)),
        ok_per_s=tuple(r.ok / s for r, s in zip(rows, spans, strict=True)),
        errors_per_s=tuple(r.errors / s for r, s in zip(rows, spans, strict=True)),
        p99_ms=tuple(r.p99_ms for r in rows),
        p50_ms=tuple(r.p50_ms for r in rows),
    )


def _covered(row: TimelineRow, duration_s: float) -> float:
    end = row.start_s + row.span_s
    if end <= duration_s + _ROW_SLACK_S:
        return row.span_s
    return max(duration_s - row.start_s, 1e-3)


def ramp_line(result: LoadResult) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """The target of a load with stages over its window, as (seconds, values): the ramp's
    corners from its spec, or each row's target where only the rows were kept (a stored
    result); None without stages."""
    ramp = result.spec.ramp if result.spec is not None else None
    if ramp is not None:
        xs = [0.0]
        elapsed = 0.0
        for stage in ramp.stages:
            elapsed += stage.duration_s
            xs.append(elapsed)
        return tuple(xs), tuple(ramp.value_at(ramp.lead_s + x) for x in xs)
    rows = [r for r in result.timeline if r.target is not None]
    rows = [r for r in rows if r.start_s < result.duration_s - _ROW_SLACK_S]
    if not rows:
        return None
    middles = tuple(r.start_s + _covered(r, result.duration_s) / 2 for r in rows)
    return middles, tuple(r.target or 0.0 for r in rows)


def timeline_figure(result: LoadResult, *, title: str) -> Figure:
    """Three panels over the same seconds: ok req/s, errors/s, and p99 / p50 latency; a
    closed-loop ramp (stages of connections) gets a fourth, its connections. The target of
    a ramp is drawn as a dashed line beside what was achieved."""
    series = timeline_series(result)
    target = ramp_line(result)
    ramped_connections = target is not None and result.mode == "closed"
    figure = new_figure(8, 9 if ramped_connections else 7)
    panels = figure.subplots(4 if ramped_connections else 3, 1, sharex=True)
    rate_axes, error_axes, latency_axes = panels[0], panels[1], panels[-1]
    span = result.timeline[0].span_s if result.timeline else 1.0
    xs = series.middle_s
    rate_axes.plot(xs, series.ok_per_s, marker="o", markersize=3, color=colour(0), label="ok")
    demanded = result.generator.intended_rate
    tops = [*series.ok_per_s, demanded or 0.0]
    if result.mode == "open" and target is not None:
        # A wide pale band under the achieved line: where they agree, both stay visible.
        rate_axes.plot(*target, **_TARGET_STYLE, label="target rate (stages)")
        rate_axes.legend(fontsize="small", loc="upper left")
        tops += list(target[1])
    elif result.mode == "open" and demanded:
        rate_axes.axhline(demanded, color="grey", linestyle="--", label="demanded rate")
        rate_axes.legend(fontsize="small", loc="lower right")
    from_zero(rate_axes, tops)
    thousands(rate_axes)
    unit = rate_unit(result)
    counted = {"msg/s": "ok messages", "pushes/s": "ok pushes"}.get(unit, "ok responses")
    style_axes(rate_axes, xlabel="", ylabel=f"{counted} ({unit})", title=title)
    error_axes.plot(xs, series.errors_per_s, marker="o", markersize=3, color=colour(1))
    from_zero(error_axes, series.errors_per_s)
    if not series.start_s:
        rate_axes.text(
            0.5, 0.5, "no row in the measured window", transform=rate_axes.transAxes, ha="center"
        )
    elif not any(series.errors_per_s):
        error_axes.text(0.5, 0.5, "no errors", transform=error_axes.transAxes, ha="center")
    if 0 < len(series.start_s) < FEW_ROWS:
        # A 1 s load under the default 1 s rows is one dot: say why, and what gives more.
        rows = len(series.start_s)
        rate_axes.text(
            0.5,
            0.25,
            f"{rows} row{'s' if rows > 1 else ''} of {span:g} s: too short a load for a"
            " timeline\n(a longer duration, or timeline_resolution= for finer rows)",
            transform=rate_axes.transAxes,
            ha="center",
            fontsize="small",
        )
    style_axes(error_axes, xlabel="", ylabel="errors (per second)")
    if ramped_connections and target is not None:
        _connections_panel(panels[2], result, target)
    latency_axes.plot(xs, series.p99_ms, marker="o", markersize=3, color=colour(3), label="p99")
    latency_axes.plot(
        xs, series.p50_ms, marker=".", markersize=3, linestyle=":", color=colour(2), label="p50"
    )
    from_zero(latency_axes, [*series.p99_ms, *series.p50_ms])
    latency_axes.legend(fontsize="small", loc="upper right")
    unit = "s" if math.isclose(span, 1.0) else f"s; rows of {span:g} s"
    style_axes(
        latency_axes,
        xlabel=f"time since the measured window began ({unit})",
        ylabel="latency per row (ms)",
    )
    latency_axes.set_xlim(0.0, result.duration_s if result.duration_s > 0 else span)
    return figure


def _connections_panel(
    axes: Axes, result: LoadResult, target: tuple[tuple[float, ...], tuple[float, ...]]
) -> None:
    """A closed-loop ramp: the connections asked for, and those open at each row's end."""
    axes.plot(*target, **_TARGET_STYLE, label="target (stages)")
    rows = [r for r in result.timeline if r.start_s < result.duration_s - _ROW_SLACK_S]
    held = [(r.start_s + _covered(r, result.duration_s), r.connections) for r in rows]
    counted = [(x, n) for x, n in held if n is not None]
    if counted:
        axes.plot(
            [x for x, _ in counted],
            [n for _, n in counted],
            marker="o",
            markersize=3,
            linestyle="",
            color=colour(4),
            label="open at the row's end",
        )
    from_zero(axes, [*target[1], *(float(n) for _, n in counted)])
    axes.legend(fontsize="small", loc="upper left")
    style_axes(axes, xlabel="", ylabel="connections")
