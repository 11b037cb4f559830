"""The asyncio (and uvloop) engine: bare ``asyncio.Protocol`` connections, no coroutines
per request, timestamps as integer nanoseconds.

One :class:`Connection` class serves both HTTP and raw TCP (the :class:`Exchange` holds the
difference); closed-loop keep-alive HTTP uses its leaner subclass from ``fused_http``. A
run policy decides what happens when a connection is free: in closed loop it
sends the next request at once; in open loop it waits for the schedule. Timeouts are found by
one sweeper callback rather than a timer per request, so the per-request path allocates
nothing but its deque slot. What counts and when a run ends is decided by the run rules
(``accounting``, ``open_rules``); this module supplies the I/O.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections import deque
from collections.abc import Callable, Coroutine
from time import monotonic_ns
from typing import TYPE_CHECKING, Any, cast

from pytest_netbench._engine.asyncio_io.connect import connect
from pytest_netbench._engine.asyncio_io.connect_phase import ConnectPhase
from pytest_netbench._engine.asyncio_io.connection import (
    Connection,
    MixConnection,
    StreamConnection,
    StreamVariedConnection,
    VariedConnection,
)
from pytest_netbench._engine.asyncio_io.echo_connection import EchoConnection
from pytest_netbench._engine.asyncio_io.fused_http import (
    FusedHttpConnection,
    FusedMixConnection,
    FusedOpenConnection,
    FusedVariedConnection,
    fits_fused_path,
)
from pytest_netbench._engine.asyncio_io.raw_connection import (
    RawHttpConnection,
    RawSockets,
    can_use_raw_sockets,
)
from pytest_netbench._engine.rules.accounting import RunAccounting
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.connecting import (
    RETRY_UNREACHED_S,
    FirstContact,
    numeric_address,
)
from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.failures import (
    broken,
    connect_failure,
    informative_cause,
    lost_connection,
    response_timeout,
    stream_timeout,
)
from pytest_netbench._engine.rules.open_rules import GROW_AFTER_NS, OpenAccounting
from pytest_netbench._engine.rules.ramp import NEVER_NS, ConnectionRamp, share_connection_ramp
from pytest_netbench._engine.rules.schedule import EARLY_SEND_NS
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.source import RequestSource
from pytest_netbench._stats.recorder import ONE_SECOND_NS

if TYPE_CHECKING:
    from pytest_netbench._engine.asyncio_io.h2_connection import H2Connection

_MIN_TIMER_S = 0.001
_NEVER_NS = 2**63 - 1


class BaseRun(RunAccounting):
    """State shared by closed- and open-loop runs within one worker."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        spec: LoadSpec,
        exchange: Exchange,
        share: WorkerShare,
        start_at_ns: int,
        ssl_context: ssl.SSLContext | None,
        source: RequestSource | None = None,
    ) -> None:
        super().__init__(spec, share, exchange, start_at_ns, source)
        self.loop = loop
        self.ssl_context = ssl_context
        self.connections: set[Connection] = set()
        self.recorder.count_connections = self.connections.__len__  # per timeline row
        self.done: asyncio.Future[None] = loop.create_future()
        self.timeout_ns = int(spec.timeout_s * NS_PER_S)
        self.connect_timeout_ns = int(spec.connect_timeout_s * NS_PER_S)
        # Read once: a property of the spec, asked on every connect (closed loop)
        self.per_connection = spec.outstanding_per_connection
        varies = self.source is not None
        writes = 1 if varies else len(exchange.chunks)  # each request that varies: one write
        fused = fits_fused_path(exchange.parser_framed, self.closes_after, writes)
        self.connection_class: type[Connection] = Connection
        if exchange.h2 is not None:
            # (imported here: HTTP/2's framing and HPACK are no HTTP/1.1 load's, issue 35)
            from pytest_netbench._engine.asyncio_io.h2_connection import H2Connection

            self.connection_class = H2Connection  # a mix's kinds too
        elif exchange.stream is not None:
            self.connection_class = StreamVariedConnection if varies else StreamConnection
        elif self.mix:
            fused_mix = fused and not self.open_loop
            self.connection_class = FusedMixConnection if fused_mix else MixConnection
        elif varies:
            fused_varied = fused and not self.open_loop
            self.connection_class = FusedVariedConnection if fused_varied else VariedConnection
        elif fused:
            self.connection_class = FusedOpenConnection if self.open_loop else FusedHttpConnection
        elif exchange.verified_echo:
            self.connection_class = EchoConnection
        elif exchange.websocket is not None:
            from pytest_netbench._engine.asyncio_io.ws_connection import WsConnection

            self.connection_class = WsConnection
        # Connections opened and closed often go on raw sockets (see raw_connection).
        self.raw: RawSockets | None = None
        if self._fits_raw_sockets(spec, exchange, ssl_context):
            address = numeric_address(exchange.connect_host, exchange.connect_port)
            if address is not None:
                self.raw = RawSockets(loop, address)
                self.connection_class = RawHttpConnection
        self.bucket_timer: asyncio.TimerHandle | None = None
        # Set while a closed-loop share opens its connections before the window.
        self.phase: ConnectPhase | None = None
        # Whether a connect has succeeded yet; ends a load against nothing listening.
        self.contact = FirstContact()
        # Echo: connections open at the end that completed no exchange (None: not counted).
        self.without_exchange: int | None = None
        # When the timeline's current second ends (at the default resolution).
        self.next_tick_ns = _NEVER_NS
        # Due times of the requests waiting for a connection: open loop only, but the fused
        # path's steady-state guard reads it on every run (a closed run's stays empty).
        self.backlog: deque[int] = deque()
        # Connections closing cleanly after the stop (WebSocket), each bounded in time.
        self.ending: list[asyncio.Future[None]] = []

    def _fits_raw_sockets(
        self, spec: LoadSpec, exchange: Exchange, ssl_context: ssl.SSLContext | None
    ) -> bool:
        """An HTTP/1.1 load of one fixed request whose connections each carry a few
        requests (no keep-alive, or ``requests_per_connection``), over plain TCP."""
        return (
            self.connection_class is Connection
            and exchange.is_http
            and exchange.stream is None
            and self.closes_after > 0
            and ssl_context is None
            and spec.scheme == "http"
            and not spec.source_addresses
            and not spec.stages
            and can_use_raw_sockets()
        )

    # -- connection lifecycle --
    def open_connection(
        self, start: int, intended: int, spent: Connection | None = None
    ) -> Connection:
        """Start connecting; ``start``/``intended`` belong to the request that needed it
        (0 for a pool connection opened ahead of demand). ``spent``: a raw connection that
        is closed and told to the run, renewed as this one (``RawHttpConnection.renew``)."""
        if spent is None:
            conn = self.connection_class(self)
        else:
            conn = spent
            conn.renew()  # type: ignore[attr-defined]  # a RawHttpConnection (see _reopen)
        conn.connect_started = monotonic_ns()
        if start:
            conn.pending.append(start)
            if self.open_loop:
                conn.intended.append(intended)
        self.connections.add(conn)
        self.count_opened(len(self.connections))
        if self.raw is not None:
            conn.open()  # type: ignore[attr-defined]  # a RawHttpConnection (see __init__)
            return conn
        address = (self.exchange.connect_host, self.exchange.connect_port)
        sources = self.spec.source_addresses
        coro: Coroutine[Any, Any, object]
        if self.ssl_context is None and not sources:
            coro = self.loop.create_connection(_factory(conn), *address)
        else:
            # Spread over source addresses by the pre-flight: one has too few ports.
            source = sources[(self.opened + self.share.index) % len(sources)] if sources else None
            hostname = self.spec.host if self.ssl_context else None
            timed = conn.tcp_connected if self.ssl_context else None  # TLS in its own phase
            coro = connect(self.loop, conn, address, source, self.ssl_context, hostname, timed)
        task = self.loop.create_task(coro)
        conn.connect_task = task
        task.add_done_callback(functools.partial(self._connect_done, conn))
        return conn

    def _connect_done(self, conn: Connection, task: asyncio.Task[Any]) -> None:
        conn.connect_task = None
        if task.cancelled():
            self.connect_failed(conn, None)
            return
        exc = task.exception()
        if exc is None:
            self.contact.reached = True
            return
        self.connect_failed(conn, exc)

    def connect_failed(self, conn: Connection, exc: BaseException | None) -> None:
        """``conn``'s connect failed with ``exc``, or timed out (None)."""
        failure = connect_failure(exc)
        self.connections.discard(conn)
        if self.stopping:
            return
        if self.phase is not None:
            self.phase.failed(conn, failure.detail, timed_out=exc is None)
        else:
            self.fail_outstanding(conn, failure.kind, failure.detail, failure.errno)
        if exc is not None and self.contact.failed(informative_cause(exc), monotonic_ns()):
            self.stop()  # nothing listens there: the driver raises (see FirstContact)
        elif self.phase is None:
            self.after_connect_failure(conn)

    def begin(self) -> None:
        """Open the first connections (and, in open loop, start the schedule)."""
        raise NotImplementedError

    def connected(self, conn: Connection) -> None:
        raise NotImplementedError

    def response_done(self, conn: Connection, now: int, keep_alive: bool) -> None:
        raise NotImplementedError

    def streams_done(self, conn: H2Connection, now: int, count: int) -> None:
        """``count`` streams of an HTTP/2 connection that may carry more ended in one read:
        one ``response_done`` each."""
        for _ in range(count):
            self.response_done(conn, now, True)

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
            failure = broken(conn.broken) if conn.broken else lost_connection(exc)
            self.fail_outstanding(conn, failure.kind, failure.detail)
        self.after_lost(conn)

    def move_window(self, start_ns: int) -> None:
        """The share starts at ``start_ns`` instead (after its connect phase): the
        warm-up and the window count from there."""
        self.start_at_ns = start_ns
        self.measure_start_ns = start_ns + int(self.spec.warmup_s * NS_PER_S)
        self.recorder.measure_start_ns = self.measure_start_ns
        self.deadline_ns = self.window_deadline()
        for conn in self.connections:
            conn.window_moved(self.measure_start_ns)

    # -- the timeline --
    def open_window(self) -> None:
        super().open_window()
        if self.recorder.bucket_ns == ONE_SECOND_NS:
            self.next_tick_ns = self.measure_start_ns + NS_PER_S
        # The driver's once-a-second tick closes the buckets at the default resolution;
        # any other resolution is this run's to keep.
        if self.recorder.bucket_ns != ONE_SECOND_NS:
            self._arm_bucket_end(1)

    def tick_due(self) -> None:
        """Close the timeline's second that ended at ``next_tick_ns``: the driver's timer
        calls it, or an echo exchange that saw the second end first (see echo_connection)."""
        self.recorder.tick()
        self.next_tick_ns += NS_PER_S

    def _arm_bucket_end(self, index: int) -> None:
        """Close the timeline's bucket ``index - 1`` at its end, ``index`` buckets in. The
        bucket that ends with a duration run's window is closed by the run's finish
        instead, so the deadline and this timer never race to split one bucket in two."""
        bucket_ns = self.recorder.bucket_ns
        window = self.spec.duration_s
        if window is not None and index * bucket_ns >= round(window * NS_PER_S):
            return
        due = self.measure_start_ns + index * bucket_ns
        delay = max(due - monotonic_ns(), 0) / NS_PER_S
        self.bucket_timer = self.loop.call_later(delay, self._end_bucket, index)

    def _end_bucket(self, index: int) -> None:
        if self.stopping:
            return
        if monotonic_ns() < self.measure_start_ns + index * self.recorder.bucket_ns:
            self._arm_bucket_end(index)  # loop timers may fire a little early: not yet
            return
        self.recorder.close_bucket()
        self._arm_bucket_end(index + 1)

    # -- finishing --
    def end_window(self) -> None:
        """The measured window is over (a duration run's deadline)."""
        self.close_window()

    def stop(self) -> None:
        if self.stopping:
            return
        if self.bucket_timer is not None:
            self.bucket_timer.cancel()
        for conn in self.connections:
            conn.settle_counts()
        if self.exchange.verified_echo:
            # Echo connections count their exchanges (see echo_connection).
            self.without_exchange = sum(
                1 for c in self.connections if getattr(c, "exchanges", 1) == 0
            )
        self.recorder.freeze_connections()
        self.stop_counting(self.connections, self.backlog)  # backlog: open loop, never sent
        for conn in list(self.connections):
            if conn.connect_task is not None:
                conn.connect_task.cancel()
            ending = conn.end_at_stop()
            if ending is not None:
                self.ending.append(ending)
        self.connections.clear()
        if self.raw is not None:
            self.raw.close()
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
                if conn.streams_time_out_alone:  # HTTP/2: a stream times out alone
                    cast("H2Connection", conn).time_out(
                        now - self.timeout_ns, stream_timeout(self.spec.timeout_s).detail
                    )
                    continue
                self.fail_outstanding(conn, *response_timeout(self.spec.timeout_s))
                if conn.transport is not None:
                    conn.transport.abort()


