"""One client connection of the asyncio engine: an ``asyncio.Protocol``, no coroutines.

It serves HTTP and raw TCP alike (the run's :class:`Exchange` holds the difference): bytes in
go to the sans-IO framer, each complete response comes back through ``on_response``, which
records it and, in closed loop with keep-alive, writes the next request at once. The run
decides everything else (see ``BaseRun``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from time import monotonic_ns
from typing import Any, ClassVar, Protocol

from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.phases import record_connect, record_phases, watch_first_byte
from pytest_netbench._proto.framing import Framer
from pytest_netbench._stats.recorder import Recorder


class ConnectionOwner(Protocol):
    """What a connection needs of its run (``asyncio_io.engine.BaseRun``): the counters it
    moves itself on the per-response path, and where the rest of its events go."""

    exchange: Exchange
    recorder: Recorder
    measure_start_ns: int
    is_http: bool
    open_loop: bool
    closes_after: int
    budget: int | None
    completed: int
    stopping: bool
    draining: bool  # open loop, after the deadline (a closed run never drains)
    backlog: deque[int]  # open loop: due times of requests waiting (a closed run's is empty)
    # Requests that vary (see accounting): rendered ones not yet written, their kinds (a
    # mix), and how many no permit has claimed.
    ready: deque[bytes]
    ready_request_kinds: deque[int]
    spare: int
    deadline_ns: int  # when a duration run's window ends (never, for a request count)
    next_tick_ns: int  # when the timeline's current second ends

    def take(self, now: int) -> bool: ...

    def record(
        self, code: int, start: int, intended: int, now: int, first: int = -1, opened: int = 0
    ) -> None: ...

    def next_request(self, intended: int) -> tuple[int, bytes]: ...

    def record_kind(
        self,
        code: int,
        start: int,
        intended: int,
        now: int,
        request_kind: int,
        first: int = 0,
        opened: int = 0,
    ) -> None: ...

    def connected(self, conn: Connection) -> None: ...

    def response_done(self, conn: Connection, now: int, keep_alive: bool) -> None: ...

    def lost(self, conn: Connection, exc: Exception | None) -> None: ...

    def end_window(self) -> None: ...

    def tick_due(self) -> None: ...


def _closed_feed(data: bytes) -> None:
    """Bytes after ``connection_lost`` (none arrive): dropped, as the connection is gone."""


class Connection(asyncio.BaseProtocol):
    """One client connection; ``pending`` holds the start (and intended) time of each request.

    A streaming protocol by its ``data_received``, but not an ``asyncio.Protocol``: uvloop
    takes a protocol for a buffered one only if it is not an ``asyncio.Protocol``, and
    :class:`~pytest_netbench._engine.asyncio_io.echo_connection.EchoConnection` must be.
    """

    # A timed-out request fails alone, the connection kept (HTTP/2's streams), not the
    # connection with every request on it.
    streams_time_out_alone: ClassVar[bool] = False

    # What every connection has is held in slots, each subclass's own attributes in its
    # __dict__. CPython 3.11 keeps an object's dict attributes inline, and specializes
    # reading them and its methods, only up to 29 of them; past that every ``self.x`` is a
    # dict lookup (LOAD_ATTR_WITH_HINT). A fused connection had 37 (issue 35). A slot's
    # read is specialized too (LOAD_ATTR_SLOT), and these 23 leave the subclasses' dicts
    # room to spare.
    __slots__ = (
        "__dict__",
        "_codes",
        "_fast",
        "_feed",
        "_first",
        "_is_http",
        "_measure",
        "_phases",
        "_rec",
        "_record",
        "_request",
        "_size",
        "_write",
        "broken",
        "connect_started",
        "connect_task",
        "framer",
        "intended",
        "opened_ns",
        "pending",
        "run",
        "served",
        "tcp_done",
        "transport",
    )

    def __init__(self, run: ConnectionOwner) -> None:
        self.run = run
        self.transport: asyncio.Transport | None = None
        self.pending: deque[int] = deque()
        self.intended: deque[int] = deque()
        self.served = 0
        self.connect_started = 0
        # Phases (rules.phases): when TCP was up under TLS, when the connection was open,
        # and when the answer being parsed began (0: none begun, or not timed).
        self.tcp_done = 0
        self.opened_ns = 0
        self._first = 0
        self.connect_task: asyncio.Task[Any] | None = None
        self.broken = ""
        # Bound once so the per-response path does no attribute chains (see on_response).
        rec = run.recorder
        self._rec = rec
        self._record = rec.latencies.append
        self._phases = rec.phases
        self._codes = rec.status_codes
        self._measure = run.measure_start_ns
        self._is_http = run.is_http
        chunks = run.exchange.chunks
        self._request = chunks[0] if chunks else b""  # a mix has none (see MixConnection)
        self._size = run.exchange.size
        self._write: Callable[[bytes], None] | None = None
        # Closed loop, keep-alive, one write per request: the common case gets a fast path.
        self._fast = not run.open_loop and not run.closes_after and len(run.exchange.chunks) == 1
        self.framer: Framer | None = None
        self._feed: Callable[[bytes], object] = self._attach_framer()

    def _attach_framer(self) -> Callable[[bytes], object]:
        """Set up response framing; returns what ``data_received`` feeds the bytes to."""
        self.framer = self.run.exchange.make_framer(self.on_response, self.on_protocol_error)
        watch_first_byte(self.framer, self._began)
        return self.framer.feed

    def _began(self) -> None:
        """The framer parsed the first byte of an answer."""
        self._first = monotonic_ns()

    def tcp_connected(self) -> None:
        """TCP is up; the TLS handshake follows (``asyncio_io.connect``)."""
        self.tcp_done = monotonic_ns()

    def window_moved(self, measure_start_ns: int) -> None:
        """The run's window now opens at ``measure_start_ns`` (see ``BaseRun.move_window``)."""
        self._measure = measure_start_ns

    # -- transport events --
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._write = self.transport.write  # type: ignore[union-attr]
        run = self.run
        if run.stopping:
            transport.close()
            return
        self.opened_ns = now = monotonic_ns()
        if self.pending and self.connect_started >= self._measure:
            record_connect(self._rec, self.connect_started, self.tcp_done, now)
            self.opened_for_request()
        run.connected(self)

    def opened_for_request(self) -> None:
        """A measured request waited for this connection to open (see the fused path)."""

    def data_received(self, data: bytes) -> None:
        self._rec.bytes_read += len(data)
        self._feed(data)

    def eof_received(self) -> bool:
        if self.framer is not None:
            self.framer.feed_eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.run.lost(self, exc)
        self._release()

    def _release(self) -> None:
        # The transport, the framer, its parser and this connection refer to each other
        # (bound methods both ways): undone here, a closed connection is freed at once by
        # its refcount instead of by the cyclic GC, whose passes cost a load that opens a
        # connection per request about a fifth of its Python time (issue 19).
        self.transport = None
        self._write = None
        if self.framer is not None:
            self.framer.release()
            self.framer = None
        self._feed = _closed_feed

    # -- framer callbacks --
    def on_response(self, code: int, keep_alive: bool) -> None:
        now = monotonic_ns()
        pending = self.pending
        if not pending:
            self.on_protocol_error("response received with no request outstanding")
            return
        run = self.run
        start = pending.popleft()
        intended = self.intended.popleft() if run.open_loop else start
        measure = self._measure
        stopping = run.stopping
        if intended >= measure and not stopping:
            is_http = self._is_http
            if code < 400 if is_http else code == 0:
                # Inlined copy of RunAccounting.record for an ok response (a call per
                # response costs more than the rest of it); an error goes to the rule itself.
                # tests/engine/test_rule_copies.py holds this copy to the rule.
                if is_http:
                    codes = self._codes
                    codes[code] = codes.get(code, 0) + 1
                self._record(now - (intended if intended < start else start))
                if run.open_loop:
                    self._rec.uncorrected.append(now - start)
                record_phases(self._phases, start, self.opened_ns, self._first, now)
                run.completed += 1
            else:
                run.record(code, start, intended, now)
        self._first = 0
        budget = run.budget
        if self._fast and keep_alive and budget != 0 and not stopping:
            # Closed loop keep-alive: the next request goes out at once. Inlined copy of
            # RunAccounting.take (and of send()); the general path below handles every other
            # case. tests/engine/test_rule_copies.py holds this copy to the rule.
            if now >= measure:
                if budget is not None:
                    run.budget = budget - 1
                self._rec.sent += 1
            self._write(self._request)  # type: ignore[misc]
            self._rec.bytes_written += self._size
            pending.append(now)
            return
        self.served += 1  # only requests_per_connection needs it: not on the fast path
        run.response_done(self, now, keep_alive)

    def settle_counts(self) -> None:
        """Bring the run's counters up to date (see the fused path); nothing to do here."""

    def close_after_response(self) -> None:
        """Write nothing more (a ramp sheds this connection): every response goes to the
        run, which closes the connection once what it has outstanding is answered."""
        self._fast = False

    def on_protocol_error(self, reason: str) -> None:
        self.broken = self.broken or reason  # the first error is the one to report
        if self.transport is not None:
            self.transport.abort()

    def retire(self) -> None:
        """Close a connection that is done with, letting what it wrote go out first (a
        WebSocket closes cleanly: ``ws_connection``)."""
        if self.transport is not None:
            self.transport.close()

    def end_at_stop(self) -> asyncio.Future[None] | None:
        """The load stopped: drop the connection at once. A WebSocket closes cleanly
        first (``ws_connection``) and returns what the run awaits until it is gone."""
        if self.transport is not None:
            self.transport.abort()
        return None

    # -- sending --
    def send(self, start: int, intended: int) -> None:
        assert self.transport is not None
        chunks = self.run.exchange.chunks
        if len(chunks) == 1:
            self.transport.write(chunks[0])
        else:
            self.transport.writelines(chunks)
        self.run.recorder.bytes_written += self.run.exchange.size
        self.pending.append(start)
        if self.run.open_loop:
            self.intended.append(intended)


