"""Where each request's time went: its phases (``LoadResult.phases``).

``connect`` (the TCP connect of a connection opened for a measured request), ``tls`` (its
handshake), ``wait`` (the request written to the first byte of its answer: time to first
byte) and ``receive`` (the first byte of the answer to its last). Each is a histogram
merged across workers as the latency is, read as ``r.phases.wait.p99_ms``; metric names
follow the same path (``phases.wait.p99_ms``, ``by_request.search.phases.receive.p50_ms``).

``wait`` and ``receive`` are those of ok responses (as the latency is); ``connect`` and
``tls`` count once per connection opened in the window, the request that opened it
paying them. An answer that came whole in one read has ``receive`` under the histogram's
lowest bucket (1 us). In open loop, ``waited_for_connection`` counts the measured
requests that waited, unsent, for a connection to come free or be opened.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._model.sections import (
    LatencySummary,
    percentile_of,
    summary_dict,
    summary_from,
)
from pytest_netbench._public import publish

PHASE_NAMES: tuple[str, ...] = ("connect", "tls", "wait", "receive")
# k6's names for the same figures (docs/phases.md).
K6_NAMES: Mapping[str, str] = {
    "connect": "http_req_connecting",
    "tls": "http_req_tls_handshaking",
    "wait": "http_req_waiting",
    "receive": "http_req_receiving",
}


@dataclass(frozen=True, slots=True)
class Phases:
    """A request's phases, each a :class:`LatencySummary` in ms (``count`` 0: none)."""

    connect: LatencySummary = field(default_factory=LatencySummary)
    tls: LatencySummary = field(default_factory=LatencySummary)
    wait: LatencySummary = field(default_factory=LatencySummary)
    receive: LatencySummary = field(default_factory=LatencySummary)
    waited_for_connection: int = 0
    # Encoded HdrHistograms by phase name, for percentile() and merging trials.
    histograms: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    def phase(self, name: str) -> LatencySummary:
        if name not in PHASE_NAMES:
            raise SpecError(f"unknown phase {name!r}; the phases are {', '.join(PHASE_NAMES)}")
        summary: LatencySummary = getattr(self, name)
        return summary

    def percentile(self, name: str, q: float) -> float:
        """Any percentile (0 < q <= 100) of phase ``name``, in ms (nan: none measured)."""
        self.phase(name)
        return percentile_of(self.histograms.get(name, ""), q)

    @property
    def measured(self) -> bool:
        """Whether any phase was measured at all (an echo or a stored old run: no)."""
        return any(self.phase(name).count for name in PHASE_NAMES)

    def to_dict(self) -> dict[str, Any]:
        return {
            **{name: summary_dict(self.phase(name)) for name in PHASE_NAMES},
            "waited_for_connection": self.waited_for_connection,
            "histograms": dict(self.histograms),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Phases:
        return cls(
            **{name: summary_from(data[name]) for name in PHASE_NAMES if data.get(name)},
            waited_for_connection=int(data.get("waited_for_connection", 0)),
            histograms={str(k): str(v) for k, v in (data.get("histograms") or {}).items()},
        )


publish(globals())
