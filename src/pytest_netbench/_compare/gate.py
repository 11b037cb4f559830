"""The regression gate: per-metric verdicts for tests, runs and experiments, as data
(``_report.comparison`` renders them).

A threshold (:mod:`~pytest_netbench._compare.thresholds`) says how much worse a metric may
get. The gate is noise-aware:

* ``regression`` only when the change is past the threshold *and* a distribution-free
  interval of the shift excludes zero at the metric's share of the test's false-alarm
  rate (:mod:`~pytest_netbench._compare.family`), spent over the looks of a sequential
  design when there is one (:mod:`~pytest_netbench._compare.sequential`);
* ``ok`` when the interval rules out a change past the limit, or, once the trial budget
  is spent, when the median moved less than the limit;
* ``undetectable`` when the limit is below the smallest change this runner's noise lets
  the design's whole budget show, and nothing past that has been seen: the gate cannot
  tell (it neither fails nor passes);
* ``unclear`` otherwise ("more trials needed");
* with a single trial on a side there is nothing to test: the threshold alone decides and
  the verdict says it is low confidence.

Each metric also carries its noise (:mod:`~pytest_netbench._compare.noise`): from stored
history when given, else from the trials compared.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_netbench._compare.family import GateRule
from pytest_netbench._compare.metric_verdict import DEFAULT_RULE as DEFAULT_RULE
from pytest_netbench._compare.metric_verdict import MetricComparison as MetricComparison
from pytest_netbench._compare.metric_verdict import Verdict as Verdict
from pytest_netbench._compare.metric_verdict import compare_metrics as compare_metrics
from pytest_netbench._compare.metric_verdict import compare_values as compare_values
from pytest_netbench._compare.metrics import (
    EXPERIMENT_METRICS,
    UnknownRequestError,
    check_metrics,
    experiment_metric_value,
    metric_value,
    request_name,
)
from pytest_netbench._compare.noise import MetricNoise
from pytest_netbench._compare.profile_diff import WhereTimeWent, where_time_went_runs
from pytest_netbench._compare.records import ExperimentRecord, Record, result_from_dict

# Re-exported: thresholds lived here, and callers (the plugin, the public API) import them so.
from pytest_netbench._compare.thresholds import Threshold as Threshold
from pytest_netbench._compare.thresholds import parse_thresholds as parse_thresholds
from pytest_netbench._model import LoadResult

DEFAULT_COMPARE_METRICS: tuple[str, ...] = (
    "rps",
    "p50_ms",
    "p99_ms",
    "errors_total",
    "server.cpu_ms_per_request",
    # Its split: Python code shows as user time, I/O and syscalls as system time.
    "server.cpu_user_ms_per_request",
    "server.cpu_system_ms_per_request",
)
# Shown when measured: a load at an unmanaged server has no server figures to compare.
_SHOWN_WHEN_MEASURED = frozenset(
    {
        "server.cpu_ms_per_request",
        "server.cpu_user_ms_per_request",
        "server.cpu_system_ms_per_request",
    }
)


def compare_results(
    key: str,
    current: Sequence[LoadResult],
    baseline: Sequence[LoadResult],
    thresholds: Sequence[Threshold] = (),
    *,
    metrics: Sequence[str] = DEFAULT_COMPARE_METRICS,
    rule: GateRule = DEFAULT_RULE,
    noise: Mapping[str, MetricNoise] | None = None,
) -> list[MetricComparison]:
    """Every reported metric of one test (e.g. an A/B pair measured in one session)."""
    by_metric = {t.metric: t for t in thresholds if t.metric not in EXPERIMENT_METRICS}
    names = list(dict.fromkeys([*metrics, *by_metric]))
    values: dict[str, tuple[list[float], list[float]]] = {}
    absent: list[MetricComparison] = []
    for name in names:
        try:
            values[name] = (
                [metric_value(r, name) for r in current],
                [metric_value(r, name) for r in baseline],
            )
        except UnknownRequestError as exc:
            # A session-wide per-request metric that this test's load does not send: said
            # so in its verdict, neither a zero nor silence.
            sides = (*current, *baseline)
            there = sorted({n for r in sides for n in r.by_request}) or ["none (no mix)"]
            note = f"not compared: no request named {exc.name!r} here; its requests: " + (
                ", ".join(there)
            )
            # Not gated here (threshold None): no verdict to wait for, none to count as
            # unclear; the row and its note say why.
            absent.append(
                MetricComparison(key, name, (), (), None, "unclear", note=note, unknown=True)
            )
    for name in _SHOWN_WHEN_MEASURED & set(values) - set(by_metric):
        cur, base = values[name]
        if all(math.isnan(v) for v in (*cur, *base)):
            del values[name]
    gated = [t for t in by_metric.values() if t.metric in values]
    return [*compare_metrics(key, values, gated, rule, noise), *absent]


@dataclass(frozen=True, slots=True)
class Comparison:
    """A whole run against a baseline run."""

    items: tuple[MetricComparison, ...]
    only_in_baseline: tuple[str, ...] = ()
    only_in_current: tuple[str, ...] = ()
    baseline_name: str = ""
    thresholds: tuple[Threshold, ...] = field(default_factory=tuple)
    # Tests profiled on both sides: the functions ranked by their change in CPU/request.
    where: tuple[WhereTimeWent, ...] = ()

    @property
    def regressions(self) -> list[MetricComparison]:
        return [c for c in self.items if c.fails]

    @property
    def unclear(self) -> list[MetricComparison]:
        return [c for c in self.items if c.threshold is not None and c.verdict == "unclear"]

    @property
    def undetectable(self) -> list[MetricComparison]:
        """Gated metrics whose limit is below what this runner's noise lets the trials show."""
        return [c for c in self.items if c.threshold is not None and c.verdict == "undetectable"]

    @property
    def failed(self) -> bool:
        return bool(self.regressions)

    @property
    def cannot_tell(self) -> bool:
        """No regression, but a gated metric is undetectable here: the gate neither failed
        nor passed (``netbench compare`` exits ``UNDETECTABLE``, pytest likewise)."""
        return not self.failed and bool(self.undetectable)


