"""Capacity: the highest open-loop rate at which a server still meets an SLO; or, with
``over="connections"``, the most connections held at once in closed loop (each a stream
at a time: "how many concurrent streams before the first event's p99 passes 500 ms").

The search brackets, then bisects. It starts from a rate (by default three quarters of what
one short closed-loop run achieved) and multiplies it by ``growth`` until a step fails (or
divides it until one passes); then it tries the geometric middle of the highest pass and
the lowest failure until they are within ``precision`` of each other; and it runs the
answer once more to confirm it. A step whose figures land near a bound (within ``margin``)
is run again before its verdict counts: two runs that agree decide, else a third does.

Over connections the steps are whole numbers: the search starts at ``connections`` (or
``start_rate``), with no closed-loop estimate, and ends when no whole number lies between
the highest pass and the lowest failure, or they are within ``precision``.

A step is judged on the server alone. One invalid only because the generator fell short
(its CPU, schedule or file descriptors) is rerun; if it stays invalid the search stops and
says the capacity is unknown, with the highest rate it did verify, rather than take the
generator's limit for the server's. An invalid step with a server-side cause (the server
died; the pool filled because the server held every connection) fails.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, Unpack

from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.live import ExperimentLive
from pytest_netbench._experiment.per_request import step_requests
from pytest_netbench._experiment.running import base_spec, open_loop_spec, own_options
from pytest_netbench._experiment.slo import Slo, SloTerm, TermCheck, check_slo_requests, parse_slo
from pytest_netbench._input.options import HttpOptions
from pytest_netbench._load.api import Monitored
from pytest_netbench._load.attempts import (
    DEFAULT_RETRIES,
    Attempts,
    Runner,
    check_retries,
    run_with_retries,
)
from pytest_netbench._model import LoadResult, LoadSpec
from pytest_netbench._model.live import ProgressCallback, StopSignal
from pytest_netbench._public import publish

Phase = Literal["estimate", "bracket", "bisect", "repeat", "confirm"]
Verdict = Literal["pass", "fail", "unusable", "estimate"]
# What the search varies: the open-loop rate (req/s), or the closed-loop connections.
Over = Literal["rate", "connections"]
CAPACITY_UNITS: dict[str, str] = {"rate": "req/s", "connections": "connections"}

# The first step, as a share of the closed-loop estimate: below it, so the usual first
# step passes and the bracket grows from a known-good rate.
START_SHARE = 0.75


@dataclass(frozen=True, slots=True)
class CapacityStep:
    """One load of the search (the closed-loop estimate, or one open-loop rate), its verdict
    and why."""

    rate: float
    phase: Phase
    verdict: Verdict
    why: str
    attempts: Attempts
    checks: tuple[TermCheck, ...] = ()
    # On the last run at a rate: the verdict that counted for that rate (a majority when the
    # step was repeated); None on the runs before it.
    decision: Literal["pass", "fail"] | None = None

    @property
    def result(self) -> LoadResult:
        return self.attempts.kept

    def to_dict(self) -> dict[str, Any]:
        return {
            "rate": self.rate,
            "phase": self.phase,
            "verdict": self.verdict,
            "decision": self.decision,
            "why": self.why,
            "checks": [c.to_dict() for c in self.checks],
            "by_request": step_requests(self.result),
            "result": self.result.to_dict(),
            "discarded": [d.to_dict() for d in self.attempts.discarded],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CapacityStep:
        attempts = Attempts(
            kept=LoadResult.from_dict(data["result"]),
            discarded=tuple(LoadResult.from_dict(d) for d in data.get("discarded", ())),
        )
        return cls(
            rate=float(data["rate"]),
            phase=data["phase"],
            verdict=data["verdict"],
            why=str(data["why"]),
            attempts=attempts,
            checks=tuple(TermCheck.from_dict(c) for c in data.get("checks", ())),
            decision=data.get("decision"),
        )


@dataclass(frozen=True, slots=True)
class CapacityResult:
    """``rate`` is the answer in req/s, or None when it is not known (``reason`` says why;
    ``at_least`` is then the highest rate that did meet the SLO, if any). ``interrupted``:
    stopped by a :class:`StopSignal` (Ctrl-C) before it had an answer. ``steps``: the
    open-loop steps in the order they ran; ``estimate``: the closed-loop run before them
    (None when ``start_rate`` was given)."""

    rate: float | None
    reason: str
    slo: str
    precision: float
    steps: tuple[CapacityStep, ...]
    at_least: float | None = None
    confirmed: bool = False
    # The lowest failing rate above the answer, and the SLO terms that failed there.
    failed_above_rate: float | None = None
    failed_above: tuple[TermCheck, ...] = ()
    interrupted: bool = False
    estimate: CapacityStep | None = None
    # "connections": ``rate``, ``at_least``, ``failed_above_rate`` and each step's ``rate``
    # count connections held at once in closed loop, not req/s.
    over: str = "rate"

    @property
    def unit(self) -> str:
        """What ``rate`` counts: ``req/s``, or ``connections``."""
        return CAPACITY_UNITS[self.over]

    @property
    def known(self) -> bool:
        return self.rate is not None

    @property
    def all_steps(self) -> tuple[CapacityStep, ...]:
        """Every step in the order it ran: the estimate (if any), then the open-loop steps."""
        return self.steps if self.estimate is None else (self.estimate, *self.steps)

    @property
    def loads(self) -> int:
        """Every load run, the estimate and discarded reruns included."""
        return sum(p.attempts.runs for p in self.all_steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "capacity",
            "rate": self.rate,
            "known": self.known,
            "reason": self.reason,
            "slo": self.slo,
            "precision": self.precision,
            "at_least": self.at_least,
            "confirmed": self.confirmed,
            "interrupted": self.interrupted,
            "failed_above_rate": self.failed_above_rate,
            "failed_above": [c.to_dict() for c in self.failed_above],
            "loads": self.loads,
            "estimate": self.estimate.to_dict() if self.estimate is not None else None,
            "steps": [p.to_dict() for p in self.steps],
            "over": self.over,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CapacityResult:
        rate = data.get("rate")
        at_least = data.get("at_least")
        above = data.get("failed_above_rate")
        return cls(
            rate=None if rate is None else float(rate),
            reason=str(data["reason"]),
            slo=str(data["slo"]),
            precision=float(data["precision"]),
            steps=tuple(CapacityStep.from_dict(p) for p in data["steps"]),
            at_least=None if at_least is None else float(at_least),
            confirmed=bool(data.get("confirmed", False)),
            failed_above_rate=None if above is None else float(above),
            failed_above=tuple(TermCheck.from_dict(c) for c in data.get("failed_above", ())),
            interrupted=bool(data.get("interrupted", False)),
            estimate=CapacityStep.from_dict(data["estimate"]) if data.get("estimate") else None,
            over=str(data.get("over", "rate")),
        )


class CapacitySearch(TypedDict, total=False):
    """The search's own options (:func:`capacity` says what each means)."""

    slo: str | Slo
    max_error_rate: float | None
    precision: float
    start_rate: float | None
    growth: float
    min_rate: float
    max_rate: float | None
    margin: float
    max_steps: int
    over: Over


