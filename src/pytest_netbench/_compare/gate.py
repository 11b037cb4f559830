"""The regression gate: thresholds, per-metric verdicts, and the comparison table.

A threshold such as ``p99_ms:10%`` says how much worse a metric may get; which way is
worse comes from the metric (latency, errors, CPU: higher is worse; rps: lower is worse).
Like pytest-benchmark's checks, each threshold is a small object with
``.fails(current, baseline)``. On top of that the gate is noise-aware:

* ``regression`` only when the change is past the threshold *and* the trials differ
  significantly (Mann-Whitney U, two-sided, p < alpha);
* ``unclear`` when it is past the threshold but not significant, or when so few trials
  were run that no data could be significant ("more trials needed");
* with a single trial on a side there is nothing to test: the threshold alone decides and
  the verdict says it is low confidence.
"""

from __future__ import annotations

import math
import re
import statistics
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pytest_netbench._compare.significance import (
    bootstrap_ratio_ci,
    mann_whitney_u,
    min_p_value,
    trials_needed,
)
from pytest_netbench._errors import SpecError
from pytest_netbench._model import LoadResult
from pytest_netbench._report.matrix import (
    Record,
    abbreviate,
    check_metrics,
    higher_is_better,
    metric_value,
)

Verdict = Literal["ok", "regression", "improvement", "unclear"]
DEFAULT_COMPARE_METRICS: tuple[str, ...] = ("rps", "p50_ms", "p99_ms", "errors_total")
DEFAULT_ALPHA = 0.05
_THRESHOLD_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*:\s*([0-9]*\.?[0-9]+)\s*(%|ms)?\s*$")


@dataclass(frozen=True, slots=True)
class Threshold:
    """How much worse ``metric`` may get: a fraction (``relative``) or an absolute amount."""

    metric: str
    limit: float
    relative: bool = True

    @property
    def higher_is_worse(self) -> bool:
        return not higher_is_better(self.metric)

    def worsening(self, current: float, baseline: float) -> float:
        """How much worse current is than baseline, in the threshold's unit (negative when
        better): a fraction of the baseline for relative thresholds."""
        delta = current - baseline if self.higher_is_worse else baseline - current
        if not self.relative:
            return delta
        if baseline == 0:
            return 0.0 if delta == 0 else math.copysign(math.inf, delta)
        return delta / abs(baseline)

    def fails(self, current: float, baseline: float) -> bool:
        """True when current is worse than baseline by more than the limit."""
        if math.isnan(current) or math.isnan(baseline):
            return False
        return self.worsening(current, baseline) > self.limit

    def improves(self, current: float, baseline: float) -> bool:
        if math.isnan(current) or math.isnan(baseline):
            return False
        return -self.worsening(current, baseline) > self.limit

    def describe(self) -> str:
        amount = f"{self.limit * 100:g}%" if self.relative else f"{self.limit:g}"
        way = "rise" if self.higher_is_worse else "drop"
        return f"{self.metric} {way} > {amount}"


def parse_thresholds(text: str) -> list[Threshold]:
    """``"p99_ms:10%,rps:5%,errors_total:0"`` -> thresholds. A number with ``%`` is relative
    to the baseline; a bare number (or ``ms`` for latency metrics) is an absolute amount."""
    thresholds: list[Threshold] = []
    for part in text.split(","):
        if not part.strip():
            continue
        match = _THRESHOLD_RE.match(part)
        if not match:
            raise SpecError(
                f"cannot read threshold {part.strip()!r}; write METRIC:LIMIT such as "
                "p99_ms:10% (relative), rps:5% or errors_total:0 (absolute)"
            )
        metric, number, unit = match.groups()
        check_metrics([metric])
        if unit == "ms" and not metric.endswith("_ms"):
            raise SpecError(f"threshold {part.strip()!r}: 'ms' only fits latency metrics (*_ms)")
        limit = float(number)
        thresholds.append(
            Threshold(metric, limit / 100 if unit == "%" else limit, relative=unit == "%")
        )
    if not thresholds:
        raise SpecError("no thresholds given; write e.g. p99_ms:10%,rps:5%")
    seen = [t.metric for t in thresholds]
    duplicates = sorted({m for m in seen if seen.count(m) > 1})
    if duplicates:
        raise SpecError(f"threshold given twice for {', '.join(duplicates)}; give each once")
    return thresholds


@dataclass(frozen=True, slots=True)
class MetricComparison:
    """One metric of one test, current trials against baseline trials."""

    key: str
    metric: str
    current: tuple[float, ...]
    baseline: tuple[float, ...]
    threshold: Threshold | None
    verdict: Verdict
    p_value: float | None = None
    ratio_ci: tuple[float, float] | None = None
    low_confidence: bool = False
    note: str = ""

    @property
    def current_median(self) -> float:
        return _median(self.current)

    @property
    def baseline_median(self) -> float:
        return _median(self.baseline)

    @property
    def change(self) -> float:
        """Relative change of the median (+0.12 means 12 % higher), nan when undefined."""
        base, cur = self.baseline_median, self.current_median
        if math.isnan(base) or math.isnan(cur):
            return math.nan
        if base == 0:
            return 0.0 if cur == 0 else math.inf
        return (cur - base) / abs(base)

    @property
    def fails(self) -> bool:
        """Whether this comparison should fail the gate (a gated regression)."""
        return self.threshold is not None and self.verdict == "regression"