def check_request_names(metrics: Iterable[str], results: Iterable[LoadResult]) -> None:
    """A per-request metric (``by_request.search.p99_ms``) must name a request some test
    of the two runs sent: one no test has is a misspelling, refused naming the ones there
    are (a test that lacks it, when others have it, says so in its own verdict)."""
    sent = sorted({n for r in results for n in r.by_request})
    for metric in metrics:
        name = request_name(metric)
        if name is not None and name not in sent:
            there = ", ".join(sent) or "none (no test sent a request mix)"
            raise UnknownRequestError(
                f"metric {metric!r}: no test in either run sent a request named {name!r};"
                f" the requests there are: {there}",
                name,
            )


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
    rule: GateRule = DEFAULT_RULE,
) -> list[MetricComparison]:
    """One test's experiments against the baseline's: a capacity by its answer (never when
    either side's is unknown), a sweep step by step as loads at that rate."""
    kinds = {r.kind for r in (*current, *baseline)}
    if len(kinds) != 1:
        note = f"not compared: the test ran a {' and a '.join(sorted(kinds))} in the two runs"
        return [MetricComparison(key, "kind", (), (), None, "unclear", note=note)]
    (kind,) = kinds
    if kind == "sweep":
        return _compare_sweeps(key, current, baseline, thresholds, metrics, rule)
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
            compare_values(
                key, metric, cur, base, by_metric.get(metric), alpha=rule.alpha, design=rule.design
            )
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
    rule: GateRule,
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
                rule=rule,
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
    rule: GateRule = DEFAULT_RULE,
    baseline_name: str = "",
    current_experiments: Iterable[ExperimentRecord] = (),
    baseline_experiments: Iterable[ExperimentRecord] = (),
    noise: Mapping[str, MetricNoise] | None = None,
) -> Comparison:
    """Compare every test present in both runs; list the ones present in only one.
    ``noise``: each metric's A/A noise from stored history (else from the trials)."""
    check_metrics(metrics)
    current, baseline = list(current), list(baseline)
    check_request_names(
        [*metrics, *(t.metric for t in thresholds)], [r.result for r in (*current, *baseline)]
    )
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
                rule=rule,
                noise=noise,
            )
    cur_exps = _group_experiments(current_experiments)
    base_exps = _group_experiments(baseline_experiments)
    for key, records in cur_exps.items():
        if key in base_exps:
            items += compare_experiments(
                key, records, base_exps[key], thresholds, metrics=metrics, rule=rule
            )
    cur_keys = [*cur_groups, *cur_exps]
    base_keys = [*base_groups, *base_exps]
    return Comparison(
        items=tuple(items),
        only_in_baseline=tuple(k for k in base_keys if k not in cur_keys),
        only_in_current=tuple(k for k in cur_keys if k not in base_keys),
        baseline_name=baseline_name,
        thresholds=tuple(thresholds),
        where=where_time_went_runs(current, baseline),
    )


def _group_experiments(
    records: Iterable[ExperimentRecord],
) -> dict[str, list[ExperimentRecord]]:
    groups: dict[str, list[ExperimentRecord]] = {}
    for record in records:
        groups.setdefault(record_key(record), []).append(record)
    return groups


def summary_counts(comparison: Comparison) -> Mapping[str, int]:
    counts = {"regression": 0, "improvement": 0, "unclear": 0, "undetectable": 0, "ok": 0}
    for item in comparison.items:
        if item.threshold is not None:
            counts[item.verdict] += 1
    return counts
