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
# The pause before the first rerun, doubled before each next one: a burst of other work
# that spoiled a run (a neighbour's test starting a JVM, a compiler) usually still runs
# the instant after it. A load no one spoiled is never rerun, so never pays it.
FIRST_RETRY_PAUSE_S = 1.0


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
    again, at most ``retries`` more times, after a pause (1 s, then 2 s, 4 s, ...). A
    result invalid for any server-side cause (the server died, the pool filled up while it
    held requests) is kept at once: running it again would only repeat what the server did.
    An interrupted load (Ctrl-C) is never run again."""
    check_retries(retries)
    discarded: list[LoadResult] = []
    result = runner(spec)
    while result.invalid_by_generator_only and not result.interrupted and len(discarded) < retries:
        time.sleep(FIRST_RETRY_PAUSE_S * 2 ** len(discarded))
        discarded.append(result)
        result = runner(spec)
    return Attempts(result, tuple(discarded))


def check_retries(retries: int) -> None:
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise SpecError(f"retries must be a whole number >= 0, got {retries!r}")
