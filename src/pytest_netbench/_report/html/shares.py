"""Per-host figures in the HTML report: for a load whose shares ran on several hosts (a Dask
cluster), one row per share with its host, counts, latency, CPU and when its window
opened, and the load's own figures under them, so a host that saturated or saw slower
answers stands out. A lost share's row says so, and a note under the table names it and
why (the text report's block is :mod:`pytest_netbench._report.shares`)."""

from __future__ import annotations

from html import escape

from pytest_netbench._model import ERROR_KINDS, LoadResult, ShareStats
from pytest_netbench._report.cells import format_count, format_ms

_FIGURES = ("sent", "ok", "errors", "in flight", "p50 ms", "p99 ms", "max ms", "cpu", "busy")
LEGEND = (
    "One row per share, each on its own worker; latency of the share's own ok responses;"
    " cpu: its CPU time over the window; busy: running or waiting for a CPU;"
    " start: when its window opened after the first share's (all shares: how far apart"
    " they opened)."
)


def has_shares(result: LoadResult) -> bool:
    """Whether the result gets a per-host table: more than one share, or a lost one."""
    shares = result.generator.shares
    return len(shares) > 1 or any(s.lost for s in shares)


def shares_html(result: LoadResult, *, caption: str = "") -> str:
    """The table and its notes, or nothing for a load that ran on one host."""
    if not has_shares(result):
        return ""
    head = "<tr><th class=num>share</th><th>host</th>"
    head += "".join(f"<th class=num>{h}</th>" for h in _FIGURES)
    head += "<th class=num>start ms</th></tr>"
    body = [_share_row(share) for share in result.generator.shares]
    body.append(_total_row(result))
    table = (
        '<div class="scroll"><table class="shares">'
        + (f"<caption>{escape(caption)}</caption>" if caption else "")
        + f"<thead>{head}</thead><tbody>\n"
        + "\n".join(body)
        + "\n</tbody></table></div>"
    )
    notes = _notes(result)
    return table + (f'<ul class="notes">{"".join(notes)}</ul>' if notes else "")


def _num(text: str, *, title: str = "") -> str:
    attr = f' title="{escape(title)}"' if title else ""
    return f"<td class=num{attr}>{text}</td>"


def _host(share: ShareStats) -> str:
    return (
        f"<td class=label>{escape(share.host or '?')}"
        f' <span class="extra">{escape(share.worker)}</span></td>'
    )


def _share_row(share: ShareStats) -> str:
    if share.lost:
        return (
            f"<tr class=invalid-row>{_num(str(share.index))}{_host(share)}"
            f'<td class="reason" colspan="{len(_FIGURES) + 1}"><b>LOST</b>: no figures came'
            " back (see below)</td></tr>"
        )
    kinds = ", ".join(f"{k} {share.errors[k]:,}" for k in ERROR_KINDS if share.errors.get(k))
    start = "-" if share.start_offset_ms is None else f"+{share.start_offset_ms:.2f}"
    cells = [
        _num(str(share.index)),
        _host(share),
        _num(format_count(share.sent)),
        _num(format_count(share.ok)),
        _num(format_count(share.errors_total), title=kinds),
        _num(format_count(share.in_flight)),
        _num(format_ms(share.latency.p50_ms)),
        _num(format_ms(share.latency.p99_ms)),
        _num(format_ms(share.latency.max_ms)),
        _num(f"{share.cpu_percent:.0f}%"),
        _busy(share),
        _num(start),
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _busy(share: ShareStats) -> str:
    """A saturated share's busy figure red and marked, as the matrix marks an invalid cell."""
    figure = f"{min(share.busy_percent, 100):.0f}%"  # as the text report and the reason
    if not share.saturated:
        return _num(figure)
    title = "saturated: running or waiting for a CPU nearly all the window"
    return f'<td class="num invalid" title="{title}">{figure} <span class="mark">!</span></td>'


def _total_row(result: LoadResult) -> str:
    """The load's own figures, which the shares' add up to (latency: every share's)."""
    latency = result.latency
    cells = [
        "<td></td><td class=label>all shares</td>",
        _num(format_count(result.sent)),
        _num(format_count(result.ok)),
        _num(format_count(result.errors_total)),
        _num(format_count(result.in_flight)),
        _num(format_ms(latency.p50_ms)),
        _num(format_ms(latency.p99_ms)),
        _num(format_ms(latency.max_ms)),
        _num("", title="each share's own: see its row"),
        _num(""),
        _num(_spread(result)),
    ]
    return '<tr class="total">' + "".join(cells) + "</tr>"


def _spread(result: LoadResult) -> str:
    spread = result.generator.start_spread_ms
    return "-" if spread is None else f"within {spread:.2f}"


def _notes(result: LoadResult) -> list[str]:
    """A lost share first, then a saturated one, then each share's error kinds (the legend
    is the caller's, once above every table: :data:`LEGEND`)."""
    first: list[str] = []  # what set a share's figures apart: lost, saturated
    notes: list[str] = []
    for share in result.generator.shares:
        where = f"share {share.index} on {share.host or '?'}"
        if share.lost:
            # The transport's words name the worker and its host; say the host if not.
            named = share.host and share.host in share.lost
            who = f"share {share.index}" if named else f"{where} ({share.worker})"
            first.append(
                f'<li class="invalid-note"><b>lost</b>: {escape(who)}: {escape(share.lost)}</li>'
            )
            continue
        if share.saturated:
            first.append(
                f'<li class="invalid-note"><b>saturated</b>: {escape(where)}'
                f" ({escape(share.worker)}) was running or waiting for a CPU"
                f" {min(share.busy_percent, 100):.0f}% of the window (cpu"
                f" {share.cpu_percent:.0f}%): its host, not the server, set its pace</li>"
            )
        kinds = [f"{k} {share.errors[k]:,}" for k in ERROR_KINDS if share.errors.get(k)]
        if kinds:
            notes.append(f"<li>{escape(where)}: errors: {escape(', '.join(kinds))}</li>")
    return [*first, *notes]
