"""Matrices (and gate comparisons) as GitHub-flavoured Markdown, and the step-summary hook.

Markdown has no width limit, so every (column value, metric) pair gets its own table
column; the best value of each column is bold, the same cells the text table stars.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pytest_netbench._compare.metrics import higher_is_better
from pytest_netbench._report.matrix import Matrix, abbreviate

GITHUB_STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _cell_markdown(matrix: Matrix, row: tuple[str, ...], column: str, metric: str) -> str:
    cell = matrix.cell(row, column, metric)
    if cell is None:
        return ""
    if cell.absent:  # a per-request column of a test that does not send that request
        return _escape(f"no {cell.absent}")
    text = abbreviate(cell.median)
    if cell.best:
        text = f"**{text}**"
    extras = []
    if cell.spread == cell.spread:  # not nan
        extras.append(f"±{cell.spread * 100:.0f}%")
    if cell.ratio is not None:
        extras.append(f"{cell.ratio:.2f}x")
    if extras:
        text += " (" + ", ".join(extras) + ")"
    if cell.invalid:
        text += " ⚠ invalid"
    return text


def render_matrix_markdown(matrix: Matrix, *, heading_level: int = 3) -> str:
    """One matrix as a heading, a table and a one-line legend."""
    notes = []
    if matrix.trials > 1:
        notes.append(f"median of {matrix.trials} trials, ± half-range")
    if matrix.baseline:
        notes.append(f"x: ratio to `{_escape(matrix.baseline)}`")
    title = f"{'#' * heading_level} `{_escape(matrix.function)}`"
    label_names = list(matrix.row_params) or ["test"]
    headers = list(label_names)
    for column in matrix.columns:
        prefix = f"{matrix.column_param}={column} " if matrix.column_param else ""
        headers += [f"{prefix}{metric}" for metric in matrix.metrics]
    lines = [title, ""]
    lines.append("| " + " | ".join(_escape(h) for h in headers) + " |")
    align = ["---"] * len(label_names) + ["---:"] * (len(headers) - len(label_names))
    lines.append("|" + "|".join(align) + "|")
    for row in matrix.rows:
        labels = list(row) or [matrix.function.rsplit("::", 1)[-1]]
        cells = [
            _cell_markdown(matrix, row, column, metric)
            for column in matrix.columns
            for metric in matrix.metrics
        ]
        lines.append("| " + " | ".join(_escape(c) for c in labels + cells) + " |")
    directions = ", ".join(
        f"`{m}` {'higher' if higher_is_better(m) else 'lower'} is better" for m in matrix.metrics
    )
    lines += ["", f"{directions}; **bold** = best in column" + "".join(f"; {n}" for n in notes)]
    return "\n".join(lines) + "\n"


def render_markdown(
    matrices: Iterable[Matrix],
    *,
    title: str = "pytest-netbench results",
    environment: Mapping[str, object] | None = None,
    comparison: str | None = None,
    sections: Sequence[str] = (),
    under_matrix: Mapping[str, str] | None = None,
) -> str:
    """A whole report: title, optional environment line, every matrix (each followed by
    ``under_matrix[its function]``, already Markdown: a mix's per-request tables), further
    ``sections`` (already Markdown: experiment tables, discarded runs), optional comparison
    (already Markdown, e.g. from :func:`render_table_markdown`)."""
    parts = [f"## {title}", ""]
    if environment:
        facts = ", ".join(
            f"{k}: {_escape(str(v))}" for k, v in environment.items() if v not in (None, "")
        )
        parts += [f"<sub>{facts}</sub>", ""]
    for matrix in matrices:
        parts.append(render_matrix_markdown(matrix))
        below = (under_matrix or {}).get(matrix.function)
        if below:
            parts.append(below)
    parts += [section for section in sections if section]
    if comparison:
        parts.append(comparison)
    return "\n".join(parts).rstrip("\n") + "\n"


def render_table_markdown(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, text_columns: Sequence[str] = ()
) -> str:
    """A plain Markdown table: the first column and ``text_columns`` (headers of columns of
    words, not figures) left-aligned, the rest right-aligned."""
    lines = ["| " + " | ".join(_escape(h) for h in headers) + " |"]
    align = ["---" if i == 0 or h in text_columns else "---:" for i, h in enumerate(headers)]
    lines.append("|" + "|".join(align) + "|")
    for row in rows:
        lines.append("| " + " | ".join(_escape(str(c)) for c in row) + " |")
    return "\n".join(lines) + "\n"


def write_markdown(path: str | os.PathLike[str], text: str) -> Path:
    target = Path(path)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def append_github_step_summary(
    text: str, *, environ: Mapping[str, str] | None = None
) -> Path | None:
    """Append ``text`` to the file named by ``$GITHUB_STEP_SUMMARY``; None when not set.

    Appending (never truncating) matters: other steps of the same job write there too.
    """
    env = os.environ if environ is None else environ
    location = env.get(GITHUB_STEP_SUMMARY, "").strip()
    if not location:
        return None
    target = Path(location)
    with target.open("a", encoding="utf-8") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")
    return target
