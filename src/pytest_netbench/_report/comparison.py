"""A comparison with a baseline as text, Markdown and JSON: for each test and metric the
baseline and current medians, the change and the interval its verdict was read from, the
metric's noise floor, the verdict and the trials of each side; then the gate's overall
result, or that there was no gate.

The verdicts themselves are data from :mod:`pytest_netbench._compare.gate`; this module
only words and lays them out, the text table and the Markdown one from the same rows.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_netbench._compare.family import Judgement
from pytest_netbench._compare.gate import Comparison, MetricComparison, summary_counts
from pytest_netbench._compare.metric_verdict import percent_words
from pytest_netbench._compare.metrics import higher_is_better
from pytest_netbench._report.markdown import render_table_markdown
from pytest_netbench._report.matrix import abbreviate
from pytest_netbench._report.where_time_went import where_lines, where_markdown, where_to_dict

COMPARISON_HEADERS = (
    "metric",
    "baseline",
    "current",
    "change",
    "interval",
    "noise",
    "n",
    "verdict",
)
_WIDTHS = (14, 8, 8, 8, 14, 7, 6, 0)
# Names too long for the table's first column.
_SHORT_NAMES: Mapping[str, str] = {
    "server.cpu_ms_per_request": "cpu_ms/req",
    "server.cpu_user_ms_per_request": "user_ms/req",
    "server.cpu_system_ms_per_request": "sys_ms/req",
}
_VERDICT_WORDS: Mapping[str, str] = {
    "regression": "REGRESSION",
    "improvement": "improved",
    "unclear": "unclear",
    "undetectable": "undetectable",
    "ok": "ok",
}


def _change_text(item: MetricComparison) -> str:
    """The change the verdict read, as a percentage or in the metric's unit."""
    change = item.change
    if math.isnan(change):
        return "-"
    if not item.change_relative:
        return _signed(change)
    if math.isinf(change):  # from a zero baseline: no percentage says it
        return abbreviate_signed(item.current_median - item.baseline_median)
    return f"{change * 100:+.1f}%" if abs(change) < 10 else f"{change * 100:+.0f}%"


def abbreviate_signed(value: float) -> str:
    return ("+" if value >= 0 else "-") + abbreviate(abs(value))


def _verdict_text(item: MetricComparison) -> str:
    if item.unknown:
        return "unknown"
    if item.threshold is None:  # reported, not gated: say which way it moved, if it did
        moved = {"regression": "worse", "improvement": "better"}.get(item.verdict, "-")
        return moved + ("?" if item.low_confidence and moved != "-" else "")
    if item.by_estimate:
        return "ok (est.)"
    word = _VERDICT_WORDS[item.verdict]
    return word + ("?" if item.low_confidence and item.verdict != "ok" else "")


def _trials_text(item: MetricComparison) -> str:
    """Trials a side; current/baseline when the sides differ (a stored run of 5 against 9
    sequential trials reads 9/5)."""
    if not item.trials:
        return "-"
    cur, base = len(item.current), len(item.baseline)
    return str(cur) if cur == base else f"{cur}/{base}"


def _percent(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value * 100:+.1f}" if abs(value) < 0.1 else f"{value * 100:+.0f}"


def _interval_text(item: MetricComparison) -> str:
    if item.change_ci is None:
        return "-"
    low, high = item.change_ci
    if item.change_relative:
        return f"{_percent(low)}..{_percent(high)}%"
    return f"{_signed(low)}..{_signed(high)}"


