"""How much each metric moves when nothing changed: the noise floor a limit must clear.

Within one stored run every trial of a test measured the same code on the same machine,
so their spread is A/A noise. Pooled over every test of every run stored under this
machine's key, it gives each metric's typical spread of one trial, and from it the noise
floor: the change of the median of ``n`` trials against ``n`` that noise alone exceeds one
time in twenty. A threshold below its floor makes a gate that says "unclear" or fires on
noise, so the plugin and ``netbench compare`` say so before the first load.

The same spread gives the smallest change a gate can detect (:func:`detectable_change`):
the shift its one-sided rank test at the metric's level shows with 80 % power at a number
of trials a side. The sequential gate reads it from the trials it compares after each
look, and gives up on a limit below what even its whole budget could show
(``undetectable``) rather than spend the budget and call the metric ok.

The spread is robust, because one bad second in a trial should not set the floor: the
median absolute difference between two trials of the same group (log figures), scaled to
a standard deviation, which unlike a deviation from the group's own median is unbiased
for groups of any size. Spread between
runs (slow drift of the machine, and real changes between revisions) is not counted:
that is what interleaved A/B trials cancel, and what a stored baseline cannot.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_netbench._compare.metrics import UnknownRequestError, metric_value
from pytest_netbench._compare.records import Session, load_session_json
from pytest_netbench._compare.sequential import normal_quantile
from pytest_netbench._compare.thresholds import Threshold

# The median of |X - Y| for X, Y independent normal with SD 1: sqrt(2) * z(0.75).
_PAIR_MEDIAN_TO_SD = math.sqrt(2) * 0.6744897501960817
_CONFIDENCE = 0.95
# The power at which a change counts as detectable: the usual 80 %.
DETECTION_POWER = 0.8
# The variance of the Hodges-Lehmann shift over that of a difference of means, for normal
# noise: pi / 3 (the rank test's efficiency, 3 / pi = 0.955).
_RANK_VARIANCE = math.pi / 3
# Trials a side up to which the spread's confidence bound is simulated, and the draws.
_SPREAD_SIZES = 12
_SPREAD_DRAWS = 2000


@dataclass(frozen=True, slots=True)
class MetricNoise:
    """One metric's A/A spread: the relative SD of one trial, from how many trials (in how
    many groups of trials of the same test in the same run)."""

    metric: str
    trial_spread: float
    trials: int
    groups: int
    source: str  # "history" (stored runs of this machine) or "this comparison"

    def floor(self, trials: int) -> float:
        """The relative change of a median of ``trials`` against another of ``trials``
        that A/A noise exceeds 5 % of the time (two-sided)."""
        return noise_floor(self.trial_spread, trials)


def noise_floor(trial_spread: float, trials: int) -> float:
    z = normal_quantile(1 - (1 - _CONFIDENCE) / 2)
    per_median = trial_spread * math.sqrt(median_variance_factor(max(1, trials)) / max(1, trials))
    return math.expm1(z * per_median * math.sqrt(2))


@functools.lru_cache(maxsize=128)
def median_variance_factor(n: int) -> float:
    """n * Var(median of n) for standard normal trials: 1 for n <= 2, rising towards
    pi / 2 (1.35 at 3, 1.28 at 6). Estimated once per n by a seeded simulation (200,000
    draws): small-sample medians have no tidy closed form for even n."""
    if n <= 2:
        return 1.0
    rng = random.Random(n)
    draws = max(2000, 200_000 // n)
    medians = [statistics.median(rng.gauss(0.0, 1.0) for _ in range(n)) for _ in range(draws)]
    return n * statistics.fmean(m * m for m in medians)


def detectable_change(
    trial_spread: float,
    trials: int,
    level: float,
    power: float = DETECTION_POWER,
    baseline: int | None = None,
) -> float:
    """The smallest shift (on the log scale, the unit of ``trial_spread``) that the gate's
    one-sided rank test at ``level`` shows with probability ``power`` between ``trials``
    current trials and ``baseline`` ones (as many when None): the minimum detectable
    effect. Infinite when the trials can never reach ``level`` (a rank test on n and m
    trials cannot go below ``1 / C(n + m, n)``)."""
    base = trials if baseline is None else baseline
    if math.isnan(trial_spread):
        return math.nan
    if min(trials, base) < 2 or not 0 < level < 1 or 1 / math.comb(trials + base, base) > level:
        return math.inf
    z = normal_quantile(1 - level) + normal_quantile(power)
    return z * trial_spread * math.sqrt(_RANK_VARIANCE * (1 / trials + 1 / base))


def spread_at_least(trial_spread: float, current: int, baseline: int) -> float:
    """A lower bound of the true spread of one trial, at 90 % confidence, from
    ``trial_spread`` measured on ``current`` and ``baseline`` trials: a few trials can
    overstate the noise by half (3 a side: by 75 % one time in ten), and a gate that gives
    up on a metric must not do so on a spread its trials overstated."""
    return trial_spread / _spread_quantile(min(_SPREAD_SIZES, (current + baseline) // 2))


@functools.lru_cache(maxsize=32)
def _spread_quantile(trials: int) -> float:
    """The 90th percentile of :func:`trial_spread` over two groups of ``trials`` standard
    normal figures (its true value is 1), by a seeded simulation, once per size; sizes
    past ``_SPREAD_SIZES`` use that size's (a little wider than theirs: conservative)."""
    if trials < 2:
        return math.inf
    rng = random.Random(trials)
    draws = sorted(
        trial_spread([math.exp(rng.gauss(0.0, 1.0)) for _ in range(trials)] for _side in range(2))[
            0
        ]
        for _ in range(_SPREAD_DRAWS)
    )
    return draws[int(0.9 * len(draws))]


