"""Opening a closed-loop share's connections before its measured window (``connect_first``).

A flood of thousands of connections spends seconds connecting; measured inside the
window, that time reads as a slow server. Here every connection is opened first, at a
bounded pace: at most ``connect_rate`` new connects a second (if set) and never more than
:data:`MAX_CONNECTING` outstanding at once, so a server's accept queue is not overrun by
the generator itself (an overflow drops the SYN and costs the client a one-second
retransmit). Each connect's latency is kept, and the window opens once every connection
is established or has failed; a failed one is opened again inside the window, where its
failure counts as an error of a request as usual.

A server that stops accepting (its open-files limit reached, say) makes each further
connect wait out its timeout: the phase gives up after :data:`MAX_CONNECTING` failures,
so that costs one connect timeout, not one per missing connection, and the result says
how many connections were open when the window began.
"""

from __future__ import annotations

import asyncio
from array import array
from time import monotonic_ns
from typing import Protocol

from pytest_netbench._engine.clocks import NS_PER_S
from pytest_netbench._engine.connection import Connection

# Connects in progress at once, per worker: below the smallest accept backlogs in use
# (asyncio's and Twisted's default to 100 and 50, most others to somaxconn).
MAX_CONNECTING = 48
_PACE_NS = NS_PER_S // 1000  # how often a rate-bound phase starts its next connects


class PhaseOwner(Protocol):
    """What the phase needs of its run (``asyncio_engine.BaseRun``)."""

    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[None]
    stopping: bool

    def open_connection(self, start: int, intended: int) -> Connection: ...


class ConnectPhase:
    """The connections of one share, opened before its window; see the module doc."""

    def __init__(self, run: PhaseOwner, count: int, rate: float | None) -> None:
        self.run = run
        self.count = count
        self.rate = rate
        self.started = 0
        self.settled = 0
        self.ready: list[Connection] = []
        self.failures = 0
        self.failure_sample = ""
        self.latencies: array[int] = array("q")
        self.begun_ns = 0
        self.ended_ns = 0
        self._done: asyncio.Future[None] = run.loop.create_future()
        self._timer: asyncio.TimerHandle | None = None

    async def open_all(self) -> None:
        """Open every connection; returns when each is established or failed (or the run
        was stopped)."""
        self.begun_ns = monotonic_ns()
        if self.count == 0:
            self._done.set_result(None)
        self._start_more()
        await asyncio.wait((self._done, self.run.done), return_when=asyncio.FIRST_COMPLETED)
        if self._timer is not None:
            self._timer.cancel()
        self.ended_ns = self.ended_ns or monotonic_ns()

    def _allowed_by_rate(self, now: int) -> int:
        if self.rate is None:
            return self.count
        return int((now - self.begun_ns) * self.rate / NS_PER_S) + 1

    def _start_more(self) -> None:
        self._timer = None
        if self.run.stopping or self._done.done():
            return
        now = monotonic_ns()
        limit = min(self.count, self._allowed_by_rate(now), self.settled + MAX_CONNECTING)
        while self.started < limit:
            self.started += 1
            self.run.open_connection(0, 0)
        if self.started < self.count and self.rate is not None and self._timer is None:
            self._timer = self.run.loop.call_later(_PACE_NS / NS_PER_S, self._start_more)

    def _settle(self) -> None:
        self.settled += 1
        if self.settled >= self.count:
            self.ended_ns = monotonic_ns()
            if not self._done.done():
                self._done.set_result(None)
        elif self.rate is None:
            self._start_more()  # a free slot under MAX_CONNECTING

    # -- the run reports each connection's fate while the phase lasts --
    def connected(self, conn: Connection) -> None:
        self.latencies.append(monotonic_ns() - conn.connect_started)
        self.ready.append(conn)
        self._settle()

    def failed(self, reason: str) -> None:
        self.failures += 1
        self.failure_sample = self.failure_sample or reason
        if self.failures < MAX_CONNECTING:
            self._settle()
            return
        self.settled += 1
        self.ended_ns = monotonic_ns()
        if not self._done.done():
            self._done.set_result(None)

    @property
    def connecting(self) -> int:
        """Connects started and not settled yet (some remain if the phase gave up)."""
        return self.started - self.settled

    def lost(self, conn: Connection) -> None:
        """An established connection closed before the window (the server hung up)."""
        if conn in self.ready:
            self.ready.remove(conn)

    def alive(self) -> list[Connection]:
        """The connections established before the window that are still open."""
        return [c for c in self.ready if c.transport is not None and not c.transport.is_closing()]
