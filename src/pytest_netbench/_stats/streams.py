"""A streaming load's samples on the hot path, and their merge across workers.

Per stream the run rules append the first byte's and the first event's time (ns, from the
request's send, or its due time in open loop), every gap between events and the count of
events; :meth:`StreamSamples.fold` turns them into microsecond counts (as the recorder's
latencies are) for the :class:`StreamOutcome` a worker brings back, and
:func:`merged_streams` adds the workers' counts up, losslessly.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from pytest_netbench._stats.histogram import count_microseconds


@dataclass(slots=True)
class StreamOutcome:
    """One worker's stream figures: microsecond counts, and events per stream counted."""

    mode: str = ""
    streams: int = 0
    events: int = 0
    first_byte_counts: Counter[int] = field(default_factory=Counter)
    first_event_counts: Counter[int] = field(default_factory=Counter)
    gap_counts: Counter[int] = field(default_factory=Counter)
    events_counts: Counter[int] = field(default_factory=Counter)  # events -> streams
    # OpenAI-compatible streams: time per output token after the first, output tokens.
    tpot_counts: Counter[int] = field(default_factory=Counter)
    tokens: int = 0
    # Goodput: the ok streams that met its SLO (-1: no SLO given).
    good: int = -1


class StreamSamples:
    """What the run rules append per stream (one per worker, never shared)."""

    __slots__ = ("events", "first_byte", "first_event", "gaps", "good", "mode", "tokens", "tpot")

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.good = -1  # goodput: ok streams that met its SLO (-1: no SLO given)
        self.first_byte: array[int] = array("q")
        self.first_event: array[int] = array("q")
        self.gaps: array[int] = array("q")
        self.events: array[int] = array("q")  # one entry per stream: its count of events
        self.tpot: array[int] = array("q")  # openai: per stream with 2 tokens or more
        self.tokens = 0

    def add(self, first_byte: int, first_event: int, gaps: array[int], events: int) -> None:
        """One stream: ``first_event`` < 0 when it carried none."""
        self.first_byte.append(first_byte)
        if first_event >= 0:
            self.first_event.append(first_event)
        self.gaps.extend(gaps)
        self.events.append(events)

    def add_tokens(self, tokens: int, tpot_ns: int) -> None:
        """An OpenAI-compatible stream's output tokens and, with two or more, its time per
        output token after the first (``tpot_ns`` < 0: none)."""
        self.tokens += tokens
        if tpot_ns >= 0:
            self.tpot.append(tpot_ns)

    def fold(self) -> StreamOutcome:
        return StreamOutcome(
            mode=self.mode,
            streams=len(self.events),
            events=sum(self.events),
            first_byte_counts=count_microseconds(self.first_byte),
            first_event_counts=count_microseconds(self.first_event),
            gap_counts=count_microseconds(self.gaps),
            events_counts=Counter(self.events),
            tpot_counts=count_microseconds(self.tpot),
            tokens=self.tokens,
            good=self.good,
        )


def merged_streams(parts: Iterable[StreamOutcome | None]) -> StreamOutcome | None:
    """Every worker's stream figures added up; None when the load read no streams."""
    found = [part for part in parts if part is not None]
    if not found:
        return None
    total = StreamOutcome(mode=found[0].mode)
    for part in found:
        total.streams += part.streams
        total.events += part.events
        total.first_byte_counts.update(part.first_byte_counts)
        total.first_event_counts.update(part.first_event_counts)
        total.gap_counts.update(part.gap_counts)
        total.events_counts.update(part.events_counts)
        total.tpot_counts.update(part.tpot_counts)
        total.tokens += part.tokens
        if part.good >= 0:
            total.good = max(total.good, 0) + part.good
    return total
