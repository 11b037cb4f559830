"""A stopping rule that stays honest when the gate looks at the trials more than once.

"Add trials until p < alpha" raises the false-alarm rate with every look: five looks at
alpha = 0.05 each alarm about 14 % of the time on data with no change (Armitage,
McPherson & Rowe 1969). A group-sequential design fixes the looks in advance (trials a
side at each, up to a maximum) and spends the error rate over them with a spending
function (Lan & DeMets 1983, "Discrete sequential boundaries for clinical trials",
Biometrika 70:659-663):

* O'Brien-Fleming type, ``2 - 2 * Phi(z(1 - alpha/2) / sqrt(t))``: almost nothing is spent
  on the early looks, so only a large change stops there, and the last look keeps nearly
  the whole alpha (the default: a small change still gets the full budget's power);
* Pocock type, ``alpha * ln(1 + (e - 1) * t)``: about even per look, earlier stops for
  medium changes, less power at the end.

The boundary of each look is the z value whose crossing probability, given no earlier
crossing, is that look's share, found by numerical integration of the canonical joint
distribution of the z statistics (independent increments; Jennison & Turnbull 2000,
"Group Sequential Methods with Applications to Clinical Trials", ch. 19). The gate uses a
boundary as a nominal one-sided level for a rank-based interval (see
:func:`~pytest_netbench._compare.significance.shift_interval`); rank statistics follow the
same joint law asymptotically, and the tests in ``tests/unit/test_compare_sequential.py``
check the false-alarm rate of the whole rule by simulation.

At each look a metric gets one of five answers (:func:`decide`): ``regression`` (worse,
significantly, and past the limit), ``improvement``, ``ok`` (the interval rules out a
change past the limit: equivalent within it), ``undetectable`` (the limit is below the
smallest change the trials' noise lets the whole budget show, and nothing past that was
seen) or ``continue``. At the last look the budget is spent and ``continue`` becomes
``ok`` when the median moved less than the limit, or ``unclear``. A stop for "ok" or
"undetectable" never spends alpha (a non-binding futility rule), so the false-alarm rate
is that of the regression boundaries alone.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_netbench._errors import SpecError

Spending = Literal["obrien-fleming", "pocock"]
SPENDING_FUNCTIONS: tuple[Spending, ...] = ("obrien-fleming", "pocock")
Decision = Literal["regression", "improvement", "ok", "continue", "unclear", "undetectable"]
_SQRT2 = math.sqrt(2.0)
_GRID_POINTS = 241  # odd, for Simpson's rule; boundaries come out within ~1e-3 in z
_LOWEST_Z = -8.0  # the continuation region below this holds < 1e-15 of the mass
_NO_BOUNDARY = 40.0  # z of a look that spends nothing: never crossed


def normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / _SQRT2)


@functools.lru_cache(maxsize=1024)
def normal_quantile(p: float) -> float:
    """z with ``normal_cdf(z) == p`` (bisection on erfc: exact enough, no SciPy). Cached: a
    gate asks for the same few levels at every look of every metric."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a probability strictly between 0 and 1 is needed, got {p!r}")
    low, high = -40.0, 40.0
    for _ in range(200):
        middle = (low + high) / 2
        if normal_cdf(middle) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def spent_alpha(alpha: float, fraction: float, spending: Spending) -> float:
    """How much of ``alpha`` a design has spent by information fraction ``fraction``."""
    if fraction <= 0:
        return 0.0
    if fraction >= 1:
        return alpha
    if spending == "obrien-fleming":
        # The one-sided form of Lan & DeMets' O'Brien-Fleming-like function.
        return 2.0 - 2.0 * normal_cdf(normal_quantile(1.0 - alpha / 2.0) / math.sqrt(fraction))
    if spending == "pocock":
        return alpha * math.log(1.0 + (math.e - 1.0) * fraction)
    raise SpecError(f"unknown spending function {spending!r}; use {', '.join(SPENDING_FUNCTIONS)}")


def _simpson_weights(count: int, step: float) -> list[float]:
    weights = [step / 3 * (4 if i % 2 else 2) for i in range(count)]
    weights[0] = weights[-1] = step / 3
    return weights


