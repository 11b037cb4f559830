"""One false-alarm rate for all the gated metrics of a test.

Testing each of three metrics at alpha on its own alarms on about 3 * alpha of unchanged
tests. The gate splits ``alpha`` over the gated metrics with Holm's step-down procedure
(Holm 1979, "A simple sequentially rejective multiple test procedure", Scand. J. Statist.
6:65-70): each metric starts with ``alpha / m``; when one is declared a regression, its
share is passed on to the metrics still open and they are judged again. Passing shares
along this way keeps the family-wise rate in a group-sequential design too (Maurer &
Bretz 2013, "Multiple testing in group sequential trials using graphical approaches",
Statistics in Biopharmaceutical Research 5:311-320). A test fails on its first regression
anyway; the recycling only lets a second real regression show beside the first.

The other error, an "ok" that hides a change past the limit, is bounded per metric by
``miss_rate``; it spends no alpha (see :mod:`~pytest_netbench._compare.sequential`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_netbench._compare.evidence import Measured, measure_change
from pytest_netbench._compare.noise import detectable_change, spread_at_least, trial_spread
from pytest_netbench._compare.sequential import Decision, Detectable, SequentialDesign, decide
from pytest_netbench._compare.thresholds import Threshold

DEFAULT_ALPHA = 0.01  # one-sided false alarms per compared test, all gated metrics together
DEFAULT_MISS_RATE = 0.05  # per metric: an early "ok" despite a change past the limit


@dataclass(frozen=True, slots=True)
class GateRule:
    """How the gate decides: the family-wise false-alarm rate, the miss rate of early
    "ok" stops, and where it looks (None: once, at the trials there are)."""

    alpha: float = DEFAULT_ALPHA
    miss_rate: float = DEFAULT_MISS_RATE
    design: SequentialDesign | None = None

    def design_for(self, current: int, baseline: int) -> SequentialDesign:
        return self.design or SequentialDesign.fixed(min(current, baseline))


def unreachable_level(rule: GateRule, gated: int, trials: int) -> str:
    """Why no regression can ever be shown with ``trials`` a side at the last look, each of
    ``gated`` metrics starting with its share of alpha; empty when one can. One trial a
    side is left alone: the threshold alone decides it, by design."""
    if gated < 1 or trials < 2:
        return ""
    design = rule.design_for(trials, trials)
    last = design.budget
    level = design.nominal_level(rule.alpha / gated, last, last)
    best = 1 / math.comb(2 * last, last)  # the one-sided rank test's smallest p-value
    if best <= level:
        return ""
    return (
        f"{last} trial(s) a side can never show a regression: each of {gated} gated"
        f" metric(s) is tested at {level:.2g} at the last look and {last} a side reach"
        f" {best:.2g} at best; add trials, gate fewer metrics or raise --netbench-alpha"
    )


@dataclass(frozen=True, slots=True)
class Sample:
    """One metric's per-trial figures on each side, and its threshold."""

    current: Sequence[float]
    baseline: Sequence[float]
    threshold: Threshold


@dataclass(frozen=True, slots=True)
class Judgement:
    """One metric's answer at this look, with what it was read from."""

    decision: Decision
    measured: Measured
    level: float  # the one-sided level the regression bound was taken at
    share: float  # this metric's part of the family's alpha
    final: bool  # the design's last look (budget spent)
    ok_level: float = 0.0  # the one-sided level of the "ok" stop's bound
    # The relative spread of one trial in these trials (log scale), and the smallest change
    # the design's whole budget could show at that spread (in the units of the limit; nan
    # for an absolute threshold, figures that touch zero, or a limit of 0), at ``budget``
    # trials a side.
    spread: float = math.nan
    detectable: float = math.nan
    budget: int = 0

    @property
    def ok_by_bound(self) -> bool:
        """An "ok" read from the interval: it rules out a worsening past the limit. (At the
        last look an "ok" may also come from the estimate alone, the interval reaching past
        the limit: the budget is spent and the estimate is within it.)"""
        evidence = self.measured.evidence
        return self.decision == "ok" and evidence.ok_high <= self.measured.limit


