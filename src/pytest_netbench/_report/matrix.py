"""Comparison matrices: one table per test function, shaped by its parametrisation.

One parameter gives rows; two put one on each axis (the one with fewer values across, so
the table stays narrow); three or more fold the extra ones into the rows. Each cell holds
the median over trials of the chosen metrics, the spread across trials, the best value
of each column marked ``*``, and optionally the ratio to a chosen baseline row or column.
The model (:class:`Matrix`) is separate from its text rendering so Markdown and plots use
the same numbers.
"""

from __future__ import annotations

import math
import statistics
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from pytest_netbench._compare.metrics import (
    DEFAULT_METRICS,
    UnknownRequestError,
    check_metrics,
    higher_is_better,
    metric_value,
)
from pytest_netbench._compare.records import ExperimentRecord, Record
from pytest_netbench._model import LoadResult

_MAX_VALUE_CHARS = 20  # long parameter values (command lines) are cut to keep rows narrow

RowKey = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cell:
    """One metric of one row/column position, aggregated over its trials."""

    values: tuple[float, ...]
    median: float
    spread: float  # half the range across trials relative to the median; nan for one trial
    invalid: bool
    best: bool = False
    ratio: float | None = None
    # A per-request metric (by_request.NAME...) of a test whose load sent no request NAME:
    # the missing name, which the cell shows instead of a figure.
    absent: str = ""


@dataclass(frozen=True, slots=True)
class Matrix:
    function: str
    row_params: tuple[str, ...]
    column_param: str | None
    rows: tuple[RowKey, ...]
    columns: tuple[str, ...]  # values of column_param; ("",) when there is no column axis
    metrics: tuple[str, ...]
    cells: Mapping[tuple[RowKey, str, str], Cell] = field(default_factory=dict)
    baseline: str | None = None  # "param=value" the ratios are relative to, when one matched
    trials: int = 1

    def cell(self, row: RowKey, column: str, metric: str) -> Cell | None:
        return self.cells.get((row, column, metric))


# -- building ----------------------------------------------------------------------------------
def build_matrices(
    records: Iterable[Record],
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    baseline: str | None = None,
    column_param: str | None = None,
) -> list[Matrix]:
    """One matrix per test function, in the order the functions first appear."""
    metric_names = check_metrics(metrics)
    by_function: dict[str, list[Record]] = {}
    for record in records:
        by_function.setdefault(record.function, []).append(record)
    # A test that names its own columns (its records carry them) gets those.
    return [
        _build_one(function, group, group[0].columns or metric_names, baseline, column_param)
        for function, group in by_function.items()
    ]


def effective_params(record: Record | ExperimentRecord) -> dict[str, str]:
    """The record's parameters as short strings, plus ``load`` when a test made several."""
    params = {name: _short(value) for name, value in record.params.items()}
    if record.label:
        params["load"] = record.label
    return params


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        text = " ".join(value)
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 1] + "~"
    return text


def _build_one(
    function: str,
    records: list[Record],
    metrics: tuple[str, ...],
    baseline: str | None,
    column_param: str | None,
) -> Matrix:
    param_rows = [effective_params(r) for r in records]
    names: list[str] = []
    for params in param_rows:
        names += [n for n in params if n not in names]
    values: dict[str, list[str]] = {n: [] for n in names}
    for params in param_rows:
        for n in names:
            v = params.get(n, "-")
            if v not in values[n]:
                values[n].append(v)
    varying = [n for n in names if len(values[n]) > 1] or names
    across = _choose_column_param(varying, values, column_param)
    row_params = tuple(n for n in varying if n != across)
    groups: dict[tuple[RowKey, str], list[LoadResult]] = {}
    rows: list[RowKey] = []
    for record, params in zip(records, param_rows, strict=True):
        row = tuple(params.get(n, "-") for n in row_params)
        column = params.get(across, "-") if across else ""
        if row not in rows:
            rows.append(row)
        groups.setdefault((row, column), []).append(record.result)
    columns = tuple(values[across]) if across else ("",)
    cells = {
        (row, column, metric): _aggregate(results, metric)
        for (row, column), results in groups.items()
        for metric in metrics
    }
    cells = _mark_best(cells, rows, columns, metrics)
    base_label, cells = _apply_baseline(cells, baseline, row_params, across, columns)
    return Matrix(
        function=function,
        row_params=row_params,
        column_param=across,
        rows=tuple(rows),
        columns=columns,
        metrics=metrics,
        cells=cells,
        baseline=base_label,
        trials=max(len(v) for v in groups.values()),
    )


