"""A Linux ``timerfd`` on ``CLOCK_MONOTONIC`` (the clock of ``time.monotonic_ns``), armed at
absolute instants: loop-free, so asyncio watches it with ``add_reader``
(``_engine.asyncio_io.precise_timer``) and trio with ``wait_readable``. Elsewhere than Linux
none is made and the caller falls back to the loop's own timers.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

from pytest_netbench._engine.rules.clocks import NS_PER_S

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