def judge(sample: Sample, share: float, rule: GateRule) -> Judgement:
    """One metric with ``share`` of the family's alpha, at the look its trials stand for."""
    n_cur, n_base = len(sample.current), len(sample.baseline)
    design = rule.design_for(n_cur, n_base)
    final = design.is_final(n_cur, n_base)
    level = design.nominal_level(share, n_cur, n_base)
    # "ok" stops spend Pocock-like: an unchanged metric can be let go at an early look,
    # where O'Brien-Fleming spending would leave its interval unbounded.
    ok_design = SequentialDesign(design.looks, "pocock")
    ok_level = ok_design.nominal_level(rule.miss_rate, n_cur, n_base)
    measured = measure_change(sample.current, sample.baseline, sample.threshold, level, ok_level)
    spread, detectable = _detectable(sample, measured, design, share)
    decision = decide(measured.evidence, measured.limit, final=final, detectable=detectable)
    shown = math.nan if detectable is None else detectable.change
    return Judgement(
        decision, measured, level, share, final, ok_level, spread, shown, design.budget
    )


def _detectable(
    sample: Sample, measured: Measured, design: SequentialDesign, share: float
) -> tuple[float, Detectable | None]:
    """The spread of one trial in these trials, and the smallest change the design's whole
    budget could show at it (None for a limit that is not relative and above 0, or figures
    not judged on the log scale). The baseline grows with the current side in A/B trials
    (as many on each side); a stored run keeps its own size."""
    if not measured.logs or not 0 < measured.limit < math.inf:
        return math.nan, None
    cur, base = len(sample.current), len(sample.baseline)
    spread = trial_spread((sample.current, sample.baseline))[0]
    last = design.budget
    base_last = last if base == cur else base
    level = design.nominal_level(share, last, base_last)
    shown = detectable_change(spread, last, level, baseline=base_last)
    # Not before half the budget, nor on one batch's spread: the futility stop costs power
    # against a real change that the early trials happened to understate.
    settled = 2 * cur >= last and (design.look_index(cur, base) >= 1 or len(design.looks) == 1)
    least = shown  # (the bound matters only to a limit below the change shown)
    if settled and measured.limit < shown:
        surely = spread_at_least(spread, cur, base)
        least = detectable_change(surely, last, level, baseline=base_last)
    return spread, Detectable(shown, least, settled)


def judge_family(samples: Sequence[Sample], rule: GateRule) -> list[Judgement]:
    """Every gated metric of one test at one look, alpha shared by Holm's procedure."""
    if not samples:
        return []
    shares = [rule.alpha / len(samples)] * len(samples)
    rejected: set[int] = set()
    while True:
        judgements = [judge(s, share, rule) for s, share in zip(samples, shares, strict=True)]
        new = {
            i for i, j in enumerate(judgements) if j.decision == "regression" and i not in rejected
        }
        open_ = [i for i in range(len(samples)) if i not in rejected and i not in new]
        if not new or not open_:
            return judgements
        rejected |= new
        freed = sum(shares[i] for i in new)
        for i in open_:
            shares[i] += freed / len(open_)


def overall_decision(judgements: Sequence[Judgement]) -> Decision:
    """The test's answer from its metrics': a regression if any, else continue while any
    metric continues, else unclear if any is, else undetectable if any is (a limit the
    trials' noise hides), else ok (improvements are ok for a gate)."""
    decisions = {j.decision for j in judgements}
    precedence: tuple[Decision, ...] = ("regression", "continue", "unclear", "undetectable")
    for answer in precedence:
        if answer in decisions:
            return answer
    return "ok"


def decide_look(
    values: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    thresholds: Sequence[Threshold],
    rule: GateRule,
) -> Decision:
    """The test's answer at one look from metric -> (current, baseline) per-trial figures:
    what a sequential run asks after each batch. A gated metric without figures on a side
    (no server stats, say) cannot hold the run back and is left out."""
    return look(values, thresholds, rule)[0]


def look(
    values: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    thresholds: Sequence[Threshold],
    rule: GateRule,
) -> tuple[Decision, list[tuple[str, Judgement]]]:
    """:func:`decide_look`'s answer, with each judged metric's judgement (its decision,
    and the smallest change the budget could show at its noise so far)."""
    named: list[tuple[str, Sample]] = []
    for threshold in thresholds:
        current, baseline = values.get(threshold.metric, ((), ()))
        cur = [v for v in current if not math.isnan(v)]
        base = [v for v in baseline if not math.isnan(v)]
        if len(cur) >= 2 and len(base) >= 2:
            named.append((threshold.metric, Sample(cur, base, threshold)))
    if not named:
        return "unclear", []
    judgements = judge_family([sample for _name, sample in named], rule)
    return overall_decision(judgements), [
        (name, j) for (name, _s), j in zip(named, judgements, strict=True)
    ]
