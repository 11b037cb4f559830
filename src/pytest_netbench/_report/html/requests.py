"""A request mix per request kind in the HTML report: under a test's loads, a table per
load that sent a mix (per parametrisation, its median trial), one row per kind and the
load's own row under them; the rows are :mod:`pytest_netbench._report.requests`' model, so
the page reads as the terminal and the Markdown do."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_netbench._compare.records import Record
from pytest_netbench._report.html.pictures import Picture, figures_html
from pytest_netbench._report.matrix import effective_params
from pytest_netbench._report.plots.naming import record_stem
from pytest_netbench._report.requests import (
    LATENCY_COLUMNS,
    LEGEND,
    MixLoad,
    RequestRow,
    mix_loads,
    request_rows,
)

_FIGURES = ("sent", "ok", "errors", "req/s", *(f"{h} ms" for h, _ in LATENCY_COLUMNS))


def requests_html(
    records: Sequence[Record],
    function: str,
    pictures: Sequence[Picture],
    *,
    folded_past: int,
) -> tuple[list[str], list[Picture]]:
    """The heading, legend and a table per load of ``function`` that sent a mix, each with
    its spectrum (a line per request kind) from ``pictures`` under it; folded when there
    are more than ``folded_past``. Also the pictures shown, which the caller leaves out of
    the test's other pictures. Nothing when none of its loads sent a mix."""
    loads = mix_loads(records, function)
    if not loads:
        return [], []
    legend = f'<p class="note">{escape(LEGEND[0].upper() + LEGEND[1:])}.</p>'
    parts: list[str] = []
    shown: list[Picture] = []
    for load in loads:
        parts.append(_table(request_rows(load.result), caption=load.caption))
        spectrum = _spectrum_of(load, pictures)
        if spectrum is not None:
            parts.append(figures_html([spectrum]))
            shown.append(spectrum)
    if len(loads) > folded_past:
        summary = f"<summary>Per request, each load ({len(loads)})</summary>"
        return [f"<details>{summary}{legend}", *parts, "</details>"], shown
    return ["<h4>Per request</h4>", legend, *parts], shown


def _spectrum_of(load: MixLoad, pictures: Sequence[Picture]) -> Picture | None:
    """The load's latency picture, by the name the plots gave it."""
    record = load.record
    trial = record.trial if load.trials > 1 else None
    name = record_stem(record.function, effective_params(record), trial) + "-latency.png"
    return next((p for p in pictures if p.name == name), None)


def _table(rows: Sequence[RequestRow], *, caption: str) -> str:
    # "in flight" only when some request was (a closed loop's last ones, an interrupted
    # run): a column of zeros would push the status codes off a laptop's screen.
    in_flight = any(row.in_flight for row in rows)
    figures = [*_FIGURES[:3], *(["in flight"] if in_flight else []), *_FIGURES[3:]]
    head = "<tr><th>request</th><th>method, path</th>"
    head += "".join(f"<th class=num>{h}</th>" for h in figures)
    head += "<th>status codes</th></tr>"
    body = "\n".join(_row(row, in_flight=in_flight) for row in rows)
    return (
        '<div class="scroll"><table class="requests">'
        + (f"<caption>{escape(caption)}</caption>" if caption else "")
        + f"<thead>{head}</thead><tbody>\n{body}\n</tbody></table></div>"
    )


def _num(text: str, *, title: str = "") -> str:
    attr = f' title="{escape(title)}"' if title else ""
    return f"<td class=num{attr}>{escape(text)}</td>"


def _row(row: RequestRow, *, in_flight: bool) -> str:
    errors = f"{row.errors_total:,}"
    if row.errors:  # the kinds under the count, small, to keep the column narrow
        errors += f'<br><span class="extra">{escape(row.errors_text)}</span>'
    cells = [
        f"<td class=label>{escape(row.name)}</td>",
        f"<td class=label><code>{escape(row.target)}</code></td>" if row.target else "<td></td>",
        _num(f"{row.sent:,}"),
        _num(f"{row.ok:,}"),
        f"<td class=num>{errors}</td>",
        *([_num(f"{row.in_flight:,}")] if in_flight else []),
        _num(f"{row.rps:,.1f}"),
        *(_num(cell) for cell in row.latency_cells()),
        f"<td class=label>{escape(row.status_text)}</td>",
    ]
    klass = ' class="total"' if row.total else ""
    return f"<tr{klass}>" + "".join(cells) + "</tr>"