class CapacityOptions(CapacitySearch, HttpOptions, total=False):
    """What ``netbench.capacity(url, **options)`` takes: the search's options and the
    load's."""


def capacity(
    url: str | LoadSpec,
    *,
    slo: str | Slo = "p99_ms < 50",
    max_error_rate: float | None = 0.001,
    precision: float = 0.05,
    start_rate: float | None = None,
    growth: float = 2.0,
    min_rate: float = 1.0,
    max_rate: float | None = None,
    margin: float = 0.2,
    max_steps: int = 30,
    over: Over = "rate",
    retries: int = DEFAULT_RETRIES,
    runner: Runner | None = None,
    server: Monitored | None = None,
    cluster: object | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    on_step: Callable[[CapacityStep], None] | None = None,
    **options: Unpack[HttpOptions],
) -> CapacityResult:
    """The highest open-loop rate at ``url`` (with ``http_load``'s options, ``duration``
    being each step's length, or a checked LoadSpec) that meets ``slo`` with at most
    ``max_error_rate`` errors per request, to within ``precision`` (a fraction).

    ``start_rate``: the first step's rate (default: 3/4 of one closed-loop run's req/s);
    ``growth``: the bracketing factor; ``margin``: how near a bound (a fraction of it) a
    figure must be for its step to be run again; ``max_steps``: a budget of steps
    (the estimate counts as one).

    ``progress``: live reports of the running step (see ``http_load``); ``stop``: a
    :class:`StopSignal` that ends the search early, its capacity unknown; ``on_step``:
    called with each step (the estimate too) once its verdict is in (to print the search as
    it goes).

    ``over="connections"``: the most connections held at once in closed loop that meet
    ``slo`` (each step a closed-loop load with that many connections; ``start_rate``,
    ``min_rate`` and ``max_rate`` then count connections, the start by default being
    ``connections``); the answer's ``rate`` is that count. With ``stream=``, each
    connection is one stream at a time (HTTP/2: ``streams`` a connection).
    """
    goal = parse_slo(slo)
    if max_error_rate is not None:
        if not 0 <= max_error_rate < 1:
            raise SpecError(f"max_error_rate must be in [0, 1), got {max_error_rate!r}")
        goal = goal.with_term(SloTerm("error_rate", "<=", max_error_rate))
    _check_search(precision, start_rate, growth, min_rate, max_rate, margin, max_steps)
    check_retries(retries)
    spec = base_spec(url, options, also=_OWN)
    if over == "connections":
        spec = _closed_loop_base(spec)
    elif over == "rate":
        open_loop_spec(spec, min_rate)  # a spec that cannot take a rate fails before any load
    else:
        raise SpecError(f"over must be 'rate' or 'connections', got {over!r}")
    check_slo_requests(goal, (r.label for r in spec.mix))  # by_request.NAME: a kind it sends
    live = ExperimentLive(progress, stop, None)
    runner = live.runner(runner, server, cluster)
    search = _Search(spec, goal, runner, retries, margin, max_steps, precision, live, on_step)
    search.over = over
    if over == "connections" and start_rate is None:
        start_rate = max(float(spec.connections), min_rate)
    return search.run(start_rate, growth, min_rate, max_rate)


