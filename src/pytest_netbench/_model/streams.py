"""A streaming load's figures (``LoadResult.stream``): responses read as they arrive.

One vocabulary for every kind of stream (server-sent events, raw chunks; later WebSocket
pushes and gRPC server streams): a stream's *events*, its *first event* (from the request's
send, or in open loop from when it was due), the *gap* between one event and the next,
and the *first byte*. The whole stream's time is the load's latency (``r.p99_ms``) and
:attr:`StreamStats.whole`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_netbench._model.sections import (
    LatencySummary,
    json_float,
    percentile_of,
    summary_dict,
    summary_from,
)
from pytest_netbench._public import publish


@dataclass(frozen=True, slots=True)
class EventCounts:
    """How many events the streams carried: over ``streams`` streams, the fewest, the
    median, the mean and the most."""

    streams: int = 0
    min: int = 0
    p50: int = 0
    mean: float = math.nan
    max: int = 0


@dataclass(frozen=True, slots=True)
class StreamStats:
    """The figures of a load's streams (see the module). ``streams`` counts the measured
    responses whose head arrived with a status below 400 (whole, failed a check, or cut
    short: their events are kept); ``events`` their events, ``events_per_second`` those
    per second of the window."""

    mode: str  # "sse" (server-sent events) or "chunks" (each read of the body)
    streams: int
    events: int
    events_per_second: float
    first_byte: LatencySummary
    first_event: LatencySummary
    gap: LatencySummary
    whole: LatencySummary
    events_per_stream: EventCounts = field(default_factory=EventCounts)
    # Encoded HdrHistograms behind the summaries, for percentile() and merging.
    first_byte_histogram: str = field(default="", repr=False, compare=False)
    first_event_histogram: str = field(default="", repr=False, compare=False)
    gap_histogram: str = field(default="", repr=False, compare=False)

    def percentile(self, figure: str, q: float) -> float:
        """Any percentile of ``figure`` ("first_byte", "first_event" or "gap"), in ms."""
        if figure not in ("first_byte", "first_event", "gap"):
            raise ValueError(f"figure must be first_byte, first_event or gap, got {figure!r}")
        return percentile_of(getattr(self, f"{figure}_histogram"), q)

    def to_dict(self) -> dict[str, Any]:
        counts = self.events_per_stream
        return {
            "mode": self.mode,
            "streams": self.streams,
            "events": self.events,
            "events_per_second": self.events_per_second,
            "first_byte": summary_dict(self.first_byte),
            "first_event": summary_dict(self.first_event),
            "gap": summary_dict(self.gap),
            "whole": summary_dict(self.whole),
            "events_per_stream": {
                "streams": counts.streams,
                "min": counts.min,
                "p50": counts.p50,
                "mean": json_float(counts.mean),
                "max": counts.max,
            },
            "first_byte_histogram": self.first_byte_histogram,
            "first_event_histogram": self.first_event_histogram,
            "gap_histogram": self.gap_histogram,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StreamStats:
        counts = data.get("events_per_stream") or {}
        mean = counts.get("mean")
        return cls(
            mode=str(data["mode"]),
            streams=int(data["streams"]),
            events=int(data["events"]),
            events_per_second=float(data["events_per_second"]),
            first_byte=summary_from(data["first_byte"]),
            first_event=summary_from(data["first_event"]),
            gap=summary_from(data["gap"]),
            whole=summary_from(data["whole"]),
            events_per_stream=EventCounts(
                int(counts.get("streams", 0)),
                int(counts.get("min", 0)),
                int(counts.get("p50", 0)),
                math.nan if mean is None else float(mean),
                int(counts.get("max", 0)),
            ),
            first_byte_histogram=str(data.get("first_byte_histogram", "")),
            first_event_histogram=str(data.get("first_event_histogram", "")),
            gap_histogram=str(data.get("gap_histogram", "")),
        )


publish(globals())
