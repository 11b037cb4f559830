"""The gate's statistics on seeded synthetic data (no sockets): the spending boundaries,
the rank interval, and the error rates of the whole stopping rule over many simulated
runs, under no change (false alarms) and under a 10 % slowdown (catches).

Each rate is checked against its nominal value plus a tolerance from the binomial spread
of the simulation (three standard errors), so a correct rule fails these tests about one
time in a thousand seeds, and the seeds are fixed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from pytest_netbench._compare.family import (
    GateRule,
    Sample,
    judge_family,
    overall_decision,
    unreachable_level,
)
from pytest_netbench._compare.sequential import (
    SequentialDesign,
    efficacy_boundaries,
    normal_cdf,
    normal_quantile,
    run_sequentially,
    spent_alpha,
)
from pytest_netbench._compare.significance import shift_interval
from pytest_netbench._compare.thresholds import parse_thresholds

GATE = "rps:5%,p50_ms:5%,p99_ms:10%"


def _binomial_ceiling(rate: float, runs: int) -> float:
    """The highest observed rate a true ``rate`` gives in 99.9 % of simulations."""
    return rate + 3.1 * math.sqrt(rate * (1 - rate) / runs) + 0.5 / runs


def test_boundaries_match_the_published_lan_demets_obrien_fleming_values() -> None:
    # Five equally spaced looks, one-sided alpha 0.025 (Jennison & Turnbull 2000, table
    # 7.6; gsDesign's sfLDOF gives 4.877, 3.357, 2.680, 2.290, 2.031).
    bounds = efficacy_boundaries((0.2, 0.4, 0.6, 0.8, 1.0), 0.025)
    assert bounds == pytest.approx((4.877, 3.357, 2.680, 2.290, 2.031), abs=0.003)
    assert efficacy_boundaries((1.0,), 0.025) == pytest.approx((normal_quantile(0.975),))
    assert spent_alpha(0.025, 1.0, "pocock") == pytest.approx(0.025)
    assert normal_cdf(normal_quantile(0.3)) == pytest.approx(0.3)


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
def test_boundaries_keep_alpha_for_a_brownian_motion(spending: str) -> None:
    """The boundaries' own claim, by simulation: a random walk with no drift, looked at
    after every fifth of its steps, crosses some boundary with probability alpha."""
    alpha, runs = 0.05, 20_000
    fractions = (0.2, 0.4, 0.6, 0.8, 1.0)
    bounds = efficacy_boundaries(fractions, alpha, spending)  # type: ignore[arg-type]
    rng = random.Random(7)
    crossed = 0
    for _ in range(runs):
        score = 0.0
        for k, t in enumerate(fractions):
            score += rng.gauss(0.0, math.sqrt(0.2))
            if score / math.sqrt(t) >= bounds[k]:
                crossed += 1
                break
    rate = crossed / runs
    assert abs(rate - alpha) < 3.1 * math.sqrt(alpha * (1 - alpha) / runs)


def test_moses_interval_covers_the_true_shift_at_its_level() -> None:
    rng = random.Random(3)
    level, runs, misses = 0.05, 2000, 0
    for _ in range(runs):
        current = [rng.expovariate(1.0) + 0.7 for _ in range(8)]  # skewed on purpose
        baseline = [rng.expovariate(1.0) for _ in range(8)]
        if shift_interval(current, baseline, level, 1.0).low > 0.7:
            misses += 1
    assert misses / runs <= _binomial_ceiling(level, runs)


Draw = Callable[[random.Random, float], dict[str, float]]


def _correlated(rng: random.Random, slowdown: float) -> dict[str, float]:
    """One trial's figures: CPU-bound noise shared by the metrics (a busy neighbour slows
    everything at once), each metric's own noise, a tail twice as noisy, and now and then
    a bad second."""
    common = rng.gauss(0.0, 0.05)
    hiccup = 0.25 if rng.random() < 0.05 else 0.0
    latency = math.exp(common + rng.gauss(0.0, 0.03) + hiccup) * (1 + slowdown)
    return {
        "rps": 10_000 / latency,
        "p50_ms": 2.0 * latency,
        "p99_ms": 9.0 * latency * math.exp(rng.gauss(0.0, 0.08)),
    }


def _independent(rng: random.Random, slowdown: float) -> dict[str, float]:
    return {
        "rps": 10_000 * math.exp(rng.gauss(0.0, 0.06)) / (1 + slowdown),
        "p50_ms": 2.0 * math.exp(rng.gauss(0.0, 0.06)) * (1 + slowdown),
        "p99_ms": 9.0 * math.exp(rng.gauss(0.0, 0.12)) * (1 + slowdown),
    }


def _simulate(
    draw: Draw, slowdown: float, design: SequentialDesign, runs: int, seed: int
) -> tuple[float, float]:
    """(share of runs that ended in a regression, mean trials a side spent)."""
    rng = random.Random(seed)
    thresholds = parse_thresholds(GATE)
    rule = GateRule(design=design)
    fired, spent = 0, 0
    for _ in range(runs):
        base: list[dict[str, float]] = []
        head: list[dict[str, float]] = []

        def judge(
            trials: int, base: list[dict[str, float]] = base, head: list[dict[str, float]] = head
        ) -> list[str]:
            while len(base) < trials:
                base.append(draw(rng, 0.0))
                head.append(draw(rng, slowdown))
            samples = [
                Sample([h[t.metric] for h in head], [b[t.metric] for b in base], t)
                for t in thresholds
            ]
            return [j.decision for j in judge_family(samples, rule)]

        trials, decisions = run_sequentially(design, judge)  # type: ignore[arg-type]
        spent += trials
        fired += "regression" in decisions
    return fired / runs, spent / runs


DESIGN = SequentialDesign.every(3, 18)


@pytest.mark.parametrize("draw", [_correlated, _independent], ids=["correlated", "independent"])
def test_no_change_alarms_at_most_alpha_over_every_look_and_metric(draw: Draw) -> None:
    runs = 1500
    rate, _spent = _simulate(draw, 0.0, DESIGN, runs, seed=11)
    assert rate <= _binomial_ceiling(GateRule().alpha, runs)


def _one_metric_alarms(looks: SequentialDesign, spend: bool, runs: int, seed: int) -> float:
    """One metric, no change, judged after every batch: the share of runs that alarm, with
    the design's spending or at the full alpha at every look."""
    rng = random.Random(seed)
    threshold = parse_thresholds("p50_ms:0%")[0]
    alarms = 0
    for _ in range(runs):
        base: list[float] = []
        head: list[float] = []
        for trials in looks.looks:
            while len(base) < trials:
                base.append(math.exp(rng.gauss(0.0, 0.06)))
                head.append(math.exp(rng.gauss(0.0, 0.06)))
            rule = GateRule(design=looks if spend else SequentialDesign.fixed(trials))
            (judged,) = judge_family([Sample(head, base, threshold)], rule)
            if judged.decision == "regression":
                alarms += 1
                break
    return alarms / runs


