"""Where the server spent its CPU (``LoadResult.profile``), as text and Markdown: the
functions with the most samples on top of the stack, each with its self and total share
and the server CPU per request it stands for; and what sampling cost the server."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

from pytest_netbench._compare.profile_diff import NOISE_SIGMAS, WhereTimeWent
from pytest_netbench._compare.records import Record
from pytest_netbench._model import LoadResult, ServerProfile
from pytest_netbench._report.markdown import render_table_markdown
from pytest_netbench._report.requests import shown_loads

TOP = 10
_HEADINGS = ("self", "total", "self ms/req", "function")


def _ms(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}" if value < 0.1 else f"{value:.3f}"


def _rows(profile: ServerProfile, top: int) -> list[list[str]]:
    return [
        [
            f"{f.self_share:.1%}",
            f"{f.total_share:.1%}",
            _ms(f.self_cpu_ms_per_request),
            f.name,
        ]
        for f in profile.hottest(top)
    ]


def describe(profile: ServerProfile) -> str:
    """``py-spy, 362 samples over 1.0 s of 3 processes, in a run of its own``."""
    return (
        f"{profile.tool}, {profile.samples:,} samples over {profile.duration_s:.1f} s of"
        f" {profile.processes} process{'es' if profile.processes != 1 else ''}, in a run of"
        " its own after the measured one"
    )


def cost_words(profile: ServerProfile) -> str:
    """What sampling cost the server, from the two runs' CPU per request."""
    cost = profile.sampling_cost
    if math.isnan(cost):
        return ""
    return (
        f"sampling cost: the server's CPU per request {_ms(profile.cpu_ms_per_request)} ms"
        f" profiled, {_ms(profile.measured_cpu_ms_per_request)} ms measured (x{cost:.2f})"
    )


def profile_lines(result: LoadResult, width: int = 80, top: int = TOP) -> list[str]:
    """The text report's block; empty when no profile was asked for."""
    profile = result.profile
    if profile is None:
        return []
    if profile.problem:
        return ["", f"Server profile: none ({profile.problem})"]
    lines = ["", f"Server profile ({describe(profile)})"]
    rows = _rows(profile, top)
    widths = [6, 6, 11]
    lines.append(
        "  " + "  ".join(h.rjust(w) for h, w in zip(_HEADINGS, widths, strict=False)) + "  function"
    )
    room = max(width - 2 - sum(w + 2 for w in widths), 20)
    for row in rows:
        cells = "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=False))
        lines.append(f"  {cells}  {_cut(row[3], room)}")
    words = cost_words(profile)
    if words:
        lines += textwrap.wrap(words, width, initial_indent="  ", subsequent_indent="    ")
    return lines


def _cut(name: str, room: int) -> str:
    return name if len(name) <= room else name[: room - 3] + "..."


def profile_tables_text(records: Sequence[Record], function: str, width: int = 80) -> str:
    """Under a test's matrix in the terminal: each profiled load's top functions."""
    parts = []
    for load in shown_loads(records, function, lambda r: r.profile is not None):
        lines = profile_lines(load.result, width, top=5)
        if lines:
            caption = f", {load.caption}" if load.caption else ""
            lines[1] = f"  {lines[1]}{caption}"
            parts.append("\n".join(lines))
    return "\n".join(parts) + ("\n" if parts else "")


def profile_tables_markdown(records: Sequence[Record], function: str) -> str:
    """Each profiled load's top functions in Markdown, under the test's matrix."""
    parts = []
    for load in shown_loads(records, function, lambda r: r.profile is not None):
        profile = load.result.profile
        assert profile is not None
        where = f": {load.caption}" if load.caption else ""
        if profile.problem:
            parts.append(f"#### Server profile{where}\n\nNone: {profile.problem}\n")
            continue
        rows = [[*row[:3], f"`{row[3]}`"] for row in _rows(profile, TOP)]
        words = cost_words(profile)
        parts.append(
            f"#### Server profile{where}\n\n<sub>{describe(profile)}</sub>\n\n"
            + render_table_markdown(_HEADINGS, rows, text_columns=("function",))
            + (f"\n{words}.\n" if words else "")
        )
    return "\n".join(parts)


