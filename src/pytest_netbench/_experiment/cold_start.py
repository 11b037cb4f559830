"""Cold start: one closed-loop run from the very first request, read at a fine timeline.

A JIT (PyPy, the JVM) or a cache that fills makes a server's first second slower than the
rest; a warm-up hides exactly that, so a cold start has none. The run's timeline is kept at
``resolution`` (100 ms by default) and read as a curve:

- the *steady rate*: the median req/s of the rows in the last half of the run;
- the *first-second rate*: the req/s of the rows that begin in the first second, and its
  ratio to the steady rate (1.0: no warm-up to see; 0.2: a fifth of the speed at first);
- ``settle_s``: when the req/s came within ``settle_tolerance`` (10 %) of the steady rate
  and stayed there to the end. Judged over ``settle_window`` (1 s; a quarter of a shorter
  run), not row by row: from ``settle_s`` on, every stretch of rows that long ran within
  the tolerance on average. Rows of 100 ms on a busy machine swing by more than 10 % on
  their own, which says nothing about warming up; a JIT's warm-up lasts seconds. ``inf``
  when the last stretch is still outside. ``p50_settle_s`` is the same for latency (the
  median of the rows' p50 over each stretch).

A retry of a spoiled run meets a server the run before it has warmed, so ``retries``
defaults to none: use it only with a runner that restarts the server.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.live import ExperimentLive
from pytest_netbench._experiment.running import base_spec, own_options
from pytest_netbench._input.options import HttpOptions
from pytest_netbench._input.spec import DEFAULT_DURATION_S, check_timeline_resolution
from pytest_netbench._load.api import Monitored
from pytest_netbench._load.attempts import Attempts, Runner, check_retries, run_with_retries
from pytest_netbench._model import LoadResult, LoadSpec, TimelineRow
from pytest_netbench._model.live import ProgressCallback, StopSignal
from pytest_netbench._public import publish

DEFAULT_RESOLUTION_S = 0.1
DEFAULT_SETTLE_TOLERANCE = 0.10
DEFAULT_SETTLE_WINDOW_S = 1.0
# The steady half of the run needs rows enough for a median.
MIN_ROWS = 4
# Options of a load that would make it something other than a cold start.
_NOT_COLD = {
    "warmup": "a cold start measures from the very first request: drop warmup",
    "rate": "a cold start is a closed-loop run (connections=): drop rate",
    "requests": "a cold start runs for a duration: drop requests (use duration=)",
    "timeline_resolution": "a cold start sets the timeline's resolution: use resolution=",
}


@dataclass(frozen=True, slots=True)
class ColdStartResult:
    """The run kept (``attempts.kept``, its timeline at ``resolution_s``) and the figures
    read from it; every figure is derived from the stored run, so it survives JSON."""

    attempts: Attempts
    duration_s: float
    resolution_s: float
    settle_tolerance: float = DEFAULT_SETTLE_TOLERANCE
    settle_window_s: float = DEFAULT_SETTLE_WINDOW_S

    @property
    def result(self) -> LoadResult:
        return self.attempts.kept

    @property
    def valid(self) -> bool:
        return self.result.valid

    @property
    def rows(self) -> tuple[TimelineRow, ...]:
        """The timeline rows that begin inside the run's window."""
        end = self.duration_s - self.resolution_s / 1000
        return tuple(row for row in self.result.timeline if row.start_s < end)

    @property
    def first_second_rate(self) -> float:
        """Ok responses per second over the rows beginning in the first second."""
        first = [row for row in self.rows if row.start_s < 1.0 - self.resolution_s / 1000]
        span = sum(row.span_s for row in first)
        return sum(row.ok for row in first) / span if span > 0 else math.nan

    @property
    def steady_rate(self) -> float:
        """The median req/s of the rows in the last half of the run."""
        return _median([row.rate for row in self._steady_rows()])

    @property
    def first_second_ratio(self) -> float:
        """First-second rate over steady rate: below 1 when the server started slow."""
        steady = self.steady_rate
        return self.first_second_rate / steady if steady > 0 else math.nan

    @property
    def settle_s(self) -> float:
        """When req/s came within ``settle_tolerance`` of the steady rate for good: the start
        of the first ``settle_window_s`` stretch from which on every stretch is within it."""
        rows, width = self.rows, self._window_rows()
        rates = [
            sum(row.ok for row in rows[i : i + width]) / (width * self.resolution_s)
            for i in range(len(rows) - width + 1)
        ]
        return self._settled_from(rates, self.steady_rate)

    @property
    def first_second_p50_ms(self) -> float:
        """The median of the p50 latencies of the rows beginning in the first second."""
        first = [row for row in self.rows if row.start_s < 1.0 - self.resolution_s / 1000]
        return _median([row.p50_ms for row in first])

    @property
    def steady_p50_ms(self) -> float:
        """The median of the p50 latencies of the rows in the last half of the run."""
        return _median([row.p50_ms for row in self._steady_rows()])

    @property
    def p50_settle_s(self) -> float:
        """When the p50 latency came within ``settle_tolerance`` of the steady p50 for good
        (per stretch, the median of its rows' p50; a stretch without an ok response is
        outside)."""
        rows, width = self.rows, self._window_rows()
        p50s = [
            _median([row.p50_ms for row in rows[i : i + width]])
            for i in range(len(rows) - width + 1)
        ]
        return self._settled_from(p50s, self.steady_p50_ms)

    def _steady_rows(self) -> tuple[TimelineRow, ...]:
        rows = self.rows
        return rows[len(rows) // 2 :]

    def _window_rows(self) -> int:
        return max(1, round(self.settle_window_s / self.resolution_s))

    def _settled_from(self, values: Sequence[float], steady: float) -> float:
        """The start of the first of the stretches (``values``, one per starting row) that
        are within the tolerance of ``steady`` through to the last; ``inf`` when the last
        is outside it."""
        if not values or not steady > 0:
            return math.inf
        settled = math.inf
        for index in range(len(values) - 1, -1, -1):
            # NaN (no ok response) is outside.
            if not abs(values[index] - steady) <= self.settle_tolerance * steady:
                break
            settled = self.rows[index].start_s
        return settled

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "cold_start",
            "valid": self.valid,
            "duration_s": self.duration_s,
            "resolution_s": self.resolution_s,
            "settle_tolerance": self.settle_tolerance,
            "settle_window_s": self.settle_window_s,
            "first_second_rate": _json_float(self.first_second_rate),
            "steady_rate": _json_float(self.steady_rate),
            "first_second_ratio": _json_float(self.first_second_ratio),
            "settle_s": _json_float(self.settle_s),
            "settled": math.isfinite(self.settle_s),
            "first_second_p50_ms": _json_float(self.first_second_p50_ms),
            "steady_p50_ms": _json_float(self.steady_p50_ms),
            "p50_settle_s": _json_float(self.p50_settle_s),
            "result": self.result.to_dict(),
            "discarded": [r.to_dict() for r in self.attempts.discarded],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ColdStartResult:
        attempts = Attempts(
            kept=LoadResult.from_dict(data["result"]),
            discarded=tuple(LoadResult.from_dict(r) for r in data.get("discarded", ())),
        )
        return cls(
            attempts=attempts,
            duration_s=float(data["duration_s"]),
            resolution_s=float(data["resolution_s"]),
            settle_tolerance=float(data.get("settle_tolerance", DEFAULT_SETTLE_TOLERANCE)),
            settle_window_s=float(data.get("settle_window_s", DEFAULT_SETTLE_WINDOW_S)),
        )


class Settling(TypedDict, total=False):
    """How a cold start's timeline is read (:func:`cold_start` says what each means)."""

    resolution: float
    settle_tolerance: float
    settle_window: float | None


class ColdStartOptions(Settling, HttpOptions, total=False):
    """What ``netbench.cold_start(url, **options)`` takes."""


def cold_start(
    url: str | LoadSpec,
    *,
    resolution: float = DEFAULT_RESOLUTION_S,
    settle_tolerance: float = DEFAULT_SETTLE_TOLERANCE,
    settle_window: float | None = None,
    retries: int = 0,
    runner: Runner | None = None,
    server: Monitored | None = None,
    cluster: object | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    **options: Unpack[HttpOptions],
) -> ColdStartResult:
    """One closed-loop run at ``url`` (with ``http_load``'s options such as
    ``connections``, or a checked LoadSpec) from its very first request, with no warm-up,
    its timeline kept at ``resolution`` seconds; ``duration`` defaults to the spec's own, or 10 s.
    ``settle_tolerance`` and ``settle_window`` (seconds; default 1 s, or a quarter of a
    shorter run) say what counts as settled (see the module's doc).

    Run it against a server that has served nothing yet (a fresh ``server=``), or the
    first seconds measure a server that is already warm.
    """
    given: dict[str, Any] = dict(options)
    duration = given.pop("duration", None)
    for name, why in _NOT_COLD.items():
        if name in given and given[name] not in (None, 0, 0.0):
            raise SpecError(f"{name}={given[name]!r}: {why}")
    check_retries(retries)
    if not 0 < settle_tolerance < 1:
        raise SpecError(f"settle_tolerance must be a fraction in (0, 1), got {settle_tolerance!r}")
    if isinstance(url, LoadSpec):
        spec = base_spec(url, given, also=_OWN)
        length = duration if duration is not None else spec.duration_s or DEFAULT_DURATION_S
    else:
        length = duration if duration is not None else DEFAULT_DURATION_S
        spec = base_spec(url, {**given, "duration": length}, also=_OWN)
    spec = _cold(spec, length, resolution)
    window = _checked_window(settle_window, float(length), resolution)
    live = ExperimentLive(progress, stop, 1)
    attempts = run_with_retries(spec, live.runner(runner, server, cluster), retries)
    return ColdStartResult(attempts, float(length), resolution, settle_tolerance, window)


def _cold(spec: LoadSpec, duration: float, resolution: float) -> LoadSpec:
    """``spec`` as a cold start: checked, closed loop, no warm-up, the fine timeline."""
    if spec.warmup_s > 0:
        raise SpecError(f"warmup={spec.warmup_s:g}: {_NOT_COLD['warmup']}")
    if spec.rate is not None:
        raise SpecError(f"rate={spec.rate:g}: {_NOT_COLD['rate']}")
    check_timeline_resolution(resolution, spec.loop)
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or not duration > 0:
        raise SpecError(f"duration must be a number of seconds > 0, got {duration!r}")
    steps = duration / resolution
    if abs(steps - round(steps)) > 1e-6:
        raise SpecError(
            f"duration ({duration:g} s) must be a whole number of resolution steps"
            f" ({resolution:g} s), so that every timeline row is a full one"
        )
    if round(steps) < MIN_ROWS:
        raise SpecError(
            f"duration ({duration:g} s) holds {round(steps)} rows of {resolution:g} s; a cold"
            f" start needs at least {MIN_ROWS}: run longer or use a finer resolution"
        )
    return dataclasses.replace(
        spec, duration_s=float(duration), requests=None, timeline_resolution_s=float(resolution)
    )


def _checked_window(window: float | None, duration: float, resolution: float) -> float:
    """The settle window: whole rows, at most half the run (the steady half)."""
    if window is None:
        return min(DEFAULT_SETTLE_WINDOW_S, resolution * max(1, round(duration / resolution / 4)))
    if isinstance(window, bool) or not isinstance(window, (int, float)) or not window > 0:
        raise SpecError(f"settle_window must be a number of seconds > 0, got {window!r}")
    rows = window / resolution
    if abs(rows - round(rows)) > 1e-6:
        raise SpecError(
            f"settle_window ({window:g} s) must be a whole number of resolution steps"
            f" ({resolution:g} s)"
        )
    if window > duration / 2:
        raise SpecError(
            f"settle_window ({window:g} s) must be at most half the run ({duration / 2:g} s),"
            " the half the steady rate is taken from"
        )
    return float(window)


def _median(values: Sequence[float]) -> float:
    present = [v for v in values if not math.isnan(v)]
    return statistics.median(present) if present else math.nan


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else value


# Its own options, offered beside the loads' when an option is misspelt.
_OWN = own_options(cold_start)


publish(globals())
