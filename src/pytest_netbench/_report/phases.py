"""Where each request's time went (``LoadResult.phases``), as text and Markdown.

One row per phase measured (connect, tls, wait, receive) with the percentiles of the
latency tables; a mix adds each kind's wait and receive. Under a test's matrix, one row
per load of it (its median trial per parametrisation) with the figures that say whether
the server took longer to answer (wait) or to send the answer (receive). docs/phases.md
gives k6's name of each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_netbench._model import PHASE_NAMES, LatencySummary, LoadResult, Phases
from pytest_netbench._report.cells import format_ms

if (
    TYPE_CHECKING
):  # a one-load report imports no session records (tests/integration/test_cli_start.py)
    from pytest_netbench._compare.records import Record

# As the text report's latency table, so the two line up.
_LABEL_WIDTH = 13
_CELL_WIDTH = 7
_COLUMNS: tuple[tuple[str, str], ...] = (
    ("p50", "p50_ms"),
    ("p75", "p75_ms"),
    ("p90", "p90_ms"),
    ("p95", "p95_ms"),
    ("p99", "p99_ms"),
    ("p99.9", "p999_ms"),
    ("max", "max_ms"),
    ("mean", "mean_ms"),
)
# What each phase is, in a few words (the text report's legend).
MEANING = {
    "connect": "TCP connect of a connection opened for a request",
    "tls": "its TLS handshake",
    "wait": "request written to the answer's first byte",
    "receive": "first byte of the answer to its last",
}
# A WebSocket load's phases are its opening handshakes' (one a connection opened for a
# message), not its messages'.
WS_MEANING = {
    "connect": "TCP connect of a connection opened for a message",
    "tls": "its TLS handshake",
    "wait": "upgrade request written to the 101's first byte",
    "receive": "first byte of the 101 to its last (the handshakes', not the messages')",
}
# Under a matrix: (heading, phase, LatencySummary field).
LOAD_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("wait p50", "wait", "p50_ms"),
    ("wait p99", "wait", "p99_ms"),
    ("receive p50", "receive", "p50_ms"),
    ("receive p99", "receive", "p99_ms"),
    ("connect p50", "connect", "p50_ms"),
    ("tls p50", "tls", "p50_ms"),
)


def measured_phases(phases: Phases) -> list[str]:
    return [name for name in PHASE_NAMES if phases.phase(name).count]


def _row(label: str, summary: LatencySummary, width: int = _LABEL_WIDTH) -> str:
    cells = "".join(format_ms(getattr(summary, attr)).rjust(_CELL_WIDTH) for _, attr in _COLUMNS)
    return f"  {label}".ljust(width) + cells + f"{summary.count:,}".rjust(9)


def phase_lines(result: LoadResult) -> list[str]:
    """The text report's phases block; empty when none was measured (an echo load)."""
    names = measured_phases(result.phases)
    if not names:
        return []
    rows = [(name, result.phases.phase(name)) for name in names]
    for kind, stats in result.by_request.items():
        rows += [
            (f"{name} {kind}", stats.phases.phase(name))
            for name in ("wait", "receive")
            if stats.phases.phase(name).count
        ]
    # A kind's name is shown whole: the column widens past the latency table's if it must.
    width = max(_LABEL_WIDTH, *(len(label) + 3 for label, _ in rows))
    heading = "".join(h.rjust(_CELL_WIDTH) for h, _ in _COLUMNS) + "count".rjust(9)
    lines = ["", "Phases (ms)", "".ljust(width) + heading]
    lines += [_row(label, summary, width) for label, summary in rows]
    meaning = WS_MEANING if result.spec is not None and result.spec.kind == "ws" else MEANING
    lines += [f"  {name}: {meaning[name]}" for name in names]
    waited = result.phases.waited_for_connection
    if waited:
        lines.append(
            f"  {waited:,} requests waited for a connection to come free or open"
            " (open loop: their wait for it is in the latency, not in these phases)"
        )
    return lines


def load_cells(phases: Phases) -> list[str]:
    return [format_ms(getattr(phases.phase(name), attr)) for _, name, attr in LOAD_COLUMNS]


def phase_tables_text(records: Sequence[Record], function: str) -> str:
    """Under a test's matrix in the terminal: its loads' phases, one row each."""
    from pytest_netbench._report.requests import shown_loads

    loads = shown_loads(records, function, lambda r: r.phases.measured)
    if not loads:
        return ""
    captions = [load.caption or "(one load)" for load in loads]
    width = max(len(c) for c in [*captions, "load"]) + 2
    cell = max(len(h) for h, _, _ in LOAD_COLUMNS) + 2
    lines = ["", "  phases (ms): wait = to the first byte, receive = the rest of the answer"]
    lines.append("  " + "load".ljust(width) + "".join(h.rjust(cell) for h, _, _ in LOAD_COLUMNS))
    for caption, load in zip(captions, loads, strict=True):
        cells = load_cells(load.result.phases)
        lines.append("  " + caption.ljust(width) + "".join(c.rjust(cell) for c in cells))
    return "\n".join(lines) + "\n"


def phase_tables_markdown(records: Sequence[Record], function: str) -> str:
    """The same in Markdown, under the test's matrix."""
    from pytest_netbench._report.markdown import render_table_markdown
    from pytest_netbench._report.requests import shown_loads

    loads = shown_loads(records, function, lambda r: r.phases.measured)
    if not loads:
        return ""
    headings = ["load", *(f"{h} ms" for h, _, _ in LOAD_COLUMNS)]
    rows = [[load.caption or "(one load)", *load_cells(load.result.phases)] for load in loads]
    return (
        "#### Phases\n\n"
        + render_table_markdown(headings, rows)
        + "\nwait: request written to the answer's first byte; receive: the rest of the answer;"
        " connect, tls: of connections opened for a request (see docs/phases.md).\n"
    )
