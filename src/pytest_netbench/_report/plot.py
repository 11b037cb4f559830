"""Optional PNG plots of a matrix: bars per row, or lines across a numeric column axis.

matplotlib is imported only here and only when a plot is asked for; the figures are drawn
on an Agg canvas without pyplot so nothing global (backend, open figures) changes in the
process that runs the tests.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_netbench._errors import NetbenchError
from pytest_netbench._metrics import higher_is_better
from pytest_netbench._report.matrix import Matrix


class PlotUnavailable(NetbenchError):
    """matplotlib is not installed."""


def _figure_tools() -> tuple[Any, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotUnavailable(
            "plots need matplotlib, which is not installed; "
            "run `pip install 'pytest-netbench[plot]'` (or `pip install matplotlib`)"
        ) from None
    return Figure, FigureCanvasAgg


def _as_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _row_label(matrix: Matrix, row: tuple[str, ...]) -> str:
    return ", ".join(row) if row else matrix.function.rsplit("::", 1)[-1]


def _series(
    matrix: Matrix, metric: str, column: str
) -> tuple[list[float], list[float], list[float]]:
    """Medians and the distance to the lowest and highest trial, per row."""
    medians, below, above = [], [], []
    for row in matrix.rows:
        cell = matrix.cell(row, column, metric)
        values = [v for v in (cell.values if cell else ()) if not math.isnan(v)]
        median = cell.median if cell else math.nan
        medians.append(median)
        below.append(median - min(values) if values else 0.0)
        above.append(max(values) - median if values else 0.0)
    return medians, below, above


def plot_matrix(
    matrix: Matrix,
    path: str | os.PathLike[str],
    *,
    metric: str | None = None,
    dpi: int = 100,
) -> Path:
    """Draw one metric of a matrix to a PNG; whiskers span the trials' min..max."""
    figure_cls, canvas_cls = _figure_tools()
    name = metric or matrix.metrics[0]
    if name not in matrix.metrics:
        raise NetbenchError(
            f"metric {name!r} is not in this matrix (it has {', '.join(matrix.metrics)})"
        )
    figure = figure_cls(figsize=(8, 4.5), dpi=dpi)
    canvas_cls(figure)
    axes = figure.add_subplot(1, 1, 1)
    numeric_columns = [_as_number(c) for c in matrix.columns]
    labels = [_row_label(matrix, row) for row in matrix.rows]
    if matrix.column_param and all(v is not None for v in numeric_columns):
        xs = [float(v) for v in numeric_columns if v is not None]
        for index, label in enumerate(labels):
            ys = [_series(matrix, name, c)[0][index] for c in matrix.columns]
            axes.plot(xs, ys, marker="o", label=label)
        axes.set_xlabel(matrix.column_param)
        if min(xs) > 0 and max(xs) / min(xs) >= 20:
            axes.set_xscale("log")  # connection counts like 10..10000 spread over decades
        axes.legend(fontsize="small")
    else:
        count = len(matrix.columns)
        width = 0.8 / count
        for offset, column in enumerate(matrix.columns):
            medians, below, above = _series(matrix, name, column)
            positions = [i + (offset - (count - 1) / 2) * width for i in range(len(labels))]
            axes.bar(
                positions,
                [0.0 if math.isnan(m) else m for m in medians],
                width,
                yerr=[below, above] if matrix.trials > 1 else None,
                label=f"{matrix.column_param}={column}" if matrix.column_param else None,
                capsize=3,
            )
        axes.set_xticks(range(len(labels)))
        rotate = len(labels) > 4
        axes.set_xticklabels(
            labels, rotation=30 if rotate else 0, ha="right" if rotate else "center"
        )
        if matrix.column_param:
            axes.legend(fontsize="small")
    direction = "higher is better" if higher_is_better(name) else "lower is better"
    axes.set_ylabel(f"{name} ({direction})")
    title = matrix.function.rsplit("::", 1)[-1]
    if matrix.trials > 1:
        title += f" (median of {matrix.trials} trials)"
    axes.set_title(title)
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, format="png")
    return target


def plot_matrices(
    matrices: Iterable[Matrix], directory: str | os.PathLike[str], *, dpi: int = 100
) -> list[Path]:
    """One PNG per matrix and metric, named ``<function>-<metric>.png``."""
    written = []
    for matrix in matrices:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", matrix.function).strip("_") or "matrix"
        for metric in matrix.metrics:
            safe_metric = re.sub(r"[^A-Za-z0-9._-]+", "_", metric)
            path = Path(directory) / f"{stem}-{safe_metric}.png"
            written.append(plot_matrix(matrix, path, metric=metric, dpi=dpi))
    return written
