"""Schedules of a load whose target moves (``stages=``): sans-IO, numbers in, numbers out.

Open loop, :class:`RampSchedule`: the rate is piecewise linear, so the requests due by a
time are the integral of the rate, ``N(t)``, piecewise quadratic, and request ``j`` (1,
2, 3 ...) of the whole load is due where ``N`` reaches ``j``. Every intended send time is
read off the ramp itself, never off a rate sampled now and then, so latency from the
intended time (the coordinated-omission correction) holds exactly as at a constant rate.
Worker ``i`` of ``n`` takes ``j = i + 1, i + 1 + n, ...``, so the shares' sends together are
the whole load's. Poisson arrivals on a ramp draw unit-mean exponential gaps of ``N``
(time rescaling), so their rate follows the ramp too.

Closed loop, :class:`ConnectionRamp`: the connections wanted at a time are the ramp's
value rounded to the nearest whole number (so their mean over a stage is the stage's mean),
split among the shares as the connections of a flat load are; ``next_change`` says when
the count moves next, so the engine wakes only then.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._model import LoadSpec
from pytest_netbench._model.stages import RampProfile

NEVER_NS = 2**63 - 1


class RampSchedule:
    """When each request of one share is due, on a rate that follows a :class:`RampProfile`
    (req/s of the whole load). Same interface as ``schedule.Schedule``: ``first`` then
    ``next``; :data:`NEVER_NS` once the ramp holds no more requests."""

    def __init__(
        self,
        profile: RampProfile,
        arrival: str,
        *,
        index: int = 0,
        workers: int = 1,
        seed: int = 0,
    ) -> None:
        self.profile = profile
        self.poisson = arrival == "poisson"
        self._rng = random.Random(seed)
        self._step = float(workers)
        self._first_count = float(index + 1)
        # Each piece: (start s, length s, rate at start, rate at end, requests before it).
        pieces: list[tuple[float, float, float, float, float]] = []
        elapsed = done = 0.0
        for length, begin, end in profile.segments:
            pieces.append((elapsed, length, begin, end, done))
            elapsed += length
            done += length * (begin + end) / 2
        self._pieces = pieces
        self.total = done  # requests the whole ramp holds
        self._origin = 0
        self._count = 0.0
        self._enter(0)

    def _enter(self, piece: int) -> None:
        """Make ``piece`` the current one: its figures kept flat for the fast path."""
        self._piece = piece
        start, length, begin, end, before = self._pieces[piece] if self._pieces else (0,) * 5
        self._start, self._length, self._begin, self._before = start, length, begin, before
        self._holds = length * (begin + end) / 2
        self._begin_sq = begin * begin
        self._four_a = 2 * (end - begin) / length if length else 0.0

    def first(self, start_ns: int) -> int:
        self._origin = start_ns
        self._enter(0)
        self._count = self._draw(0.0) if self.poisson else self._first_count
        return self._due(self._count)

    def next(self, previous_ns: int) -> int:
        count = self._draw(self._count) if self.poisson else self._count + self._step
        self._count = count
        # The current piece, inline (once per request): _time_into's root.
        within = count - self._before
        if 0 < within <= self._holds:
            begin = self._begin
            root = math.sqrt(max(self._begin_sq + self._four_a * within, 0.0))
            seconds = self._start + min(2 * within / (begin + root), self._length)
            return self._origin + int(seconds * NS_PER_S)
        return self._due(count)

    def rate_at(self, t_ns: int) -> float:
        """This share's rate at ``t_ns`` (req/s), for sizing its pool."""
        return self.profile.value_at((t_ns - self._origin) / NS_PER_S) / self._step

    def _draw(self, count: float) -> float:
        # A unit-mean exponential gap of this share's own count, in the whole load's count.
        return count + self._rng.expovariate(1.0) * self._step

    def _due(self, count: float) -> int:
        seconds = self.time_of(count)
        return NEVER_NS if seconds is None else self._origin + int(seconds * NS_PER_S)

    def time_of(self, count: float) -> float | None:
        """Seconds from the start at which ``N`` reaches ``count``; None if it never does.
        Moves forward only: ``count`` must not go below the last one asked for."""
        pieces = self._pieces
        while self._piece < len(pieces):
            start, length, begin, end, before = pieces[self._piece]
            within = count - before
            holds = length * (begin + end) / 2
            if within <= holds and holds > 0:
                return start + _time_into(within, length, begin, end)
            if self._piece + 1 < len(pieces):
                self._enter(self._piece + 1)
            else:
                self._piece += 1
        return None


