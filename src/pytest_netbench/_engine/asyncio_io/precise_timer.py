"""A one-shot timer with microsecond precision for the open-loop schedule.

Event-loop timers (uvloop's and asyncio's alike) wait in ``epoll_wait``, whose timeout is
whole milliseconds: a request due 300 µs from now leaves up to a millisecond late, and the
corrected latency, measured from the intended time, carries that lag. A Linux ``timerfd``
armed at an absolute ``CLOCK_MONOTONIC`` instant (the clock of ``time.monotonic_ns``) wakes
the loop on time instead (asyncio through a reader callback, trio through
``wait_readable``). Elsewhere no timer is made and the caller falls back to loop timers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pytest_netbench._engine.rules.timerfd import TimerFd, open_timerfd


class PreciseTimer:
    """Calls ``callback`` from the loop at (or just after) the instant given to :meth:`arm_at`."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        timer: TimerFd,
        callback: Callable[[], None],
    ) -> None:
        self._loop = loop
        self._timer = timer
        self._callback = callback
        self.arm_at = timer.arm_at
        self.cancel = timer.cancel
        loop.add_reader(timer.fd, self._fire)

    def close(self) -> None:
        if self._timer.fd >= 0:
            self._loop.remove_reader(self._timer.fd)
            self._timer.close()

    def _fire(self) -> None:
        if self._timer.consume():
            self._callback()


def create_precise_timer(
    loop: asyncio.AbstractEventLoop, callback: Callable[[], None]
) -> PreciseTimer | None:
    """A timerfd-backed timer on Linux, else None (use the loop's own timers)."""
    timer = open_timerfd()
    if timer is None:
        return None
    try:
        return PreciseTimer(loop, timer, callback)
    except (NotImplementedError, OSError):  # a loop without add_reader
        timer.close()
        return None