def _choose_column_param(
    varying: list[str], values: Mapping[str, list[str]], wanted: str | None
) -> str | None:
    if wanted is not None and wanted in varying and len(varying) > 1:
        return wanted
    if len(varying) < 2:
        return None
    # The parameter with the fewest values goes across (ties: the later one, which for
    # stacked @parametrize decorators is usually the load setting rather than the server).
    return min(reversed(varying), key=lambda n: len(values[n]))


def _aggregate(results: list[LoadResult], metric: str) -> Cell:
    try:
        values = tuple(metric_value(r, metric) for r in results)
    except UnknownRequestError as exc:
        # The session's columns name a request this test does not send: say so in the cell.
        invalid = any(not r.valid for r in results)
        return Cell(values=(), median=math.nan, spread=math.nan, invalid=invalid, absent=exc.name)
    finite = [v for v in values if not math.isnan(v)]
    median = statistics.median(finite) if finite else math.nan
    spread = math.nan
    if len(finite) > 1 and median:
        spread = (max(finite) - min(finite)) / 2 / abs(median)
    return Cell(
        values=values,
        median=median,
        spread=spread,
        invalid=any(not r.valid for r in results),
    )


def _mark_best(
    cells: dict[tuple[RowKey, str, str], Cell],
    rows: list[RowKey],
    columns: tuple[str, ...],
    metrics: tuple[str, ...],
) -> dict[tuple[RowKey, str, str], Cell]:
    if len(rows) < 2:
        return cells
    out = dict(cells)
    for column in columns:
        for metric in metrics:
            present = [
                (row, c.median)
                for row in rows
                if (c := cells.get((row, column, metric))) and not math.isnan(c.median)
            ]
            if len(present) < 2:
                continue
            pick = max if higher_is_better(metric) else min
            best_value = pick(v for _, v in present)
            if all(v == best_value for _, v in present):
                continue  # a tie everywhere (e.g. zero errors) marks nothing
            for row, value in present:
                if value == best_value:
                    key = (row, column, metric)
                    out[key] = replace(out[key], best=True)
    return out


def _apply_baseline(
    cells: dict[tuple[RowKey, str, str], Cell],
    baseline: str | None,
    row_params: tuple[str, ...],
    across: str | None,
    columns: tuple[str, ...],
) -> tuple[str | None, dict[tuple[RowKey, str, str], Cell]]:
    if not baseline:
        return None, cells
    wanted_param, _, wanted_value = baseline.rpartition("=")
    if across and (not wanted_param or wanted_param == across) and wanted_value in columns:

        def base_key(row: RowKey, column: str) -> tuple[RowKey, str]:
            return row, wanted_value

        label = f"{across}={wanted_value}"
    else:
        position = next(
            (
                i
                for i, name in enumerate(row_params)
                if (not wanted_param or wanted_param == name)
                and any(key[0][i] == wanted_value for key in cells)
            ),
            None,
        )
        if position is None:
            return None, cells

        def base_key(row: RowKey, column: str) -> tuple[RowKey, str]:
            return (*row[:position], wanted_value, *row[position + 1 :]), column

        label = f"{row_params[position]}={wanted_value}"
    out = dict(cells)
    for (row, column, metric), cell in cells.items():
        base_row, base_column = base_key(row, column)
        base = cells.get((base_row, base_column, metric))
        if base is None or math.isnan(base.median) or math.isnan(cell.median):
            continue
        if base.median == 0:
            ratio = 1.0 if cell.median == 0 else math.inf
        else:
            ratio = cell.median / base.median
        out[(row, column, metric)] = replace(cell, ratio=ratio)
    return label, out


# -- text rendering ----------------------------------------------------------------------------
def abbreviate(value: float) -> str:
    """A number in at most 6 characters: ``0.123``, ``12.3``, ``456``, ``12.3k``, ``1.2M``."""
    if math.isnan(value):
        return "-"
    if math.isinf(value):
        return "inf"
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value == int(value) and value < 1000:
        return f"{sign}{int(value)}"
    for limit, scale, suffix in ((1e3, 1.0, ""), (1e6, 1e3, "k"), (1e9, 1e6, "M")):
        if value < limit:
            scaled = value / scale
            # Each width is chosen on the rounded figure, so 999.6 reads "1.00k" beside its
            # neighbours' 1.00k, not "1000", and 9.996 reads "10.0", not "10.00".
            if not suffix and round(scaled, 3) < 1:
                return f"{sign}{scaled:.3f}"
            if round(scaled, 2) < 10:
                return f"{sign}{scaled:.2f}{suffix}"
            if round(scaled, 1) < 100:
                return f"{sign}{scaled:.1f}{suffix}"
            if round(scaled) < 1000:
                return f"{sign}{scaled:.0f}{suffix}"
    scaled = value / 1e9
    return f"{sign}{scaled:.{1 if round(scaled, 1) < 100 else 0}f}G"