@functools.lru_cache(maxsize=256)
def efficacy_boundaries(
    fractions: tuple[float, ...], alpha: float, spending: Spending = "obrien-fleming"
) -> tuple[float, ...]:
    """One-sided z boundaries, one per look at these information fractions (increasing,
    the last 1), that together cross with probability ``alpha`` when nothing changed."""
    if not fractions or any(b <= a for a, b in itertools.pairwise(fractions)):
        raise SpecError(f"information fractions must increase, got {fractions!r}")
    if not 0.0 < alpha < 0.5:
        raise SpecError(f"alpha must be between 0 and 0.5, got {alpha!r}")
    boundaries: list[float] = []
    # The sub-density of the score S_k = Z_k * sqrt(t_k) over the region where no look has
    # crossed yet, on a grid (Jennison & Turnbull 2000, section 19.2).
    grid: list[float] = []
    density: list[float] = []
    previous_t, previous_spent = 0.0, 0.0
    for t in fractions:
        share = spent_alpha(alpha, t, spending) - previous_spent
        previous_spent += max(0.0, share)
        increment = t - previous_t
        if not grid:  # the first look: S_1 is plainly normal
            z = normal_quantile(1.0 - share) if share > 1e-300 else _NO_BOUNDARY
            boundary = min(z, _NO_BOUNDARY)
        else:
            boundary = _solve_boundary(grid, density, increment, t, share)
        boundaries.append(boundary)
        top = min(boundary, -_LOWEST_Z) * math.sqrt(t)  # no mass worth a grid point above
        bottom = _LOWEST_Z * math.sqrt(t)
        step = (top - bottom) / (_GRID_POINTS - 1)
        new_grid = [bottom + i * step for i in range(_GRID_POINTS)]
        if not grid:
            scale = math.sqrt(t)
            density = [_phi(s / scale) / scale for s in new_grid]
        else:
            density = _propagate(grid, density, new_grid, increment)
        grid = new_grid
        previous_t = t
    return tuple(boundaries)