def trial_spread(groups: Iterable[Sequence[float]]) -> tuple[float, int, int]:
    """(relative SD of one trial, trials used, groups used) pooled over groups of trials
    that measured the same thing; nan when no group has two positive figures."""
    differences: list[float] = []
    used_trials = used_groups = 0
    for values in groups:
        logs = [math.log(v) for v in values if v > 0 and not math.isnan(v)]
        if len(logs) < 2:
            continue
        used_groups += 1
        used_trials += len(logs)
        differences += [abs(a - b) for a, b in itertools.combinations(logs, 2)]
    if not differences:
        return math.nan, 0, 0
    return statistics.median(differences) / _PAIR_MEDIAN_TO_SD, used_trials, used_groups


def measure_noise(
    metric: str, groups: Iterable[Sequence[float]], source: str
) -> MetricNoise | None:
    spread, trials, used = trial_spread(groups)
    if math.isnan(spread):
        return None
    return MetricNoise(metric, spread, trials, used, source)


def noise_of_runs(
    runs: Iterable[Mapping[str, Mapping[str, Sequence[float]]]], metrics: Iterable[str]
) -> dict[str, MetricNoise]:
    """Each metric's noise over stored runs, each given as test key -> metric -> the
    per-trial figures of that test in that run."""
    stored = list(runs)
    found: dict[str, MetricNoise] = {}
    for metric in metrics:
        groups = [by_metric[metric] for run in stored for by_metric in run.values()]
        noise = measure_noise(metric, (g for g in groups), "history")
        if noise is not None:
            found[metric] = noise
    return found


def limits_below_noise(
    thresholds: Iterable[Threshold], noise: Mapping[str, MetricNoise], trials: int
) -> list[str]:
    """A warning for each relative limit that sits below its metric's noise floor at this
    many trials a side, saying what would clear it."""
    warnings = []
    for threshold in thresholds:
        known = noise.get(threshold.metric)
        if known is None or not threshold.relative:
            continue
        floor = known.floor(trials)
        if threshold.limit < floor:
            needed = _trials_to_clear(known.trial_spread, threshold.limit)
            more = f"about {needed} trials a side" if needed else "less noise"
            warnings.append(
                f"{threshold.describe()}: below the noise floor of {threshold.metric} "
                f"({floor * 100:.1f}% at {trials} trial(s) a side; one trial spreads "
                f"{known.trial_spread * 100:.1f}% over {known.trials} stored trials); "
                f"a wider limit or {more} would clear it"
            )
    return warnings


def _trials_to_clear(spread: float, limit: float, most: int = 200) -> int | None:
    """The fewest trials (up to ``most``) whose noise floor is within ``limit``. The floor
    falls as trials grow (``median_variance_factor(n) / n`` does), so a bisection finds it:
    each trial count costs a simulation, and trying them in turn took 9 s for 48."""
    if noise_floor(spread, most) > limit:
        return None
    low, high = 0, most  # the floor at ``low`` trials is above the limit (none: infinite)
    while high - low > 1:
        middle = (low + high) // 2
        if noise_floor(spread, middle) <= limit:
            high = middle
        else:
            low = middle
    return high


def noise_of_sessions(
    sessions: Iterable[Session], metrics: Iterable[str], machine_key: str | None = None
) -> dict[str, MetricNoise]:
    """Each metric's A/A noise over stored sessions (those of ``machine_key`` when given):
    the trials of one test (node id and load label) in one session are one group."""
    runs: list[dict[str, dict[str, list[float]]]] = []
    names = list(metrics)
    for session in sessions:
        if machine_key and session.machine_key and session.machine_key != machine_key:
            continue
        tests: dict[str, dict[str, list[float]]] = {}
        for record in session.records:
            figures = tests.setdefault(f"{record.nodeid}#{record.label}", {m: [] for m in names})
            for metric in names:
                try:
                    value = metric_value(record.result, metric)
                except UnknownRequestError:  # a per-request metric this test does not send
                    value = math.nan
                figures[metric].append(value)
        runs.append(tests)
    return noise_of_runs(runs, names)


def stored_noise(root: str, metrics: Iterable[str]) -> dict[str, MetricNoise]:
    """The noise of every run stored under this machine's key in ``root`` (empty when
    there is none, or a file cannot be read: a noise floor is advice, not a requirement)."""
    from pytest_netbench._compare.storage import Storage
    from pytest_netbench._errors import NetbenchError

    storage = Storage(root)
    sessions = []
    for run in storage.runs():
        try:
            sessions.append(load_session_json(run.path))
        except (NetbenchError, OSError, ValueError):
            continue
    return noise_of_sessions(sessions, metrics)
