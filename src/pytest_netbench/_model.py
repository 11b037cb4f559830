"""The public data model: what a load is asked to do and what it found.

Everything here is a frozen, slotted dataclass with no behaviour beyond
derived views, so results can cross process boundaries and be compared,
stored and rendered by layers that know nothing about sockets.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ErrorKind = Literal["connect", "reset", "timeout", "protocol", "status", "verify"]
ERROR_KINDS: tuple[ErrorKind, ...] = ("connect", "reset", "timeout", "protocol", "status", "verify")

Mode = Literal["closed", "open"]
Arrival = Literal["uniform", "poisson"]
LoopName = Literal["auto", "uvloop", "asyncio", "trio"]
# How a request mix picks the next request: each in turn, or interleaved by weight.
MixOrder = Literal["cycle", "weighted"]
MIX_ORDERS: tuple[MixOrder, ...] = ("cycle", "weighted")

# Why a result cannot be trusted, one kind per entry of ``invalid_reasons`` (whose text is
# for people; these are for code, e.g. the experiment layer deciding whether to retry).
InvalidCause = Literal[
    "worker_lost",
    "connections_not_opened",
    "generator_fds",
    "generator_saturated",
    "rate_not_achieved",
    "schedule_lag",
    "server_died",
    "unknown",
]
INVALID_CAUSES: tuple[InvalidCause, ...] = (
    "worker_lost",
    "connections_not_opened",
    "generator_fds",
    "generator_saturated",
    "rate_not_achieved",
    "schedule_lag",
    "server_died",
    "unknown",
)
# Causes in the generator alone: running the same load again may well give a valid result.
# "rate_not_achieved" is not one: the pool filled up because the server held the requests.
GENERATOR_CAUSES: frozenset[str] = frozenset(
    {"generator_fds", "generator_saturated", "schedule_lag"}
)
# How results stored before causes existed are read: the first words of each reason.
_CAUSE_OF_REASON: tuple[tuple[str, InvalidCause], ...] = (
    ("connections not opened", "connections_not_opened"),
    ("worker lost", "worker_lost"),
    ("generator ran out of file descriptors", "generator_fds"),
    ("generator saturated", "generator_saturated"),
    ("rate not achieved", "rate_not_achieved"),
    ("generator fell behind its schedule", "schedule_lag"),
    ("server died", "server_died"),
)

# A timeline row ends "inside" the window if it ends at most this much after it (the tick
# and the deadline fire at the same instant, a little apart).
_ROW_END_SLACK_S = 0.005

PERCENTILE_FIELDS: tuple[tuple[str, float], ...] = (
    ("p50_ms", 50.0),
    ("p75_ms", 75.0),
    ("p90_ms", 90.0),
    ("p95_ms", 95.0),
    ("p99_ms", 99.0),
    ("p999_ms", 99.9),
)


@dataclass(frozen=True, slots=True)
class Request:
    """One kind of request in a mix (``http_load(url, mix=[...])``), as a wrk Lua script
    would send it: ``Request("GET", "/items", name="list")``. Headers go with the load's own
    (a header named here replaces the load's header of that name); ``weight`` is its share
    under ``mix_order="weighted"``. ``name`` keys its figures in ``LoadResult.by_request``
    (default: ``"GET /items"``). The checks are the load's (``http_load`` says what is wrong).
    """

    method: str
    path: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    name: str = ""
    weight: int = 1

    def __post_init__(self) -> None:
        # Accept the forms a user writes (a dict of headers, a str body) as plain values.
        headers: Any = self.headers
        if isinstance(headers, Mapping):
            headers = headers.items()
        object.__setattr__(self, "headers", tuple((str(k), str(v)) for k, v in headers))
        if isinstance(self.body, str):
            object.__setattr__(self, "body", self.body.encode())

    @property
    def label(self) -> str:
        """Its name, or method and path when it has none."""
        return self.name or f"{self.method.upper()} {self.path}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.label,
            "method": self.method,
            "path": self.path,
            "headers": [list(h) for h in self.headers],
            "body": len(self.body),
            "weight": self.weight,
        }


@dataclass(frozen=True, slots=True)
class LoadSpec:
    """What to send, how hard, and for how long (shared by HTTP and raw TCP)."""

    kind: Literal["http", "tcp"]
    host: str
    port: int
    connections: int = 10
    duration_s: float | None = None
    requests: int | None = None
    rate: float | None = None
    arrival: Arrival = "uniform"
    max_connections: int | None = None
    keepalive: bool = True
    requests_per_connection: int = 0
    pipeline: int = 1
    warmup_s: float = 0.0
    connect_timeout_s: float = 5.0
    timeout_s: float = 10.0
    workers: int = 1
    loop: LoopName = "auto"
    drain: bool = True
    allow_remote: bool = False
    # The span of one timeline row; results of other resolutions merge and store alike.
    timeline_resolution_s: float = 1.0
    # Closed loop: open every connection before the window (at most connect_rate a second).
    connect_first: bool = False
    connect_rate: float | None = None
    # The client-delay probe: every this many seconds one more client connects, makes one
    # exchange and disconnects (see ProbeStats); None: no probe.
    probe_every_s: float | None = None
    # Source addresses the connections are spread over (set by the pre-flight when one
    # address has too few ephemeral ports); empty: the kernel's choice.
    source_addresses: tuple[str, ...] = ()
    # HTTP
    scheme: Literal["http", "https"] = "http"
    method: str = "GET"
    target: str = "/"
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    verify_tls: bool = True
    proxy: tuple[str, int] | None = None
    # Several requests sent in turn (or by weight) instead of method/target/body.
    mix: tuple[Request, ...] = ()
    mix_order: MixOrder = "cycle"
    # raw TCP
    payload: bytes = b""
    chunk: int = 0
    framing: str = "echo"

    @property
    def mode(self) -> Mode:
        return "open" if self.rate is not None else "closed"

    @property
    def pool_limit(self) -> int:
        """The most connections the whole load may hold at once: the fixed count in closed
        loop; in open loop the pool grows up to ``max_connections`` (default: ``connections``,
        at least 1,024) when the server falls behind."""
        if self.rate is None:
            return self.connections
        return self.max_connections or max(self.connections, 1024)

    @property
    def url(self) -> str:
        if self.kind == "tcp":
            return f"tcp://{_host_for_url(self.host)}:{self.port}"
        return f"{self.scheme}://{_host_for_url(self.host)}:{self.port}{self.target}"

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["body"] = len(self.body)
        out["payload"] = len(self.payload)
        out["headers"] = [list(h) for h in self.headers]
        out["mix"] = [r.to_dict() for r in self.mix]
        out["mode"] = self.mode
        out["url"] = self.url
        return out


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host else host


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

    @property
    def cpu_s(self) -> float:
        return self.cpu_user_s + self.cpu_system_s


@dataclass(frozen=True, slots=True)
class ShareStats:
    """One share of a load run on a cluster: where it ran and what it cost there.
    ``lost`` says why its outcome never came back (empty when it did)."""

    index: int
    host: str
    worker: str
    cpu_percent: float = 0.0
    busy_percent: float = 0.0
    sent: int = 0
    lost: str = ""


@dataclass(frozen=True, slots=True)
class GeneratorStats:
    """The load generator's own cost and, in open loop, how well it kept time."""

    workers: int = 1
    loop: str = ""
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
class RequestStats:
    """The figures of one kind of request in a mix (``LoadResult.by_request[name]``):
    ``sent == ok + errors_total + in_flight`` holds per kind as it does for the load."""

    name: str
    method: str
    path: str
    duration_s: float
    sent: int
    ok: int
    errors: Mapping[str, int]
    in_flight: int
    status_codes: Mapping[int, int]
    latency: LatencySummary
    latency_histogram: str = field(default="", repr=False, compare=False)

    @property
    def errors_total(self) -> int:
        return sum(self.errors.values())

    @property
    def rps(self) -> float:
        return self.ok / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def p50_ms(self) -> float:
        return self.latency.p50_ms

    @property
    def p90_ms(self) -> float:
        return self.latency.p90_ms

    @property
    def p99_ms(self) -> float:
        return self.latency.p99_ms

    @property
    def max_ms(self) -> float:
        return self.latency.max_ms

    @property
    def mean_ms(self) -> float:
        return self.latency.mean_ms

    def percentile(self, q: float) -> float:
        """Any latency percentile (0 < q <= 100) of this kind's ok responses, in ms."""
        return _percentile_of(self.latency_histogram, q)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": self.method,
            "path": self.path,
            "duration_s": self.duration_s,
            "sent": self.sent,
            "ok": self.ok,
            "errors": {k: self.errors.get(k, 0) for k in ERROR_KINDS},
            "errors_total": self.errors_total,
            "in_flight": self.in_flight,
            "status_codes": {str(k): v for k, v in sorted(self.status_codes.items())},
            "rps": self.rps,
            "latency": _summary_dict(self.latency),
            "latency_histogram": self.latency_histogram,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RequestStats:
        return cls(
            name=str(data["name"]),
            method=str(data["method"]),
            path=str(data["path"]),
            duration_s=float(data["duration_s"]),
            sent=int(data["sent"]),
            ok=int(data["ok"]),
            errors={k: int(v) for k, v in data["errors"].items()},
            in_flight=int(data["in_flight"]),
            status_codes={int(k): int(v) for k, v in data["status_codes"].items()},
            latency=_summary_from(data["latency"]),
            latency_histogram=str(data.get("latency_histogram", "")),
        )


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
            "latency": _summary_dict(self.latency),
            "error_samples": dict(self.error_samples),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeStats:
        return cls(
            every_s=float(data["every_s"]),
            sent=int(data["sent"]),
            ok=int(data["ok"]),
            errors={str(k): int(v) for k, v in data["errors"].items()},
            latency=_summary_from(data["latency"]),
            error_samples={str(k): str(v) for k, v in data.get("error_samples", {}).items()},
        )


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The outcome of one load. ``sent == ok + errors_total + in_flight`` always."""

    mode: Mode
    url: str
    duration_s: float
    sent: int
    ok: int
    errors: Mapping[str, int]
    in_flight: int
    status_codes: Mapping[int, int]
    bytes_read: int
    bytes_written: int
    latency: LatencySummary
    uncorrected: LatencySummary | None = None
    timeline: tuple[TimelineRow, ...] = ()
    server: ServerStats | None = None
    generator: GeneratorStats = field(default_factory=GeneratorStats)
    valid: bool = True
    invalid_reasons: tuple[str, ...] = ()
    error_samples: Mapping[str, str] = field(default_factory=dict)
    spec: LoadSpec | None = None
    # Encoded HdrHistogram of the figures behind `latency`, for percentile(q) and merging.
    latency_histogram: str = field(default="", repr=False, compare=False)
    # One InvalidCause per entry of invalid_reasons, in the same order.
    invalid_causes: tuple[str, ...] = ()
    # A request mix: each kind's figures by name, in the mix's order (empty without a mix).
    by_request: Mapping[str, RequestStats] = field(default_factory=dict)
    # Stopped before its end (Ctrl-C): the figures cover ``duration_s`` only.
    interrupted: bool = False
    # The client-delay probe's figures, when the load had one (``probe_every``).
    probe: ProbeStats | None = None
    # A managed proxy's backend (``netbench_server("go_proxy", backend=...)``): its figures
    # beside the proxy's in ``server``.
    backend: ServerStats | None = None

    # -- derived views users assert on -------------------------------------------------------
    @property
    def errors_total(self) -> int:
        return sum(self.errors.values())

    @property
    def mib_read_per_s(self) -> float:
        """Bytes read per second of the window, in MiB (headers and bodies; echoes)."""
        return self.bytes_read / 2**20 / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def mib_written_per_s(self) -> float:
        """Bytes written per second of the window, in MiB."""
        return self.bytes_written / 2**20 / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def rps(self) -> float:
        return self.ok / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def p50_ms(self) -> float:
        return self.latency.p50_ms

    @property
    def p75_ms(self) -> float:
        return self.latency.p75_ms

    @property
    def p90_ms(self) -> float:
        return self.latency.p90_ms

    @property
    def p95_ms(self) -> float:
        return self.latency.p95_ms

    @property
    def p99_ms(self) -> float:
        return self.latency.p99_ms

    @property
    def p999_ms(self) -> float:
        return self.latency.p999_ms

    @property
    def max_ms(self) -> float:
        return self.latency.max_ms

    @property
    def mean_ms(self) -> float:
        return self.latency.mean_ms

    @property
    def stdev_ms(self) -> float:
        return self.latency.stdev_ms

    @property
    def invalid_by_generator_only(self) -> bool:
        """True when the result is invalid and every cause lies in the generator (its CPU,
        its schedule, its fds): the server is not to blame, and a rerun may be valid."""
        return (
            not self.valid
            and bool(self.invalid_causes)
            and all(cause in GENERATOR_CAUSES for cause in self.invalid_causes)
        )

    @property
    def rps_stdev(self) -> float:
        """Standard deviation of the req/s of the timeline rows (the seeds' throughput
        stability; per second at the default resolution). Only rows that end inside the
        measured window count: an open loop's drain (answers after the deadline) and a part
        row at the end would read as a collapse of the rate."""
        end = self.duration_s + _ROW_END_SLACK_S
        rows = [r.rate for r in self.timeline if r.start_s + r.span_s <= end]
        if len(rows) < 2:
            return 0.0
        mean = sum(rows) / len(rows)
        return math.sqrt(sum((x - mean) ** 2 for x in rows) / (len(rows) - 1))

    def percentile(self, q: float) -> float:
        """Any latency percentile (0 < q <= 100) of ok responses, in milliseconds."""
        return _percentile_of(self.latency_histogram, q)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (what ``netbench --json`` writes)."""
        out: dict[str, Any] = {
            "mode": self.mode,
            "url": self.url,
            "duration_s": self.duration_s,
            "sent": self.sent,
            "ok": self.ok,
            "errors": {k: self.errors.get(k, 0) for k in ERROR_KINDS},
            "errors_total": self.errors_total,
            "in_flight": self.in_flight,
            "status_codes": {str(k): v for k, v in sorted(self.status_codes.items())},
            "rps": self.rps,
            "rps_stdev": self.rps_stdev,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            **{name: _json_float(getattr(self.latency, name)) for name, _ in PERCENTILE_FIELDS},
            "max_ms": _json_float(self.latency.max_ms),
            "mean_ms": _json_float(self.latency.mean_ms),
            "stdev_ms": _json_float(self.latency.stdev_ms),
            "latency": _summary_dict(self.latency),
            "uncorrected": _summary_dict(self.uncorrected) if self.uncorrected else None,
            "timeline": [
                {
                    **dataclasses.asdict(r),
                    "p99_ms": _json_float(r.p99_ms),
                    "p50_ms": _json_float(r.p50_ms),
                }
                for r in self.timeline
            ],
            "server": _stats_dict(self.server) if self.server else None,
            "generator": {
                **dataclasses.asdict(self.generator),
                "notes": list(self.generator.notes),
                "shares": [dataclasses.asdict(share) for share in self.generator.shares],
            },
            "valid": self.valid,
            "interrupted": self.interrupted,
            "invalid_reasons": list(self.invalid_reasons),
            "invalid_causes": list(self.invalid_causes),
            "error_samples": dict(self.error_samples),
            "spec": self.spec.to_dict() if self.spec else None,
            "latency_histogram": self.latency_histogram,
            "by_request": {name: s.to_dict() for name, s in self.by_request.items()},
            "probe": self.probe.to_dict() if self.probe is not None else None,
            "backend": _stats_dict(self.backend) if self.backend else None,
        }
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoadResult:
        """Rebuild a result from :meth:`to_dict` output (stored baselines)."""
        server = data.get("server")
        unc = data.get("uncorrected")
        gen = data.get("generator") or {}
        gen_fields = {f.name for f in dataclasses.fields(GeneratorStats)}
        srv_fields = {f.name for f in dataclasses.fields(ServerStats)}
        reasons = tuple(str(r) for r in data.get("invalid_reasons", ()))
        causes = data.get("invalid_causes")
        return cls(
            mode=data["mode"],
            url=data["url"],
            duration_s=float(data["duration_s"]),
            sent=int(data["sent"]),
            ok=int(data["ok"]),
            errors={k: int(v) for k, v in data["errors"].items()},
            in_flight=int(data["in_flight"]),
            status_codes={int(k): int(v) for k, v in data["status_codes"].items()},
            bytes_read=int(data["bytes_read"]),
            bytes_written=int(data["bytes_written"]),
            latency=_summary_from(data["latency"]),
            uncorrected=_summary_from(unc) if unc else None,
            timeline=tuple(
                TimelineRow(
                    int(r["second"]),
                    int(r["ok"]),
                    int(r["errors"]),
                    math.nan if r["p99_ms"] is None else float(r["p99_ms"]),
                    math.nan if r.get("p50_ms") is None else float(r["p50_ms"]),
                    float(r.get("span_s", 1.0)),
                )
                for r in data.get("timeline", ())
            ),
            server=_server_stats_from(server, srv_fields) if server else None,
            backend=_server_stats_from(data["backend"], srv_fields)
            if data.get("backend")
            else None,
            generator=GeneratorStats(**_generator_fields(gen, gen_fields)),
            valid=bool(data.get("valid", True)),
            interrupted=bool(data.get("interrupted", False)),
            invalid_reasons=reasons,
            error_samples=dict(data.get("error_samples", {})),
            spec=None,
            latency_histogram=str(data.get("latency_histogram", "")),
            invalid_causes=(
                tuple(str(c) for c in causes)
                if causes is not None
                else tuple(cause_of_reason(r) for r in reasons)
            ),
            by_request={
                str(name): RequestStats.from_dict(stats)
                for name, stats in (data.get("by_request") or {}).items()
            },
            probe=ProbeStats.from_dict(data["probe"]) if data.get("probe") else None,
        )


def _server_stats_from(stored: Mapping[str, Any], names: set[str]) -> ServerStats:
    values: dict[str, Any] = {
        k: (math.nan if v is None else v) for k, v in stored.items() if k in names
    }
    return ServerStats(**values)


def _generator_fields(stored: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
    """GeneratorStats' known fields of a stored result (JSON lists back as tuples)."""
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in stored.items() if k in names}
    fields["shares"] = tuple(ShareStats(**share) for share in stored.get("shares") or ())
    return fields


def cause_of_reason(reason: str) -> InvalidCause:
    """The cause behind a reason's text, for results stored before causes were recorded."""
    for opening, cause in _CAUSE_OF_REASON:
        if reason.startswith(opening):
            return cause
    return "unknown"


def _percentile_of(encoded_histogram: str, q: float) -> float:
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile must be between 0 and 100, got {q!r}")
    from pytest_netbench._stats.histogram import decode_histogram, percentile_ms

    if not encoded_histogram:
        return math.nan
    return percentile_ms(decode_histogram(encoded_histogram), q)


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) else value


def _summary_dict(summary: LatencySummary) -> dict[str, Any]:
    return {
        k: (_json_float(v) if isinstance(v, float) else v)
        for k, v in dataclasses.asdict(summary).items()
    }


def _summary_from(data: Mapping[str, Any]) -> LatencySummary:
    values = {k: (math.nan if v is None else float(v)) for k, v in data.items() if k != "count"}
    return LatencySummary(count=int(data.get("count", 0)), **values)


def _stats_dict(stats: ServerStats) -> dict[str, Any]:
    out = {
        k: (_json_float(v) if isinstance(v, float) else v)
        for k, v in dataclasses.asdict(stats).items()
    }
    out["cpu_s"] = stats.cpu_s
    return out
