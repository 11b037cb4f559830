"""Where the time went between two runs with profiles (``_compare.profile_diff``): each
function's change in the server's CPU per request, under a comparison's verdicts in the
terminal, in Markdown and in the comparison's JSON."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

from pytest_netbench._compare.profile_diff import NOISE_SIGMAS, WhereTimeWent
from pytest_netbench._report.markdown import render_table_markdown
from pytest_netbench._report.profile import TOP, cut, ms_cell

_WHEREHEADINGS = ("base ms/req", "head ms/req", "change", "of change", "function")
WHERE_LEGEND = (
    "each function's own server CPU per request (its share of the profile's samples times"
    " the server's CPU per request) in base and head, the most added first, the most saved"
    " last; * = beyond"
    f" noise: the change exceeds {NOISE_SIGMAS:g} standard errors of the two sample shares;"
    " of change: its part of the server's whole change (beyond noise only)"
)


def _wherefunction_rows(where: WhereTimeWent, top: int) -> list[list[str]]:
    rows = []
    for change in where.changes[:top]:
        share = change.share_of_change
        rows.append(
            [
                ms_cell(change.base_ms),
                ms_cell(change.head_ms),
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
        f"server CPU per request {ms_cell(where.base_cpu_ms)} -> {ms_cell(where.head_cpu_ms)} ms;"
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
            + "  ".join(h.rjust(w) for h, w in zip(_WHEREHEADINGS, widths, strict=False))
            + "  function"
        )
        room = max(width - 2 - sum(w + 2 for w in widths), 20)
        for row in _wherefunction_rows(where, top):
            cells = "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=False))
            lines.append(f"  {cells}  {cut(row[4], room)}")
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
            for row in _wherefunction_rows(where, top)
        ]
        none = "" if where.named else "\nNo function changed beyond the sampling noise.\n"
        parts.append(
            f"#### Where the time went: `{where.key}`\n\n<sub>{_where_title(where)}</sub>\n\n"
            + render_table_markdown(_WHEREHEADINGS, rows, text_columns=("function",))
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
