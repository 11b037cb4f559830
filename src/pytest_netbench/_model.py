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

PERCENTILE_FIELDS: tuple[tuple[str, float], ...] = (
    ("p50_ms", 50.0),
    ("p75_ms", 75.0),
    ("p90_ms", 90.0),
    ("p95_ms", 95.0),
    ("p99_ms", 99.0),
    ("p999_ms", 99.9),
)


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
    # HTTP
    scheme: Literal["http", "https"] = "http"
    method: str = "GET"
    target: str = "/"
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    verify_tls: bool = True
    proxy: tuple[str, int] | None = None
    # raw TCP
    payload: bytes = b""
    chunk: int = 0
    framing: str = "echo"

    @property
    def mode(self) -> Mode:
        return "open" if self.rate is not None else "closed"

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
    """One second of the measured window."""

    second: int
    ok: int
    errors: int
    p99_ms: float


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
    samples: int = 0

    @property
    def cpu_s(self) -> float:
        return self.cpu_user_s + self.cpu_system_s


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

    # -- derived views users assert on -------------------------------------------------------
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
    def rps_stdev(self) -> float:
        """Standard deviation of per-second ok counts (the seeds' throughput stability)."""
        rows = [r.ok for r in self.timeline]
        if len(rows) < 2:
            return 0.0
        mean = sum(rows) / len(rows)
        return math.sqrt(sum((x - mean) ** 2 for x in rows) / (len(rows) - 1))

    def percentile(self, q: float) -> float:
        """Any latency percentile (0 < q <= 100) of ok responses, in milliseconds."""
        if not 0.0 <= q <= 100.0:
            raise ValueError(f"percentile must be between 0 and 100, got {q!r}")
        from pytest_netbench._stats.histogram import decode_histogram, percentile_ms

        if not self.latency_histogram:
            return math.nan
        return percentile_ms(decode_histogram(self.latency_histogram), q)

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
                {**dataclasses.asdict(r), "p99_ms": _json_float(r.p99_ms)} for r in self.timeline
            ],
            "server": _stats_dict(self.server) if self.server else None,
            "generator": dataclasses.asdict(self.generator),
            "valid": self.valid,
            "invalid_reasons": list(self.invalid_reasons),
            "error_samples": dict(self.error_samples),
            "spec": self.spec.to_dict() if self.spec else None,
            "latency_histogram": self.latency_histogram,
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
                )
                for r in data.get("timeline", ())
            ),
            server=ServerStats(
                **{k: (math.nan if v is None else v) for k, v in server.items() if k in srv_fields}  # type: ignore[arg-type]
            )
            if server
            else None,
            generator=GeneratorStats(**{k: v for k, v in gen.items() if k in gen_fields}),
            valid=bool(data.get("valid", True)),
            invalid_reasons=tuple(data.get("invalid_reasons", ())),
            error_samples=dict(data.get("error_samples", {})),
            spec=None,
            latency_histogram=str(data.get("latency_histogram", "")),
        )


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
