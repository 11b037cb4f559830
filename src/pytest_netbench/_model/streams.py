"""A streaming load's figures (``LoadResult.stream``): responses read as they arrive.

For OpenAI-compatible token streams (``stream="openai"``) the figures follow vLLM's
benchmark (``benchmarks/backend_request_func.py`` and ``benchmark_serving.py``, as at
commit 01184130): TTFT is the first event (the first chunk carrying text), ITL the gaps
between such chunks, TPOT per stream (latency at ``data: [DONE]`` - TTFT) / (output tokens
- 1).

One vocabulary for every kind of stream (server-sent events, raw chunks, the messages of
gRPC server streams; later WebSocket pushes): a stream's *events*, its *first event* (from
the request's send, or in open loop from when it was due), the *gap* between one event and
the next, and the *first byte*. The whole stream's time is the load's latency (``r.p99_ms``) and
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

    # "sse" (server-sent events), "chunks" (each read of the body), "openai", "grpc", "ws" (a
    # listen load's pushes: each held connection a stream, each push an event)
    mode: str
    streams: int
    events: int
    events_per_second: float
    first_byte: LatencySummary
    first_event: LatencySummary
    gap: LatencySummary
    whole: LatencySummary
    events_per_stream: EventCounts = field(default_factory=EventCounts)
    # An OpenAI-compatible stream (mode "openai"; vLLM's benchmark definitions): first_event
    # is the TTFT and gap the ITL; tpot the time per output token after the first, per
    # stream; output_tokens from each stream's usage when the server sent it, else its
    # token chunks counted.
    tpot: LatencySummary = field(default_factory=LatencySummary)
    output_tokens: int = 0
    output_tokens_per_second: float = 0.0
    # Goodput (vLLM's, with ``goodput=``'s SLO): the ok streams that met every bound of
    # the SLO, and those per second of the window (nan: no SLO given).
    good_streams: int = 0
    goodput: float = math.nan
    # Encoded HdrHistograms behind the summaries, for percentile() and merging.
    first_byte_histogram: str = field(default="", repr=False, compare=False)
    first_event_histogram: str = field(default="", repr=False, compare=False)
    gap_histogram: str = field(default="", repr=False, compare=False)
    tpot_histogram: str = field(default="", repr=False, compare=False)

    @property
    def ttft(self) -> LatencySummary:
        """vLLM's time to first token: the first event of an OpenAI-compatible stream."""
        return self.first_event

    @property
    def itl(self) -> LatencySummary:
        """vLLM's inter-token latency: the gaps of an OpenAI-compatible stream."""
        return self.gap

    def percentile(self, figure: str, q: float) -> float:
        """Any percentile of ``figure`` ("first_byte", "first_event" or "gap"), in ms."""
        if figure not in ("first_byte", "first_event", "gap", "tpot"):
            raise ValueError(f"figure must be first_byte, first_event, gap or tpot, got {figure!r}")
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
            "tpot": summary_dict(self.tpot),
            "output_tokens": self.output_tokens,
            "output_tokens_per_second": self.output_tokens_per_second,
            "tpot_histogram": self.tpot_histogram,
            "good_streams": self.good_streams,
            "goodput": json_float(self.goodput),
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
            tpot=summary_from(data["tpot"]) if data.get("tpot") else LatencySummary(),
            output_tokens=int(data.get("output_tokens", 0)),
            output_tokens_per_second=float(data.get("output_tokens_per_second", 0.0)),
            tpot_histogram=str(data.get("tpot_histogram", "")),
            good_streams=int(data.get("good_streams", 0)),
            goodput=math.nan if data.get("goodput") is None else float(data["goodput"]),
        )


publish(globals())
