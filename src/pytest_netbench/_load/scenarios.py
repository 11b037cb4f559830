"""Several named loads at once against one server, as k6's scenarios: browsing at an
arrival rate beside users logging in on a few connections and an admin job, each its own
shape, start offset and duration.

``run_scenarios(url, {"browse": Scenario("/items", rate=200, duration=10), ...})`` checks
every scenario's options as a load's (``http_spec``) before any socket, runs each in a
thread of its own from its ``start`` on (a load runs its shares where it always does:
this thread's loop, or worker processes), and returns a :class:`ScenariosResult`: each
scenario's :class:`LoadResult` by name, and one for all of them together (``total``),
whose ``by_request`` holds each scenario's figures, so ``by_request.browse.p99_ms`` names
one scenario in an SLO, a threshold or the gate as a mix's request kind is named.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, Unpack

from pytest_netbench._errors import NetbenchError, ServerError, SpecError
from pytest_netbench._input.options import HttpOptions
from pytest_netbench._input.spec import http_spec, scale_spec
from pytest_netbench._load.api import Monitored, run_spec
from pytest_netbench._model import (
    ERROR_KINDS,
    CheckStats,
    GeneratorStats,
    LoadResult,
    LoadSpec,
    RequestStats,
    ServerStats,
    TimelineRow,
)
from pytest_netbench._model.live import StopSignal
from pytest_netbench._model.phases import Phases
from pytest_netbench._public import publish
from pytest_netbench._stats.histogram import (
    counts_of_encoded,
    decode_histogram,
    encode_histogram,
    histogram_from_counts,
    new_histogram,
    percentile_of_counts,
)
from pytest_netbench._stats.merge import SATURATED_CPU_SHARE, merge_phases, summarize

# A scenario's checked spec, and its run (given the stop signal all scenarios share).
Prepared = tuple[LoadSpec, Callable[[StopSignal], LoadResult]]


class ScenarioKind(Protocol):
    """What :func:`run_scenarios` needs of a scenario: when it starts, and (``prepare``)
    its checked spec and how to run it against a server's base URL. A :class:`Scenario`
    is a load; ``FlowScenario`` (``pytest_netbench._flow``) a flow's virtual users."""

    start: float

    def prepare(self, base_url: str, scale: float = 1.0) -> Prepared:
        """The checked spec and its run; ``scale`` makes the load that many times as long
        (``--netbench-scale``: duration, requests, warm-up, stages)."""
        ...


class Scenario:
    """One named load among several (:func:`run_scenarios`): the path it requests (or a
    ``mix=`` of its own), when it starts (``start`` seconds after the first), and any
    option of an HTTP load: ``rate=``, ``connections=``, ``stages=``, ``duration=``,
    ``requests=``, ``checks=``..."""

    __slots__ = ("options", "path", "start")

    def __init__(self, path: str = "/", *, start: float = 0.0, **options: Unpack[HttpOptions]):
        self.path = path
        self.start = start
        self.options: dict[str, Any] = dict(options)

    def prepare(self, base_url: str, scale: float = 1.0) -> Prepared:
        if not isinstance(self.path, str) or not self.path.startswith("/"):
            raise SpecError(f"path must be text starting with '/', got {self.path!r}")
        if self.options.get("mix") and self.path != "/":
            raise SpecError(
                f"a scenario with a mix= requests the mix's paths: drop path {self.path!r}"
            )
        target = base_url if self.options.get("mix") else base_url + self.path
        spec = scale_spec(http_spec(target, **self.options), scale)
        return spec, lambda stop: run_spec(spec, stop=stop)

    def __repr__(self) -> str:
        given = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"Scenario({self.path!r}, start={self.start!r}{given})"


@dataclass(frozen=True, slots=True)
class ScenariosResult:
    """What several scenarios found: each one's result by name, and ``total``, the
    figures of all of them together (each scenario one ``by_request`` entry of it)."""

    by_scenario: Mapping[str, LoadResult]
    total: LoadResult
    starts: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenarios": {
                name: {"start_s": self.starts[name], "result": r.to_dict()}
                for name, r in self.by_scenario.items()
            },
            "total": self.total.to_dict(),
        }


def prepare_scenarios(
    url: str, scenarios: Mapping[str, ScenarioKind], scale: float = 1.0
) -> dict[str, Prepared]:
    """Every scenario's checked spec and run (``scale`` times as long), before any socket;
    a bad one names its scenario."""
    if not isinstance(scenarios, Mapping) or not scenarios:
        raise SpecError(
            "scenarios is a mapping of names to Scenario(...), e.g."
            " {'browse': Scenario('/items', rate=100)}"
        )
    base = url.rstrip("/")
    prepared: dict[str, Prepared] = {}
    for name, scenario in scenarios.items():
        if not isinstance(name, str) or not name or not hasattr(scenario, "prepare"):
            raise SpecError(
                f"scenario {name!r}: give each a name and a Scenario(...), got {scenario!r}"
            )
        start = scenario.start
        if isinstance(start, bool) or not isinstance(start, (int, float)) or not start >= 0:
            raise SpecError(f"scenario {name!r}: start must be seconds >= 0, got {start!r}")
        try:
            prepared[name] = scenario.prepare(base, scale)
        except SpecError as exc:
            raise SpecError(f"scenario {name!r}: {exc}") from None
    return prepared


