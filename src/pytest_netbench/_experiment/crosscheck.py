"""Crosscheck: one load measured by netbench and then by a second tool (wrk or ab; h2load
for an HTTP/2 load).

A load generator can be wrong in ways its own figures never show (a slow client inflating
latency, a count that misses failures); seed 001 checked httperf against weighttp and found
14-19 % differences. A crosscheck runs the same load twice, netbench first and the second
tool right after, against the same server, and sets the figures side by side with their
ratio, netbench over the other tool: ``ratio("rps") == 1.05`` means netbench measured 5 %
more throughput, ``ratio("p99_ms") == 0.9`` a tenth less tail latency.

**Both tools meet the same server.** A server started fresh is not the server it will be
a few seconds later: a JIT compiles its hot paths, caches fill, pools grow (seed 003 read
its first ab run against the JVM at a fraction of the steady state). Measured first,
netbench would meet that cold server and the second tool a warm one: the catalog's
Node.js server, started fresh, read 0.73x ab without keep-alive, 0.99x a moment later.
So a crosscheck warms the server first (``warmup``, 1 s by default: a netbench load of
the same shape, not measured), then runs netbench, the other tool, and netbench again
(``bracket``). netbench's column is the mean of its two runs, which bracket the other
tool's in time, so a server that still drifts moves both sides alike; when the two runs
differ by more than :data:`STEADY_DRIFT` in throughput the crosscheck is marked
unsteady (``steady`` is False) and says so, rather than report a ratio of two different
servers.

The tools differ in ways that are not errors: ab sends HTTP/1.0 requests (keep-alive by
header) and prints its percentile table in whole milliseconds (its ``-e`` file, read here,
has microseconds); each tool has its own client costs on the same two cores. Read a
ratio as a check on the order of magnitude and on rankings across servers, not as a
correction factor.

h2load prints no percentiles, only the min, max, mean and standard deviation of its
requests' times, so an HTTP/2 crosscheck compares req/s, mean, stdev, max and errors
(:func:`metrics_of`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.live import ExperimentLive
from pytest_netbench._experiment.running import base_spec, own_options
from pytest_netbench._experiment.tool_output import ToolFigures
from pytest_netbench._experiment.tool_runs import TOOLS, check_comparable, require, run_tool
from pytest_netbench._input.options import HttpOptions
from pytest_netbench._input.spec import DEFAULT_DURATION_S
from pytest_netbench._load.api import Monitored
from pytest_netbench._load.attempts import DEFAULT_RETRIES, Attempts, Runner, run_with_retries
from pytest_netbench._model import LoadResult, LoadSpec
from pytest_netbench._model.live import ProgressCallback, StopSignal
from pytest_netbench._public import publish

# The figures both tools report, in the order tables show them.
METRICS: tuple[str, ...] = ("rps", "p50_ms", "p90_ms", "p99_ms", "errors")
# h2load's: it reports no percentiles.
H2LOAD_METRICS: tuple[str, ...] = ("rps", "mean_ms", "stdev_ms", "max_ms", "errors")
METRIC_LABELS = {
    "rps": "req/s",
    "p50_ms": "p50 ms",
    "p90_ms": "p90 ms",
    "p99_ms": "p99 ms",
    "mean_ms": "mean ms",
    "stdev_ms": "sd ms",
    "max_ms": "max ms",
    "errors": "errors",
}


# netbench's two runs (before and after the other tool) may differ by this much in
# throughput before the crosscheck is called unsteady.
STEADY_DRIFT = 0.15
# The warm-up before both tools' runs when none is given (seconds).
DEFAULT_WARMUP_S = 1.0


def metrics_of(tool: str) -> tuple[str, ...]:
    """The figures a crosscheck with ``tool`` compares, in table order."""
    return H2LOAD_METRICS if tool == "h2load" else METRICS


@dataclass(frozen=True, slots=True)
class CrosscheckResult:
    """The netbench run (``attempts.kept``, retried like any load if the generator spoiled
    it), the second tool's figures for the same load, and netbench's run after the other
    tool's (``again``; None when not bracketed)."""

    tool: str
    attempts: Attempts
    other: ToolFigures
    again: LoadResult | None = None
    warmup_s: float = 0.0  # the netbench load that warmed the server before both

    @property
    def netbench(self) -> LoadResult:
        return self.attempts.kept

    @property
    def valid(self) -> bool:
        """netbench's runs are both valid (each is half of its column when bracketed)."""
        return self.netbench.valid and (self.again is None or self.again.valid)

    @property
    def metrics(self) -> tuple[str, ...]:
        """The figures both tools report (:func:`metrics_of` its tool)."""
        return metrics_of(self.tool)

    @property
    def drift(self) -> float:
        """netbench's throughput after the other tool over before it, less 1 (``+0.46``: 46 %
        more after); NaN when not bracketed or nothing was measured before."""
        if self.again is None or not self.netbench.rps > 0:
            return math.nan
        return self.again.rps / self.netbench.rps - 1

    @property
    def steady(self) -> bool:
        """False when netbench's runs before and after the other tool's differ by more
        than :data:`STEADY_DRIFT` in throughput: the server changed while it was measured,
        and the ratios compare two different servers."""
        return math.isnan(self.drift) or abs(self.drift) <= STEADY_DRIFT

    def netbench_value(self, metric: str) -> float:
        """netbench's figure: the mean of its runs before and after the other tool's when
        bracketed; its errors are the first run's."""
        if metric == "errors":
            return float(self.netbench.errors_total)
        name = _checked(metric, self.tool)
        runs = [self.netbench] if self.again is None else [self.netbench, self.again]
        return sum(float(getattr(run, name)) for run in runs) / len(runs)

    def other_value(self, metric: str) -> float:
        if metric == "errors":
            return float(self.other.errors_total)
        return float(getattr(self.other, _checked(metric, self.tool)))

    def ratio(self, metric: str) -> float:
        """netbench's figure over the other tool's; NaN where the other's is 0 or missing."""
        other = self.other_value(metric)
        if not other > 0:
            return math.nan
        return self.netbench_value(metric) / other

    @property
    def ratios(self) -> dict[str, float]:
        return {metric: self.ratio(metric) for metric in self.metrics if metric != "errors"}

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "crosscheck",
            "tool": self.tool,
            "valid": self.valid,
            "steady": self.steady,
            "drift": _json_float(self.drift),
            "warmup_s": self.warmup_s,
            "figures": {
                metric: {
                    "netbench": _json_float(self.netbench_value(metric)),
                    self.tool: _json_float(self.other_value(metric)),
                    "ratio": _json_float(self.ratio(metric)),
                }
                for metric in self.metrics
            },
            "result": self.netbench.to_dict(),
            "discarded": [r.to_dict() for r in self.attempts.discarded],
            "other": self.other.to_dict(),
            "again": None if self.again is None else self.again.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CrosscheckResult:
        attempts = Attempts(
            kept=LoadResult.from_dict(data["result"]),
            discarded=tuple(LoadResult.from_dict(r) for r in data.get("discarded", ())),
        )
        again = data.get("again")
        return cls(
            str(data["tool"]),
            attempts,
            ToolFigures.from_dict(data["other"]),
            again=None if again is None else LoadResult.from_dict(again),
            warmup_s=float(data.get("warmup_s") or 0.0),
        )