def test_peeking_without_spending_would_alarm_more() -> None:
    """The same looks and data, each look at the full alpha: what the spending prevents
    (2.4 % against 1.1 % with spending, in 1500 runs; 0.97 % in 40,000)."""
    runs, alpha = 1500, GateRule().alpha
    spent = _one_metric_alarms(DESIGN, spend=True, runs=runs, seed=5)
    peeked = _one_metric_alarms(DESIGN, spend=False, runs=runs, seed=5)
    assert spent <= _binomial_ceiling(alpha, runs)
    assert peeked > 2 * alpha > spent


@pytest.mark.parametrize(
    ("draw", "power"),
    [(_correlated, 0.85), (_independent, 0.95)],
    ids=["correlated-with-hiccups", "independent"],
)
def test_a_ten_percent_slowdown_is_caught(draw: Draw, power: float) -> None:
    """About 6 % noise per trial: independent, caught in 99.7 % of 300 runs (12.9 trials a
    side on average); shared by the metrics with a 25 % hiccup in one trial of twenty,
    in 88 % (14.6 trials; 90 % before a metric could be given up as undetectable). Gate:
    rps 5 %, p50 5 %, p99 10 %."""
    runs = 300
    rate, spent = _simulate(draw, 0.10, DESIGN, runs, seed=13)
    assert rate >= power
    assert spent < DESIGN.budget  # it stops early on the way


def test_family_of_one_metric_and_of_three_keep_the_same_rate() -> None:
    """Three gated metrics with independent noise: Holm keeps the test's rate at alpha
    (12 of 3000 runs), where three metrics at alpha each alarm about three times as often
    (51 of 3000)."""
    runs = 3000
    rng = random.Random(17)
    thresholds = parse_thresholds("rps:0%,p50_ms:0%,p99_ms:0%")
    rule = GateRule(design=SequentialDesign.fixed(8))
    family_alarms = single_alarms = 0
    for _ in range(runs):
        base = [_independent(rng, 0.0) for _ in range(8)]
        head = [_independent(rng, 0.0) for _ in range(8)]
        samples = [
            Sample([h[t.metric] for h in head], [b[t.metric] for b in base], t) for t in thresholds
        ]
        family_alarms += overall_decision(judge_family(samples, rule)) == "regression"
        alone = [judge_family([s], rule)[0].decision for s in samples]
        single_alarms += "regression" in alone
    assert family_alarms / runs <= _binomial_ceiling(rule.alpha, runs)
    assert single_alarms > 2 * family_alarms


