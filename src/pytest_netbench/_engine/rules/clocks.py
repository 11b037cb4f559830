"""The engine's units and the generator thread's own clocks.

All engine times are ``time.monotonic_ns()`` integers; ``NS_PER_S`` converts them. The
thread clocks measure what the generator itself cost during the measured window, so that
other threads of a test process (a server in-process, pytest plugins) never count.
"""

from __future__ import annotations

import resource

NS_PER_S = 1_000_000_000


def thread_cpu_seconds() -> float:
    """CPU time of the calling thread only, so other threads in a test process don't count."""
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return usage.ru_utime + usage.ru_stime


def thread_busy_seconds() -> float:
    """Time the calling thread ran *or waited to run* (Linux schedstat), else its CPU time.

    A generator thread that was runnable nearly all the time was the bottleneck, even when
    a server on the same cores kept it from getting the CPU it wanted.
    """
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            ran, waited, _ = f.read().split()
        return (int(ran) + int(waited)) / NS_PER_S
    except (OSError, ValueError):
        return thread_cpu_seconds()


class ThreadCost:
    """CPU and busy seconds of the calling thread since the last :meth:`restart`."""

    __slots__ = ("_busy", "_cpu")

    def __init__(self) -> None:
        self._cpu = thread_cpu_seconds()
        self._busy = thread_busy_seconds()

    def restart(self) -> None:
        self._cpu = thread_cpu_seconds()
        self._busy = thread_busy_seconds()

    def spent(self) -> tuple[float, float]:
        """(cpu seconds, busy seconds) since the start; call it on the same thread."""
        return thread_cpu_seconds() - self._cpu, thread_busy_seconds() - self._busy