class SecondTool(TypedDict, total=False):
    """Which tool measures the load again (``"wrk"``, ``"ab"`` or ``"h2load"``), and
    whether netbench runs again after it (``bracket``)."""

    tool: str
    bracket: bool


class CrosscheckOptions(SecondTool, HttpOptions, total=False):
    """What ``netbench.crosscheck(url, **options)`` takes."""


# The second tool when none is named.
DEFAULT_TOOL = "wrk"


def crosscheck(
    url: str | LoadSpec,
    *,
    tool: str = DEFAULT_TOOL,
    bracket: bool = True,
    retries: int = DEFAULT_RETRIES,
    runner: Runner | None = None,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    **options: Unpack[HttpOptions],
) -> CrosscheckResult:
    """Measure one load at ``url`` (with ``http_load``'s options, or a checked LoadSpec)
    with netbench, then with ``tool`` (``"wrk"`` or ``"ab"``; ``"h2load"`` for HTTP/2), and
    compare.

    wrk runs for a duration (whole seconds; 10 s by default) with keep-alive, one thread
    per netbench worker; ab sends ``requests=`` requests, with or without keep-alive;
    h2load runs an HTTP/2 load (``protocol="h2"``, the default with it) for whole seconds
    or ``requests=``, ``streams`` per connection (its ``-m``), a thread per worker.
    Everything is checked, and the tool looked up, before either load starts: a load the
    tool cannot run the same way raises :class:`SpecError`, a missing tool
    :class:`ToolNotInstalled` naming its Debian package.

    ``warmup`` (1 s when a URL is given without it) is a netbench load of the same shape
    run before both tools, so that both meet a warm server; ``bracket`` runs netbench
    again after the other tool and marks the crosscheck unsteady when its two runs
    disagree (see the module doc).
    """
    if tool not in TOOLS:
        raise SpecError(f"tool must be one of {', '.join(TOOLS)}, got {tool!r}")
    given: dict[str, Any] = dict(options)
    if isinstance(url, str) and tool == "h2load":
        given.setdefault("protocol", "h2")  # h2load's crosscheck is of an HTTP/2 load
    if isinstance(url, str) and tool in ("wrk", "h2load") and given.get("requests") is None:
        given["duration"] = given.get("duration") or DEFAULT_DURATION_S
    if isinstance(url, str):
        given.setdefault("warmup", DEFAULT_WARMUP_S)
    if not isinstance(bracket, bool):
        raise SpecError(f"bracket must be True or False, got {bracket!r}")
    spec = base_spec(url, given, also=_OWN)
    if tool in ("wrk", "h2load") and spec.duration_s is None and spec.requests is None:
        spec = dataclasses.replace(spec, duration_s=DEFAULT_DURATION_S)
    check_comparable(tool, spec)
    require(tool)
    live = ExperimentLive(progress, stop, 1 + (spec.warmup_s > 0) + bracket)
    run = live.runner(runner, server)
    warmup_s = spec.warmup_s
    if warmup_s:
        # Before both tools, not inside netbench's run only: see the module doc.
        run(warmup_spec(spec))
        spec = dataclasses.replace(spec, warmup_s=0.0)
    attempts = run_with_retries(spec, run, retries)
    other = run_tool(tool, spec)
    again = None
    if bracket and not attempts.kept.interrupted:
        again = run_with_retries(spec, run, retries).kept
    return CrosscheckResult(tool, attempts, other, again=again, warmup_s=warmup_s)


def warmup_spec(spec: LoadSpec) -> LoadSpec:
    """The load that warms the server before a crosscheck: ``spec``'s shape for its
    ``warmup_s``, its whole length a warm-up."""
    return dataclasses.replace(
        spec, duration_s=spec.warmup_s, requests=None, warmup_s=0.0, drain=False
    )


def _checked(metric: str, tool: str) -> str:
    metrics = metrics_of(tool)
    if metric not in metrics or metric == "errors":
        raise SpecError(f"a crosscheck with {tool} compares {', '.join(metrics)}; got {metric!r}")
    return metric


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else value


# Its own options, offered beside the loads' when an option is misspelt.
_OWN = own_options(crosscheck)


publish(globals())
