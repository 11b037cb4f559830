"""The text report's per-host block: each share of a load run on a cluster, one row each
(its host, counts, latency, CPU), so a host that saturated or saw slower answers stands
out (a saturated share's busy figure marked ``!``); then each share's worker, whether it
saturated, window start and errors, and how far apart the windows opened."""

from __future__ import annotations

import textwrap

from pytest_netbench._model import ERROR_KINDS, LoadResult, ShareStats
from pytest_netbench._report.cells import format_count, format_ms

_HOST_WIDTH = 16  # longer host names are cut, with the whole name on the share's own line
_COLUMNS = (  # (title, width)
    ("share", 5),
    ("sent", 10),
    ("ok", 10),
    ("errors", 8),
    ("p50", 7),
    ("p99", 7),
    ("max", 7),
    ("cpu", 5),
    ("busy", 6),  # "100%!": a saturated share's busy figure is marked
)


def share_lines(result: LoadResult, width: int) -> list[str]:
    """The block, or nothing when the load did not run on a cluster."""
    gen = result.generator
    if not gen.shares:
        return []
    host_width = min(max(len("host"), *(len(s.host) for s in gen.shares)), _HOST_WIDTH)
    lines = ["", "Shares, one per Dask worker (latency of each share's ok responses, ms)"]
    lines.append("  " + _row([title for title, _ in _COLUMNS], host_width, "host"))
    for share in gen.shares:
        lines.append("  " + _share_row(share, host_width))
    for share in gen.shares:
        lines += textwrap.wrap(
            _share_text(share), width, initial_indent="  ", subsequent_indent="    "
        )
    if gen.start_spread_ms is not None:
        lines.append(f"  the shares' windows opened within {gen.start_spread_ms:.2f} ms")
    return lines


def _row(cells: list[str], host_width: int, host: str) -> str:
    first, *rest = cells
    head = first.rjust(_COLUMNS[0][1]) + "  " + host.ljust(host_width)
    return head + "".join(cell.rjust(w) for cell, (_, w) in zip(rest, _COLUMNS[1:], strict=True))


def _share_row(share: ShareStats, host_width: int) -> str:
    host = share.host if len(share.host) <= host_width else share.host[: host_width - 1] + "~"
    if share.lost:
        return _row([str(share.index), *["-"] * (len(_COLUMNS) - 1)], host_width, host) + " LOST"
    cells = [
        str(share.index),
        format_count(share.sent),
        format_count(share.ok),
        format_count(share.errors_total),
        format_ms(share.latency.p50_ms),
        format_ms(share.latency.p99_ms),
        format_ms(share.latency.max_ms),
        f"{share.cpu_percent:.0f}%",
        # Capped as the saturation reason caps it: a share's busy time can run past the
        # load's window (its own start, its wrap-up).
        f"{min(share.busy_percent, 100):.0f}%" + ("!" if share.saturated else ""),
    ]
    return _row(cells, host_width, host)


def _share_text(share: ShareStats) -> str:
    """``share 1 on load-2 (tcp://10.0.0.7:40123): window at +0.38 ms, 4 in flight, errors:
    connect 6, timeout 4``; a lost share says why."""
    where = f"share {share.index} on {share.host or '?'} ({share.worker})"
    if share.lost:
        return f"{where}: LOST: {share.lost}"
    parts = []
    if share.saturated:
        parts.append(
            f"SATURATED: running or waiting for a CPU {min(share.busy_percent, 100):.0f}% of the"
            " window"
        )
    if share.start_offset_ms is not None:
        parts.append(f"window at +{share.start_offset_ms:.2f} ms")
    if share.in_flight:
        parts.append(f"{share.in_flight:,} in flight")
    kinds = [f"{kind} {share.errors[kind]:,}" for kind in ERROR_KINDS if share.errors.get(kind)]
    if kinds:
        parts.append("errors: " + ", ".join(kinds))
    return f"{where}: " + ", ".join(parts)
