"""CPU sets: which cores a managed server, or a load's generator, may run on.

The write-ups pinned their tools ("one core for the server, and one for the client", seed
002): on a machine of few cores a server and its generator that share them measure the
host, not the server. A CPU set is written as Linux's tools write it (``"1"``,
``"0,2"``, ``"2-3"``) or as a list of numbers, and checked against the CPUs this process
may use before anything starts.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence

from pytest_netbench._errors import SpecError

CpusArg = str | Sequence[int] | None


def parse_cpus(value: CpusArg, *, what: str = "cpus") -> tuple[int, ...]:
    """The CPU numbers of ``value``, sorted; () for None (no pinning)."""
    if value is None:
        return ()
    if isinstance(value, str):
        numbers: list[int] = []
        for part in value.replace(" ", "").split(","):
            first, dash, last = part.partition("-")
            try:
                low, high = int(first), int(last) if dash else int(first)
            except ValueError:
                raise SpecError(
                    f"{what}={value!r} is not a CPU list: write e.g. '1', '0,2' or '2-3'"
                ) from None
            numbers.extend(range(low, high + 1))
    elif isinstance(value, Sequence) and all(
        isinstance(n, int) and not isinstance(n, bool) for n in value
    ):
        numbers = [int(n) for n in value]
    else:
        raise SpecError(f"{what} must be a CPU list such as '1' or [0, 2], got {value!r}")
    if not numbers:
        raise SpecError(f"{what}={value!r} names no CPU: drop it, or name at least one")
    usable = available_cpus()
    outside = sorted(set(numbers) - set(usable))
    if usable and outside:
        raise SpecError(
            f"{what}={value!r}: CPU {', '.join(map(str, outside))} is not one this process may"
            f" use (it may use {format_cpus(usable)})"
        )
    return tuple(sorted(set(numbers)))


def available_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (all of them where the OS does not say)."""
    if hasattr(os, "sched_getaffinity"):
        return tuple(sorted(os.sched_getaffinity(0)))
    return tuple(range(os.cpu_count() or 1))


def format_cpus(cpus: Sequence[int]) -> str:
    return ",".join(map(str, cpus))


def pin_this_process(cpus: Sequence[int]) -> None:
    """Pin the calling process (or, on Linux, its calling thread) to ``cpus``."""
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus)


@contextlib.contextmanager
def pinned_thread(cpus: Sequence[int]) -> Iterator[None]:
    """Run the calling thread on ``cpus`` for the block, then as before (on Linux a
    thread's affinity is its own, so the rest of the process is not moved)."""
    if not cpus or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
