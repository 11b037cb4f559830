"""Server profiles in a session's reports: each profiled load's top functions under its
test's matrix, in the terminal and in Markdown (per parametrisation, its median trial)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_netbench._report.markdown import render_table_markdown
from pytest_netbench._report.profile import (
    HEADINGS,
    TOP,
    cost_words,
    describe,
    function_rows,
    profile_lines,
)
from pytest_netbench._report.requests import shown_loads

if TYPE_CHECKING:
    from pytest_netbench._compare.records import Record


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
        rows = [[*row[:3], f"`{row[3]}`"] for row in function_rows(profile, TOP)]
        words = cost_words(profile)
        parts.append(
            f"#### Server profile{where}\n\n<sub>{describe(profile)}</sub>\n\n"
            + render_table_markdown(HEADINGS, rows, text_columns=("function",))
            + (f"\n{words}.\n" if words else "")
        )
    return "\n".join(parts)
