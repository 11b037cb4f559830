"""Opening a closed-loop share's connections before its measured window (``connect_first``).

A flood of thousands of connections spends seconds connecting; measured inside the
window, that time reads as a slow server. Here every connection is opened first: never
more than :data:`MAX_CONNECTING` outstanding at once, and at most ``connect_rate`` new
connects a second if one was given. Each connect's latency is kept, and the window opens
once every connection is established or the phase has given up (a connection still
missing then is opened inside the window, where its failure counts as an error of a
request as usual).

**A full accept queue.** A server that accepts more slowly than the connects arrive
fills its accept queue; the kernel then drops further SYNs, each costing its connect a
1 s retransmit (3 s, 7 s ... after that), and past ``connect_timeout`` the connect fails.
The phase adapts instead of giving up: when the accept queue overflows (the host's
``ListenOverflows`` counter grew, a connect timed out, or one took a SYN retransmit),
it paces its connects at half the rate they have been completing at (halving again at
most every :data:`_SLOWER_EVERY_NS` while overflows go on, down to :data:`MIN_RATE`),
raises the pace by half every :data:`_FASTER_EVERY_NS` without one, and starts again
the connects that timed out, and those still unanswered after :data:`_STUCK_NS` (their
SYN was dropped: on loopback a connect is answered within a millisecond), at the pace,
rather than wait for the kernel's retransmit a second later, which every SYN dropped in
the same instant would share. Once paced, the pace alone bounds the connects:
connects waiting for a retransmit do not hold the :data:`MAX_CONNECTING` slots. Against
a server with a backlog of 1 that accepts one connection every 3 ms, 200 connects with a
0.5 s connect timeout ended with 3-6 open and 48 timed out before; now all 200 are open
(and accepted) after about 1.3 s.

**When it gives up.** A server that stops accepting altogether (its open-files limit
reached, say) makes every connect wait out its timeout: once a connect times out with no
connect succeeded for a whole ``connect_timeout``, the phase ends, so that costs one
connect timeout, not one per missing connection, and the result says how many
connections were open when the window began. The phase also ends after
:data:`MAX_CONNECTING` connects failed otherwise (refused, reset), and at
:func:`phase_limit_s` in any case.
"""

from __future__ import annotations

import asyncio
from array import array
from time import monotonic_ns
from typing import Protocol

from pytest_netbench._engine.asyncio_io.connection import Connection
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._host.kernel import tcp_ext_counter
from pytest_netbench._model import LoadSpec

# Connects in progress at once, per worker: below the smallest accept backlogs in use
# (asyncio's and Twisted's default to 100 and 50, most others to somaxconn).
MAX_CONNECTING = 48
# The slowest pace the phase falls to, connects a second.
MIN_RATE = 20.0
_TICK_S = 0.01  # how often the phase reads the overflow counter (a read costs ~0.1 ms)
_SLOWER_EVERY_NS = 50_000_000  # halve the pace at most this often
_FASTER_EVERY_NS = 100_000_000  # raise it by half after this long without overflows
_RETRANSMITTED_NS = 900_000_000  # a connect this slow waited for a SYN retransmit (1 s)
# Once paced, a connect unanswered after this long (and ten times the usual connect) lost
# its SYN, and is started again.
_STUCK_NS = 100_000_000
_BURST_NS = 10_000_000  # a paced phase catches up at most this much of its schedule


def phase_limit_s(spec: LoadSpec) -> float:
    """The longest a share spends opening its connections first, retries included."""
    paced = spec.connections / spec.connect_rate if spec.connect_rate else 0.0
    return paced + spec.connections / 1000 + 2 * spec.connect_timeout_s + 5.0


class PhaseOwner(Protocol):
    """What the phase needs of its run (``asyncio_io.engine.BaseRun``)."""

    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[None]
    stopping: bool
    connect_timeout_ns: int

    def open_connection(self, start: int, intended: int) -> Connection: ...


