"""Reruns of a load that the generator (not the server) made untrustworthy.

A load is run by a *runner*, a callable from a :class:`LoadSpec` to a :class:`LoadResult`
(the library's ``run_spec``, or the plugin's, which wraps every load with its measured
window's lock and its records). :func:`run_with_retries` is the one rule for running it
again: ``http_load(retries=)``, ``netbench http --retries``, the fixture and every
experiment use it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._model import LoadResult, LoadSpec

Runner = Callable[[LoadSpec], LoadResult]

# A trial invalid for generator-side causes only is run again this many times by default.
DEFAULT_RETRIES = 2
# The pause before the first rerun, doubled before each next one up to the last: a burst
# of other work that spoiled a run (a neighbour's test starting a JVM, a compiler)
# usually still runs the instant after it. A load no one spoiled is never rerun, so never
# pays it.
FIRST_RETRY_PAUSE_S = 1.0
LONGEST_RETRY_PAUSE_S = 4.0
# ... but only when the generator's busiest worker ran on a CPU less than this share of
# the run: its schedule slipped waiting for a CPU that other work held. One that ran
# most of the time was spoiled by the load itself (a rate past what it can send, as a
# capacity search meets), which no pause changes.
HOST_BLAMED_BELOW_CPU_PERCENT = 50.0


@dataclass(frozen=True, slots=True)
class Attempts:
    """One load as asked for: the result kept, and the runs thrown away before it because
    only the generator was to blame (its CPU, its schedule, its file descriptors)."""

    kept: LoadResult
    discarded: tuple[LoadResult, ...] = ()

    @property
    def runs(self) -> int:
        return len(self.discarded) + 1

    @property
    def generator_limited(self) -> bool:
        """Every attempt was invalid for generator-side causes only: the load could not be
        produced, so nothing can be concluded about the server from it."""
        return self.kept.invalid_by_generator_only

    def to_dict(self) -> dict[str, Any]:
        return {
            "kept": self.kept.to_dict(),
            "discarded": [r.to_dict() for r in self.discarded],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attempts:
        return cls(
            kept=LoadResult.from_dict(data["kept"]),
            discarded=tuple(LoadResult.from_dict(r) for r in data.get("discarded", ())),
        )


def run_with_retries(spec: LoadSpec, runner: Runner, retries: int = DEFAULT_RETRIES) -> Attempts:
    """Run ``spec``; while the result is invalid only because of the generator, run it
    again, at most ``retries`` more times (after a pause, when the host was to blame). A
    result invalid for any server-side cause (the server died, the pool filled up while it
    held requests) is kept at once: running it again would only repeat what the server did.
    An interrupted load (Ctrl-C) is never run again."""
    check_retries(retries)
    discarded: list[LoadResult] = []
    result = runner(spec)
    while result.invalid_by_generator_only and not result.interrupted and len(discarded) < retries:
        time.sleep(pause_before_rerun(result, len(discarded)))
        discarded.append(result)
        result = runner(spec)
    return Attempts(result, tuple(discarded))


def pause_before_rerun(spoiled: LoadResult, reruns_so_far: int) -> float:
    """How long to wait before running again a load that ``spoiled`` was a run of."""
    if spoiled.generator.cpu_percent >= HOST_BLAMED_BELOW_CPU_PERCENT:
        return 0.0
    return min(FIRST_RETRY_PAUSE_S * 2.0**reruns_so_far, LONGEST_RETRY_PAUSE_S)


def check_retries(retries: int) -> None:
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise SpecError(f"retries must be a whole number >= 0, got {retries!r}")
