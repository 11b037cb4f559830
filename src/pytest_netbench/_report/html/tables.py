"""The report's tables as HTML fragments: matrices, experiment tables, loads, comparisons.

Each reads the same models the terminal and Markdown renderings read (:class:`Matrix`,
:class:`ExperimentTable`, :class:`Comparison`) and words the cells the same way, so the
three outputs agree number for number. Figures are right-aligned (class ``num``);
invalid cells and rows carry class ``invalid`` and say why.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from html import escape

from pytest_netbench._compare.gate import Comparison
from pytest_netbench._compare.metrics import higher_is_better
from pytest_netbench._compare.records import Record
from pytest_netbench._report.cells import format_ms, rate_unit
from pytest_netbench._report.comparison import COMPARISON_HEADERS, comparison_rows
from pytest_netbench._report.experiment_tables import ExperimentTable
from pytest_netbench._report.html.invalid import InvalidFinding
from pytest_netbench._report.matrix import Cell, Matrix, RowKey, abbreviate, effective_params

# Cells that read as figures: 1,234 / 12.3k / 0.95 / -  / 1.05x / 300 req/s / never.
_FIGURE = re.compile(r"^([-+]?[\d,]*\.?\d+(e[-+]?\d+)?[kMG%x]?( req/s)?|-|never|inf)$")
_VERDICT_CLASS: Mapping[str, str] = {
    "regression": "bad",
    "improvement": "good",
    "unclear": "warn",
    "undetectable": "warn",
    "ok": "",
}


def table(head: str, body: Iterable[str], *, caption: str = "", cls: str = "") -> str:
    """A table in a horizontally scrolling box, so a wide one never widens the page."""
    caption_html = f"<caption>{caption}</caption>" if caption else ""
    klass = f' class="{cls}"' if cls else ""
    rows = "\n".join(body)
    return (
        f'<div class="scroll"><table{klass}>{caption_html}'
        f"<thead>{head}</thead><tbody>\n{rows}\n</tbody></table></div>"
    )


def _td(text: str, *, cls: str = "", title: str = "") -> str:
    attrs = f' class="{cls}"' if cls else ""
    attrs += f' title="{escape(title)}"' if title else ""
    return f"<td{attrs}>{text}</td>"


def _align(text: str) -> str:
    return "num" if _FIGURE.match(text.strip()) else ""


# -- matrices ----------------------------------------------------------------------------------
def matrix_html(matrix: Matrix, findings: Sequence[InvalidFinding]) -> str:
    """The matrix with a header row per axis, best values bold, invalid cells red with
    their reasons listed under the table."""
    reasons = _cell_reasons(matrix, findings)
    labels = list(matrix.row_params) or ["test"]
    head = ""
    if matrix.column_param:
        head += "<tr>" + "".join(f'<th rowspan="2">{escape(n)}</th>' for n in labels)
        head += "".join(
            f'<th colspan="{len(matrix.metrics)}" class="group gs">'
            f"{escape(matrix.column_param)}={escape(column)}</th>"
            for column in matrix.columns
        )
        head += "</tr><tr>"
    else:
        head += "<tr>" + "".join(f"<th>{escape(n)}</th>" for n in labels)
    # "gs": the first metric of a column group, ruled off from the group before it.
    head += "".join(
        f'<th class="{"gs " if i == 0 else ""}num"'
        f' title="{"higher" if higher_is_better(m) else "lower"} is better">'
        f"{escape(m)} {'↑' if higher_is_better(m) else '↓'}</th>"
        for _column in matrix.columns
        for i, m in enumerate(matrix.metrics)
    )
    head += "</tr>"
    body = []
    for row in matrix.rows:
        shown = list(row) or [matrix.function.rsplit("::", 1)[-1]]
        cells = [_td(escape(v), cls="label") for v in shown]
        for column in matrix.columns:
            found = reasons.get((row, column), [])
            why = found[0].reasons if found else ()
            for i, metric in enumerate(matrix.metrics):
                cell = _matrix_cell(matrix.cell(row, column, metric), why)
                cells.append(cell.replace('class="num', 'class="gs num', 1) if i == 0 else cell)
        invalid = any(reasons.get((row, c)) for c in matrix.columns)
        body.append(f"<tr{' class=invalid-row' if invalid else ''}>" + "".join(cells) + "</tr>")
    notes = [_matrix_legend(matrix)]
    notes += [_invalid_note(matrix, row, column, found) for (row, column), found in reasons.items()]
    return table(head, body, cls="matrix") + '<ul class="notes">' + "".join(notes) + "</ul>"


def _matrix_cell(cell: Cell | None, reasons: Sequence[str]) -> str:
    if cell is None:
        return _td("", cls="num")
    value = escape(abbreviate(cell.median))
    if cell.best:
        value = f"<strong>{value}</strong>"
    extras = []
    if not math.isnan(cell.spread):
        extras.append(f"±{cell.spread * 100:.0f}%")
    if cell.ratio is not None:
        extras.append(f"{cell.ratio:.2f}x" if math.isfinite(cell.ratio) else "infx")
    if extras:
        value += f' <span class="extra">{" ".join(extras)}</span>'
    if cell.invalid:
        value += ' <span class="mark">!</span>'
        title = "invalid: " + "; ".join(reasons) if reasons else "invalid"
        return _td(value, cls="num invalid", title=title)
    return _td(value, cls="num")


def _cell_reasons(
    matrix: Matrix, findings: Sequence[InvalidFinding]
) -> dict[tuple[RowKey, str], list[InvalidFinding]]:
    """The invalid results behind each (row, column) of the matrix (one per bad trial)."""
    out: dict[tuple[RowKey, str], list[InvalidFinding]] = {}
    for finding in findings:
        row = tuple(finding.params.get(n, "-") for n in matrix.row_params)
        column = finding.params.get(matrix.column_param, "-") if matrix.column_param else ""
        if row in matrix.rows:
            out.setdefault((row, column), []).append(finding)
    return out


def _invalid_note(matrix: Matrix, row: RowKey, column: str, found: list[InvalidFinding]) -> str:
    # Trials of one position usually fail alike: the first one's words, and how many.
    trials = f" ({len(found)} trials)" if len(found) > 1 else ""
    return (
        f'<li class="invalid-note"><b>invalid</b> {escape(_position(matrix, row, column))}'
        f"{trials}: {escape('; '.join(found[0].reasons))}</li>"
    )


def _position(matrix: Matrix, row: RowKey, column: str) -> str:
    parts = [f"{n}={v}" for n, v in zip(matrix.row_params, row, strict=True)]
    if matrix.column_param:
        parts.append(f"{matrix.column_param}={column}")
    return ", ".join(parts) or matrix.function.rsplit("::", 1)[-1]


def _matrix_legend(matrix: Matrix) -> str:
    parts = ["<b>bold</b>: best in column", "↑ higher is better, ↓ lower is better"]
    if matrix.trials > 1:
        parts.append(f"median of {matrix.trials} trials, ± half-range over them")
    if matrix.baseline:
        parts.append(f"x: ratio to {escape(matrix.baseline)}")
    if any(c.invalid for c in matrix.cells.values()):
        parts.append('<span class="mark">!</span> invalid result (red)')
    return "<li>" + "; ".join(parts) + "</li>"


# -- experiments -------------------------------------------------------------------------------
def experiment_html(table_model: ExperimentTable) -> str:
    """An experiment's rows; a row whose ``valid`` cell says no is red."""
    headers = (*table_model.param_names, *table_model.headers)
    labels = len(table_model.param_names)
    valid_at = headers.index("valid") if "valid" in headers else None
    head = "<tr>" + "".join(
        f'<th class="{"" if i < labels else _header_align(h)}">{escape(h)}</th>'
        for i, h in enumerate(headers)
    )
    head += "</tr>"
    body = []
    for row in table_model.rows:
        bad = valid_at is not None and row[valid_at].lower().startswith("no")
        cells = [
            _td(escape(text), cls="label" if i < labels else _align(text))
            for i, text in enumerate(row)
        ]
        body.append(f"<tr{' class=invalid-row' if bad else ''}>" + "".join(cells) + "</tr>")
    if not table_model.rows:
        body.append(f'<tr><td colspan="{len(headers)}">(no steps ran)</td></tr>')
    notes = "".join(f"<li>{escape(n)}</li>" for n in table_model.notes if n.strip())
    return table(head, body) + (f'<ul class="notes">{notes}</ul>' if notes else "")