@pytest.mark.parametrize(
    ("rule", "gated", "trials", "warned"),
    [
        (GateRule(), 4, 5, True),  # 0.0025 each; 5 a side reach 1/252 at best
        (GateRule(), 4, 6, False),  # 1/924
        (GateRule(), 1, 5, False),
        (GateRule(alpha=0.001), 4, 6, True),
        (GateRule(design=SequentialDesign.every(3, 18)), 4, 18, False),
        (GateRule(design=SequentialDesign.every(2, 5)), 4, 5, True),
        (GateRule(), 4, 1, False),  # one trial: the threshold alone, by design
    ],
)
def test_a_gate_that_can_never_fire_is_said_before_any_load(
    rule: GateRule, gated: int, trials: int, warned: bool
) -> None:
    message = unreachable_level(rule, gated, trials)
    assert bool(message) is warned
    if warned:
        assert "can never show a regression" in message and "--netbench-alpha" in message


def _recipe_runs(
    noise: dict[str, float], slowdown: float, gate: str, runs: int, seed: int
) -> tuple[list[tuple[int, tuple[str, ...]]], float]:
    """Each run's (trials a side, decisions) under per-metric log-normal noise, and the
    budget; the head side ``slowdown`` slower on every metric."""
    rng = random.Random(seed)
    thresholds = parse_thresholds(gate)
    rule = GateRule(design=DESIGN)
    ended = []
    for _ in range(runs):
        base: list[dict[str, float]] = []
        head: list[dict[str, float]] = []

        def judge(
            trials: int, base: list[dict[str, float]] = base, head: list[dict[str, float]] = head
        ) -> list[str]:
            while len(base) < trials:
                base.append({m: math.exp(rng.gauss(0.0, s)) for m, s in noise.items()})
                head.append(
                    {m: math.exp(rng.gauss(0.0, s)) * (1 + slowdown) for m, s in noise.items()}
                )
            samples = [
                Sample([h[t.metric] for h in head], [b[t.metric] for b in base], t)
                for t in thresholds
            ]
            return [j.decision for j in judge_family(samples, rule)]

        trials, decisions = run_sequentially(DESIGN, judge)  # type: ignore[arg-type]
        ended.append((trials, tuple(decisions)))
    return ended, DESIGN.budget


RECIPE = "p50_ms:5%,server.cpu_ms_per_request:5%"
# Issue 30's runner: p50 spreads 8.1 % a trial, above the 5 % limit; CPU per request 2.1 %.
RUNNER_NOISE = {"p50_ms": 0.081, "server.cpu_ms_per_request": 0.021}


def test_an_aa_whose_limit_is_below_the_noise_stops_early_as_undetectable() -> None:
    """The recipe's A/A on a runner too noisy for p50 at 5 %: 246 of 300 runs stop within
    half the budget (206 with p50 undetectable, 40 with both metrics ok), 9.7 trials a side
    on average, where the rule without the stop ran 15.9 and ended ok (285 of 300). The
    rest saw a change past half the detectable one and went on (51 ended undetectable
    later); the false-alarm rate holds."""
    runs = 300
    ended, budget = _recipe_runs(RUNNER_NOISE, 0.0, RECIPE, runs, seed=21)
    early = [decisions for trials, decisions in ended if trials <= budget // 2]
    assert sum(p50 == "undetectable" for p50, _cpu in early) >= 0.6 * runs
    assert len(early) >= 0.75 * runs
    assert sum(p50 == "undetectable" for _, (p50, _cpu) in ended) >= 0.8 * runs
    assert sum(trials for trials, _ in ended) / runs < 0.6 * budget
    fired = sum("regression" in decisions for _, decisions in ended)
    assert fired / runs <= _binomial_ceiling(GateRule().alpha, runs)


@pytest.mark.parametrize(("gate", "power"), [(RECIPE, 0.99), ("p50_ms:5%", 0.97)])
def test_a_twenty_percent_slowdown_is_still_caught_on_that_runner(gate: str, power: float) -> None:
    """The same runner, the head 20 % slower: caught, even gating p50 alone (whose 5 % limit
    is undetectable there: a change past what is detectable keeps the trials going)."""
    runs = 300
    ended, _budget = _recipe_runs(RUNNER_NOISE, 0.20, gate, runs, seed=23)
    caught = sum("regression" in decisions for _, decisions in ended)
    assert caught / runs >= power