def _signed(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return abbreviate_signed(value)


def _noise_text(item: MetricComparison) -> str:
    floor = item.noise_floor
    if floor is None or math.isnan(floor):
        return "-"
    mark = "" if item.noise is not None and item.noise.source == "history" else "*"
    return f"{floor * 100:.1f}%{mark}"


def comparison_rows(comparison: Comparison) -> list[tuple[str, list[str]]]:
    """(test key, cells) rows shared by the text, Markdown and HTML tables."""
    rows = []
    for item in comparison.items:
        cells = [
            _SHORT_NAMES.get(item.metric, item.metric),
            abbreviate(item.baseline_median),
            abbreviate(item.current_median),
            _change_text(item),
            _interval_text(item),
            _noise_text(item),
            _trials_text(item),
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
    lines.append(gate_result_line(comparison))
    for item in comparison.regressions:
        assert item.threshold is not None
        lines += textwrap.wrap(
            f"{item.key}: {item.metric} {_change_text(item)} ({item.threshold.describe()})",
            width,
            initial_indent="  ",
            subsequent_indent="    ",
        )
    lines += textwrap.wrap(
        f"({LEGEND})", width, initial_indent="  ", subsequent_indent="   ", break_on_hyphens=False
    )
    return lines


# What each column and mark means; the same words under the text, Markdown and HTML tables.
LEGEND = (
    "baseline, current: medians; change: the estimate the verdict read (Hodges-Lehmann, "
    "trial against trial); interval: of the change, at the level the verdict read it at; "
    "noise: the change A/A noise exceeds 1 time in 20 at n trials a side (* from these "
    "trials, else stored runs of this machine); n: trials a side, current/baseline when "
    "they differ; ok (est.): budget spent, the estimate within the limit, the interval "
    "past it; undetectable: the limit is below the smallest change this runner's noise "
    "lets the whole budget show (the gate cannot tell); ? = single trial, threshold only; "
    "worse/better = metric not gated; user_ms/req, sys_ms/req: the server's CPU per "
    "request in user and in system (kernel) time"
)


def gate_result_line(comparison: Comparison, *, failed_word: str = "FAILED") -> str:
    """The gate's result: its counts, or that no gate ran (no thresholds: nothing can
    fail, and nothing passed either)."""
    if not comparison.thresholds:
        return "No gate: report only (no thresholds given), nothing can fail"
    counts = summary_counts(comparison)
    verdict = (
        failed_word if comparison.failed else "cannot tell" if comparison.cannot_tell else "passed"
    )
    undetectable = f"{counts['undetectable']} undetectable, " if counts["undetectable"] else ""
    return (
        f"Gate {verdict}: {counts['regression']} regression(s), {counts['unclear']} unclear, "
        f"{undetectable}{counts['improvement']} improved, {counts['ok']} ok"
    )


def look_line(
    current: int, baseline: int, decision: str, judged: Sequence[tuple[str, Judgement]]
) -> str:
    """One look of a sequential gate, as the test's report shows it: the trials, the
    test's answer, and each gated metric's answer with its noise so far and the smallest
    change the whole budget could show at that noise."""
    trials = f"{current}" if current == baseline else f"{current} vs {baseline}"
    parts = []
    for metric, judgement in judged:
        words = f"{metric} {judgement.decision}"
        if math.isfinite(judgement.detectable):
            shift = judgement.detectable
            change = -math.expm1(-shift) if higher_is_better(metric) else math.expm1(shift)
            words += (
                f" ({percent_words(judgement.spread)} a trial: {judgement.budget} a side"
                f" would show changes over {percent_words(change)})"
            )
        parts.append(words)
    return f"gate look after {trials} trial(s) a side: {decision}; " + "; ".join(parts)


def render_comparison_text(comparison: Comparison, *, width: int = 80) -> str:
    """The change per metric and test, then the gate's verdict."""
    lines = textwrap.wrap(_header_line(comparison), width, subsequent_indent="  ")
    last_key = None
    rows = list(comparison_rows(comparison))
    # The metric column fits the longest name shown (by_request.search.p99_ms is long).
    first = max([_WIDTHS[0] - 1, *(len(cells[0]) for _, cells in rows)]) + 1
    for key, cells in rows:
        if key != last_key:
            lines += [key, _table_line(COMPARISON_HEADERS, first)]
            last_key = key
        lines.append(_table_line(cells, first))
    lines += _footer_lines(comparison, width)
    lines += where_lines(comparison.where, width)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _table_line(cells: Sequence[str], first: int = _WIDTHS[0]) -> str:
    parts = []
    for index, (text, width) in enumerate(zip(cells, _WIDTHS, strict=True)):
        if index == 0:
            parts.append(text.ljust(first))
        elif width == 0:
            parts.append("  " + text)  # the last column takes what is left
        else:
            parts.append(text.rjust(width) if len(text) < width else " " + text)
    return "  " + "".join(parts)


def render_comparison_markdown(comparison: Comparison) -> str:
    """The same rows as one Markdown table, the gate's result and the notes below it."""
    rows = [[f"`{key}`", *cells] for key, cells in comparison_rows(comparison)]
    summary = gate_result_line(comparison, failed_word="**FAILED**")
    notes = [*dict.fromkeys(i.note for i in comparison.items if i.note), LEGEND]
    return (
        f"### {_header_line(comparison)}\n\n"
        + render_table_markdown(("test", *COMPARISON_HEADERS), rows)
        + f"\n{summary}\n"
        + "".join(f"\n- {note}" for note in notes)
        + "\n"
        + (f"\n{where_markdown(comparison.where)}" if comparison.where else "")
    )


def comparison_to_dict(comparison: Comparison) -> dict[str, Any]:
    """The verdict table as JSON-ready data (nan and infinite bounds as None)."""
    return {
        "baseline": comparison.baseline_name,
        "gate": [t.describe() for t in comparison.thresholds],
        "failed": comparison.failed,
        "cannot_tell": comparison.cannot_tell,
        "counts": dict(summary_counts(comparison)),
        "where_the_time_went": [where_to_dict(w) for w in comparison.where],
        "only_in_baseline": list(comparison.only_in_baseline),
        "only_in_current": list(comparison.only_in_current),
        "items": [_item_to_dict(item) for item in comparison.items],
    }


def _item_to_dict(item: MetricComparison) -> dict[str, Any]:
    floor = item.noise_floor
    return {
        "test": item.key,
        "metric": item.metric,
        "gated": item.threshold is not None,
        "threshold": item.threshold.describe() if item.threshold is not None else None,
        "verdict": item.verdict,
        "fails": item.fails,
        "low_confidence": item.low_confidence,
        "baseline_median": _number(item.baseline_median),
        "current_median": _number(item.current_median),
        "change": _number(item.change),
        "change_interval": None
        if item.change_ci is None
        else [_number(item.change_ci[0]), _number(item.change_ci[1])],
        "change_relative": item.change_relative,
        "level": item.level,
        "by_estimate": item.by_estimate,
        "trial_spread": None if math.isnan(item.trial_spread) else item.trial_spread,
        "detectable": _number(item.detectable),
        "budget": item.budget or None,
        "trials": item.trials,
        "final_look": item.final_look,
        "noise_floor": None if floor is None else _number(floor),
        "noise_source": None if item.noise is None else item.noise.source,
        "note": item.note,
        "baseline_values": [_number(v) for v in item.baseline],
        "current_values": [_number(v) for v in item.current],
    }


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None