def _header_align(header: str) -> str:
    return "" if header in ("valid", "slo", "confirmed", "tool") else "num"


# -- every load of a test ----------------------------------------------------------------------
_LOAD_FIGURES = ("sent", "ok", "errors", "req/s", "p50 ms", "p99 ms", "max ms")


def loads_html(records: Sequence[Record]) -> str:
    """One row per load (each trial), with its figures and, when invalid, why."""
    params = [effective_params(r) for r in records]
    names = list(dict.fromkeys(n for p in params for n in p))
    with_trials = any(r.trial for r in records)
    head = "<tr>" + "".join(f"<th>{escape(n)}</th>" for n in names)
    head += "<th class=num>trial</th>" if with_trials else ""
    # The rate's unit, when every load counts the same things (WebSocket: messages).
    units = {rate_unit(record.result) for record in records}
    rate_head = units.pop() if len(units) == 1 else "req/s"
    figures_head = [rate_head if h == "req/s" else h for h in _LOAD_FIGURES]
    head += "".join(f"<th class=num>{h}</th>" for h in figures_head) + "<th>valid</th></tr>"
    body = []
    for record, values in zip(records, params, strict=True):
        r = record.result
        cells = [_td(escape(values.get(n, "-")), cls="label") for n in names]
        if with_trials:
            cells.append(_td(str(record.trial + 1), cls="num"))
        figures = (
            f"{r.sent:,}",
            f"{r.ok:,}",
            f"{r.errors_total:,}",
            f"{r.rps:,.0f}",
            format_ms(r.p50_ms),
            format_ms(r.p99_ms),
            format_ms(r.max_ms),
        )
        cells += [_td(f, cls="num") for f in figures]
        if r.valid:
            cells.append(_td("yes"))
        else:
            why = "; ".join(r.invalid_reasons) or "invalid"
            cells.append(_td(f"<b>NO</b>: {escape(why)}", cls="reason"))
        body.append(f"<tr{'' if r.valid else ' class=invalid-row'}>" + "".join(cells) + "</tr>")
    return table(head, body, cls="loads")


