"""Checks on responses in the HTML report: under a test's loads, a table per load that had
checks (per parametrisation, its median trial), a failed check's row marked; the rows are
:mod:`pytest_netbench._report.checks`' cells, so the page reads as the terminal does."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_netbench._compare.records import Record
from pytest_netbench._report.check_tables import checked_loads
from pytest_netbench._report.checks import HEADINGS, cells


def checks_html(records: Sequence[Record], function: str) -> list[str]:
    """The heading and a table per load of ``function`` with checks; nothing without."""
    loads = checked_loads(records, function)
    if not loads:
        return []
    parts = ["<h4>Checks</h4>"]
    for load in loads:
        head = "".join(
            f"<th{' class=num' if 0 < i < 4 else ''}>{escape(h)}</th>"
            for i, h in enumerate(HEADINGS)
        )
        rows = []
        for check in load.result.checks.values():
            row = cells(check)
            klass = ' class="failed"' if check.failures else ""
            tds = [f"<td class=label>{escape(row[0])}</td>"]
            tds += [f"<td class=num>{escape(cell)}</td>" for cell in row[1:4]]
            tds.append(f"<td class=label><code>{escape(row[4])}</code></td>")
            rows.append(f"<tr{klass}>" + "".join(tds) + "</tr>")
        caption = f"<caption>{escape(load.caption)}</caption>" if load.caption else ""
        parts.append(
            '<div class="scroll"><table class="checks">'
            + caption
            + f"<thead><tr>{head}</tr></thead><tbody>\n"
            + "\n".join(rows)
            + "\n</tbody></table></div>"
        )
    return parts