def _closed_loop_base(spec: LoadSpec) -> LoadSpec:
    """The spec a search over connections varies: closed loop, checked before any load."""
    if spec.rate is not None:
        raise SpecError(
            "over='connections' searches closed-loop loads: drop rate (over='rate' searches"
            " the rate)"
        )
    if spec.stages:
        raise SpecError("each step holds its connections, and stages move them: drop stages")
    return spec


class _Stop(Exception):
    """The search cannot go on (the generator fell short, or the step budget ran out)."""


class _GeneratorLimited(Exception):
    """The generator could not produce the rate just tried: not a verdict on the server."""


@dataclass
class _Search:
    spec: LoadSpec
    goal: Slo
    runner: Runner
    retries: int
    margin: float
    max_steps: int
    precision: float
    live: ExperimentLive
    on_step: Callable[[CapacityStep], None] | None = None
    ran: list[CapacityStep] = dataclasses.field(default_factory=list)
    decided: dict[float, CapacityStep] = dataclasses.field(default_factory=dict)
    interrupted: bool = False
    unusable: CapacityStep | None = None  # the last step the generator could not produce
    over: Over = "rate"

    def _q(self, value: float) -> str:
        """A step's value with its unit: ``1,357 req/s`` or ``64 connections``."""
        return f"{value:,.6g} {CAPACITY_UNITS[self.over]}"

    def _round(self, value: float) -> float:
        """A step's value as tried: five significant digits of a rate, a whole number of
        connections."""
        return float(max(round(value), 1)) if self.over == "connections" else _rounded(value)

    def run(
        self,
        start_rate: float | None,
        growth: float,
        min_rate: float,
        max_rate: float | None,
    ) -> CapacityResult:
        precision = self.precision
        lo: float | None = None  # highest rate that passed
        hi: float | None = None  # lowest rate that failed
        # Lowest rate the generator could not produce: the search bisects below it (a
        # doubling can jump past what one worker sends) and never tries it again.
        ceiling: float | None = None
        confirmed = False
        try:
            rate = self._round(start_rate) if start_rate is not None else self._estimate(min_rate)
            if max_rate is not None:
                rate = min(rate, max_rate)
            while True:
                phase: Phase = "bracket"
                top = min((b for b in (hi, ceiling) if b is not None), default=None)
                if lo is not None and top is not None:
                    whole = self.over == "connections" and top - lo <= 1
                    if whole or top <= lo * (1 + precision):
                        if top != hi:
                            raise _Stop(self._reason_ceiling())
                        if confirmed:
                            break
                        rate, phase = lo, "confirm"
                    else:
                        rate, phase = self._round(math.sqrt(lo * top)), "bisect"
                        if self.over == "connections":  # a whole number strictly between
                            rate = min(max(rate, lo + 1), top - 1)
                elif lo is not None:
                    if max_rate is not None and lo >= max_rate:
                        return self._result(None, self._reason_all_passed(lo), lo)
                    rate = self._round(lo * growth)
                    rate = min(rate, max_rate) if max_rate is not None else rate
                elif top is not None:
                    if top <= min_rate:
                        if top != hi:
                            raise _Stop(self._reason_ceiling())
                        return self._result(None, self._reason_none_passed(top), None, top)
                    rate = max(self._round(top / growth), min_rate)
                try:
                    decision = self._judge(rate, phase)
                except _GeneratorLimited:
                    ceiling = rate if ceiling is None else min(ceiling, rate)
                    continue
                if decision == "pass":
                    lo, confirmed = rate, phase == "confirm"
                else:
                    hi = rate
                    if lo is not None and lo >= hi:  # the answer failed its confirmation
                        below = [r for r, p in self.decided.items() if r < hi and _passed(p)]
                        lo = max(below, default=None)
        except _Stop as stop:
            return self._result(None, str(stop), lo, hi)
        assert lo is not None and hi is not None
        within = f"the capacity is within {precision:.0%} above {self._q(lo)}"
        if self.over == "connections" and hi - lo <= 1:
            within = f"the capacity is {self._q(lo)}"
        reason = (
            f"{self._q(lo)} met {self.goal.text!r} (confirmed by a second run) and"
            f" {self._q(hi)} did not ({self.decided[hi].why}): {within}"
        )
        return self._result(lo, reason, lo, hi, confirmed=True)

    # -- one rate ----------------------------------------------------------------------------
    def _estimate(self, min_rate: float) -> float:
        """One closed-loop run: the first step goes a little below what it achieved."""
        closed = dataclasses.replace(self.spec, rate=None)
        self._budget()
        self._begin("closed-loop estimate")
        attempts = Attempts(self.runner(closed))
        result = attempts.kept
        if result.interrupted:
            self._stop_interrupted(CapacityStep(0.0, "estimate", "unusable", "", attempts))
        why = f"closed loop, {self.spec.connections} connections: {result.rps:,.0f} req/s"
        if not result.valid:
            why += " (invalid: " + "; ".join(result.invalid_reasons) + ")"
        self._emit(CapacityStep(0.0, "estimate", "estimate", why, attempts))
        return max(_rounded(result.rps * START_SHARE), min_rate)

    def _judge(self, rate: float, phase: Phase) -> Literal["pass", "fail"]:
        """Run ``rate`` once, or up to three times when its figures are near a bound."""
        verdicts: list[Verdict] = []
        for run in range(3):
            step = self._step(rate, phase if run == 0 else "repeat")
            verdicts.append(step.verdict)
            near = any(c.near_bound(self.margin) for c in step.checks)
            if run == 0 and not (near and step.result.valid):
                break
            if run == 1 and verdicts[0] == verdicts[1]:
                break
            if run < 2:
                self._emitted(step)  # another run at this rate follows
        decision: Literal["pass", "fail"] = (
            "pass" if verdicts.count("pass") * 2 > len(verdicts) else "fail"
        )
        self.ran[-1] = dataclasses.replace(self.ran[-1], decision=decision)
        self.decided[rate] = self.ran[-1]
        self._emitted(self.ran[-1])
        return decision

    def _step(self, rate: float, phase: Phase) -> CapacityStep:
        self._budget()
        self._begin(self._q(rate))
        if self.over == "connections":
            spec = dataclasses.replace(self.spec, connections=int(rate))
        else:
            spec = open_loop_spec(self.spec, rate)
        attempts = run_with_retries(spec, self.runner, self.retries)
        result = attempts.kept
        if result.interrupted:
            self._stop_interrupted(CapacityStep(rate, phase, "unusable", "", attempts))
        verdict = self.goal.evaluate(result)
        if attempts.generator_limited:
            why = _unusable(self._q(rate), attempts)
            step = CapacityStep(rate, phase, "unusable", why, attempts)
            self._emit(step)
            self.unusable = step
            raise _GeneratorLimited
        if not result.valid:
            why = "invalid for a server-side cause: " + "; ".join(result.invalid_reasons)
            step = CapacityStep(rate, phase, "fail", why, attempts, verdict.checks)
        else:
            outcome: Verdict = "pass" if verdict.passed else "fail"
            step = CapacityStep(rate, phase, outcome, verdict.describe(), attempts, verdict.checks)
        self.ran.append(step)
        return step

    def _begin(self, label: str) -> None:
        """The next load is about to run: stop here if asked to, else label its progress."""
        if self.live.stop_requested:
            self.interrupted = True
            raise _Stop(self._reason_unknown_after("interrupted before the next step"))
        self.live.begin(len(self.ran) + 1, label)

    def _stop_interrupted(self, cut_short: CapacityStep) -> None:
        """The load just run was cut short: keep it, unjudged, and end the search."""
        seconds = cut_short.result.duration_s
        at = f"at {self._q(cut_short.rate)}" if cut_short.rate else "during the estimate"
        why = f"interrupted {at} after {seconds:.1f} s: not judged"
        self.interrupted = True
        self._emit(dataclasses.replace(cut_short, why=why))
        raise _Stop(self._reason_unknown_after(why))

    def _emit(self, step: CapacityStep) -> None:
        """A step whose verdict is final: keep it and pass it on."""
        self.ran.append(step)
        self._emitted(step)

    def _emitted(self, step: CapacityStep) -> None:
        if self.on_step is not None:
            self.on_step(step)

    def _budget(self) -> None:
        if len(self.ran) >= self.max_steps:
            raise _Stop(
                f"unknown: the search used its {self.max_steps} steps before the bounds met"
                " (raise max_steps or precision)"
            )

    # -- the answer --------------------------------------------------------------------------
    def _result(
        self,
        rate: float | None,
        reason: str,
        at_least: float | None,
        failed_rate: float | None = None,
        *,
        confirmed: bool = False,
    ) -> CapacityResult:
        failed = self.decided.get(failed_rate) if failed_rate is not None else None
        return CapacityResult(
            rate=rate,
            reason=reason,
            slo=self.goal.text,
            precision=self.precision,
            steps=tuple(p for p in self.ran if p.phase != "estimate"),
            at_least=at_least,
            confirmed=confirmed,
            failed_above_rate=failed_rate if failed is not None else None,
            failed_above=tuple(c for c in failed.checks if not c.passed) if failed else (),
            interrupted=self.interrupted,
            estimate=next((p for p in self.ran if p.phase == "estimate"), None),
            over=self.over,
        )

    def _reason_ceiling(self) -> str:
        """Unknown: the answer lies above the highest rate this generator can send."""
        why = self.unusable.why if self.unusable is not None else "the generator fell short"
        return self._reason_unknown_after(
            f"{why}; every rate the search could still try was beyond the generator (add"
            " workers, cores or a cluster, or set max_connections)"
        )

    def _reason_unknown_after(self, why: str) -> str:
        verified = [r for r, p in self.decided.items() if _passed(p)]
        known = (
            f"; the server met the SLO up to {self._q(max(verified))}"
            if verified
            else "; no rate was verified"
        )
        return f"unknown: {why}{known}"

    def _reason_all_passed(self, top: float) -> str:
        steps = "rate" if self.over == "rate" else "count of connections"
        return f"unknown: every {steps} up to max_rate ({self._q(top)}) met the SLO"

    def _reason_none_passed(self, lowest: float) -> str:
        return (
            f"no {'rate' if self.over == 'rate' else 'count of connections'} met"
            f" {self.goal.text!r}: even {self._q(lowest)} failed"
            f" ({self.decided[lowest].why})"
        )


