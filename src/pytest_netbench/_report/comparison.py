"""A comparison with a baseline as text and Markdown: the change per metric and test, the
p-value and ratio interval behind each verdict, and the gate's overall result.

The verdicts themselves are data from :mod:`pytest_netbench._compare.gate`; this module
only words and lays them out, the text table and the Markdown one from the same rows.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence

from pytest_netbench._compare.gate import Comparison, MetricComparison, summary_counts
from pytest_netbench._report.markdown import render_table_markdown
from pytest_netbench._report.matrix import abbreviate

COMPARISON_HEADERS = ("metric", "baseline", "current", "change", "p-value", "ratio CI", "verdict")
_WIDTHS = (14, 9, 9, 8, 9, 12, 0)
_VERDICT_WORDS: Mapping[str, str] = {
    "regression": "REGRESSION",
    "improvement": "improved",
    "unclear": "unclear",
    "ok": "ok",
}


def _change_text(item: MetricComparison) -> str:
    change = item.change
    if math.isnan(change):
        return "-"
    if math.isinf(change):
        return abbreviate_signed(item.current_median - item.baseline_median)
    return f"{change * 100:+.1f}%"


def abbreviate_signed(value: float) -> str:
    return ("+" if value >= 0 else "-") + abbreviate(abs(value))


def _verdict_text(item: MetricComparison) -> str:
    if item.unknown:
        return "unknown"
    if item.threshold is None:  # reported, not gated: say which way it moved, if it did
        moved = {"regression": "worse", "improvement": "better"}.get(item.verdict, "-")
        return moved + ("?" if item.low_confidence and moved != "-" else "")
    word = _VERDICT_WORDS[item.verdict]
    return word + ("?" if item.low_confidence and item.verdict != "ok" else "")


def comparison_rows(comparison: Comparison) -> list[tuple[str, list[str]]]:
    """(test key, cells) rows shared by the text and Markdown tables."""
    rows = []
    for item in comparison.items:
        p = "-" if item.p_value is None else f"{item.p_value:.3f}"
        ci = "-" if item.ratio_ci is None else f"{item.ratio_ci[0]:.2f}-{item.ratio_ci[1]:.2f}"
        cells = [
            item.metric,
            abbreviate(item.baseline_median),
            abbreviate(item.current_median),
            _change_text(item),
            p,
            ci,
            _verdict_text(item),
        ]
        rows.append((item.key, cells))
    return rows


def _header_line(comparison: Comparison) -> str:
    name = f" {comparison.baseline_name}" if comparison.baseline_name else ""
    tests = len({item.key for item in comparison.items})
    gate = ", ".join(t.describe() for t in comparison.thresholds) or "none (report only)"
    return f"Comparison with baseline{name}: {tests} test(s); gate: {gate}"


def _footer_lines(comparison: Comparison, width: int) -> list[str]:
    lines: list[str] = []
    notes = list(dict.fromkeys(item.note for item in comparison.items if item.note))
    for note in notes:
        lines += textwrap.wrap(note, width, initial_indent="  note: ", subsequent_indent="    ")
    for title, keys in (
        ("only in baseline (not run now)", comparison.only_in_baseline),
        ("new (no baseline)", comparison.only_in_current),
    ):
        if keys:
            lines += textwrap.wrap(
                f"{title}: {', '.join(keys)}", width, initial_indent="  ", subsequent_indent="    "
            )
    counts = summary_counts(comparison)
    verdict = "FAILED" if comparison.failed else "passed"
    lines.append(
        f"Gate {verdict}: {counts['regression']} regression(s), {counts['unclear']} unclear, "
        f"{counts['improvement']} improved, {counts['ok']} ok"
    )
    for item in comparison.regressions:
        assert item.threshold is not None
        lines += textwrap.wrap(
            f"{item.key}: {item.metric} {_change_text(item)} ({item.threshold.describe()})",
            width,
            initial_indent="  ",
            subsequent_indent="    ",
        )
    lines += textwrap.wrap(
        "(? = single trial, threshold only; worse/better = metric not gated; "
        "CI = 95% bootstrap interval of the ratio of medians)",
        width,
        initial_indent="  ",
        subsequent_indent="   ",
    )
    return lines


def render_comparison_text(comparison: Comparison, *, width: int = 80) -> str:
    """The change per metric and test, then the gate's verdict."""
    lines = textwrap.wrap(_header_line(comparison), width, subsequent_indent="  ")
    last_key = None
    for key, cells in comparison_rows(comparison):
        if key != last_key:
            lines += [key, _table_line(COMPARISON_HEADERS)]
            last_key = key
        lines.append(_table_line(cells))
    lines += _footer_lines(comparison, width)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _table_line(cells: Sequence[str]) -> str:
    parts = []
    for index, (text, width) in enumerate(zip(cells, _WIDTHS, strict=True)):
        if index == 0:
            parts.append(text.ljust(width))
        elif width == 0:
            parts.append("  " + text)  # the last column takes what is left
        else:
            parts.append(text.rjust(width))
    return "  " + "".join(parts)


def render_comparison_markdown(comparison: Comparison) -> str:
    """The same rows as one Markdown table, the gate's result and the notes below it."""
    rows = [[f"`{key}`", *cells] for key, cells in comparison_rows(comparison)]
    counts = summary_counts(comparison)
    verdict = "**FAILED**" if comparison.failed else "passed"
    summary = (
        f"Gate {verdict}: {counts['regression']} regression(s), {counts['unclear']} unclear, "
        f"{counts['improvement']} improved, {counts['ok']} ok"
    )
    notes = "".join(
        f"\n- {note}" for note in dict.fromkeys(i.note for i in comparison.items if i.note)
    )
    return (
        f"### {_header_line(comparison)}\n\n"
        + render_table_markdown(("test", *COMPARISON_HEADERS), rows)
        + f"\n{summary}\n"
        + notes
        + ("\n" if notes else "")
    )
