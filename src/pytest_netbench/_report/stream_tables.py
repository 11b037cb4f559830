"""Under a test's matrix (terminal and Markdown): its streaming loads, one row each (per
parametrisation, its median trial): streams, events a second, and each stream figure's p50
and p99 by its kind's names (first event and gap; TTFT, ITL and TPOT; first push and gap).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_netbench._model import LatencySummary, LoadResult
from pytest_netbench._report.cells import format_ms
from pytest_netbench._report.requests import MixLoad, shown_loads
from pytest_netbench._report.stream_figures import stream_rows

if TYPE_CHECKING:  # a one-load report imports no session records
    from pytest_netbench._compare.records import Record

# The figures a row shows: the load's latency table has the whole stream and first byte.
_LEFT_OUT = ("first byte", "whole", "E2EL")


def _streaming(result: LoadResult) -> bool:
    return result.stream is not None


def _figures(result: LoadResult) -> list[tuple[str, LatencySummary]]:
    assert result.stream is not None
    return [(label, s) for label, s in stream_rows(result.stream) if label not in _LEFT_OUT]


def _table(loads: Sequence[MixLoad]) -> tuple[list[str], list[list[str]]]:
    labels = [label for label, _ in _figures(loads[0].record.result)]
    headings = ["load", "streams", "events/s"]
    headings += [f"{label} {q}" for label in labels for q in ("p50", "p99")]
    rows = []
    for load in loads:
        result = load.record.result
        stream = result.stream
        assert stream is not None
        figures = dict(_figures(result))
        cells = [load.caption or "(one load)", f"{stream.streams:,}"]
        cells.append(f"{stream.events_per_second:,.1f}")
        for label in labels:
            summary = figures.get(label)
            for value in (summary.p50_ms, summary.p99_ms) if summary else ("-", "-"):
                cells.append(value if isinstance(value, str) else format_ms(value))
        rows.append(cells)
    return headings, rows


def stream_tables_text(records: Sequence[Record], function: str) -> str:
    """Under a test's matrix in the terminal: its streaming loads, one row each."""
    loads = shown_loads(records, function, _streaming)
    if not loads:
        return ""
    headings, rows = _table(loads)
    widths = [max(len(row[i]) for row in [headings, *rows]) + 2 for i in range(len(headings))]
    lines = ["", "  streams (ms): each load's stream figures (docs/streaming.md)"]
    for row in [headings, *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  " + "".join(cells))
    return "\n".join(lines) + "\n"


def stream_tables_markdown(records: Sequence[Record], function: str) -> str:
    """The same in Markdown, under the test's matrix."""
    from pytest_netbench._report.markdown import render_table_markdown

    loads = shown_loads(records, function, _streaming)
    if not loads:
        return ""
    headings, rows = _table(loads)
    return (
        "#### Streams\n\n"
        + render_table_markdown(headings, rows)
        + "\nEach load's stream figures in ms (see docs/streaming.md).\n"
    )
