"""One kind of request's figures in a mix (``LoadResult.by_request[name]``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_netbench._model.kinds import ERROR_KINDS, PERCENTILE_FIELDS
from pytest_netbench._model.latency_figures import LatencyFigures
from pytest_netbench._model.no_latency import NoLatency, no_success_reason
from pytest_netbench._model.phases import Phases
from pytest_netbench._model.sections import (
    LatencySummary,
    json_float,
    percentile_of,
    summary_dict,
    summary_from,
)
from pytest_netbench._public import publish

# A request kind's latency figures in its JSON, flat: the same names the load's own carry.
REQUEST_LATENCY_FIELDS: tuple[str, ...] = (
    *(name for name, _ in PERCENTILE_FIELDS),
    "max_ms",
    "mean_ms",
    "stdev_ms",
)


@dataclass(frozen=True, slots=True)
class RequestStats(LatencyFigures):
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
    # This kind's phases (see ``LoadResult.phases``).
    phases: Phases = field(default_factory=Phases, repr=False)  # r.phases: a block of its own

    @property
    def errors_total(self) -> int:
        return sum(self.errors.values())

    def percentile(self, q: float) -> float:
        """Any latency percentile (0 < q <= 100) of this kind's ok responses, in ms."""
        return self._latency_figure(percentile_of(self.latency_histogram, q))

    def _latency_figure(self, value: float) -> float:
        if value == value:  # not nan
            return value
        why = no_success_reason(
            echo=False,
            sent=self.sent,
            ok=self.ok,
            errors=self.errors,
            in_flight=self.in_flight,
            samples={},
        )
        return NoLatency(f"{self.name}: {why}")

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
            # Flat, as the load's own figures are at the top of its JSON (null: no ok
            # response of this kind); ``latency`` holds the same and count, min.
            **{name: json_float(getattr(self.latency, name)) for name in REQUEST_LATENCY_FIELDS},
            "latency": summary_dict(self.latency),
            "latency_histogram": self.latency_histogram,
            "phases": self.phases.to_dict(),
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
            latency=summary_from(data["latency"]),
            latency_histogram=str(data.get("latency_histogram", "")),
            phases=Phases.from_dict(data["phases"]) if data.get("phases") else Phases(),
        )


publish(globals())
