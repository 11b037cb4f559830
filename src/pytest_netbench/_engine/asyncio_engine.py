"""The asyncio (and uvloop) engine: bare ``asyncio.Protocol`` connections, no coroutines
per request, timestamps as integer nanoseconds.

One :class:`Connection` class serves both HTTP and raw TCP (the :class:`Exchange` holds the
difference); closed-loop keep-alive HTTP uses its leaner subclass from ``fused_http``. A
run policy decides what happens when a connection is free: in closed loop it
sends the next request at once; in open loop it waits for the schedule. Timeouts are found by
one sweeper callback rather than a timer per request, so the per-request path allocates
nothing but its deque slot.
"""

from __future__ import annotations

import asyncio
import errno as errno_mod
import functools
import ssl
from collections import deque
from collections.abc import Callable
from time import monotonic_ns
from typing import Any

from pytest_netbench._engine.accounting import RunAccounting
from pytest_netbench._engine.connection import Connection
from pytest_netbench._engine.exchange import Exchange
from pytest_netbench._engine.fused_http import FusedHttpConnection, fits_fused_path
from pytest_netbench._engine.precise_timer import create_precise_timer
from pytest_netbench._engine.schedule import EARLY_SEND_NS, Schedule
from pytest_netbench._engine.share import WorkerShare
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import Recorder

_NS = 1_000_000_000
_MIN_TIMER_S = 0.001


