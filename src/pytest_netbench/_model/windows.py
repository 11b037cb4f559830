"""Figures over sliding windows of the timeline: the worst ``W`` seconds of a load.

A whole-run p99 hides a stall of a few seconds in a long load (k6#2379): most of the
requests were fast. ``result.window(5).p99_ms`` is the p99 of the worst 5-second window,
and ``result.window(5).worst("p99_ms")`` says which window that was. Every window is a run
of whole timeline rows (a second each by default; ``timeline_resolution``), slid one row
at a time over the rows that end inside the measured window; each row keeps its ok
responses' latencies as an exact histogram (``TimelineRow.latency_histogram``), so a
window's percentile is exact to the result's own precision, from a stored result too.

In thresholds, SLOs and the gate a window's figure is written ``window(5s).p99_ms``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._model.sections import TimelineRow
from pytest_netbench._public import publish

_PERCENTILES = {
    "p50_ms": 50.0,
    "p75_ms": 75.0,
    "p90_ms": 90.0,
    "p95_ms": 95.0,
    "p99_ms": 99.0,
    "p999_ms": 99.9,
}
# Every figure a window has; the worst window is the one where it is highest, but for
# these, where it is lowest.
WINDOW_FIGURES: tuple[str, ...] = (
    *_PERCENTILES,
    "max_ms",
    "mean_ms",
    "errors_total",
    "error_rate",
    "ok",
    "rps",
)
LOWER_IS_WORSE = frozenset({"ok", "rps"})
WINDOW_METRIC = re.compile(r"^window\(\s*([0-9]*\.?[0-9]+)\s*(s?)\s*\)\.(\w+)$")
# Rows ending at most this much after the window still count as inside it (as rps_stdev).
_ROW_END_SLACK_S = 0.005


@dataclass(frozen=True, slots=True)
class WindowFigure:
    """One figure of one window: its value and where the window lies, in seconds from the
    start of the measured window (nan when the load has no row to make a window of)."""

    figure: str
    window_s: float
    value: float
    start_s: float

    @property
    def end_s(self) -> float:
        return self.start_s + self.window_s

    def describe(self) -> str:
        """``worst 2 s window: 3-5 s``."""
        if math.isnan(self.start_s):
            return f"no {self.window_s:g} s window (no timeline)"
        return f"worst {self.window_s:g} s window: {self.start_s:g}-{self.end_s:g} s"

    def to_dict(self) -> dict[str, Any]:
        return {
            "figure": self.figure,
            "window_s": self.window_s,
            "value": None if math.isnan(self.value) else self.value,
            "start_s": None if math.isnan(self.start_s) else self.start_s,
        }


class Windows:
    """A result's figures over every window of ``window_s`` seconds (see the module doc),
    from its ``timeline`` and ``duration_s`` (``LoadResult.window``). ``windows.p99_ms``
    is the worst window's; :meth:`worst` says which; :meth:`each` gives every window's,
    in order."""

    __slots__ = ("_counts", "_errors", "_oks", "_rows", "_size", "span_s", "window_s")

    def __init__(self, timeline: Sequence[TimelineRow], duration_s: float, window_s: float) -> None:
        if isinstance(window_s, bool) or not isinstance(window_s, (int, float)) or window_s <= 0:
            raise SpecError(f"a window is a number of seconds > 0, got {window_s!r}")
        end = duration_s + _ROW_END_SLACK_S
        rows = [r for r in timeline if r.start_s + r.span_s <= end]
        self.window_s = float(window_s)
        spans = [r.span_s for r in rows or timeline]
        self.span_s = spans[0] if spans else 1.0
        self._size = rows_per_window(self.window_s, self.span_s)
        self._rows = rows
        self._oks = [r.ok for r in rows]
        self._errors = [r.errors for r in rows]
        self._counts: list[Counter[int]] | None = None

    def __repr__(self) -> str:
        return f"Windows({self.window_s:g} s over {len(self._rows)} rows)"

    def each(self, figure: str) -> list[WindowFigure]:
        """``figure`` of every window, slid one row at a time (one window when the load
        is shorter than a window: all of it)."""
        if figure not in WINDOW_FIGURES:
            raise SpecError(
                f"{figure!r} is no figure of a window; use one of {', '.join(WINDOW_FIGURES)}"
            )
        rows = len(self._rows)
        if rows == 0:
            return [WindowFigure(figure, self.window_s, math.nan, math.nan)]
        size = min(self._size, rows)
        span = size * self.span_s
        out = []
        if figure in _PERCENTILES or figure in ("max_ms", "mean_ms"):
            counts = self._row_counts()
            window: Counter[int] = Counter()
            for i in range(rows):
                window.update(counts[i])
                if i >= size:
                    window.subtract(counts[i - size])
                if i >= size - 1:
                    start = self._rows[i - size + 1].start_s
                    out.append(WindowFigure(figure, span, _latency(window, figure), start))
            return out
        for first in range(rows - size + 1):
            ok = sum(self._oks[first : first + size])
            errors = sum(self._errors[first : first + size])
            value = {
                "ok": float(ok),
                "rps": ok / span,
                "errors_total": float(errors),
                "error_rate": errors / (ok + errors) if ok + errors else 0.0,
            }[figure]
            out.append(WindowFigure(figure, span, value, self._rows[first].start_s))
        return out

    def worst(self, figure: str) -> WindowFigure:
        """The window where ``figure`` is worst (highest; lowest for ok and rps); the first
        of equals. A window with no ok response has no latency and is never the worst."""
        figures = [f for f in self.each(figure) if not math.isnan(f.value)]
        if not figures:
            return self.each(figure)[0]
        if figure in LOWER_IS_WORSE:
            return min(figures, key=lambda f: f.value)
        return max(figures, key=lambda f: f.value)

    def _row_counts(self) -> list[Counter[int]]:
        if self._counts is None:
            from pytest_netbench._stats.histogram import counts_of_encoded

            self._counts = [counts_of_encoded(r.latency_histogram) for r in self._rows]
        return self._counts

    @property
    def p50_ms(self) -> float:
        return self.worst("p50_ms").value

    @property
    def p75_ms(self) -> float:
        return self.worst("p75_ms").value

    @property
    def p90_ms(self) -> float:
        return self.worst("p90_ms").value

    @property
    def p95_ms(self) -> float:
        return self.worst("p95_ms").value

    @property
    def p99_ms(self) -> float:
        return self.worst("p99_ms").value

    @property
    def p999_ms(self) -> float:
        return self.worst("p999_ms").value

    @property
    def max_ms(self) -> float:
        return self.worst("max_ms").value

    @property
    def mean_ms(self) -> float:
        return self.worst("mean_ms").value

    @property
    def errors_total(self) -> float:
        return self.worst("errors_total").value

    @property
    def error_rate(self) -> float:
        return self.worst("error_rate").value

    @property
    def ok(self) -> float:
        return self.worst("ok").value

    @property
    def rps(self) -> float:
        return self.worst("rps").value


def _latency(counts: Counter[int], figure: str) -> float:
    """A latency figure (ms) of a window's µs counts (nan with no ok response in it)."""
    held = {value: n for value, n in counts.items() if n > 0}
    total = sum(held.values())
    if not total:
        return math.nan
    if figure == "max_ms":
        return max(held) / 1000.0
    if figure == "mean_ms":
        return sum(value * n for value, n in held.items()) / total / 1000.0
    rank = max(1, math.ceil(_PERCENTILES[figure] / 100.0 * total))
    seen = 0
    for value in sorted(held):
        seen += held[value]
        if seen >= rank:
            return value / 1000.0
    return max(held) / 1000.0


