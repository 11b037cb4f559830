"""One metric's verdict: current trials against baseline trials, as data.

The figures of each side (nan dropped) go to the family and sequential rules
(:mod:`~pytest_netbench._compare.family`); a single trial on a side has nothing to test,
so the threshold alone decides and the verdict says it is low confidence. The result
carries what the report shows, each figure the one the verdict read: the change (the
Hodges-Lehmann estimate of the shift, not the change of the medians), the interval and
the level the verdict was read at (the regression bound's, or an "ok" stop's), the trials
of each side, and the metric's noise; the medians beside them are for reading.

A metric shown without a threshold stops no trials, so it is judged once, at the trials
there are and at the whole ``alpha``, whatever the design: it gets ``worse``/``better``
marks from a finite interval, never "more trials needed".
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_netbench._compare.family import (
    DEFAULT_ALPHA,
    GateRule,
    Judgement,
    Sample,
    judge,
    judge_family,
)
from pytest_netbench._compare.noise import MetricNoise, measure_noise, trial_spread
from pytest_netbench._compare.sequential import SequentialDesign
from pytest_netbench._compare.significance import mann_whitney_u
from pytest_netbench._compare.thresholds import Threshold
from pytest_netbench._public import publish

Verdict = Literal["ok", "regression", "improvement", "unclear", "undetectable"]
# Metrics commonly gated: the quietest of them here is named when a gated one's limit is
# below what this runner's noise lets the trials show.
COMMONLY_GATED: tuple[str, ...] = ("p50_ms", "p99_ms", "rps", "server.cpu_ms_per_request")
DEFAULT_RULE = GateRule()


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
    # The change the verdict read: the Hodges-Lehmann estimate of the shift (one trial on a
    # side: the change of the medians, which the threshold alone judged); relative
    # (+0.05 = 5 % higher) when ``change_relative``, else in the metric's unit; nan when
    # there is none.
    change: float = math.nan
    # The interval of the change the verdict was read from, in the unit of ``change``.
    change_ci: tuple[float, float] | None = None
    change_relative: bool = True
    # One-sided level of each bound of that interval: the regression bound's (the family's
    # share, spent over the looks) or, for an "ok" read from the interval, the ok stop's.
    level: float | None = None
    # Trials a side the verdict was decided with (the smaller side), and the look's place
    # in the design.
    trials: int = 0
    final_look: bool = True
    # Relative change of the median that A/A noise exceeds 5 % of the time at these trials.
    noise: MetricNoise | None = None
    # An "ok" read from the estimate alone: the trial budget is spent, the estimate is
    # within the limit, and the interval still reaches past it.
    by_estimate: bool = False
    # A gated metric with a relative limit: the relative spread of one trial in these trials,
    # and the smallest change (relative, in the worsening direction) the design's whole
    # budget of ``budget`` trials a side could show at that spread, with 80 % power; nan
    # where the gate does not read them (absolute limits, figures touching zero).
    trial_spread: float = math.nan
    detectable: float = math.nan
    budget: int = 0

    @property
    def current_median(self) -> float:
        return _median(self.current)

    @property
    def baseline_median(self) -> float:
        return _median(self.baseline)

    @property
    def noise_floor(self) -> float | None:
        return None if self.noise is None else self.noise.floor(max(1, self.trials))

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
    design: SequentialDesign | None = None,
) -> MetricComparison:
    """The verdict for one metric given per-trial values on each side, the whole of
    ``alpha`` its own (:func:`compare_metrics` shares it between metrics).

    Without a threshold the metric is reported, not gated: its verdict uses a 0 % limit
    (any significant change shows) but never fails.
    """
    rule = GateRule(alpha=alpha, design=design)
    (item,) = compare_metrics(
        key, {metric: (current, baseline)}, [threshold] if threshold else [], rule
    )
    return item


def compare_metrics(
    key: str,
    values: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    thresholds: Sequence[Threshold] = (),
    rule: GateRule = DEFAULT_RULE,
    noise: Mapping[str, MetricNoise] | None = None,
) -> list[MetricComparison]:
    """Every metric of one test (metric -> current and baseline per-trial figures): the
    gated ones share ``rule.alpha`` (Holm), the others are reported at ``rule.alpha``."""
    by_metric = {t.metric: t for t in thresholds}
    cleaned = {name: (_finite(cur), _finite(base)) for name, (cur, base) in values.items()}
    items: dict[str, MetricComparison] = {}
    family: list[tuple[str, Sample]] = []
    for name, (cur, base) in cleaned.items():
        threshold = by_metric.get(name)
        known = (noise or {}).get(name) or _own_noise(name, cur, base)
        if not cur or not base:
            items[name] = MetricComparison(
                key, name, cur, base, threshold, "unclear", note="no figures on one side"
            )
        elif len(cur) < 2 or len(base) < 2:
            # The trials a significance test would need at the first share of the family.
            share = rule.alpha / max(1, len([n for n in cleaned if n in by_metric]))
            level = share if threshold is not None else rule.alpha
            items[name] = _threshold_only(key, name, cur, base, threshold, level, known)
        elif threshold is None:
            # Shown, not gated: it stops no trials, so it is judged once at what there is.
            once = GateRule(alpha=rule.alpha, miss_rate=rule.miss_rate)
            sample = Sample(cur, base, Threshold(name, 0.0, relative=True))
            judgement = judge(sample, rule.alpha, once)
            items[name] = _from_judgement(key, name, sample, None, judgement, known, rule)
        else:
            family.append((name, Sample(cur, base, threshold)))
    judgements = judge_family([sample for _name, sample in family], rule)
    stopped = any(j.decision == "regression" for j in judgements)
    for (name, sample), judgement in zip(family, judgements, strict=True):
        known = (noise or {}).get(name) or _own_noise(name, sample.current, sample.baseline)
        item = _from_judgement(
            key, name, sample, sample.threshold, judgement, known, rule, stopped=stopped
        )
        if item.verdict == "undetectable":
            item = dataclasses.replace(item, note=_undetectable_note(item, cleaned, by_metric))
        items[name] = item
    return [items[name] for name in cleaned]


def _undetectable_note(
    item: MetricComparison,
    values: Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]],
    thresholds: Mapping[str, Threshold],
) -> str:
    """What an undetectable verdict means here: the noise, the smallest change the budget
    could show, the limit asked, the trials that would show it; and the quietest metric
    commonly gated (or gated) here, when it is quieter."""
    assert item.threshold is not None
    limit, worse = item.threshold.limit, item.threshold.higher_is_worse
    shift = _shift(item.detectable, worse)  # the detectable change on the log scale
    wanted = _shift(limit, worse)
    needed = math.ceil(item.budget * (shift / wanted) ** 2) if wanted > 0 else 0
    trials = f"about {needed}" if needed <= 1000 else "more than 1000"
    note = (
        f"{item.metric}: this runner's noise ({percent_words(item.trial_spread)} a trial) hides"
        f" changes under {percent_words(item.detectable)} even at {item.budget} trials a side; the"
        f" gate asked {percent_words(limit)} ({trials} trials a side would show it)"
    )
    quietest = None
    for name in dict.fromkeys([*thresholds, *COMMONLY_GATED]):
        if name == item.metric or name not in values:
            continue
        spread = trial_spread(values[name])[0]
        if math.isnan(spread) or spread >= item.trial_spread:
            continue
        if quietest is None or spread < quietest[1]:
            quietest = (name, spread)
    if quietest is None:
        return note + "; no metric shown is quieter here"
    name, spread = quietest
    # At the same level and trials, the detectable change scales with the spread.
    scaled = shift * spread / item.trial_spread
    shows = math.expm1(scaled)
    advice = ": gate on it" if scaled < wanted else ", the quietest shown"
    return note + (
        f"; {name} moves {percent_words(spread)} a trial here (it would show changes over"
        f" {percent_words(shows)}){advice}"
    )


def _shift(change: float, higher_is_worse: bool) -> float:
    """A relative worsening (+0.1: 10 % higher, or 10 % lower for throughput) as a shift of
    the log, as the gate judges it."""
    if higher_is_worse:
        return math.log1p(change)
    return math.inf if change >= 1 else -math.log1p(-change)


def percent_words(value: float) -> str:
    """A percentage as it is read: 8.1 %, 5 %, 11 %."""
    if value >= 0.1:
        return f"{value * 100:.0f} %"
    return f"{value * 100:.1f}".rstrip("0").rstrip(".") + " %"


def _finite(values: Sequence[float]) -> tuple[float, ...]:
    return tuple(v for v in values if not math.isnan(v))


def _own_noise(
    metric: str, current: Sequence[float], baseline: Sequence[float]
) -> MetricNoise | None:
    return measure_noise(metric, (current, baseline), "this comparison")


def _threshold_only(
    key: str,
    metric: str,
    cur: tuple[float, ...],
    base: tuple[float, ...],
    threshold: Threshold | None,
    level: float,
    noise: MetricNoise | None,
) -> MetricComparison:
    """A single trial on a side: nothing to test, so the threshold alone decides."""
    limit = threshold or Threshold(metric, 0.0, relative=True)
    cur_median, base_median = statistics.median(cur), statistics.median(base)
    worse, better = limit.fails(cur_median, base_median), limit.improves(cur_median, base_median)
    verdict: Verdict = "regression" if worse else "improvement" if better else "ok"
    note = (
        f"{len(cur)} vs {len(base)} trial(s): threshold only, low confidence; run at least "
        f"{trials_for_level(level)} trials a side for a significance test"
    )
    return MetricComparison(
        key,
        metric,
        cur,
        base,
        threshold,
        verdict,
        low_confidence=True,
        note=note,
        change=_median_change(cur_median, base_median, limit.relative),
        change_relative=limit.relative,
        trials=min(len(cur), len(base)),
        noise=noise,
    )


def _median_change(current: float, baseline: float, relative: bool) -> float:
    """What a threshold alone reads: the change of the medians (relative: +0.12 is 12 %
    higher; from a zero baseline, infinite unless unchanged)."""
    if not relative:
        return current - baseline
    if baseline == 0:
        return 0.0 if current == 0 else math.copysign(math.inf, current)
    return (current - baseline) / abs(baseline)


def _from_judgement(
    key: str,
    metric: str,
    sample: Sample,
    threshold: Threshold | None,
    judgement: Judgement,
    noise: MetricNoise | None,
    rule: GateRule,
    *,
    stopped: bool = False,
) -> MetricComparison:
    """``stopped``: another gated metric of the test regressed, which ends its trials."""
    cur, base = tuple(sample.current), tuple(sample.baseline)
    n = min(len(cur), len(base))
    measured = judgement.measured
    decision = judgement.decision
    verdict: Verdict = "unclear" if decision == "continue" else decision
    if judgement.ok_by_bound:
        # Shown: the interval that rules the worsening out, at the ok stop's level.
        ci, level = (measured.ok_low, measured.ok_high), judgement.ok_level
    else:
        ci, level = (measured.change_low, measured.change_high), judgement.level
    ratio = (1 + ci[0], 1 + ci[1]) if measured.relative and all(map(math.isfinite, ci)) else None
    note = ""
    if verdict == "unclear":
        gated = threshold is not None
        note = _unclear_note(judgement, len(cur), len(base), gated, rule, stopped)
    worse = threshold is None or threshold.higher_is_worse
    return MetricComparison(
        key,
        metric,
        cur,
        base,
        threshold,
        verdict,
        p_value=mann_whitney_u(cur, base).p_value,
        ratio_ci=ratio,
        note=note,
        change=measured.change,
        change_ci=ci,
        change_relative=measured.relative,
        level=level,
        trials=n,
        final_look=judgement.final,
        noise=noise,
        by_estimate=threshold is not None and decision == "ok" and not judgement.ok_by_bound,
        trial_spread=judgement.spread,
        detectable=_relative(judgement.detectable, worse),
        budget=judgement.budget,
    )


def _relative(shift: float, higher_is_worse: bool) -> float:
    """A worsening shift of the log as a relative change: +10 % higher, or 10 % lower."""
    if math.isnan(shift) or math.isinf(shift):
        return shift
    return math.expm1(shift) if higher_is_worse else -math.expm1(-shift)


def _unclear_note(
    judgement: Judgement, cur: int, base: int, gated: bool, rule: GateRule, stopped: bool
) -> str:
    """Why a metric is undecided. A metric shown, not gated, is judged once (it holds no
    trials back), so it gets a note only when its trials could never show a change."""
    if judgement.decision == "continue":
        if stopped:
            return "undecided when its trials stopped: another gated metric of the test regressed"
        budget = rule.design_for(cur, base).budget
        return (
            f"more trials needed: undecided after {cur} vs {base} trials, before the design's"
            f" last look ({budget} a side)"
        )
    needed = trials_for_level(judgement.level)
    if needed > min(cur, base):
        return (
            f"more trials needed: {cur} vs {base} trials cannot reach the one-sided level "
            f"{judgement.level:.2g}; run at least {needed} trials a side"
        )
    return "more trials needed: past the limit but not significant" if gated else ""


def trials_for_level(level: float) -> int:
    """Trials a side (equal sizes) before a one-sided rank test can reach ``level``."""
    n = 1
    while n < 1000 and 1 / math.comb(2 * n, n) > level:
        n += 1
    return n


publish(globals())