# -- where the time went, between two runs --------------------------------------------------
_WHERE_HEADINGS = ("base ms/req", "head ms/req", "change", "of change", "function")
WHERE_LEGEND = (
    "each function's own server CPU per request (its share of the profile's samples times"
    " the server's CPU per request) in base and head, the most added first; * = beyond"
    f" noise: the change exceeds {NOISE_SIGMAS:g} standard errors of the two sample shares;"
    " of change: its part of the server's whole change (beyond noise only)"
)


def _where_rows(where: WhereTimeWent, top: int) -> list[list[str]]:
    rows = []
    for change in where.changes[:top]:
        share = change.share_of_change
        rows.append(
            [
                _ms(change.base_ms),
                _ms(change.head_ms),
                f"{change.change_ms:+.4f}"
                if abs(change.change_ms) < 0.1
                else f"{change.change_ms:+.3f}",
                f"{share:.0%}" if change.beyond_noise and not math.isnan(share) else "-",
                ("* " if change.beyond_noise else "  ") + change.name,
            ]
        )
    return rows


def _where_title(where: WhereTimeWent) -> str:
    return (
        f"server CPU per request {_ms(where.base_cpu_ms)} -> {_ms(where.head_cpu_ms)} ms;"
        f" {where.base_samples:,} and {where.head_samples:,} samples"
    )


def where_lines(wheres: Sequence[WhereTimeWent], width: int = 80, top: int = 5) -> list[str]:
    """Under a comparison's verdicts in the terminal: each profiled test's functions."""
    lines: list[str] = []
    for where in wheres:
        lines += ["", f"Where the time went: {where.key}", f"  ({_where_title(where)})"]
        widths = [11, 11, 9, 9]
        lines.append(
            "  "
            + "  ".join(h.rjust(w) for h, w in zip(_WHERE_HEADINGS, widths, strict=False))
            + "  function"
        )
        room = max(width - 2 - sum(w + 2 for w in widths), 20)
        for row in _where_rows(where, top):
            cells = "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=False))
            lines.append(f"  {cells}  {_cut(row[4], room)}")
        if not where.named:
            lines.append("  no function changed beyond the sampling noise")
    if wheres:
        lines += textwrap.wrap(
            f"({WHERE_LEGEND})", width, initial_indent="  ", subsequent_indent="   "
        )
    return lines


def where_markdown(wheres: Sequence[WhereTimeWent], top: int = TOP) -> str:
    """The same in Markdown, under the comparison's table."""
    parts = []
    for where in wheres:
        rows = [
            [*row[:4], f"`{row[4][2:]}`" + (" *" if row[4].startswith("*") else "")]
            for row in _where_rows(where, top)
        ]
        none = "" if where.named else "\nNo function changed beyond the sampling noise.\n"
        parts.append(
            f"#### Where the time went: `{where.key}`\n\n<sub>{_where_title(where)}</sub>\n\n"
            + render_table_markdown(_WHERE_HEADINGS, rows, text_columns=("function",))
            + none
        )
    if not parts:
        return ""
    return "\n".join(parts) + f"\n{WHERE_LEGEND[0].upper()}{WHERE_LEGEND[1:]}.\n"


def where_to_dict(where: WhereTimeWent) -> dict[str, object]:
    def number(value: float) -> float | None:
        return None if math.isnan(value) else value

    return {
        "key": where.key,
        "base_cpu_ms_per_request": number(where.base_cpu_ms),
        "head_cpu_ms_per_request": number(where.head_cpu_ms),
        "base_samples": where.base_samples,
        "head_samples": where.head_samples,
        "functions": [
            {
                "name": c.name,
                "base_ms_per_request": number(c.base_ms),
                "head_ms_per_request": number(c.head_ms),
                "change_ms_per_request": number(c.change_ms),
                "share_of_change": number(c.share_of_change),
                "noise_ms_per_request": number(c.noise_ms),
                "beyond_noise": c.beyond_noise,
            }
            for c in where.changes
        ],
    }