def scenario_specs(url: str, scenarios: Mapping[str, ScenarioKind]) -> dict[str, LoadSpec]:
    """Every scenario's checked spec (:func:`prepare_scenarios`)."""
    return {name: spec for name, (spec, _) in prepare_scenarios(url, scenarios).items()}


def run_scenarios(
    url: str,
    scenarios: Mapping[str, ScenarioKind],
    *,
    scale: float = 1.0,
    stop: StopSignal | None = None,
    server: Monitored | None = None,
) -> ScenariosResult:
    """Run every scenario at once against ``url`` (see the module doc). ``scale``: every
    scenario, and its start, that many times as long (the plugin's ``--netbench-scale``).
    ``stop`` (Ctrl-C in the command) ends every scenario running, each result marked
    interrupted, and starts none of those still waiting; a scenario that fails stops the
    others at once, and its error is raised. ``server``: the managed server, sampled over
    all of them (it serves them all at once, so its CPU is the total's, per request of
    every scenario: ``total.server``), and a crash makes the total invalid."""
    prepared = prepare_scenarios(url, scenarios, scale)
    sampler = None
    if server is not None:
        server.check_alive()
        sampler = server.monitor()
        sampler.start()
    starts = {name: float(scenarios[name].start) * scale for name in prepared}
    results: dict[str, LoadResult] = {}
    failures: dict[str, BaseException] = {}
    shared = stop if stop is not None else StopSignal()
    origin = time.monotonic()

    def one(name: str) -> None:
        while not shared.requested and time.monotonic() < origin + starts[name]:
            time.sleep(min(0.05, max(0.0, origin + starts[name] - time.monotonic())))
        if shared.requested:
            return  # stopped before its start: not run
        try:
            results[name] = prepared[name][1](shared)
        except BaseException as exc:  # raised in the caller's thread below
            failures[name] = exc
            shared.request()

    threads = [threading.Thread(target=one, args=(n,), name=f"scenario {n}") for n in prepared]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if sampler is not None and (failures or not results):
        sampler.stop(0)  # nothing to describe: the error below says why
    for name, exc in failures.items():
        if isinstance(exc, NetbenchError):
            try:
                named = type(exc)(f"scenario {name!r}: {exc}")
            except TypeError:  # an error made of more than its message
                exc.add_note(f"in scenario {name!r}")
                raise exc from None
            raise named from exc
        raise exc
    ordered = {name: results[name] for name in prepared if name in results}
    if not ordered:
        raise NetbenchError("stopped before any scenario started: nothing was measured")
    ran = {name: starts[name] for name in ordered}
    total = combine(url, ordered, ran)
    if server is not None and sampler is not None:
        total = _with_server(total, server, sampler.stop(total.ok))
    return ScenariosResult(ordered, total, ran)


def _with_server(total: LoadResult, server: Monitored, stats: ServerStats) -> LoadResult:
    total = dataclasses.replace(total, server=stats)
    try:
        server.check_alive()
    except ServerError as exc:
        return dataclasses.replace(
            total,
            valid=False,
            invalid_reasons=(*total.invalid_reasons, f"server died during the load: {exc}"),
            invalid_causes=(*total.invalid_causes, "server_died"),
        )
    return total


def combine(url: str, results: Mapping[str, LoadResult], starts: Mapping[str, float]) -> LoadResult:
    """One result for scenarios that ran at once: counts summed, latencies merged exactly
    (their histograms), the timeline's rows summed by when they were (a row's place: its
    scenario's start plus its own), each scenario a ``by_request`` entry."""
    first = min(starts.values())
    errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
    codes: Counter[int] = Counter()
    hist = new_histogram()
    samples: dict[str, str] = {}
    reasons: list[str] = []
    causes: list[str] = []
    for name, r in results.items():
        for kind, n in r.errors.items():
            errors[kind] = errors.get(kind, 0) + n
        codes.update(r.status_codes)
        if r.latency_histogram:
            hist.add(decode_histogram(r.latency_histogram))
        for kind, text in r.error_samples.items():
            samples.setdefault(kind, f"{name}: {text}")
        reasons += [f"{name}: {reason}" for reason in r.invalid_reasons]
        causes += list(r.invalid_causes)
    duration = max(starts[n] - first + r.duration_s for n, r in results.items())
    shared = _shared_interpreter(results, duration)
    if shared:
        reasons.append(shared)
        causes.append("generator_saturated")
    modes = {r.mode for r in results.values()}
    return LoadResult(
        mode="open" if modes == {"open"} else "closed",
        url=url,
        duration_s=duration,
        sent=sum(r.sent for r in results.values()),
        ok=sum(r.ok for r in results.values()),
        errors=errors,
        in_flight=sum(r.in_flight for r in results.values()),
        status_codes=dict(sorted(codes.items())),
        bytes_read=sum(r.bytes_read for r in results.values()),
        bytes_written=sum(r.bytes_written for r in results.values()),
        latency=summarize(hist),
        phases=_phases(results.values()),
        timeline=_timeline(results, {n: s - first for n, s in starts.items()}),
        valid=not reasons,
        invalid_reasons=tuple(reasons),
        invalid_causes=tuple(causes),
        error_samples=samples,
        latency_histogram=encode_histogram(hist),
        by_request={name: _as_request(name, r) for name, r in results.items()},
        generator=_generator(results.values(), duration),
        checks=_checks(results.values()),
        interrupted=any(r.interrupted for r in results.values()),
    )


