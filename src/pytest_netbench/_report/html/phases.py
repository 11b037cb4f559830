"""Where each request's time went, in the HTML report: under a test's loads, a row per
load (per parametrisation, its median trial) with its phases' figures and a bar of its
median request split into them (connect and tls paid once per connection opened for a
request, shown at their medians beside the median wait and receive)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_netbench._compare.records import Record
from pytest_netbench._model import Phases
from pytest_netbench._report.cells import format_ms
from pytest_netbench._report.phases import LOAD_COLUMNS, MEANING, load_cells
from pytest_netbench._report.requests import shown_loads

_BAR_PHASES = ("connect", "tls", "wait", "receive")
_BAR_PX = 240  # the longest load's bar


def phases_html(records: Sequence[Record], function: str) -> list[str]:
    """The heading, legend and table; nothing when no load of ``function`` timed phases."""
    loads = shown_loads(records, function, lambda r: r.phases.measured)
    if not loads:
        return []
    head = "<tr><th>load</th>" + "".join(f"<th class=num>{h} ms</th>" for h, _, _ in LOAD_COLUMNS)
    head += "<th>median request, by phase</th></tr>"
    longest = max(_median_total(load.result.phases) for load in loads)
    rows = []
    for load in loads:
        cells = "".join(f"<td class=num>{escape(c)}</td>" for c in load_cells(load.result.phases))
        caption = escape(load.caption or "(one load)")
        bar = _bar(load.result.phases, longest)
        rows.append(f"<tr><td class=label>{caption}</td>{cells}<td>{bar}</td></tr>")
    legend = "; ".join(
        f'<span class="ph-key ph-{name}"></span><b>{name}</b>: {escape(words)}'
        for name, words in MEANING.items()
    )
    return [
        "<h4>Phases</h4>",
        f'<p class="note">{legend} (k6: http_req_connecting, _tls_handshaking, _waiting,'
        " _receiving).</p>",
        '<div class="scroll"><table class="phases">'
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>",
    ]


def _medians(phases: Phases) -> list[tuple[str, float]]:
    parts = [(name, phases.phase(name).p50_ms) for name in _BAR_PHASES]
    return [(name, value) for name, value in parts if value == value and value > 0]


def _median_total(phases: Phases) -> float:
    return sum(value for _, value in _medians(phases))


def _bar(phases: Phases, longest: float) -> str:
    """A bar of the medians, as long as their sum beside the ``longest`` load's; each
    phase its share, named in its title."""
    parts = _medians(phases)
    total = sum(value for _, value in parts)
    if not total or not longest:
        return ""
    spans = "".join(
        f'<span class="ph-{name}" style="width:{value / total * 100:.1f}%"'
        f' title="{name} p50 {format_ms(value)} ms"></span>'
        for name, value in parts
    )
    width = max(total / longest * _BAR_PX, 2.0)
    return f'<span class="phase-bar" style="width:{width:.0f}px">{spans}</span>'
