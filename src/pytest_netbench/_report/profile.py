"""Where the server spent its CPU (``LoadResult.profile``), in one load's text: the
functions with the most samples on top of the stack, each with its self and total share
and the server CPU per request it stands for; and what sampling cost the server. A
session's tables of them are ``profile_tables.py``'s, the change between two runs
``where_time_went.py``'s."""

from __future__ import annotations

import math
import textwrap

from pytest_netbench._model import LoadResult, ServerProfile

TOP = 10
HEADINGS = ("self", "total", "self ms/req", "function")


def ms_cell(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}" if value < 0.1 else f"{value:.3f}"


def function_rows(profile: ServerProfile, top: int) -> list[list[str]]:
    return [
        [
            f"{f.self_share:.1%}",
            f"{f.total_share:.1%}",
            ms_cell(f.self_cpu_ms_per_request),
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
        f"sampling cost: the server's CPU per request {ms_cell(profile.cpu_ms_per_request)} ms"
        f" profiled, {ms_cell(profile.measured_cpu_ms_per_request)} ms measured (x{cost:.2f})"
    )


def profile_lines(result: LoadResult, width: int = 80, top: int = TOP) -> list[str]:
    """The text report's block; empty when no profile was asked for."""
    profile = result.profile
    if profile is None:
        return []
    if profile.problem:
        return ["", f"Server profile: none ({profile.problem})"]
    lines = ["", f"Server profile ({describe(profile)})"]
    rows = function_rows(profile, top)
    widths = [6, 6, 11]
    lines.append(
        "  " + "  ".join(h.rjust(w) for h, w in zip(HEADINGS, widths, strict=False)) + "  function"
    )
    room = max(width - 2 - sum(w + 2 for w in widths), 20)
    for row in rows:
        cells = "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=False))
        lines.append(f"  {cells}  {cut(row[3], room)}")
    words = cost_words(profile)
    if words:
        lines += textwrap.wrap(words, width, initial_indent="  ", subsequent_indent="    ")
    return lines


def cut(name: str, room: int) -> str:
    return name if len(name) <= room else name[: room - 3] + "..."