class ClosedRun(BaseRun):
    """Fixed connections, each sending its next request as soon as the last one finished.

    With ``stages`` the count follows the ramp (``ramp.ConnectionRamp``): a timer wakes
    when it moves, opens what is missing, and sheds the surplus gently: a connection shed
    sends nothing more and closes once its requests are answered (``closing``), so a ramp
    down never cuts a request short.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.ramp: ConnectionRamp | None = share_connection_ramp(self.spec, self.share)
        self.wanted = self.share.connections  # the connections this share holds now
        self.closing: set[Connection] = set()  # shed: closing once answered
        self.ramp_timer: asyncio.TimerHandle | None = None
        if self.raw is not None and self.ramp is None and self.per_connection == 1:
            # Its connections renew themselves in place (RawHttpConnection.connection_lost).
            self.raw.renews = self.closes_after == 1
            # ... and a first read that is the known response takes the fused path.
            self.raw.answers_known = self.raw.renews and self.exchange.parser_framed
            if self.raw.renews:  # the renewals' connects, the answers' latencies and waits
                self.raw.slots = self.recorder.count_as_recorded()  # counted at once

    def begin(self) -> None:
        missing = self.share.connections
        if self.ramp is not None:
            missing = self.wanted = self.ramp.start(self.start_at_ns)
            self._arm_ramp(self.start_at_ns)
        if self.phase is not None:
            ready = self.phase.alive()
            # Connects the phase gave up waiting for finish inside the window.
            missing -= len(ready) + self.phase.connecting
            self.phase = None
            for conn in ready:
                self.connected(conn)
        for _ in range(missing):
            now = monotonic_ns()
            if not self.take(now):
                # Refused: the budget is spent, or the requests ran out (a share given no
                # rows at all): with nothing open to answer, the run may be finished now.
                self.check_finished()
                break
            self.open_connection(now, now)

    def connected(self, conn: Connection) -> None:
        if self.phase is not None:
            self.phase.connected(conn)
            return
        first = conn.pending[0] if conn.pending else 0
        if first:
            conn.pending.popleft()
            conn.send(first, first)
        more = 0 if conn in self.closing else self.per_connection - len(conn.pending)
        for _ in range(more):
            now = monotonic_ns()
            if not self.take(now):
                break
            conn.send(now, now)
        if not conn.pending:
            self._retire(conn)

    def response_done(self, conn: Connection, now: int, keep_alive: bool) -> None:
        if self.stopping:
            return
        if conn in self.closing:
            if not conn.pending:
                self._retire(conn)
            return
        if not keep_alive or (
            self.closes_after and conn.served + len(conn.pending) >= self.closes_after
        ):
            if not conn.pending:
                self._retire(conn)
            return
        if self.take(now):
            conn.send(now, now)
        elif not conn.pending:
            self._retire(conn)
        self.check_finished()

    def streams_done(self, conn: H2Connection, now: int, count: int) -> None:
        """What ``count`` calls of ``response_done`` do, with the requests taken at once
        (``take_many``) and the end checked once, as the trio engine does: a check between
        two requests taken could not find the run finished (each taken one is outstanding)."""
        if self.stopping:
            return
        if self.closes_after or conn in self.closing:
            super().streams_done(conn, now, count)
            return
        taken = self.take_many(now, count)
        if taken:
            conn.send_many(now, taken)
        if taken < count and not conn.pending:
            self._retire(conn)
        self.check_finished()

    def _retire(self, conn: Connection) -> None:
        """Close a connection that is done; its slot reopens from ``after_lost``."""
        conn.retire()
        self.check_finished()

    def after_connect_failure(self, conn: Connection) -> None:
        if self.ramp is not None:
            self.closing.discard(conn)
            if self._held() >= self.wanted:
                self.check_finished()
                return
        if self.contact.reached:
            self._reopen()
        else:
            # No connect has succeeded yet: trying again at once would only hammer a port
            # where nothing may listen (see FirstContact).
            self.loop.call_later(RETRY_UNREACHED_S, self._reopen)

    def after_lost(self, conn: Connection) -> None:
        if self.phase is not None:
            if conn in self.phase.ready:
                self.phase.lost(conn)
            else:  # a WebSocket refused or broken in its handshake: a connect that failed
                why = conn.broken or "the connection closed before it was ready"
                self.phase.failed(conn, f"connect failed: {why}", timed_out=False)
            return
        if self.ramp is not None:
            self.closing.discard(conn)
            if self._held() >= self.wanted:
                self.check_finished()
                return
        # A raw connection is renewed as its slot's next one (see RawHttpConnection.renew).
        self._reopen(conn if self.raw is not None else None)

    # -- a ramp of connections --
    def _held(self) -> int:
        """Connections open or opening that are not being shed."""
        return len(self.connections) - len(self.closing)

    def _arm_ramp(self, counted_at: int) -> None:
        """Wake when the count next differs from the count at ``counted_at`` (the instant
        ``wanted`` was read: a change since then is due at once, never skipped)."""
        assert self.ramp is not None
        due = self.ramp.next_change(counted_at)
        if due != NEVER_NS:
            delay = max(due - monotonic_ns(), 0) / NS_PER_S
            self.ramp_timer = self.loop.call_later(delay, self._follow_ramp)

    def _follow_ramp(self) -> None:
        """The ramp's count moved (or is about to: a loop timer may fire a little early,
        and then this only re-arms): open the connections missing, or shed the surplus."""
        self.ramp_timer = None
        if self.stopping or self.ramp is None:
            return
        now = monotonic_ns()
        self.wanted = self.ramp.count_at(now)
        held = self._held()
        for _ in range(self.wanted - held):
            if not self.take(now):
                self.check_finished()  # as in begin: no connection may be left to check
                break
            self.open_connection(now, now)
        if held > self.wanted:
            self._shed(held - self.wanted)
        self._arm_ramp(now)

    def _shed(self, count: int) -> None:
        """Send nothing more on ``count`` connections and close each once answered; those
        already connected first (one still connecting sends its first request, then goes)."""
        candidates = [c for c in self.connections if c not in self.closing]
        candidates.sort(key=lambda c: c.transport is None)
        for conn in candidates[:count]:
            self.closing.add(conn)
            conn.close_after_response()
            if conn.transport is not None and not conn.pending:
                self._retire(conn)

    def stop(self) -> None:
        if self.ramp_timer is not None:
            self.ramp_timer.cancel()
        super().stop()

    def _reopen(self, spent: Connection | None = None) -> None:
        if self.stopping:
            return
        now = monotonic_ns()
        if self.take(now):
            self.open_connection(now, now, spent)
        else:
            self.check_finished()


class OpenRun(BaseRun, OpenAccounting):
    """Requests sent on a schedule; the pool grows up to a bound when the server falls behind.

    Latency is taken from the *intended* send time (corrected for coordinated omission) and
    also from the actual one; requests that find no free connection wait in ``backlog``.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.idle: list[Connection] = []
        self.queued_at: deque[int] = deque()  # when each of them began to wait
        self.grow_timer: asyncio.TimerHandle | None = None
        self.timer: asyncio.TimerHandle | None = None
        # The timerfd is an open loop's only: a closed-loop command starts without it (issue 35).
        from pytest_netbench._engine.asyncio_io.precise_timer import create_precise_timer

        self.precise = create_precise_timer(self.loop, self._tick)
        self.drain_guard: asyncio.TimerHandle | None = None

    def begin(self) -> None:
        if self.spec.keepalive:
            for _ in range(self.share.connections):
                self.open_connection(0, 0)
        self._arm()

    def _arm(self) -> None:
        if self.next_due == NEVER_NS:
            return  # a ramp that holds no more requests: the deadline ends the window
        if self.precise is not None:
            self.precise.arm_at(self.next_due)
            return
        # Loop timers have millisecond resolution (uvloop fires shorter delays at once, which
        # would spin); a late send is charged to the corrected latency, so it stays honest.
        delay = (self.next_due - monotonic_ns()) / NS_PER_S
        self.timer = self.loop.call_later(max(delay, _MIN_TIMER_S), self._tick)

    def _tick(self) -> None:
        if self.stopping or self.draining:
            return  # a wake-up already queued when the window closed
        now = monotonic_ns()
        # Requests due within EARLY_SEND_NS go out in this wake-up (see schedule.py).
        due_times = self.collect_due(now, now + EARLY_SEND_NS)
        idle = self.idle
        if self.connection_class is FusedOpenConnection and len(due_times) <= len(idle):
            # The steady state: each due request has a free connection. _dispatch inlined,
            # the counting done once per wake-up.
            for due in due_times:
                idle.pop().write_due(now, due)  # type: ignore[attr-defined]
            self.count_all_sent(due_times)
            self.recorder.bytes_written += len(due_times) * self.exchange.size
        else:
            for intended in due_times:
                self._dispatch(intended, now)
        if self.schedule_done:
            self.check_finished()
            return
        self._arm()

    def _dispatch(self, intended: int, now: int) -> None:
        if self.idle:
            self.count_sent(intended)
            self.idle.pop().send(now, intended)
        elif len(self.connections) < self.pool_limit and self.grows_at_once():
            self.count_sent(intended)
            self.open_connection(now, intended)
        else:
            self.queue_waiting(intended)
            self.backlog.append(intended)
            self.queued_at.append(now)
            if self.grow_timer is None and len(self.connections) < self.pool_limit:
                self._arm_grow(now)

    def _take_waiting(self) -> int:
        """The oldest waiting request leaves the backlog (late); returns its due time."""
        intended = self.backlog.popleft()
        self.queued_at.popleft()
        self.leave_waiting(intended, late=True)
        return intended

    def _arm_grow(self, now: int) -> None:
        delay = (max(self.queued_at[0], now) + GROW_AFTER_NS - now) / NS_PER_S
        self.grow_timer = self.loop.call_later(delay, self._grow)

    def _grow(self) -> None:
        """The oldest waiting request waited ``GROW_AFTER_NS`` in vain: open a connection
        for it, if the pool is below what the rate needs (``may_grow``). One per
        ``GROW_AFTER_NS`` at most, so a stall of the server's grows the pool by a few
        connections, not by every request that fell due during it."""
        self.grow_timer = None
        if self.stopping or not self.queued_at:
            return
        now = monotonic_ns()
        if self.may_grow(len(self.connections), now - self.queued_at[0]):
            self.open_connection(now, self._take_waiting())
        if self.queued_at and len(self.connections) < self.pool_limit:
            self._arm_grow(now)

    def end_window(self) -> None:
        """Nothing more falls due; the requests due inside the window are sent as
        connections come free and their answers awaited (``OpenAccounting.close_window``);
        the sweeper's timeouts end the drain."""
        if self.stopping or self.draining:
            return
        now = monotonic_ns()
        for intended in self.due_by_deadline(now):
            self._dispatch(intended, now)
        self._stop_schedule()
        for conn in self.connections:
            conn.settle_counts()  # the drain's end is judged on exact counts
        if self.close_window():
            self.drain_guard = self.loop.call_later(self.spec.timeout_s + 1.0, self.stop)

    def connected(self, conn: Connection) -> None:
        # A connection takes per_connection requests at once (HTTP/2: its streams).
        free = self.spec.outstanding_per_connection
        if conn.pending:
            start = conn.pending.popleft()
            intended = conn.intended.popleft()
            conn.send(start, intended)
            free -= 1
        for _ in range(free):
            self._free(conn)

    def _free(self, conn: Connection) -> None:
        if self.backlog:
            conn.send(monotonic_ns(), self._take_waiting())
        else:
            self.idle.append(conn)

    def response_done(self, conn: Connection, now: int, keep_alive: bool) -> None:
        if self.stopping:
            return
        if not keep_alive or (self.closes_after and conn.served >= self.closes_after):
            if conn.transport is not None:
                conn.transport.close()
        else:
            self._free(conn)
        self.check_finished()

    def after_connect_failure(self, conn: Connection) -> None:
        self.check_finished()

    def after_lost(self, conn: Connection) -> None:
        while conn in self.idle:  # an HTTP/2 connection is there once a free stream
            self.idle.remove(conn)
        if self.backlog and len(self.connections) < self.pool_limit:
            self.open_connection(monotonic_ns(), self._take_waiting())
        self.check_finished()

    def _stop_schedule(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.precise is not None:
            self.precise.close()
            self.precise = None

    def stop(self) -> None:
        self._stop_schedule()
        if self.grow_timer is not None:
            self.grow_timer.cancel()
        if self.drain_guard is not None:
            self.drain_guard.cancel()
        super().stop()


def _factory(conn: Connection) -> Callable[[], Connection]:
    return lambda: conn