def _generator(results: Iterable[LoadResult], duration_s: float) -> GeneratorStats:
    """The generator's cost over every scenario: CPU, workers and connections added up
    (each scenario's own figures, rates and lags among them, are in its result)."""
    gens = [r.generator for r in results]
    cpu_s = sum(g.cpu_s for g in gens)
    return GeneratorStats(
        workers=sum(g.workers for g in gens),
        loop=", ".join(sorted({g.loop for g in gens if g.loop})),
        protocol=gens[0].protocol if gens else "",
        cpu_s=cpu_s,
        cpu_percent=100.0 * cpu_s / duration_s if duration_s > 0 else 0.0,
        busy_percent=max((g.busy_percent for g in gens), default=0.0),
        connections_opened=sum(g.connections_opened for g in gens),
        connections_peak=sum(g.connections_peak for g in gens),
    )


def _phases(results: Iterable[LoadResult]) -> Phases:
    """Each phase's histograms over every scenario, merged exactly."""
    results = list(results)
    parts = [
        {name: counts_of_encoded(text) for name, text in r.phases.histograms.items() if text}
        for r in results
    ]
    return merge_phases(parts, sum(r.phases.waited_for_connection for r in results))


def _checks(results: Iterable[LoadResult]) -> dict[str, CheckStats]:
    """Checks of one name in several scenarios are counted together, as k6 counts them."""
    merged: dict[str, CheckStats] = {}
    for result in results:
        for name, c in result.checks.items():
            had = merged.get(name)
            if had is None:
                merged[name] = c
            else:
                merged[name] = CheckStats(
                    name, had.check, had.passes + c.passes, had.failures + c.failures
                )
    return merged


def _shared_interpreter(results: Mapping[str, LoadResult], duration_s: float) -> str:
    """The scenarios whose shares ran in this process share one interpreter, which runs one
    thread at a time: judged together, as one generator, they may saturate it when none of
    them does alone. "" when they did not (or only one ran here)."""
    here = {name: r for name, r in results.items() if r.generator.workers == 1}
    if len(here) < 2 or duration_s < 0.2:
        return ""
    share = sum(r.generator.cpu_s for r in here.values()) / duration_s
    if share < SATURATED_CPU_SHARE:
        return ""
    return (
        f"generator saturated: the scenarios {', '.join(here)} ran in one interpreter (one"
        f" thread at a time) and used {share:.0%} of a CPU between them, so the figures may"
        " measure the generator rather than the server: give them workers=, or lower the load"
    )


def _as_request(name: str, result: LoadResult) -> RequestStats:
    spec = result.spec
    return RequestStats(
        name=name,
        method=spec.method if spec is not None else "GET",
        path=spec.target if spec is not None else "/",
        duration_s=result.duration_s,
        sent=result.sent,
        ok=result.ok,
        errors=dict(result.errors),
        in_flight=result.in_flight,
        status_codes=dict(result.status_codes),
        latency=result.latency,
        latency_histogram=result.latency_histogram,
        phases=result.phases,
    )


def _timeline(
    results: Mapping[str, LoadResult], offsets: Mapping[str, float]
) -> tuple[TimelineRow, ...]:
    """Rows of a common span (the scenarios' must agree, else no timeline), each scenario's
    moved by its start (to the nearest row)."""
    spans = {r.span_s for result in results.values() for r in result.timeline}
    if len(spans) != 1:
        return ()
    (span,) = spans
    rows: dict[int, tuple[int, int, Counter[int]]] = {}
    for name, result in results.items():
        shift = round(offsets[name] / span)
        for row in result.timeline:
            ok, errors, counts = rows.get(row.second + shift, (0, 0, Counter()))
            counts.update(counts_of_encoded(row.latency_histogram))
            rows[row.second + shift] = (ok + row.ok, errors + row.errors, counts)
    merged = []
    for index in range(max(rows) + 1 if rows else 0):
        ok, errors, counts = rows.get(index, (0, 0, Counter()))
        merged.append(
            TimelineRow(
                index,
                ok,
                errors,
                percentile_of_counts(counts, 99.0) if ok else math.nan,
                percentile_of_counts(counts, 50.0) if ok else math.nan,
                span,
                latency_histogram=encode_histogram(histogram_from_counts(counts)) if ok else "",
            )
        )
    return tuple(merged)


publish(globals())
