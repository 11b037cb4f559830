"""What a load found: :class:`LoadResult`, its accounting, validity and JSON form."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_netbench._model.checks import CheckStats
from pytest_netbench._model.kinds import (
    ERROR_KINDS,
    GENERATOR_CAUSES,
    PERCENTILE_FIELDS,
    Mode,
    cause_of_reason,
)
from pytest_netbench._model.latency_figures import LatencyFigures
from pytest_netbench._model.no_latency import NoLatency, no_success_reason
from pytest_netbench._model.phases import Phases
from pytest_netbench._model.profile import ServerProfile
from pytest_netbench._model.requests import RequestStats
from pytest_netbench._model.sections import (
    GeneratorStats,
    LatencySummary,
    ProbeStats,
    ServerStats,
    ShareStats,
    TimelineRow,
    json_float,
    percentile_of,
    stats_dict,
    summary_dict,
    summary_from,
)
from pytest_netbench._model.sessions import SessionStats
from pytest_netbench._model.spec import LoadSpec
from pytest_netbench._model.streams import StreamStats
from pytest_netbench._public import publish

if TYPE_CHECKING:  # r.window(...)'s, imported when first asked for (issue 35)
    from pytest_netbench._model.windows import Windows

# A timeline row ends "inside" the window if it ends at most this much after it (the tick
# and the deadline fire at the same instant, a little apart).
_ROW_END_SLACK_S = 0.005


@dataclass(frozen=True, slots=True)
class LoadResult(LatencyFigures):
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
    # A user flow (``flow(...)``): its sessions' figures beside its steps' (``by_request``).
    sessions: SessionStats | None = None
    # Checks of the responses (``checks=``), by name: passes and failures of each.
    checks: Mapping[str, CheckStats] = field(default_factory=dict)
    # Each request's phases: connect, tls, wait (time to first byte), receive.
    phases: Phases = field(default_factory=Phases, repr=False)  # r.phases: a block of its own
    # The managed server's profile, from a run of its own after this one (``profile=True``).
    profile: ServerProfile | None = None
    # A streaming load (``stream="sse"`` or ``"chunks"``): first byte, first event, gaps,
    # events (``r.stream.first_event.p99_ms``); None for a load that reads whole answers.
    stream: StreamStats | None = None

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

    def window(self, seconds: float) -> Windows:
        """Figures over sliding windows of ``seconds`` (a whole number of timeline rows):
        ``r.window(5).p99_ms`` is the p99 of the worst 5-second window, and
        ``r.window(5).worst("p99_ms")`` says when it was (``window(5s).p99_ms`` in
        thresholds and the gate)."""
        from pytest_netbench._model.windows import Windows

        return Windows(self.timeline, self.duration_s, seconds)

    def percentile(self, q: float) -> float:
        """Any latency percentile (0 < q <= 100) of ok responses, in milliseconds."""
        return self._latency_figure(percentile_of(self.latency_histogram, q))

    def _latency_figure(self, value: float) -> float:
        """The figure itself; where there is none (no ok response), a :class:`NoLatency`:
        nan whose repr says why (``nan (no request succeeded: ...)``)."""
        if value == value:  # not nan: the usual case costs one comparison
            return value
        return NoLatency(why_no_latency(self))

    if not TYPE_CHECKING:  # at run time only: a type checker still flags ``r.p99``

        def __getattr__(self, name: str) -> Any:
            # Called only when ordinary lookup failed: fields and properties cost nothing.
            raise AttributeError(_no_such_attribute(type(self), name))

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
            **{name: json_float(getattr(self.latency, name)) for name, _ in PERCENTILE_FIELDS},
            "max_ms": json_float(self.latency.max_ms),
            "mean_ms": json_float(self.latency.mean_ms),
            "stdev_ms": json_float(self.latency.stdev_ms),
            "latency": summary_dict(self.latency),
            "uncorrected": summary_dict(self.uncorrected) if self.uncorrected else None,
            "timeline": [
                {
                    **dataclasses.asdict(r),
                    "p99_ms": json_float(r.p99_ms),
                    "p50_ms": json_float(r.p50_ms),
                }
                for r in self.timeline
            ],
            "server": stats_dict(self.server) if self.server else None,
            "generator": {
                **dataclasses.asdict(self.generator),
                "notes": list(self.generator.notes),
                "shares": [share.to_dict() for share in self.generator.shares],
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
            "backend": stats_dict(self.backend) if self.backend else None,
            "sessions": self.sessions.to_dict() if self.sessions is not None else None,
            "checks": {name: c.to_dict() for name, c in self.checks.items()},
            "phases": self.phases.to_dict(),
            "profile": self.profile.to_dict() if self.profile is not None else None,
            "stream": self.stream.to_dict() if self.stream is not None else None,
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
            latency=summary_from(data["latency"]),
            uncorrected=summary_from(unc) if unc else None,
            timeline=tuple(
                TimelineRow(
                    int(r["second"]),
                    int(r["ok"]),
                    int(r["errors"]),
                    math.nan if r["p99_ms"] is None else float(r["p99_ms"]),
                    math.nan if r.get("p50_ms") is None else float(r["p50_ms"]),
                    float(r.get("span_s", 1.0)),
                    None if r.get("connections") is None else int(r["connections"]),
                    None if r.get("target") is None else float(r["target"]),
                    str(r.get("latency_histogram") or ""),
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
            sessions=SessionStats.from_dict(data["sessions"]) if data.get("sessions") else None,
            checks={
                str(name): CheckStats.from_dict(str(name), stats)
                for name, stats in (data.get("checks") or {}).items()
            },
            phases=Phases.from_dict(data["phases"]) if data.get("phases") else Phases(),
            profile=ServerProfile.from_dict(data["profile"]) if data.get("profile") else None,
            stream=StreamStats.from_dict(data["stream"]) if data.get("stream") else None,
        )


def why_no_latency(result: LoadResult) -> str:
    """Why ``result`` has no latency figures: ``no request succeeded: 50 of 50 requests
    were status errors, e.g. HTTP 404`` (echo: ``no exchange succeeded: ...``)."""
    return no_success_reason(
        echo=result.url.startswith("tcp://"),
        sent=result.sent,
        ok=result.ok,
        errors=result.errors,
        in_flight=result.in_flight,
        samples=result.error_samples,
    )


def _no_such_attribute(cls: type, name: str) -> str:
    """``'LoadResult' object has no attribute 'p99'; did you mean 'p99_ms'?``"""
    text = f"{cls.__name__!r} object has no attribute {name!r}"
    if name.startswith("__") and name.endswith("__"):
        return text  # a protocol probe (copy, pickle, pytest): no advice needed
    names = [n for n in dir(cls) if not n.startswith("_")]
    if f"{name}_ms" in names:  # p99 -> p99_ms, max -> max_ms
        return f"{text}; did you mean {name + '_ms'!r}?"
    import difflib  # a misspelling's only (issue 35)

    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"{text}; did you mean {close[0]!r}?" if close else text


def _server_stats_from(stored: Mapping[str, Any], names: set[str]) -> ServerStats:
    values: dict[str, Any] = {
        k: (math.nan if v is None else tuple(v) if isinstance(v, list) else v)
        for k, v in stored.items()
        if k in names
    }
    return ServerStats(**values)


def _generator_fields(stored: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
    """GeneratorStats' known fields of a stored result (JSON lists back as tuples)."""
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in stored.items() if k in names}
    fields["shares"] = tuple(ShareStats.from_dict(share) for share in stored.get("shares") or ())
    return fields


publish(globals())
