"""A streaming load's figures in the HTML report: under a test's loads, one table with a
row per figure (first byte, first event, gap, whole stream; TTFT, ITL, TPOT and E2EL for
token streams) for each streaming load (per parametrisation, its median trial), and its
events: count, per stream, per second."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_netbench._compare.records import Record
from pytest_netbench._experiment.trials import median_trial
from pytest_netbench._model import LatencySummary, LoadResult
from pytest_netbench._report.cells import format_ms
from pytest_netbench._report.matrix import effective_params
from pytest_netbench._report.stream_figures import stream_legend, stream_rows

_COLUMNS = ("p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms")


def stream_loads(records: Sequence[Record], function: str) -> list[tuple[str, LoadResult]]:
    """``function``'s streaming loads: per parametrisation its median trial, captioned."""
    groups: dict[tuple[tuple[str, str], ...], list[Record]] = {}
    for record in records:
        if record.function == function and record.result.stream is not None:
            groups.setdefault(tuple(effective_params(record).items()), []).append(record)
    loads = []
    for key, trials in groups.items():
        median = median_trial([r.result for r in trials])
        words = [f"{name}={value}" for name, value in key]
        if len(trials) > 1:
            words.append(f"median trial of {len(trials)}")
        loads.append((", ".join(words), median))
    return loads


def _row(label: str, summary: LatencySummary) -> str:
    cells = "".join(
        f"<td class=num>{escape(format_ms(getattr(summary, c)) if summary.count else '-')}</td>"
        for c in _COLUMNS
    )
    return f"<tr><td class=label>{escape(label)}</td>{cells}</tr>"


def streams_html(records: Sequence[Record], function: str) -> list[str]:
    """The heading, legend and tables of ``function``'s streaming loads; nothing without."""
    loads = stream_loads(records, function)
    if not loads:
        return []
    parts = ["<h4>Streams</h4>"]
    head = "<th>figure</th>" + "".join(
        f"<th class=num>{c.removesuffix('_ms')}</th>" for c in _COLUMNS
    )
    for caption, result in loads:
        stream = result.stream
        assert stream is not None
        counts = stream.events_per_stream
        words = (
            f"{stream.streams:,} streams ({stream.mode}), {stream.events:,} events,"
            f" {stream.events_per_second:,.1f} events/s; events a stream: min {counts.min:,},"
            f" p50 {counts.p50:,}, max {counts.max:,}"
        )
        if stream.goodput == stream.goodput:  # not nan: a goodput SLO was given
            words += f"; goodput {stream.goodput:,.1f}/s ({stream.good_streams:,} good streams)"
        if stream.mode == "openai":
            words += (
                f"; output tokens {stream.output_tokens:,},"
                f" {stream.output_tokens_per_second:,.1f} tokens/s"
            )
        title = f"{caption}: {words}" if caption else words
        body = "\n".join(_row(label, summary) for label, summary in stream_rows(stream))
        legend = " ".join(stream_legend(stream, open_loop=result.mode == "open"))
        parts.append(
            f"<p><b>{escape(title)}</b></p>"  # wider than the table: not its caption
            f'<p class="note">{escape(legend)}. Milliseconds.</p>'
            f'<div class="scroll"><table class="streams">'
            f"<thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table></div>"
        )
    return parts
