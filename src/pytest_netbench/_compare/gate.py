"""The regression gate: thresholds and per-metric verdicts, as data (``_report.comparison``
renders them).

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
from pytest_netbench._metrics import (
    EXPERIMENT_METRICS,
    check_gate_metric,
    check_metrics,
    experiment_metric_value,
    higher_is_better,
    metric_value,
)
from pytest_netbench._model import LoadResult
from pytest_netbench._records import ExperimentRecord, Record, result_from_dict

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
        check_gate_metric(metric)
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
    # An experiment without an answer on a side (an unknown capacity): not compared at all.
    unknown: bool = False

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
    by_metric = {t.metric: t for t in thresholds if t.metric not in EXPERIMENT_METRICS}
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


def record_key(record: Record | ExperimentRecord) -> str:
    """What identifies "the same measurement" across runs: test id plus load label."""
    return f"{record.nodeid}#{record.label}" if record.label else record.nodeid


def compare_experiments(
    key: str,
    current: Sequence[ExperimentRecord],
    baseline: Sequence[ExperimentRecord],
    thresholds: Sequence[Threshold] = (),
    *,
    metrics: Sequence[str] = DEFAULT_COMPARE_METRICS,
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
) -> list[MetricComparison]:
    """One test's experiments against the baseline's: a capacity by its answer (never when
    either side's is unknown), a sweep step by step as loads at that rate."""
    kinds = {r.kind for r in (*current, *baseline)}
    if len(kinds) != 1:
        note = f"not compared: the test ran a {' and a '.join(sorted(kinds))} in the two runs"
        return [MetricComparison(key, "kind", (), (), None, "unclear", note=note)]
    (kind,) = kinds
    if kind == "sweep":
        return _compare_sweeps(key, current, baseline, thresholds, metrics, alpha, seed)
    by_metric = {t.metric: t for t in thresholds}
    items = []
    for metric, (metric_kind, _field) in EXPERIMENT_METRICS.items():
        if metric_kind != kind:
            continue
        cur = [experiment_metric_value(r.kind, r.data, metric) for r in current]
        base = [experiment_metric_value(r.kind, r.data, metric) for r in baseline]
        unknown = _unknown_sides(metric, current, cur, baseline, base)
        if unknown:
            # An unknown capacity (the generator's limit, no rate met the SLO) is an answer
            # of another kind: as a number it would read as zero or be dropped unseen.
            known = tuple(v for v in cur if not math.isnan(v))
            known_base = tuple(v for v in base if not math.isnan(v))
            items.append(
                MetricComparison(
                    key,
                    metric,
                    known,
                    known_base,
                    by_metric.get(metric),
                    "unclear",
                    note=unknown,
                    unknown=True,
                )
            )
            continue
        items.append(
            compare_values(key, metric, cur, base, by_metric.get(metric), alpha=alpha, seed=seed)
        )
    return items


def _unknown_sides(
    metric: str,
    current: Sequence[ExperimentRecord],
    cur: Sequence[float],
    baseline: Sequence[ExperimentRecord],
    base: Sequence[float],
) -> str:
    notes = []
    for side, records, values in (("this run", current, cur), ("the baseline", baseline, base)):
        missing = [r for r, v in zip(records, values, strict=True) if math.isnan(v)]
        if missing:
            data = missing[0].data
            never = "it never settled within the run" if data.get("settled") is False else ""
            why = str(data.get("reason") or "") or never or "no figure recorded"
            notes.append(f"{metric} unknown in {side} ({why})")
    if not notes:
        return ""
    return "; ".join(notes) + ": not compared as a number"


def _compare_sweeps(
    key: str,
    current: Sequence[ExperimentRecord],
    baseline: Sequence[ExperimentRecord],
    thresholds: Sequence[Threshold],
    metrics: Sequence[str],
    alpha: float,
    seed: int,
) -> list[MetricComparison]:
    cur_steps, base_steps = _sweep_steps(current), _sweep_steps(baseline)
    items: list[MetricComparison] = []
    for rate, results in cur_steps.items():
        if rate in base_steps:
            step_key = f"{key} @ {rate:,.6g} req/s"
            items += compare_results(
                step_key,
                results,
                base_steps[rate],
                thresholds,
                metrics=metrics,
                alpha=alpha,
                seed=seed,
            )
    return items


def _sweep_steps(records: Sequence[ExperimentRecord]) -> dict[float, list[LoadResult]]:
    """Each demanded rate's results over the records (a step that was run in each)."""
    steps: dict[float, list[LoadResult]] = {}
    for record in records:
        for step in record.data.get("steps", ()):
            steps.setdefault(float(step["rate"]), []).append(result_from_dict(step["result"]))
    return steps


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
    current_experiments: Iterable[ExperimentRecord] = (),
    baseline_experiments: Iterable[ExperimentRecord] = (),
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
    cur_exps = _group_experiments(current_experiments)
    base_exps = _group_experiments(baseline_experiments)
    for key, records in cur_exps.items():
        if key in base_exps:
            items += compare_experiments(
                key, records, base_exps[key], thresholds, metrics=metrics, alpha=alpha, seed=seed
            )
    cur_keys = [*cur_groups, *cur_exps]
    base_keys = [*base_groups, *base_exps]
    return Comparison(
        items=tuple(items),
        only_in_baseline=tuple(k for k in base_keys if k not in cur_keys),
        only_in_current=tuple(k for k in cur_keys if k not in base_keys),
        baseline_name=baseline_name,
        thresholds=tuple(thresholds),
    )


def _group_experiments(
    records: Iterable[ExperimentRecord],
) -> dict[str, list[ExperimentRecord]]:
    groups: dict[str, list[ExperimentRecord]] = {}
    for record in records:
        groups.setdefault(record_key(record), []).append(record)
    return groups


def summary_counts(comparison: Comparison) -> Mapping[str, int]:
    counts = {"regression": 0, "improvement": 0, "unclear": 0, "ok": 0}
    for item in comparison.items:
        if item.threshold is not None:
            counts[item.verdict] += 1
    return counts
