"""Think time: the pause a virtual user takes between steps, fixed or drawn at random.

``await think(1.0)`` pauses one second; ``await think(ThinkTime.uniform(0.5, 2.0))`` draws
each pause, as Locust's ``wait_time = between(0.5, 2.0)`` does. Draws come from the
virtual user's own generator, seeded from the load's ``seed``, so a run repeats its pauses.
"""

from __future__ import annotations

import asyncio
import math
import random
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from pytest_netbench._errors import SpecError
from pytest_netbench._public import publish

# Each virtual user's task runs in a context holding its own generator.
user_random: ContextVar[random.Random] = ContextVar("netbench_user_random")
_FALLBACK = random.Random()


@dataclass(frozen=True, slots=True)
class ThinkTime:
    """A pause to draw: :meth:`constant`, :meth:`uniform` or :meth:`exponential`."""

    kind: Literal["constant", "uniform", "exponential"]
    low_s: float
    high_s: float = 0.0

    @classmethod
    def constant(cls, seconds: float) -> ThinkTime:
        return cls("constant", _seconds("seconds", seconds))

    @classmethod
    def uniform(cls, low: float, high: float) -> ThinkTime:
        """Any pause from ``low`` to ``high`` seconds, all as likely (Locust's ``between``)."""
        low_s, high_s = _seconds("low", low), _seconds("high", high)
        if high_s < low_s:
            raise SpecError(f"ThinkTime.uniform: high ({high}) must be at least low ({low})")
        return cls("uniform", low_s, high_s)

    @classmethod
    def exponential(cls, mean: float) -> ThinkTime:
        """Pauses of ``mean`` seconds on average, spread as the gaps between independent
        arrivals are (memoryless: a user as likely to act in the next second at any time)."""
        return cls("exponential", _seconds("mean", mean))

    def draw(self, rng: random.Random) -> float:
        if self.kind == "constant":
            return self.low_s
        if self.kind == "uniform":
            return rng.uniform(self.low_s, self.high_s)
        return rng.expovariate(1.0 / self.low_s) if self.low_s > 0 else 0.0


def _seconds(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(f"think time {name} must be a number of seconds, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise SpecError(f"think time {name} must be 0 or more seconds, got {value!r}")
    return float(value)


async def think(seconds: float | ThinkTime) -> None:
    """Pause the virtual user for ``seconds``, or for a pause drawn from a :class:`ThinkTime`.
    The pause is part of the session's duration, never of a step's latency."""
    if isinstance(seconds, ThinkTime):
        delay = seconds.draw(user_random.get(_FALLBACK))
    else:
        delay = _seconds("seconds", seconds)
    await pause(delay)


async def pause(seconds: float) -> None:
    """Sleep on whichever loop runs the flow: asyncio (uvloop), else trio."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no asyncio loop: the flow runs on trio
        import trio

        await trio.sleep(seconds)
    else:
        await asyncio.sleep(seconds)


publish(globals())