class VariedConnection(Connection):
    """A connection of a load whose one request is rendered from feeders: each write is
    the next ready request (``RunAccounting.next_request``), whose bytes the run counts
    from its batches. Every response goes through the run rules (no fast path here: the
    fused one, ``FusedVariedConnection``, serves the common case)."""

    def send(self, start: int, intended: int) -> None:
        assert self.transport is not None
        self.transport.write(self.run.next_request(intended)[1])
        self.pending.append(start)
        if self.run.open_loop:
            self.intended.append(intended)


class MixConnection(Connection):
    """A connection of a request mix: each request it writes is the mix's next kind (with
    its bytes rendered from feeders, if the load has them), and each response (they come
    back in order) is recorded under the kind of its request.

    The recording goes through the run rules (``RunAccounting.record_kind``) rather than
    being inlined: a mix pays a few Python calls per response that a single request,
    on ``Connection`` or the fused path, does not.
    """

    def __init__(self, run: ConnectionOwner) -> None:
        super().__init__(run)
        self.request_kinds: deque[int] = deque()  # the kind of each written request in `pending`
        self._fast = not run.open_loop and not run.closes_after  # every kind is one write

    def on_response(self, code: int, keep_alive: bool) -> None:
        now = monotonic_ns()
        pending = self.pending
        if not pending:
            self.on_protocol_error("response received with no request outstanding")
            return
        run = self.run
        start = pending.popleft()
        intended = self.intended.popleft() if run.open_loop else start
        first, self._first = self._first, 0
        run.record_kind(
            code, start, intended, now, self.request_kinds.popleft(), first, self.opened_ns
        )
        # Closed loop keep-alive: the next request goes out at once (see Connection). A
        # take refused here (the requests ran out just now, which spent the budget) goes on
        # to the general path, which retires the connection and asks if the run is done.
        if self._fast and keep_alive and run.budget != 0 and not run.stopping and run.take(now):
            self.send(now, now)
            return
        self.served += 1
        run.response_done(self, now, keep_alive)

    def send(self, start: int, intended: int) -> None:
        assert self.transport is not None
        kind, data = self.run.next_request(intended)
        self.transport.write(data)  # its bytes: the run counts them from its batches
        self.pending.append(start)
        self.request_kinds.append(kind)
        if self.run.open_loop:
            self.intended.append(intended)


class StreamConnection(Connection):
    """A connection of a streaming load (``stream=``): its framer times each response's
    events (``_proto.streaming``), and every response goes through the run rules, which
    read them (``rules/streams``): no inlined fast path, a stream is long beside it."""

    def on_response(self, code: int, keep_alive: bool) -> None:
        now = monotonic_ns()
        pending = self.pending
        if not pending:
            self.on_protocol_error("response received with no request outstanding")
            return
        run = self.run
        start = pending.popleft()
        intended = self.intended.popleft() if run.open_loop else start
        first, self._first = self._first, 0
        run.record(code, start, intended, now, first, self.opened_ns)
        self.served += 1
        run.response_done(self, now, keep_alive)


class StreamVariedConnection(StreamConnection):
    """A streaming load whose request is rendered from feeders (a prompt a request)."""

    send = VariedConnection.send