class ConnectPhase:
    """The connections of one share, opened before its window; see the module doc."""

    def __init__(self, run: PhaseOwner, count: int, rate: float | None, limit_s: float) -> None:
        self.run = run
        self.count = count
        self.cap = rate  # the user's connect_rate: the pace never goes above it
        self.rate = rate  # the pace now: None while unpaced
        self.limit_ns = int(limit_s * NS_PER_S)
        self.to_start = count  # connects not started yet (retries come back here)
        self.connecting = 0  # connects started and not settled
        self.ready: list[Connection] = []
        self.failures = 0  # connects that failed and were not started again
        self.failure_sample = ""
        self.latencies: array[int] = array("q")
        self.begun_ns = 0
        self.ended_ns = 0
        self.adapted = False  # paced because the accept queue overflowed
        self._outstanding: dict[Connection, None] = {}  # connects in progress, oldest first
        self._abandoned: set[Connection] = set()  # cancelled here, to be started again
        self._next_start_ns = 0
        self._last_success_ns = 0
        self._slowed_ns = 0  # the pace was last halved
        self._changed_ns = 0  # the pace last changed (either way)
        self._overflows = tcp_ext_counter("ListenOverflows")
        self._done: asyncio.Future[None] = run.loop.create_future()
        self._timer: asyncio.TimerHandle | None = None
        self._pace_timer: asyncio.TimerHandle | None = None

    async def open_all(self) -> None:
        """Open every connection; returns when each is established or the phase gave up
        (or the run was stopped)."""
        now = self.begun_ns = self._last_success_ns = self._next_start_ns = monotonic_ns()
        self._slowed_ns = self._changed_ns = now - _SLOWER_EVERY_NS
        self._settled(now)
        self._tick()
        await asyncio.wait((self._done, self.run.done), return_when=asyncio.FIRST_COMPLETED)
        for timer in (self._timer, self._pace_timer):
            if timer is not None:
                timer.cancel()
        self.ended_ns = self.ended_ns or monotonic_ns()

    # -- pacing --
    def _tick(self) -> None:
        """Every few ms: read the host's overflow counter, adjust the pace, start what it
        allows, and give up at the phase's limit."""
        self._timer = None
        if self.run.stopping or self._done.done():
            return
        now = monotonic_ns()
        if now - self.begun_ns >= self.limit_ns:
            self._end(now)
            return
        overflows = tcp_ext_counter("ListenOverflows")
        if overflows is not None and self._overflows is not None and overflows > self._overflows:
            self._slow_down(now)
        elif self.rate is not None and now - self._changed_ns >= _FASTER_EVERY_NS:
            self.rate *= 1.5
            if self.cap is not None:
                self.rate = min(self.rate, self.cap)
            self._changed_ns = now
        self._overflows = overflows
        if self.adapted:
            self._abandon_stuck(now)
        self._start_more()
        self._timer = self.run.loop.call_later(_TICK_S, self._tick)

    def _slow_down(self, now: int) -> None:
        """The accept queue overflowed: pace the connects at half the rate they have been
        completing at (or half the pace), at most every ``_SLOWER_EVERY_NS``."""
        if self.rate is not None and now - self._slowed_ns < _SLOWER_EVERY_NS:
            return
        if self.rate is None:
            elapsed_s = max(now - self.begun_ns, _SLOWER_EVERY_NS) / NS_PER_S
            self.rate = len(self.ready) / elapsed_s
        self.rate = max(self.rate / 2, MIN_RATE)
        if self.cap is not None:
            self.rate = min(self.rate, self.cap)
        self._slowed_ns = self._changed_ns = now
        self.adapted = True

    def _abandon_stuck(self, now: int) -> None:
        """Cancel the connects that lost their SYN (see ``_STUCK_NS``); each comes back
        through :meth:`failed` and is started again at the pace."""
        recent = sorted(self.latencies[-64:])
        stuck_ns = max(_STUCK_NS, 10 * recent[len(recent) // 2]) if recent else _STUCK_NS
        for conn in self._outstanding:
            if now - conn.connect_started < stuck_ns:
                break  # the rest started later
            task = conn.connect_task
            if task is not None and not task.done() and conn not in self._abandoned:
                self._abandoned.add(conn)
                task.cancel()

    def _start_more(self) -> None:
        """Start the connects that the outstanding bound and the pace allow now."""
        if self.run.stopping or self._done.done():
            return
        now = monotonic_ns()
        interval_ns = 0
        if self.rate is not None:
            interval_ns = int(NS_PER_S / self.rate)
            self._next_start_ns = max(self._next_start_ns, now - _BURST_NS)
        # Once paced for overflows, the pace alone bounds the connects: those whose SYN was
        # dropped wait a second for its retransmit, and must not hold every slot meanwhile.
        bound = self.count if self.adapted else MAX_CONNECTING
        while self.to_start and self.connecting < bound:
            if self._next_start_ns > now:
                if self._pace_timer is None:
                    delay_s = (self._next_start_ns - now) / NS_PER_S
                    self._pace_timer = self.run.loop.call_later(delay_s, self._paced)
                return
            self._next_start_ns += interval_ns
            self.to_start -= 1
            self.connecting += 1
            self._outstanding[self.run.open_connection(0, 0)] = None

    def _paced(self) -> None:
        self._pace_timer = None
        self._start_more()

    # -- the run reports each connection's fate while the phase lasts --
    def connected(self, conn: Connection) -> None:
        now = monotonic_ns()
        took = now - conn.connect_started
        self.latencies.append(took)
        self.ready.append(conn)
        self.connecting -= 1
        self._outstanding.pop(conn, None)
        self._last_success_ns = now
        if took >= _RETRANSMITTED_NS:
            self._slow_down(now)  # it waited for a SYN retransmit: an overflow
        self._settled(now)

    def failed(self, conn: Connection, reason: str, timed_out: bool) -> None:
        """A connect failed; one that ``timed_out`` is started again while the server
        is still accepting (see the module doc)."""
        now = monotonic_ns()
        self.connecting -= 1
        self._outstanding.pop(conn, None)
        abandoned = conn in self._abandoned
        self._abandoned.discard(conn)
        if self._done.done():
            self.failures += 1  # a connect outstanding when the phase gave up
            self.failure_sample = self.failure_sample or reason
            return
        if timed_out:
            if not abandoned:
                self._slow_down(now)
            if now - self._last_success_ns < self.run.connect_timeout_ns:
                self.to_start += 1
                self._settled(now)
                return
            self._end(now)  # no connect succeeded for a whole connect timeout
        self.failures += 1
        self.failure_sample = self.failure_sample or reason
        if self.failures >= MAX_CONNECTING:
            self._end(now)
        self._settled(now)

    def _settled(self, now: int) -> None:
        if not self.to_start and not self.connecting:
            self._end(now)
        else:
            self._start_more()

    def _end(self, now: int) -> None:
        if self._done.done():
            return
        self.ended_ns = now
        self._done.set_result(None)

    def lost(self, conn: Connection) -> None:
        """An established connection closed before the window (the server hung up)."""
        if conn in self.ready:
            self.ready.remove(conn)

    def alive(self) -> list[Connection]:
        """The connections established before the window that are still open."""
        return [c for c in self.ready if c.transport is not None and not c.transport.is_closing()]
