"""A flow's sessions in the HTML report: under a test's loads, one table with a row per
flow load (per parametrisation, its median trial): its flows, users, sessions started,
completed, failed and in progress, the completed ones' duration percentiles, and where and
why sessions failed; the cells are :mod:`pytest_netbench._report.sessions`' row, so the
page reads as the terminal and the Markdown do."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_netbench._compare.records import Record
from pytest_netbench._report.sessions import (
    SESSION_HEADINGS,
    SESSION_LEGEND,
    SESSION_WORDS,
    flow_loads,
    session_cells,
)


def sessions_html(records: Sequence[Record], function: str) -> list[str]:
    """The heading, legend and table of ``function``'s flow loads; nothing without one."""
    loads = flow_loads(records, function)
    if not loads:
        return []
    captioned = any(load.caption for load in loads)
    headings = ("load", *SESSION_HEADINGS) if captioned else SESSION_HEADINGS
    words = {"load", *SESSION_WORDS}
    head = "".join(
        f"<th>{escape(h)}</th>" if h in words else f"<th class=num>{escape(h)}</th>"
        for h in headings
    )
    rows = []
    for load in loads:
        assert load.result.sessions is not None
        cells = session_cells(load.result.sessions)
        named = zip(headings, [load.caption, *cells] if captioned else cells, strict=True)
        rows.append(
            "<tr>"
            + "".join(
                f"<td class=label>{escape(c)}</td>"
                if h in words
                else f"<td class=num>{escape(c)}</td>"
                for h, c in named
            )
            + "</tr>"
        )
    legend = f'<p class="note">{escape(SESSION_LEGEND[0].upper() + SESSION_LEGEND[1:])}.</p>'
    table = (
        '<div class="scroll"><table class="sessions">'
        f"<thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>"
    )
    return ["<h4>Sessions</h4>", legend, table]
