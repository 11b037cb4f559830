"""The parts of a result: latency summaries, the per-second timeline, the server's and the
generator's own figures, per-request-kind and probe statistics, and their JSON forms."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_netbench._model.kinds import ERROR_KINDS
from pytest_netbench._public import publish


@dataclass(frozen=True, slots=True)
class LatencySummary:
    """Percentiles of one latency histogram, in milliseconds."""

    count: int = 0
    p50_ms: float = math.nan
    p75_ms: float = math.nan
    p90_ms: float = math.nan
    p95_ms: float = math.nan
    p99_ms: float = math.nan
    p999_ms: float = math.nan
    min_ms: float = math.nan
    max_ms: float = math.nan
    mean_ms: float = math.nan
    stdev_ms: float = math.nan


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """One row of the measured window: a second by default, ``span_s`` long at another
    ``timeline_resolution``. ``second`` is the row's index (its second at the default)."""

    second: int
    ok: int
    errors: int
    p99_ms: float
    p50_ms: float = math.nan
    span_s: float = 1.0
    # Connections open or opening at the row's end, every share's (None: not counted).
    connections: int | None = None
    # A load with stages: the ramp's mean over the row (req/s in open loop, connections in
    # closed loop), what the row was asked for; None without stages.
    target: float | None = None
    # The row's ok latencies, an encoded HdrHistogram: figures over windows of several
    # rows are merged from these (``LoadResult.window``).
    latency_histogram: str = field(default="", repr=False, compare=False)

    @property
    def start_s(self) -> float:
        """When the row begins, in seconds from the start of the window."""
        return self.second * self.span_s

    @property
    def rate(self) -> float:
        """Ok responses per second in this row."""
        return self.ok / self.span_s


@dataclass(frozen=True, slots=True)
class ServerStats:
    """What the managed server's whole process tree spent while the load ran."""

    pid: int
    processes_peak: int = 1
    cpu_user_s: float = 0.0
    cpu_system_s: float = 0.0
    cpu_ms_per_request: float = math.nan
    rss_peak_mb: float = 0.0
    ctx_switches_voluntary: int = 0
    ctx_switches_involuntary: int = 0
    threads_peak: int = 0
    fds_peak: int = 0
    sockets_established_peak: int = 0
    sockets_time_wait_peak: int = 0
    # The whole host's TCP sockets (/proc/net/sockstat, what `ss -s` shows): in use and in
    # TIME_WAIT, whoever holds them (a proxy's connections to its backend among them).
    host_sockets_in_use_peak: int = 0
    host_sockets_time_wait_peak: int = 0
    samples: int = 0
    # Seconds its threads were runnable but waiting for a CPU (Linux schedstat; nan where
    # the kernel does not say): behind its own threads, the load's, or other processes'.
    cpu_wait_s: float = math.nan
    # The CPUs the server's tree could run on (its root's affinity), and the wall seconds
    # the sampler covered: the figures below are over that span, on those CPUs.
    cpus: tuple[int, ...] = ()
    sampled_s: float = 0.0
    # CPU seconds processes ran on those CPUs, with a hypervisor's steal (interrupt work
    # the kernel charges to no task left out: on a loopback benchmark it is the server's
    # and the load's own packets); the part of it this test's own processes ran (the
    # generator and what the test process started, the server apart; an estimate where
    # their CPU sets overlap the server's in part); the rest, other processes' (and
    # steal); and the part of cpu_wait_s spent behind those others (an estimate:
    # _servers/host_cpu.py says how).
    cpus_busy_s: float = math.nan
    harness_cpu_s: float = math.nan
    host_other_cpu_s: float = math.nan
    contended_wait_s: float = math.nan

    @property
    def cpu_s(self) -> float:
        return self.cpu_user_s + self.cpu_system_s

    @property
    def cpu_user_ms_per_request(self) -> float:
        """The user-time part of ``cpu_ms_per_request`` (the kernel's split of the total)."""
        return self._per_request(self.cpu_user_s)

    @property
    def cpu_system_ms_per_request(self) -> float:
        """The system-time (kernel) part of ``cpu_ms_per_request``."""
        return self._per_request(self.cpu_system_s)

    def _per_request(self, part_s: float) -> float:
        total = self.cpu_s
        if total <= 0 or math.isnan(self.cpu_ms_per_request):
            return math.nan
        return self.cpu_ms_per_request * part_s / total

    @property
    def cpu_wait_share(self) -> float:
        """Of the time the server wanted a CPU, the share it spent waiting for one: near 0
        with a core to itself; large when its own workers queue for the cores it has, when
        the generator shares them, or when a neighbour takes them."""
        wanted = self.cpu_s + self.cpu_wait_s
        return self.cpu_wait_s / wanted if wanted > 0 else math.nan

    @property
    def runnable_per_core(self) -> float:
        """The server's threads running or waiting for a CPU, on average, per CPU it had:
        above 1 it queued for its own cores (more busy workers or threads than cores),
        which is its own behaviour, never host contention."""
        cores = len(self.cpus)
        if not cores or self.sampled_s <= 0 or math.isnan(self.cpu_wait_s):
            return math.nan
        return (self.cpu_s + self.cpu_wait_s) / (self.sampled_s * cores)

    @property
    def host_other_share(self) -> float:
        """The share of its CPUs' time other processes took (0.5: half a core of one)."""
        cores = len(self.cpus)
        if not cores or self.sampled_s <= 0:
            return math.nan
        return self.host_other_cpu_s / (self.sampled_s * cores)


