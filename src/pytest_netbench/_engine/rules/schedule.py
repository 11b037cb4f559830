"""Arrival schedules for open-loop runs: when each request *should* be sent."""

from __future__ import annotations

import random
from typing import Protocol

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.ramp import RampSchedule
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._model.stages import RampProfile

# Requests due within this much of a wake-up go out in it: a wake-up per request costs
# several times the send itself at high rates. An early send is timed from when it actually
# left, never from its later intended time, so batching never flatters the latency.
EARLY_SEND_NS = 250_000


class ArrivalSchedule(Protocol):
    """When each request of a share falls due: a constant rate's, or a ramp's."""

    def first(self, start_ns: int) -> int: ...

    def next(self, previous_ns: int) -> int: ...

    def rate_at(self, t_ns: int) -> float: ...


class Schedule:
    """Uniform spacing, or exponential gaps (Poisson arrivals) from a seeded generator.

    Times are absolute ``monotonic_ns`` values; the fractional nanoseconds of uniform
    spacing are carried so a long run keeps its rate exactly.
    """

    def __init__(self, rate: float, arrival: str, *, seed: int = 0, offset_fraction: float = 0.0):
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.poisson = arrival == "poisson"
        self._rng = random.Random(seed)
        self._interval = NS_PER_S / rate
        self._offset = offset_fraction * self._interval
        self._origin = 0
        self._index = 0

    def first(self, start_ns: int) -> int:
        self._origin = start_ns
        self._index = 0
        return start_ns + int(self._offset)

    def next(self, previous_ns: int) -> int:
        if self.poisson:
            return previous_ns + max(1, int(self._rng.expovariate(self.rate) * NS_PER_S))
        self._index += 1
        return self._origin + int(self._offset + self._index * self._interval)

    def rate_at(self, t_ns: int) -> float:
        return self.rate


def share_schedule(
    share: WorkerShare, arrival: str, ramp: RampProfile | None = None
) -> ArrivalSchedule:
    """The schedule of one worker's share of an open-loop rate: each worker draws its own
    Poisson gaps, and uniform ones are offset so the merged arrivals stay evenly spaced.
    With a ``ramp`` (``LoadSpec.ramp``) the rate follows it (see ``ramp.RampSchedule``)."""
    if share.rate is None:
        raise ValueError("a closed-loop share has no schedule")
    if ramp is not None:
        return RampSchedule(
            ramp, arrival, index=share.index, workers=share.workers, seed=share.index + 1
        )
    return Schedule(
        share.rate,
        arrival,
        seed=share.index + 1,
        offset_fraction=share.index / share.workers,
    )