# -- comparisons -------------------------------------------------------------------------------
def comparison_html(comparison: Comparison) -> str:
    """The change per test and metric, how sure it is, and the verdict; a test's name once,
    on the first of its rows."""
    head = "<tr><th>test</th>" + "".join(
        f'<th class="{"" if h in ("metric", "verdict") else "num"}">{escape(h)}</th>'
        for h in COMPARISON_HEADERS
    )
    head += "</tr>"
    body = []
    previous = None
    for item, (key, cells) in zip(comparison.items, comparison_rows(comparison), strict=True):
        klass = "" if item.unknown else _VERDICT_CLASS.get(item.verdict, "")
        if item.threshold is None:
            klass = ""  # reported, not gated: no colour for a metric nobody asked to hold
        first = key != previous
        previous = key
        tds = [_td(f"<code>{escape(key)}</code>" if first else "", cls="label")]
        tds += [
            _td(escape(c), cls="" if i in (0, len(cells) - 1) else "num")
            for i, c in enumerate(cells)
        ]
        tds[-1] = _td(escape(cells[-1]), cls=f"verdict {klass}".strip())
        classes = " ".join(c for c in (klass, "first" if first else "") if c)
        body.append(f'<tr class="{classes}">' + "".join(tds) + "</tr>")
    return table(head, body, cls="comparison")


# -- environment -------------------------------------------------------------------------------
def facts_html(facts: Sequence[tuple[str, str]]) -> str:
    """Two columns, name and value."""
    body = [f"<tr><th scope=row>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in facts]
    return f'<table class="facts"><tbody>{"".join(body)}</tbody></table>'
