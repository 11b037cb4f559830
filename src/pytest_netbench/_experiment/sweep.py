"""Rate sweeps, as autobench runs httperf: one open-loop step per demanded rate, each a
full :class:`LoadResult`, read as a curve (demanded vs achieved rate, corrected and
uncorrected latency, errors by kind, the spread of req/s per second, validity).

A sweep may stop early once a step is far past saturation (its p99 or error rate past a
bound the caller names): the rates left are listed as not run, and the result says why.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.live import ExperimentLive
from pytest_netbench._experiment.per_request import step_requests
from pytest_netbench._experiment.running import base_spec, open_loop_spec, own_options
from pytest_netbench._experiment.slo import error_rate
from pytest_netbench._input.options import HttpOptions
from pytest_netbench._load.api import Monitored
from pytest_netbench._load.attempts import (
    DEFAULT_RETRIES,
    Attempts,
    Runner,
    check_retries,
    run_with_retries,
)
from pytest_netbench._model import ERROR_KINDS, LoadResult, LoadSpec
from pytest_netbench._model.live import ProgressCallback, StopSignal
from pytest_netbench._public import publish

# More steps than this is almost surely a typo in the step ("1:100000:1").
MAX_STEPS = 1000
_NUMBER = r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*"
_RANGE = re.compile(rf"^{_NUMBER}:{_NUMBER}:{_NUMBER}$")


def parse_rates(text: str) -> tuple[float, ...]:
    """``"100:2000:100"`` (start:stop:step, the stop included, as autobench's low, high and
    step are) or ``"100,200,500"``; raise SpecError naming the part that cannot work."""
    text = text.strip()
    if ":" in text:
        match = _RANGE.match(text)
        if match is None:
            raise SpecError(f"rates {text!r}: write start:stop:step (e.g. 100:2000:100)")
        start, stop, step = (float(g) for g in match.groups())
        if step <= 0:
            raise SpecError(f"rates {text!r}: the step must be > 0, got {step:g}")
        if stop < start:
            raise SpecError(f"rates {text!r}: the stop ({stop:g}) is below the start")
        count = math.floor((stop - start) / step + 1e-9) + 1
        rates = [round(start + i * step, 9) for i in range(min(count, MAX_STEPS + 1))]
    else:
        rates = []
        for part in text.split(","):
            try:
                rates.append(float(part))
            except ValueError:
                raise SpecError(
                    f"rates {text!r}: {part.strip()!r} is not a number;"
                    " write 100,200,500 or start:stop:step"
                ) from None
    return check_rates(rates)


def check_rates(rates: Any) -> tuple[float, ...]:
    """A non-empty list of positive rates, within MAX_STEPS."""
    if isinstance(rates, str):
        return parse_rates(rates)
    values = tuple(float(r) for r in rates)
    if not values:
        raise SpecError("no rates given: write e.g. 100:2000:100 or 100,200,500")
    if len(values) > MAX_STEPS:
        raise SpecError(f"{len(values)} rates is more than {MAX_STEPS}: use a larger step")
    bad = [r for r in values if not (r > 0 and math.isfinite(r))]
    if bad:
        raise SpecError(f"every rate must be > 0 req/s, got {bad[0]:g}")
    return values


# A timeline row "inside" the window may end this much after it (the last timer tick).
_ROW_SLACK_S = 0.05


def answered_rate(result: LoadResult) -> float:
    """Ok responses per second inside the measured window: the timeline rows that end in
    it. ``rps`` also counts the answers of the drain after the window (an open loop waits
    for what it sent), which past saturation hides that the server fell behind."""
    end = result.duration_s + _ROW_SLACK_S
    rows = [r for r in result.timeline if r.start_s + r.span_s <= end]
    span = sum(r.span_s for r in rows)
    return sum(r.ok for r in rows) / span if span > 0 else result.rps


@dataclass(frozen=True, slots=True)
class SweepStep:
    """One demanded rate, the result kept for it, and any runs discarded before it."""

    rate: float
    attempts: Attempts

    @property
    def result(self) -> LoadResult:
        return self.attempts.kept

    @property
    def achieved_rate(self) -> float:
        """Requests actually sent per second (the generator's side of the curve)."""
        achieved = self.result.generator.achieved_rate
        return achieved if achieved is not None else self.result.rps

    @property
    def answered_rate(self) -> float:
        """Ok responses per second inside the window (the server's side; see
        :func:`answered_rate`)."""
        return answered_rate(self.result)

    @property
    def valid(self) -> bool:
        return self.result.valid

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        uncorrected = r.uncorrected
        return {
            "rate": self.rate,
            "achieved_rate": self.achieved_rate,
            "answered_rate": self.answered_rate,
            "rps": r.rps,
            "rps_stdev": r.rps_stdev,
            "p50_ms": _json_float(r.p50_ms),
            "p90_ms": _json_float(r.p90_ms),
            "p99_ms": _json_float(r.p99_ms),
            "uncorrected": {
                name: _json_float(getattr(uncorrected, name) if uncorrected else math.nan)
                for name in ("p50_ms", "p90_ms", "p99_ms")
            },
            "errors": {k: r.errors.get(k, 0) for k in ERROR_KINDS},
            "errors_total": r.errors_total,
            "error_rate": error_rate(r),
            "valid": r.valid,
            "invalid_reasons": list(r.invalid_reasons),
            "invalid_causes": list(r.invalid_causes),
            "by_request": step_requests(r),
            "result": r.to_dict(),
            "discarded": [d.to_dict() for d in self.attempts.discarded],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SweepStep:
        attempts = Attempts(
            kept=LoadResult.from_dict(data["result"]),
            discarded=tuple(LoadResult.from_dict(d) for d in data.get("discarded", ())),
        )
        return cls(float(data["rate"]), attempts)


@dataclass(frozen=True, slots=True)
class SweepResult:
    """The steps run, in order, out of the rates asked for. ``interrupted``: stopped by a
    :class:`StopSignal` (Ctrl-C); the last step's result says whether it was cut short."""

    rates: tuple[float, ...]
    steps: tuple[SweepStep, ...]
    stopped_early: bool = False
    stop_reason: str = ""
    interrupted: bool = False

    @property
    def skipped_rates(self) -> tuple[float, ...]:
        """Rates not run because the sweep stopped early."""
        return self.rates[len(self.steps) :]

    @property
    def results(self) -> tuple[LoadResult, ...]:
        return tuple(s.result for s in self.steps)

    @property
    def valid(self) -> bool:
        return all(s.valid for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "sweep",
            "rates": list(self.rates),
            "valid": self.valid,
            "stopped_early": self.stopped_early,
            "stop_reason": self.stop_reason,
            "interrupted": self.interrupted,
            "skipped_rates": list(self.skipped_rates),
            "steps": [s.to_dict() for s in self.steps],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SweepResult:
        return cls(
            rates=tuple(float(r) for r in data["rates"]),
            steps=tuple(SweepStep.from_dict(s) for s in data["steps"]),
            stopped_early=bool(data.get("stopped_early", False)),
            stop_reason=str(data.get("stop_reason", "")),
            interrupted=bool(data.get("interrupted", False)),
        )


class SweepBounds(TypedDict, total=False):
    """Where a sweep stops early (:func:`sweep` says what each means)."""

    stop_p99_ms: float | None
    stop_error_rate: float | None


class SweepOptions(SweepBounds, HttpOptions, total=False):
    """What ``netbench.sweep(url, rates=..., **options)`` takes besides the rates."""


def sweep(
    url: str | LoadSpec,
    *,
    rates: Any,
    stop_p99_ms: float | None = None,
    stop_error_rate: float | None = None,
    retries: int = DEFAULT_RETRIES,
    runner: Runner | None = None,
    server: Monitored | None = None,
    cluster: object | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    on_step: Callable[[SweepStep], None] | None = None,
    **options: Unpack[HttpOptions],
) -> SweepResult:
    """One open-loop load per rate in ``rates`` (a list, or text for :func:`parse_rates`),
    at ``url`` (with ``http_load``'s options such as ``duration``, or a checked LoadSpec).

    ``stop_p99_ms`` / ``stop_error_rate``: stop after a step whose p99 (ms) or error rate
    (errors per request sent) is past this bound, a step far beyond saturation, so the
    rates above it are not run.

    ``progress``: live reports of the running step (see ``http_load``); ``stop``: a
    :class:`StopSignal` that ends the sweep early with the steps done; ``on_step``: called
    with each step as it finishes (to print a table row by row).
    """
    steps_to_run = check_rates(rates)
    check_retries(retries)
    for name, bound in (("stop_p99_ms", stop_p99_ms), ("stop_error_rate", stop_error_rate)):
        if bound is not None and not bound >= 0:
            raise SpecError(f"{name} must be >= 0, got {bound!r}")
    spec = base_spec(url, options, also=_OWN)
    specs = [open_loop_spec(spec, rate) for rate in steps_to_run]  # check all before any load
    live = ExperimentLive(progress, stop, len(steps_to_run))
    runner = live.runner(runner, server, cluster)
    steps: list[SweepStep] = []
    for rate, step_spec in zip(steps_to_run, specs, strict=True):
        if live.stop_requested:
            return _interrupted(steps_to_run, steps)
        live.begin(len(steps) + 1, f"{rate:,.6g} req/s")
        steps.append(SweepStep(rate, run_with_retries(step_spec, runner, retries)))
        if on_step is not None:
            on_step(steps[-1])
        if steps[-1].result.interrupted:
            return _interrupted(steps_to_run, steps)
        why = _past_bound(steps[-1].result, stop_p99_ms, stop_error_rate)
        if why and len(steps) < len(steps_to_run):
            left = len(steps_to_run) - len(steps)
            reason = f"stopped after {rate:,.6g} req/s: {why}; {left} higher rate(s) not run"
            return SweepResult(steps_to_run, tuple(steps), True, reason)
    return SweepResult(steps_to_run, tuple(steps))


def _interrupted(rates: tuple[float, ...], steps: list[SweepStep]) -> SweepResult:
    left = len(rates) - len(steps)
    if steps and steps[-1].result.interrupted:
        done = f"interrupted during {steps[-1].rate:,.6g} req/s"
    else:
        done = f"interrupted after {len(steps)} step(s)"
    reason = f"{done}; {left} rate(s) not run" if left else done
    return SweepResult(rates, tuple(steps), True, reason, interrupted=True)


def _past_bound(
    result: LoadResult, stop_p99_ms: float | None, stop_error_rate: float | None
) -> str:
    if stop_error_rate is not None and error_rate(result) > stop_error_rate:
        return f"error rate {error_rate(result):.2%} is past the {stop_error_rate:.2%} bound"
    if stop_p99_ms is not None:
        p99 = result.p99_ms
        if math.isnan(p99):
            return "no request succeeded, so there is no p99 to compare with the bound"
        if p99 > stop_p99_ms:
            return f"p99 {p99:,.1f} ms is past the {stop_p99_ms:,.6g} ms bound"
    return ""


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) else value


# Its own options, offered beside the loads' when an option is misspelt.
_OWN = own_options(sweep)


publish(globals())