@dataclass(frozen=True, slots=True)
class ShareStats:
    """One share of a load run on a cluster: where it ran, what it cost there, and its own
    figures, so one host that saturated or saw slower answers stands out.

    ``sent == ok + errors_total + in_flight`` holds per share; ``latency`` is of the share's
    own ok responses (its histogram in ``latency_histogram``: the shares' histograms merged
    are the load's). ``start_offset_ms``: when its window opened, after the first share's.
    ``lost`` says why its outcome never came back (empty when it did; a lost share's
    figures are empty). ``saturated``: the generator-saturation rule holds for this share
    (running or waiting for a CPU nearly all the window), so its host set the pace there."""

    index: int
    host: str
    worker: str
    cpu_percent: float = 0.0
    busy_percent: float = 0.0
    sent: int = 0
    lost: str = ""
    ok: int = 0
    errors: Mapping[str, int] = field(default_factory=dict)
    in_flight: int = 0
    latency: LatencySummary = field(default_factory=LatencySummary)
    start_offset_ms: float | None = None
    latency_histogram: str = field(default="", repr=False, compare=False)
    saturated: bool = False

    @property
    def errors_total(self) -> int:
        return sum(self.errors.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "host": self.host,
            "worker": self.worker,
            "cpu_percent": self.cpu_percent,
            "busy_percent": self.busy_percent,
            "saturated": self.saturated,
            "sent": self.sent,
            "ok": self.ok,
            "errors": {k: self.errors.get(k, 0) for k in ERROR_KINDS},
            "errors_total": self.errors_total,
            "in_flight": self.in_flight,
            "latency": summary_dict(self.latency),
            "start_offset_ms": self.start_offset_ms,
            "lost": self.lost,
            "latency_histogram": self.latency_histogram,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ShareStats:
        offset = data.get("start_offset_ms")
        return cls(
            index=int(data["index"]),
            host=str(data["host"]),
            worker=str(data["worker"]),
            cpu_percent=float(data.get("cpu_percent", 0.0)),
            busy_percent=float(data.get("busy_percent", 0.0)),
            sent=int(data.get("sent", 0)),
            lost=str(data.get("lost", "")),
            ok=int(data.get("ok", 0)),
            errors={k: int(v) for k, v in (data.get("errors") or {}).items()},
            in_flight=int(data.get("in_flight", 0)),
            latency=summary_from(data.get("latency") or {}),
            start_offset_ms=None if offset is None else float(offset),
            latency_histogram=str(data.get("latency_histogram", "")),
            saturated=bool(data.get("saturated", False)),
        )


@dataclass(frozen=True, slots=True)
class GeneratorStats:
    """The load generator's own cost and, in open loop, how well it kept time."""

    workers: int = 1
    loop: str = ""
    # The protocol an HTTP load spoke: "http1", or "h2" (HTTP/2); "" for other loads.
    protocol: str = ""
    cpu_s: float = 0.0
    cpu_percent: float = 0.0
    busy_percent: float = 0.0
    connections_opened: int = 0
    connections_peak: int = 0
    intended_rate: float | None = None
    achieved_rate: float | None = None
    send_lag_p99_ms: float | None = None
    send_lag_max_ms: float | None = None
    late_sends: int = 0
    unsent: int = 0
    # A feeder with on_end="stop" ran out in a worker: the load ended there (each row of
    # its file sent once), not at its duration or request count. Not an error.
    feeders_ran_out: bool = False
    # Open loop, the drain: requests still waiting for a connection when the window closed
    # and sent after it (in `sent`, not in achieved_rate). And the corrected latency
    # samples that are lower bounds: requests unanswered when the run stopped (no drain, a
    # drain cut short by its guard, an interrupted run), each at (stop - due time).
    sent_after_window: int = 0
    lower_bounds: int = 0
    # connect_first: what opening the connections before the window took. ``connect_s`` is
    # the longest any worker took; latencies are of every connect made then.
    connect_first: bool = False
    connections_ready: int = 0
    connect_failures: int = 0
    connect_failure_sample: str = ""
    connect_s: float | None = None
    connect_p50_ms: float | None = None
    connect_p99_ms: float | None = None
    connect_max_ms: float | None = None
    # Echo: connections open at the end that completed no exchange in the whole run (a
    # flood's starved connections); None where not counted.
    connections_without_exchange: int | None = None
    # SYN-queue overflows on this host during the load (``ListenOverflows`` of
    # /proc/net/netstat, system-wide): connects the kernel dropped at a full accept queue.
    listen_overflows: int | None = None
    # What the pre-flight changed to make the load fit this machine (more workers, source
    # addresses), in words.
    notes: tuple[str, ...] = ()
    # On a cluster: each share's host and cost, and how far apart the shares' windows
    # opened (they are released together; the spread is what the release took).
    shares: tuple[ShareStats, ...] = ()
    start_spread_ms: float | None = None


@dataclass(frozen=True, slots=True)
class ProbeStats:
    """The client-delay probe (``probe_every``): one more client that connected, made one
    exchange and disconnected every ``every_s`` seconds while the load ran. ``latency`` is
    of its ok probes, each from its connect to the last byte of the answer: how long one
    more client waits while the server is under this load."""

    every_s: float
    sent: int
    ok: int
    errors: Mapping[str, int]
    latency: LatencySummary
    error_samples: Mapping[str, str] = field(default_factory=dict)

    @property
    def errors_total(self) -> int:
        return sum(self.errors.values())

    @property
    def p50_ms(self) -> float:
        return self.latency.p50_ms

    @property
    def p99_ms(self) -> float:
        return self.latency.p99_ms

    @property
    def max_ms(self) -> float:
        return self.latency.max_ms

    def to_dict(self) -> dict[str, Any]:
        return {
            "every_s": self.every_s,
            "sent": self.sent,
            "ok": self.ok,
            "errors": dict(self.errors),
            "latency": summary_dict(self.latency),
            "error_samples": dict(self.error_samples),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeStats:
        return cls(
            every_s=float(data["every_s"]),
            sent=int(data["sent"]),
            ok=int(data["ok"]),
            errors={str(k): int(v) for k, v in data["errors"].items()},
            latency=summary_from(data["latency"]),
            error_samples={str(k): str(v) for k, v in data.get("error_samples", {}).items()},
        )


def percentile_of(encoded_histogram: str, q: float) -> float:
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile must be between 0 and 100, got {q!r}")
    from pytest_netbench._stats.histogram import decode_histogram, percentile_ms

    if not encoded_histogram:
        return math.nan
    return percentile_ms(decode_histogram(encoded_histogram), q)


def json_float(value: float) -> float | None:
    return None if math.isnan(value) else value


def summary_dict(summary: LatencySummary) -> dict[str, Any]:
    return {
        k: (json_float(v) if isinstance(v, float) else v)
        for k, v in dataclasses.asdict(summary).items()
    }


def summary_from(data: Mapping[str, Any]) -> LatencySummary:
    values = {k: (math.nan if v is None else float(v)) for k, v in data.items() if k != "count"}
    return LatencySummary(count=int(data.get("count", 0)), **values)


def stats_dict(stats: ServerStats) -> dict[str, Any]:
    out = {
        k: (json_float(v) if isinstance(v, float) else v)
        for k, v in dataclasses.asdict(stats).items()
    }
    out["cpus"] = list(stats.cpus)
    out["cpu_s"] = stats.cpu_s
    # Derived, for readers of the JSON: the server's own queueing, and others' part.
    for name in ("runnable_per_core", "host_other_share"):
        out[name] = json_float(getattr(stats, name))
    return out


publish(globals())
