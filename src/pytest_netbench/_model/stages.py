"""Load that changes over time: the :class:`Stage` of a ramp, as k6's stages are.

A load given ``stages=[...]`` moves its target (the arrival rate in open loop, the count of
connections in closed loop) linearly from where the previous stage ended to each stage's
``target`` over that stage's ``duration_s``; the first stage starts from the load's
``rate=`` / ``connections=`` (k6's ``startRate`` / ``startVUs``). The piecewise-linear
value and its integral are :class:`RampProfile`'s, so the engine's schedule, the
timeline's targets and the plot read one function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_netbench._public import publish


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of a ramp: move to ``target`` (req/s in open loop, connections in closed
    loop) over ``duration_s`` seconds. ``stages=`` also takes ``("30s", 100)`` pairs and
    k6's ``{"duration": "30s", "target": 100}``; a ``target`` equal to the previous one
    holds the load flat for the stage."""

    duration_s: float
    target: float

    @property
    def text(self) -> str:
        """The command line's form: ``30s:1000``, ``1m30s:0``, ``500ms:10``."""
        return f"{_duration_text(self.duration_s)}:{self.target:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"duration_s": self.duration_s, "target": self.target}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Stage:
        return cls(float(data["duration_s"]), float(data["target"]))


def _duration_text(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    minutes, rest = divmod(seconds, 60)
    if minutes and rest == int(rest):
        return f"{minutes:g}m{rest:g}s" if rest else f"{minutes:g}m"
    return f"{seconds:g}s"


@dataclass(frozen=True, slots=True)
class RampProfile:
    """The value of a ramp over time: ``start`` at 0 s, then each stage in turn.

    ``lead_s``: a flat stretch at ``start`` before the first stage (a load's warm-up, which
    holds the start value so the stages fall on the measured window)."""

    start: float
    stages: tuple[Stage, ...]
    lead_s: float = 0.0

    @property
    def segments(self) -> tuple[tuple[float, float, float], ...]:
        """(duration_s, value at its start, value at its end) of each linear piece."""
        pieces = [(self.lead_s, self.start, self.start)] if self.lead_s > 0 else []
        previous = self.start
        for stage in self.stages:
            pieces.append((stage.duration_s, previous, stage.target))
            previous = stage.target
        return tuple(pieces)

    @property
    def duration_s(self) -> float:
        return self.lead_s + sum(stage.duration_s for stage in self.stages)

    @property
    def peak(self) -> float:
        return max([self.start, *(stage.target for stage in self.stages)])

    def value_at(self, t_s: float) -> float:
        """The target at ``t_s`` seconds in (the last stage's target after the end)."""
        elapsed = 0.0
        for length, begin, end in self.segments:
            if t_s < elapsed + length:
                return begin + (end - begin) * (t_s - elapsed) / length
            elapsed += length
        return self.stages[-1].target if self.stages else self.start

    def integral(self, t_s: float) -> float:
        """The area under the ramp from 0 to ``t_s`` (for a rate: the requests due by then)."""
        total = 0.0
        elapsed = 0.0
        for length, begin, end in self.segments:
            if t_s <= elapsed:
                break
            span = min(t_s - elapsed, length)
            total += span * (begin + (begin + (end - begin) * span / length)) / 2
            elapsed += length
        if t_s > elapsed:
            total += (t_s - elapsed) * self.value_at(t_s)
        return total

    def mean(self, from_s: float, to_s: float) -> float:
        """The mean target over ``[from_s, to_s)``: a timeline row's target."""
        if to_s <= from_s:
            return self.value_at(from_s)
        return (self.integral(to_s) - self.integral(from_s)) / (to_s - from_s)


publish(globals())