def _phi(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def _weights_of(grid: Sequence[float]) -> list[float]:
    return _simpson_weights(len(grid), grid[1] - grid[0])


def _propagate(
    grid: Sequence[float], density: Sequence[float], new_grid: Sequence[float], increment: float
) -> list[float]:
    """The continuation sub-density one look later: a convolution with the increment."""
    weights = _weights_of(grid)
    mass = [w * d for w, d in zip(weights, density, strict=True)]
    scale = math.sqrt(increment)
    return [
        sum(m * _phi((s - u) / scale) for m, u in zip(mass, grid, strict=True)) / scale
        for s in new_grid
    ]


def _solve_boundary(
    grid: Sequence[float], density: Sequence[float], increment: float, t: float, share: float
) -> float:
    if share <= 1e-300:
        return _NO_BOUNDARY
    weights = _weights_of(grid)
    mass = [w * d for w, d in zip(weights, density, strict=True)]
    scale = math.sqrt(increment)

    def crossing(z: float) -> float:
        b = z * math.sqrt(t)
        return sum(
            m * 0.5 * math.erfc((b - u) / scale / _SQRT2) for m, u in zip(mass, grid, strict=True)
        )

    low, high = -10.0, _NO_BOUNDARY
    if crossing(high) > share:
        return high
    for _ in range(60):
        middle = (low + high) / 2
        if crossing(middle) > share:
            low = middle
        else:
            high = middle
    return high


@dataclass(frozen=True, slots=True)
class SequentialDesign:
    """Where the gate looks: trials a side at each look, the last being the budget.

    ``SequentialDesign((3, 6, 9, 12))`` looks after 3, 6, 9 and 12 trials a side;
    ``SequentialDesign.fixed(5)`` is a plain fixed-sample test after 5 (one look, no
    spending).
    """

    looks: tuple[int, ...]
    spending: Spending = "obrien-fleming"

    def __post_init__(self) -> None:
        if not self.looks or self.looks[0] < 1:
            raise SpecError(f"a design needs looks of at least 1 trial, got {self.looks!r}")
        if any(b <= a for a, b in itertools.pairwise(self.looks)):
            raise SpecError(f"looks must increase, got {self.looks!r}")
        if self.spending not in SPENDING_FUNCTIONS:
            raise SpecError(
                f"unknown spending function {self.spending!r}; use {', '.join(SPENDING_FUNCTIONS)}"
            )

    @classmethod
    def fixed(cls, trials: int) -> SequentialDesign:
        return cls((max(1, trials),))

    @classmethod
    def every(
        cls, batch: int, budget: int, spending: Spending = "obrien-fleming"
    ) -> SequentialDesign:
        """A look after every ``batch`` trials a side, up to ``budget``."""
        if batch < 1 or budget < batch:
            raise SpecError(f"need 1 <= batch <= budget, got batch={batch}, budget={budget}")
        looks = list(range(batch, budget + 1, batch))
        if looks[-1] != budget:
            looks.append(budget)
        return cls(tuple(looks), spending)

    @property
    def budget(self) -> int:
        return self.looks[-1]

    def describe(self) -> str:
        if len(self.looks) == 1:
            return f"fixed, {self.budget} trial(s) a side"
        looks = ", ".join(str(n) for n in self.looks)
        return f"sequential, looks after {looks} trials a side ({self.spending} spending)"

    def look_index(self, current: int, baseline: int) -> int:
        """Which look these trial counts stand for: the last planned look the current side
        reached (-1 before the first). The baseline grows alongside in A/B trials, or is a
        stored run, measured once."""
        index = -1
        for i, n in enumerate(self.looks):
            if current >= n:
                index = i
        return index

    def is_final(self, current: int, baseline: int) -> bool:
        return self.look_index(current, baseline) == len(self.looks) - 1

    def fractions(self) -> tuple[float, ...]:
        """Information at each look over that at the last: the trials' share when both
        sides grow alike (A/B). Against a stored baseline of fixed size the information,
        1 / (1/n + 1/m), grows more slowly, so the looks are more correlated than these
        fractions say; by Slepian's inequality that only lowers the chance of crossing a
        boundary, so the same boundaries stay valid there, a little conservative."""
        return tuple(n / self.budget for n in self.looks)

    def nominal_level(self, alpha: float, current: int, baseline: int) -> float:
        """The one-sided level a test at this look must reach for the design to keep
        ``alpha`` over every look (0 before the first look)."""
        index = self.look_index(current, baseline)
        if index < 0:
            return 0.0
        if len(self.looks) == 1:
            return alpha
        return 1.0 - normal_cdf(efficacy_boundaries(self.fractions(), alpha, self.spending)[index])


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one look knows of one metric, in "worsening" units (positive: worse): the
    point estimate of the change, its interval at the look's nominal level (``low``,
    ``high``), and the upper bound at the level of an "ok" stop (``ok_high``)."""

    estimate: float
    low: float
    high: float
    ok_high: float


@dataclass(frozen=True, slots=True)
class Detectable:
    """The smallest change (in the units of the evidence) that the design's whole budget
    could show at the noise of the trials so far, with 80 % power: at the spread the trials
    show (``change``) and at its 90 % lower bound (``at_least``); ``settled`` when this
    look may give up on a limit below it: from half the budget on, and never at the first
    of several looks (one batch's spread is too uncertain to stop on)."""

    change: float
    at_least: float
    settled: bool


def decide(
    evidence: Evidence, limit: float, *, final: bool, detectable: Detectable | None = None
) -> Decision:
    """One metric's answer at one look; ``limit`` is how much worse it may get (>= 0).

    A limit below the smallest change the budget could show (``detectable``, even at the
    lowest noise the trials allow) cannot be told from noise however many trials are left:
    once no regression, improvement or "ok" has been shown, the metric is
    ``undetectable``. Before the last look only when the change seen so far is under half
    the detectable one (the trials left would show a regression less than one time in
    five under the trend so far); a larger one may be real, and more trials can show it.
    At the last look, when it is within the detectable change."""
    if evidence.low > 0 and evidence.estimate > limit:
        return "regression"
    if evidence.high < 0 and evidence.estimate < -limit:
        return "improvement"
    if evidence.ok_high <= limit:
        return "ok"  # equivalent within the limit, or better: more trials would not fail it
    # (A budget that can never reach its level is no runner's noise: "unclear" says so.)
    if detectable is not None and detectable.settled and limit < detectable.at_least < math.inf:
        # A futility stop: it spends no alpha, as an "ok" stop does not.
        reach = detectable.change if final else detectable.change / 2
        if evidence.estimate <= reach:
            return "undetectable"
    if not final:
        return "continue"
    # Budget spent: a median inside the limit passes, as a fixed-sample gate would pass it.
    return "ok" if evidence.estimate <= limit else "unclear"


def run_sequentially(
    design: SequentialDesign,
    judge: Callable[[int], Sequence[Decision]],
) -> tuple[int, tuple[Decision, ...]]:
    """Drive a design: ``judge(trials)`` measures up to ``trials`` a side and returns each
    gated metric's decision; stop at the first regression, when nothing is left to
    ``continue``, or when the budget is spent. Returns (trials a side, decisions)."""
    decisions: tuple[Decision, ...] = ()
    for trials in design.looks:
        decisions = tuple(judge(trials))
        if "regression" in decisions or "continue" not in decisions:
            return trials, decisions
    return design.budget, decisions