def _median(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return statistics.median(finite) if finite else math.nan


def compare_values(
    key: str,
    metric: str,
    current: Sequence[float],
    baseline: Sequence[float],
    threshold: Threshold | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
) -> MetricComparison:
    """The verdict for one metric given per-trial values on each side.

    Without a threshold the metric is reported, not gated: its verdict uses a 0 % limit
    (any significant change shows) but never fails.
    """
    cur = tuple(v for v in current if not math.isnan(v))
    base = tuple(v for v in baseline if not math.isnan(v))
    rule = threshold or Threshold(metric, 0.0, relative=True)
    if not cur or not base:
        return MetricComparison(
            key, metric, cur, base, threshold, "unclear", note="no figures on one side"
        )
    cur_median, base_median = statistics.median(cur), statistics.median(base)
    worse = rule.fails(cur_median, base_median)
    better = rule.improves(cur_median, base_median)
    if len(cur) < 2 or len(base) < 2:
        verdict: Verdict = "regression" if worse else "improvement" if better else "ok"
        note = (
            f"{len(cur)} vs {len(base)} trial(s): threshold only, low confidence; "
            f"run at least {trials_needed(alpha)} trials a side for a significance test"
        )
        return MetricComparison(
            key, metric, cur, base, threshold, verdict, low_confidence=True, note=note
        )
    test = mann_whitney_u(cur, base)
    low, high = bootstrap_ratio_ci(cur, base, seed=seed)
    ci = None if math.isnan(low) else (low, high)
    significant = test.p_value < alpha
    if not worse and not better:
        verdict, note = "ok", ""
    elif significant:
        verdict, note = ("regression" if worse else "improvement"), ""
    else:
        verdict = "unclear"
        floor = min_p_value(len(cur), len(base))
        if floor >= alpha:
            note = (
                f"more trials needed: {len(cur)} vs {len(base)} trials cannot reach "
                f"p < {alpha:g} (best possible p = {floor:.2f}); run at least "
                f"{trials_needed(alpha)} trials a side"
            )
        else:
            note = (
                f"more trials needed: past the limit but not significant (p = {test.p_value:.2f})"
            )
    return MetricComparison(
        key, metric, cur, base, threshold, verdict, p_value=test.p_value, ratio_ci=ci, note=note
    )


def compare_results(
    key: str,
    current: Sequence[LoadResult],
    baseline: Sequence[LoadResult],
    thresholds: Sequence[Threshold] = (),
    *,
    metrics: Sequence[str] = DEFAULT_COMPARE_METRICS,
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
) -> list[MetricComparison]:
    """Every reported metric of one test (e.g. an A/B pair measured in one session)."""
    by_metric = {t.metric: t for t in thresholds}
    names = list(dict.fromkeys([*metrics, *by_metric]))
    return [
        compare_values(
            key,
            name,
            [metric_value(r, name) for r in current],
            [metric_value(r, name) for r in baseline],
            by_metric.get(name),
            alpha=alpha,
            seed=seed,
        )
        for name in names
    ]


@dataclass(frozen=True, slots=True)
class Comparison:
    """A whole run against a baseline run."""

    items: tuple[MetricComparison, ...]
    only_in_baseline: tuple[str, ...] = ()
    only_in_current: tuple[str, ...] = ()
    baseline_name: str = ""
    thresholds: tuple[Threshold, ...] = field(default_factory=tuple)

    @property
    def regressions(self) -> list[MetricComparison]:
        return [c for c in self.items if c.fails]

    @property
    def unclear(self) -> list[MetricComparison]:
        return [c for c in self.items if c.threshold is not None and c.verdict == "unclear"]

    @property
    def failed(self) -> bool:
        return bool(self.regressions)


def record_key(record: Record) -> str:
    """What identifies "the same measurement" across runs: test id plus load label."""
    return f"{record.nodeid}#{record.label}" if record.label else record.nodeid


def group_by_key(records: Iterable[Record]) -> dict[str, list[LoadResult]]:
    groups: dict[str, list[LoadResult]] = {}
    for record in records:
        groups.setdefault(record_key(record), []).append(record.result)
    return groups


def compare_runs(
    current: Iterable[Record],
    baseline: Iterable[Record],
    thresholds: Sequence[Threshold] = (),
    *,
    metrics: Sequence[str] = DEFAULT_COMPARE_METRICS,
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
    baseline_name: str = "",
) -> Comparison:
    """Compare every test present in both runs; list the ones present in only one."""
    check_metrics(metrics)
    cur_groups = group_by_key(current)
    base_groups = group_by_key(baseline)
    items: list[MetricComparison] = []
    for key, results in cur_groups.items():
        if key in base_groups:
            items += compare_results(
                key,
                results,
                base_groups[key],
                thresholds,
                metrics=metrics,
                alpha=alpha,
                seed=seed,
            )
    return Comparison(
        items=tuple(items),
        only_in_baseline=tuple(k for k in base_groups if k not in cur_groups),
        only_in_current=tuple(k for k in cur_groups if k not in base_groups),
        baseline_name=baseline_name,
        thresholds=tuple(thresholds),
    )


def summary_counts(comparison: Comparison) -> Mapping[str, int]:
    counts = {"regression": 0, "improvement": 0, "unclear": 0, "ok": 0}
    for item in comparison.items:
        if item.threshold is not None:
            counts[item.verdict] += 1
    return counts


# -- rendering ---------------------------------------------------------------------------------
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


COMPARISON_HEADERS = ("metric", "baseline", "current", "change", "p-value", "ratio CI", "verdict")
_WIDTHS = (14, 9, 9, 8, 9, 12, 0)


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
    from pytest_netbench._report.markdown import render_table_markdown

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