def rows_per_window(window_s: float, span_s: float) -> int:
    """How many timeline rows of ``span_s`` a window of ``window_s`` holds; SpecError
    when not a whole number (checked before a load too, so no result is thrown away)."""
    size = round(window_s / span_s)
    if size < 1 or abs(size * span_s - window_s) > 1e-6:
        raise SpecError(
            f"a window of {window_s:g} s is no whole number of timeline rows of"
            f" {span_s:g} s: use a multiple of {span_s:g} s"
        )
    return size


def check_window_metrics(metrics: Iterable[str], span_s: float) -> None:
    """Each ``window(W).figure`` among ``metrics`` fits rows of ``span_s`` (the load's
    ``timeline_resolution``): asked before the load, not found wrong after it."""
    for metric in metrics:
        if metric.strip().startswith("window("):
            window_s, _ = parse_window_metric(metric)
            rows_per_window(window_s, span_s)


def parse_window_metric(metric: str) -> tuple[float, str]:
    """``window(5s).p99_ms`` -> ``(5.0, "p99_ms")``; SpecError saying how to write one."""
    match = WINDOW_METRIC.match(metric.strip())
    if match is None or match[3] not in WINDOW_FIGURES or float(match[1]) <= 0:
        raise SpecError(
            f"metric {metric!r}: write a window's figure as window(5s).p99_ms; its figures:"
            f" {', '.join(WINDOW_FIGURES)}"
        )
    return float(match[1]), match[3]


publish(globals())
