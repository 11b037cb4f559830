"""A matrix as bar charts: one PNG per metric, a group of bars per row (server, ...), a
bar per column value (connections=50, connections=1000), each bar the median over trials
with the lowest..highest trial as its error bar, on a y axis that starts at zero so bar
heights compare as ratios. Bars of invalid cells are hatched; each bar carries its value.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytest_netbench._compare.metrics import higher_is_better
from pytest_netbench._errors import NetbenchError
from pytest_netbench._report.matrix import Matrix, abbreviate
from pytest_netbench._report.plots.canvas import (
    colour,
    from_zero,
    hatched_patch,
    new_figure,
    solid_patch,
    style_axes,
    thousands,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.figure import Figure

# Unit of a metric by how its name ends; checked in order.
_UNITS: tuple[tuple[str, str], ...] = (
    ("_ms", "ms"),
    ("_mb", "MB"),
    ("_percent", "%"),
    ("_rate", "req/s"),
    ("_s", "s"),
    ("bytes_read", "bytes"),
    ("bytes_written", "bytes"),
)
_LABEL_LIMIT = 30  # more bars than this: no value printed on each


def metric_axis_label(metric: str) -> str:
    """``rps`` -> "rps (ok responses/s), higher is better", ``p99_ms`` -> "p99_ms (ms) ..."."""
    if metric == "rps":
        unit = "ok responses/s"
    else:
        unit = next((u for end, u in _UNITS if metric.endswith(end)), "count")
    direction = "higher is better" if higher_is_better(metric) else "lower is better"
    return f"{metric} ({unit}), {direction}"


def bar_series(
    matrix: Matrix, metric: str, column: str
) -> tuple[list[float], list[float], list[float], list[bool]]:
    """Per row: the median, its distance to the lowest and highest trial, and invalidity."""
    medians, below, above, invalid = [], [], [], []
    for row in matrix.rows:
        cell = matrix.cell(row, column, metric)
        values = [v for v in (cell.values if cell else ()) if not math.isnan(v)]
        median = cell.median if cell and not math.isnan(cell.median) else 0.0
        medians.append(median)
        below.append(max(0.0, median - min(values)) if values else 0.0)
        above.append(max(0.0, max(values) - median) if values else 0.0)
        invalid.append(bool(cell and cell.invalid))
    return medians, below, above, invalid


def _row_label(matrix: Matrix, row: tuple[str, ...]) -> str:
    if not row:
        return matrix.function.rsplit("::", 1)[-1]
    if len(row) == 1:
        return row[0]  # the parameter's name is the axis label
    return ", ".join(f"{name}={value}" for name, value in zip(matrix.row_params, row, strict=True))


def matrix_figure(matrix: Matrix, metric: str | None = None) -> Figure:
    """One metric of a matrix (the first when not named) as grouped bars."""
    name = metric or matrix.metrics[0]
    if name not in matrix.metrics:
        raise NetbenchError(
            f"metric {name!r} is not in this matrix (it has {', '.join(matrix.metrics)})"
        )
    labels = [_row_label(matrix, row) for row in matrix.rows]
    count = len(matrix.columns)
    figure = new_figure(max(6.0, min(16.0, 1.2 + 0.5 * len(labels) * count)), 4.8)
    axes = figure.add_subplot(1, 1, 1)
    width = 0.8 / count
    tops: list[float] = []
    any_invalid = False
    handles: list[Artist] = []
    for offset, column in enumerate(matrix.columns):
        medians, below, above, invalid = bar_series(matrix, name, column)
        positions = [i + (offset - (count - 1) / 2) * width for i in range(len(labels))]
        bars = axes.bar(
            positions,
            medians,
            width,
            yerr=[below, above] if matrix.trials > 1 else None,
            capsize=3,
            color=colour(offset),
            edgecolor="black",
            linewidth=0.6,
        )
        if matrix.column_param:
            # Not the bar container's own handle: it copies the first bar's hatch, so a
            # series whose first cell is invalid would look invalid as a whole.
            handles.append(solid_patch(colour(offset), f"{matrix.column_param}={column}"))
        for bar, bad in zip(bars, invalid, strict=True):
            if bad:
                bar.set_hatch("//")
        any_invalid = any_invalid or any(invalid)
        if len(labels) * count <= _LABEL_LIMIT:
            axes.bar_label(bars, [abbreviate(m) for m in medians], fontsize="x-small", padding=2)
        tops += [m + a for m, a in zip(medians, above, strict=True)]
    from_zero(axes, tops)
    axes.set_ylim(top=axes.get_ylim()[1] * 1.06)  # room for the values over the bars
    if name == "rps" or name.endswith("_rate"):
        thousands(axes)
    axes.set_xticks(range(len(labels)), labels)
    slots = max(len(labels), 3) / 2  # one or two groups: bars of a sensible width
    axes.set_xlim((len(labels) - 1) / 2 - slots, (len(labels) - 1) / 2 + slots)
    if len(labels) > 4 or max((len(t) for t in labels), default=0) > 18:
        for tick in axes.get_xticklabels():
            tick.set_rotation(30)
            tick.set_horizontalalignment("right")
    title = matrix.function.rsplit("::", 1)[-1]
    if matrix.trials > 1:
        title += f": median of {matrix.trials} trials, whiskers from lowest to highest"
    style_axes(axes, xlabel=", ".join(matrix.row_params), ylabel=metric_axis_label(name))
    axes.set_title(title, fontsize="medium")
    axes.grid(False, axis="x")
    if any_invalid:
        handles.append(hatched_patch("invalid result"))
    if handles:
        axes.legend(handles=handles, fontsize="small", loc="best")
    return figure
