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
import ctypes
import ctypes.util
import os
import sys
from collections.abc import Callable

from pytest_netbench._engine.clocks import NS_PER_S

_CLOCK_MONOTONIC = 1
_TFD_TIMER_ABSTIME = 1
_TFD_NONBLOCK = os.O_NONBLOCK
_TFD_CLOEXEC = os.O_CLOEXEC


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.timerfd_create.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.timerfd_settime.argtypes = [
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(_Itimerspec),
            ctypes.c_void_p,
        ]
    except (OSError, AttributeError):
        return None
    return libc


class TimerFd:
    """A Linux timerfd on ``CLOCK_MONOTONIC``, armed at absolute instants; becomes readable
    when the instant passes. Loop-agnostic: asyncio watches it with ``add_reader``, trio
    with ``trio.lowlevel.wait_readable``."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc = libc
        self.fd = fd
        self._spec = _Itimerspec()
        self._spec_ref = ctypes.byref(self._spec)

    def arm_at(self, when_ns: int) -> None:
        value = self._spec.it_value
        when_ns = max(when_ns, 1)  # zero would disarm; a past instant fires at once
        value.tv_sec, value.tv_nsec = divmod(when_ns, NS_PER_S)
        if self._libc.timerfd_settime(self.fd, _TFD_TIMER_ABSTIME, self._spec_ref, None) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"timerfd_settime failed: {os.strerror(err)}")

    def cancel(self) -> None:
        self._spec.it_value.tv_sec = self._spec.it_value.tv_nsec = 0
        self._libc.timerfd_settime(self.fd, 0, self._spec_ref, None)

    def consume(self) -> bool:
        """Take the expiry; False if the timer was disarmed or re-armed since it fired."""
        try:
            os.read(self.fd, 8)
        except BlockingIOError:
            return False
        return True

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def open_timerfd() -> TimerFd | None:
    """A non-blocking timerfd on Linux, else None (use the loop's own timers)."""
    libc = _libc()
    if libc is None:
        return None
    fd = libc.timerfd_create(_CLOCK_MONOTONIC, _TFD_NONBLOCK | _TFD_CLOEXEC)
    if fd < 0:
        return None
    return TimerFd(libc, fd)


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