def _time_into(count: float, length: float, begin: float, end: float) -> float:
    """Seconds into a linear piece (``begin`` -> ``end`` req/s over ``length`` s) at which
    ``count`` requests have fallen due: the root of ``a t^2 + begin t = count``, written so
    it loses no digits when ``a`` is tiny or ``begin`` is 0."""
    a = (end - begin) / (2 * length)
    if count <= 0:
        return 0.0
    root = math.sqrt(max(begin * begin + 4 * a * count, 0.0))
    return min(2 * count / (begin + root), length)


class ConnectionRamp:
    """How many connections one share holds at each time, on a ramp of the whole load's
    connections (:class:`RampProfile`), split as ``share.split_load`` splits a flat count."""

    def __init__(self, profile: RampProfile, *, index: int = 0, workers: int = 1) -> None:
        self.profile = profile
        self.index = index
        self.workers = workers
        self._origin = 0

    def start(self, start_ns: int) -> int:
        """The ramp starts at ``start_ns``; returns this share's count then."""
        self._origin = start_ns
        return self.count_at(start_ns)

    def total_at(self, t_ns: int) -> int:
        """The whole load's connections at ``t_ns``: the ramp's value, nearest whole."""
        return math.floor(self.profile.value_at((t_ns - self._origin) / NS_PER_S) + 0.5)

    def count_at(self, t_ns: int) -> int:
        total = self.total_at(t_ns)
        return total // self.workers + (1 if self.index < total % self.workers else 0)

    def next_change(self, t_ns: int) -> int:
        """The first time after ``t_ns`` at which this share's count differs from its count
        at ``t_ns``; :data:`NEVER_NS` if it stays. Found on the whole load's count: the
        ramp's value crosses a half-integer on a linear piece at a time solved exactly."""
        now = self.count_at(t_ns)
        t_s = (t_ns - self._origin) / NS_PER_S
        elapsed = 0.0
        for length, begin, end in self.profile.segments:
            if t_s < elapsed + length and begin != end:
                for crossing in _half_crossings(begin, end, max(t_s - elapsed, 0.0), length):
                    if crossing > length:
                        break
                    # 1 ns past the crossing, so the rounded value has surely stepped.
                    at = self._origin + math.ceil((elapsed + crossing) * NS_PER_S) + 1
                    if at > t_ns and self.count_at(at) != now:
                        return at
            elapsed += length
        return NEVER_NS


def share_connection_ramp(spec: LoadSpec, share: WorkerShare) -> ConnectionRamp | None:
    """The connection ramp of a closed-loop share of a load with ``stages``; else None."""
    profile = spec.ramp
    if profile is None or share.rate is not None:
        return None
    return ConnectionRamp(profile, index=share.index, workers=share.workers)


def _half_crossings(begin: float, end: float, after_s: float, length: float) -> Iterator[float]:
    """Seconds into a linear piece at which its value crosses ``k + 0.5`` (where the rounded
    value steps), from ``after_s`` on, in order; a generator, as a long ramp holds many."""
    slope = (end - begin) / length
    value = begin + slope * after_s
    if slope > 0:
        k = math.floor(value + 0.5) + 0.5
        while k <= end:
            yield (k - begin) / slope
            k += 1
    else:
        k = math.ceil(value + 0.5) - 0.5
        if k > value:
            k -= 1
        while k >= end:
            yield (k - begin) / slope
            k -= 1