def _unusable(rate: str, attempts: Attempts) -> str:
    reasons = "; ".join(attempts.kept.invalid_reasons)
    return (
        f"the generator could not produce {rate} in {attempts.runs} attempt(s)"
        f" ({reasons}), so the server was not measured there"
    )


def _passed(step: CapacityStep) -> bool:
    return step.decision == "pass"


def _rounded(rate: float) -> float:
    """Five significant digits: readable rates, far finer than any precision asked for."""
    return float(f"{rate:.5g}")


def _check_search(
    precision: float,
    start_rate: float | None,
    growth: float,
    min_rate: float,
    max_rate: float | None,
    margin: float,
    max_steps: int,
) -> None:
    if not 0.005 <= precision <= 1:
        raise SpecError(f"precision must be between 0.005 and 1 (a fraction), got {precision!r}")
    if not growth > 1:
        raise SpecError(f"growth must be > 1, got {growth!r}")
    if not min_rate > 0:
        raise SpecError(f"min_rate must be > 0, got {min_rate!r}")
    if max_rate is not None and not max_rate >= min_rate:
        raise SpecError(f"max_rate ({max_rate!r}) must be >= min_rate ({min_rate!r})")
    if start_rate is not None and not start_rate >= min_rate:
        raise SpecError(f"start_rate ({start_rate!r}) must be >= min_rate ({min_rate!r})")
    if not 0 <= margin < 1:
        raise SpecError(f"margin must be in [0, 1), got {margin!r}")
    if max_steps < 1:
        raise SpecError(f"max_steps must be >= 1, got {max_steps!r}")


# Its own options, offered beside the loads' when an option is misspelt.
_OWN = own_options(capacity)


publish(globals())