class BaseRun(RunAccounting):
    """State shared by closed- and open-loop runs within one worker."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        spec: LoadSpec,
        exchange: Exchange,
        share: WorkerShare,
        recorder: Recorder,
        ssl_context: ssl.SSLContext | None,
    ) -> None:
        super().__init__(spec, share, recorder)
        self.loop = loop
        self.exchange = exchange
        self.is_http = exchange.is_http
        self.ssl_context = ssl_context
        self.connections: set[Connection] = set()
        self.done: asyncio.Future[None] = loop.create_future()
        self.timeout_ns = int(spec.timeout_s * _NS)
        self.connect_timeout_ns = int(spec.connect_timeout_s * _NS)
        fused = fits_fused_path(
            exchange.parser_framed, self.open_loop, self.rpc, len(exchange.chunks)
        )
        self.connection_class = FusedHttpConnection if fused else Connection

    # -- connection lifecycle --
    def open_connection(self, start: int, intended: int) -> Connection:
        """Start connecting; ``start``/``intended`` belong to the request that needed it
        (0 for a pool connection opened ahead of demand)."""
        conn = self.connection_class(self)
        conn.connect_started = monotonic_ns()
        if start:
            conn.pending.append(start)
            if self.open_loop:
                conn.intended.append(intended)
        self.connections.add(conn)
        self.opened += 1
        if len(self.connections) > self.peak:
            self.peak = len(self.connections)
        coro = self.loop.create_connection(
            _factory(conn),
            self.exchange.connect_host,
            self.exchange.connect_port,
            ssl=self.ssl_context,
            server_hostname=self.spec.host if self.ssl_context else None,
        )
        task = self.loop.create_task(coro)
        conn.connect_task = task
        task.add_done_callback(functools.partial(self._connect_done, conn))
        return conn

    def _connect_done(self, conn: Connection, task: asyncio.Task[Any]) -> None:
        conn.connect_task = None
        if task.cancelled():
            failure = "connect timeout"
            err_no: int | None = None
        else:
            exc = task.exception()
            if exc is None:
                return
            err_no = getattr(exc, "errno", None)
            failure = describe_connect_error(exc)
        self.connections.discard(conn)
        if self.stopping:
            return
        self._fail_pending(conn, "connect", f"connect failed: {failure}", err_no)
        self.after_connect_failure(conn)

    def connected(self, conn: Connection) -> None:
        raise NotImplementedError

    def response_done(self, conn: Connection, now: int, keep_alive: bool) -> None:
        raise NotImplementedError

    def after_connect_failure(self, conn: Connection) -> None:
        raise NotImplementedError

    def after_lost(self, conn: Connection) -> None:
        raise NotImplementedError

    def lost(self, conn: Connection, exc: Exception | None) -> None:
        conn.settle_counts()
        self.connections.discard(conn)
        if self.stopping:
            return
        if conn.pending:
            if conn.broken:
                kind, detail = "protocol", conn.broken
            elif isinstance(exc, ConnectionResetError) or (
                isinstance(exc, OSError) and exc.errno == errno_mod.ECONNRESET
            ):
                kind, detail = "reset", "connection reset by peer"
            elif exc is None:
                kind, detail = "reset", "server closed the connection before responding"
            else:
                kind, detail = "reset", f"connection lost: {exc!r}"
            self._fail_pending(conn, kind, detail, None)
        self.after_lost(conn)

    def _fail_pending(self, conn: Connection, kind: str, detail: str, err_no: int | None) -> None:
        rec = self.recorder
        measure = self.measure_start_ns
        intended = conn.intended if self.open_loop else conn.pending
        for t in intended:
            if t >= measure:
                rec.error(kind, detail, err_no)
                self.completed += 1
        conn.pending.clear()
        conn.intended.clear()
        self.check_finished()

    # -- finishing --
    def check_finished(self) -> None:
        if self.budget == 0 and not self.stopping and self.completed >= self.recorder.sent:
            self.stop()

    def end_window(self) -> None:
        """The measured window is over (a duration run's deadline)."""
        self.stop()

    def stop(self) -> None:
        if self.stopping:
            return
        self.end_ns = self.end_ns or monotonic_ns()
        self.stopping = True
        measure = self.measure_start_ns
        in_flight = 0
        for conn in list(self.connections):
            conn.settle_counts()
            times = conn.intended if self.open_loop else conn.pending
            in_flight += sum(1 for t in times if t >= measure)
            if conn.connect_task is not None:
                conn.connect_task.cancel()
            if conn.transport is not None:
                conn.transport.abort()
        self.in_flight = in_flight
        self.connections.clear()
        if not self.done.done():
            self.done.set_result(None)

    # -- timeouts --
    def sweep(self) -> None:
        now = monotonic_ns()
        for conn in list(self.connections):
            if conn.connect_task is not None:
                if now - conn.connect_started > self.connect_timeout_ns:
                    conn.connect_task.cancel()
            elif conn.pending and now - conn.pending[0] > self.timeout_ns:
                timeout_s = self.spec.timeout_s
                self._fail_pending(
                    conn, "timeout", f"no complete response within {timeout_s}s", None
                )
                if conn.transport is not None:
                    conn.transport.abort()


class ClosedRun(BaseRun):
    """Fixed connections, each sending its next request as soon as the last one finished."""

    def begin(self) -> None:
        for _ in range(self.share.connections):
            now = monotonic_ns()
            if not self.take(now):
                break
            self.open_connection(now, now)

    def connected(self, conn: Connection) -> None:
        first = conn.pending[0] if conn.pending else 0
        if first:
            conn.pending.popleft()
            conn.send(first, first)
        for _ in range(self.spec.pipeline - len(conn.pending)):
            now = monotonic_ns()
            if not self.take(now):
                break
            conn.send(now, now)
        if not conn.pending:
            self._retire(conn)

    def response_done(self, conn: Connection, now: int, keep_alive: bool) -> None:
        if self.stopping:
            return
        if not keep_alive or (self.rpc and conn.served + len(conn.pending) >= self.rpc):
            if not conn.pending:
                self._retire(conn)
            return
        if self.take(now):
            conn.send(now, now)
        elif not conn.pending:
            self._retire(conn)
        self.check_finished()

    def _retire(self, conn: Connection) -> None:
        """Close a connection that is done; its slot reopens from ``after_lost``."""
        if conn.transport is not None:
            conn.transport.close()
        self.check_finished()

    def after_connect_failure(self, conn: Connection) -> None:
        self._reopen()

    def after_lost(self, conn: Connection) -> None:
        self._reopen()

    def _reopen(self) -> None:
        if self.stopping:
            return
        now = monotonic_ns()
        if self.take(now):
            self.open_connection(now, now)
        else:
            self.check_finished()


class OpenRun(BaseRun):
    """Requests sent on a schedule; the pool grows up to a bound when the server falls behind.

    Latency is taken from the *intended* send time (corrected for coordinated omission) and
    also from the actual one; requests that find no free connection wait in ``backlog``.
    """

    def __init__(self, *args: Any, schedule: Schedule, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.schedule = schedule
        self.idle: list[Connection] = []
        self.backlog: deque[int] = deque()
        self.max_connections = max(
            self.share.connections,
            self.share.max_connections,
        )
        self.next_due = 0
        self.timer: asyncio.TimerHandle | None = None
        self.scheduled = 0
        self.late_sends = 0
        self.precise = create_precise_timer(self.loop, self._tick)
        self.draining = False
        self.drain_guard: asyncio.TimerHandle | None = None

    def begin(self) -> None:
        if self.spec.keepalive:
            for _ in range(self.share.connections):
                self.open_connection(0, 0)
        self.next_due = self.schedule.first(self.share.start_at_ns)
        self._arm()

    def _arm(self) -> None:
        if self.precise is not None:
            self.precise.arm_at(self.next_due)
            return
        # Loop timers have millisecond resolution (uvloop fires shorter delays at once, which
        # would spin); a late send is charged to the corrected latency, so it stays honest.
        delay = (self.next_due - monotonic_ns()) / _NS
        self.timer = self.loop.call_later(max(delay, _MIN_TIMER_S), self._tick)

    def _tick(self) -> None:
        if self.stopping:
            return
        now = monotonic_ns()
        measure = self.measure_start_ns
        rec = self.recorder
        # Requests due within EARLY_SEND_NS go out in this wake-up: a wake-up per request
        # costs several times the send itself at high rates. An early one is timed from its
        # actual send (see on_response), so batching never flatters the latency.
        horizon = now + EARLY_SEND_NS
        while self.next_due <= horizon:
            due = self.next_due
            if due >= measure:
                if self.budget is not None:
                    if self.budget <= 0:
                        self.check_finished()
                        return
                    self.budget -= 1
                self.scheduled += 1
                rec.lags.append(now - due if now > due else 0)
            self._dispatch(due, now)
            self.next_due = self.schedule.next(due)
        self._arm()

    def _dispatch(self, intended: int, now: int) -> None:
        if self.idle:
            self._count_sent(intended)
            self.idle.pop().send(now, intended)
        elif len(self.connections) < self.max_connections:
            self._count_sent(intended)
            self.open_connection(now, intended)
        else:
            self.backlog.append(intended)  # counted as sent when it actually leaves

    def _count_sent(self, intended: int) -> None:
        if intended >= self.measure_start_ns:
            self.recorder.sent += 1

    def check_finished(self) -> None:
        done_sending = self.draining or (self.budget == 0 and not self.backlog)
        if done_sending and self.completed >= self.recorder.sent:
            self.stop()

    def end_window(self) -> None:
        """Send nothing new, but wait for the answers to what was sent in the window.

        In open loop the requests still out at the deadline are the slowest ones (those a
        stalled server is holding); dropping them would bias the corrected percentiles low,
        as wrk2's figures are. The request timeout bounds the wait: the sweeper turns older
        requests into timeout errors, which ends the drain.
        """
        if self.stopping or self.draining:
            return
        self.end_ns = monotonic_ns()
        self._stop_schedule()
        if not self.spec.drain or self.completed >= self.recorder.sent:
            self.stop()
            return
        self.draining = True
        self.drain_guard = self.loop.call_later(self.spec.timeout_s + 1.0, self.stop)

    def connected(self, conn: Connection) -> None:
        if conn.pending:
            start = conn.pending.popleft()
            intended = conn.intended.popleft()
            conn.send(start, intended)
        else:
            self._free(conn)

    def _free(self, conn: Connection) -> None:
        if self.backlog and not self.draining:
            intended = self.backlog.popleft()
            self._count_sent(intended)
            self.late_sends += 1
            conn.send(monotonic_ns(), intended)
        else:
            self.idle.append(conn)

    def response_done(self, conn: Connection, now: int, keep_alive: bool) -> None:
        if self.stopping:
            return
        if not keep_alive or (self.rpc and conn.served >= self.rpc):
            if conn.transport is not None:
                conn.transport.close()
        else:
            self._free(conn)
        self.check_finished()

    def after_connect_failure(self, conn: Connection) -> None:
        self.check_finished()

    def after_lost(self, conn: Connection) -> None:
        if conn in self.idle:
            self.idle.remove(conn)
        if self.backlog and not self.draining and len(self.connections) < self.max_connections:
            intended = self.backlog.popleft()
            self._count_sent(intended)
            self.late_sends += 1
            self.open_connection(monotonic_ns(), intended)
        self.check_finished()

    def _stop_schedule(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.precise is not None:
            self.precise.close()
            self.precise = None

    def stop(self) -> None:
        self._stop_schedule()
        if self.drain_guard is not None:
            self.drain_guard.cancel()
        super().stop()


def _factory(conn: Connection) -> Callable[[], Connection]:
    return lambda: conn


def describe_connect_error(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ssl.SSLError):
        return f"TLS handshake failed: {getattr(exc, 'reason', None) or exc}"
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{errno_mod.errorcode.get(exc.errno, exc.errno)}: {exc.strerror}"
    return repr(exc)