def cell_text(cell: Cell | None) -> str:
    """``12.3k*±4% 1.05x``: median, best mark, trial spread, ratio, ``!`` when invalid."""
    if cell is None:
        return ""
    if cell.absent:
        return f"no {cell.absent}"
    text = abbreviate(cell.median)
    if cell.best:
        text += "*"
    if not math.isnan(cell.spread):
        text += f"±{cell.spread * 100:.0f}%"
    if cell.ratio is not None:
        text += f" {cell.ratio:.2f}x" if math.isfinite(cell.ratio) else " infx"
    if cell.invalid:
        text += "!"
    return text


def column_heading(matrix: Matrix, column: str) -> str:
    return f"{matrix.column_param}={column}" if matrix.column_param else ""


def render_text(matrix: Matrix, *, width: int = 80) -> str:
    """The matrix as an aligned text table; column groups wrap into blocks past ``width``."""
    label_names = matrix.row_params or ("test",)
    label_rows = [row or (matrix.function.rsplit("::", 1)[-1],) for row in matrix.rows]
    label_widths = [
        max(len(name), *(len(r[i]) for r in label_rows)) for i, name in enumerate(label_names)
    ]
    left = sum(label_widths) + 2 * len(label_widths)
    groups = [_group_layout(matrix, column) for column in matrix.columns]
    blocks: list[list[tuple[str, list[int]]]] = [[]]
    used = left
    for column, widths in zip(matrix.columns, groups, strict=True):
        need = _group_width(matrix, column, widths) + 2
        if blocks[-1] and used + need > width:
            blocks.append([])
            used = left
        blocks[-1].append((column, widths))
        used += need
    lines = [_title(matrix)]
    for block in blocks:
        lines.append("")
        if matrix.column_param:
            head = " " * left
            for column, widths in block:
                head += column_heading(matrix, column).ljust(_group_width(matrix, column, widths))
                head += "  "
            lines.append(head.rstrip())
        sub = "".join(n.ljust(w + 2) for n, w in zip(label_names, label_widths, strict=True))
        for column, widths in block:
            metric_heads = "  ".join(
                m.rjust(w) for m, w in zip(matrix.metrics, widths, strict=True)
            )
            sub += metric_heads.ljust(_group_width(matrix, column, widths)) + "  "
        lines.append(sub.rstrip())
        for row, label in zip(matrix.rows, label_rows, strict=True):
            text = "".join(v.ljust(w + 2) for v, w in zip(label, label_widths, strict=True))
            for column, widths in block:
                parts = "  ".join(
                    cell_text(matrix.cell(row, column, m)).rjust(w)
                    for m, w in zip(matrix.metrics, widths, strict=True)
                )
                text += parts.ljust(_group_width(matrix, column, widths)) + "  "
            lines.append(text.rstrip())
    lines += textwrap.wrap(_legend(matrix), width, initial_indent="  ", subsequent_indent="   ")
    return "\n".join(lines) + "\n"


def render_all_text(matrices: Iterable[Matrix], *, width: int = 80) -> str:
    return "\n".join(render_text(m, width=width) for m in matrices)


def _group_layout(matrix: Matrix, column: str) -> list[int]:
    return [
        max(len(metric), *(len(cell_text(matrix.cell(row, column, metric))) for row in matrix.rows))
        for metric in matrix.metrics
    ]


def _group_width(matrix: Matrix, column: str, widths: list[int]) -> int:
    metrics_width = sum(widths) + 2 * (len(widths) - 1)
    return max(metrics_width, len(column_heading(matrix, column)))


def _title(matrix: Matrix) -> str:
    notes = []
    if matrix.trials > 1:
        notes.append(f"median of {matrix.trials} trials")
    if matrix.baseline:
        notes.append(f"ratio to {matrix.baseline}")
    return matrix.function + (f"  ({'; '.join(notes)})" if notes else "")


def _legend(matrix: Matrix) -> str:
    directions = ", ".join(
        f"{m} {'higher' if higher_is_better(m) else 'lower'} is better" for m in matrix.metrics
    )
    marks = ["* best in column"]
    if matrix.trials > 1:
        marks.append("± half-range over trials")
    if any(c.invalid for c in matrix.cells.values()):
        marks.append("! invalid result")
    return f"({directions}; {'; '.join(marks)})"
