"""The asyncio engine's HTTP/2 connection: many streams on one socket, a stream a request.

A :class:`Connection` whose bytes go to the sans-IO client (``_proto.h2_client``) instead
of an HTTP/1.1 framer. The run sees it as a connection with several requests outstanding
(``pending``: the start of each, oldest first, as a pipelined HTTP/1.1 connection's), so
its rules apply unchanged: the closed loop keeps ``spec.outstanding_per_connection`` (``streams``)
outstanding, in-flight requests at the stop are ``pending``, a connection lost fails what
it still has. What differs is that streams end out of order and one at a time; how each
is counted is ``h2_streams.H2Streams``'s, written once for this loop and trio's
(``trio_io.h2``). What this module adds is the asyncio I/O:

- once the whole read is handled (a GOAWAY in it included), each stream that ended lets
  the run start the next request here (``response_done``), and their streams open in one
  write;
- a stream that outlives the timeout (the run's sweeper) is cancelled alone; the
  connection goes on, unless its server has not even acknowledged the client's SETTINGS:
  then it is dropped and replaced, as an HTTP/1.1 one after a timeout;
- after a GOAWAY no stream opens: the connection closes once its last stream ended, and
  the run opens a new one (not an error); a connection the client found broken (a frame
  that breaks the protocol, a server answering in HTTP/1.1) has already failed each
  stream as ``protocol`` with the client's words, and is closed;
- over TLS, a server whose ALPN chose anything but ``h2`` fails the request that opened
  the connection as ``protocol``, naming what it chose.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from time import monotonic_ns
from typing import Protocol, cast

from pytest_netbench._engine.asyncio_io.connection import Connection, ConnectionOwner
from pytest_netbench._engine.rules.accounting import RunAccounting
from pytest_netbench._engine.rules.h2_streams import H2Streams, alpn_refusal
from pytest_netbench._engine.rules.phases import record_connect
from pytest_netbench._model import LoadSpec


class _H2Owner(ConnectionOwner, Protocol):
    """The run, with its spec and the rule that fails one request of a connection."""

    spec: LoadSpec

    def fail_request(
        self, intended: int, error: str, detail: str, request_kind: int = -1, code: int = -1
    ) -> None: ...

    def check_finished(self) -> None: ...


class _ClosedH2Owner(_H2Owner, Protocol):
    """A closed-loop run: streams that ended in one read each take the next request."""

    def streams_done(self, conn: H2Connection, now: int, count: int) -> None: ...


class _OpenH2Owner(_H2Owner, Protocol):
    """An open-loop run: its pool of free streams (a connection is there once for each)."""

    idle: list[Connection]


class H2Connection(Connection):
    """One HTTP/2 client connection (see the module's docstring)."""

    streams_time_out_alone = True
    streams: H2Streams

    def __init__(self, run: ConnectionOwner) -> None:
        self.request_kinds: deque[int] = deque()  # a mix: the kind of each request in `pending`
        self._feeding = False  # requests taken now open their streams in the read's write
        super().__init__(run)
        # The steady state data_received handles alone (see there): closed loop, one fixed
        # request (the client hands the ended responses over at once), every stream may
        # carry another. A ramp that sheds the connection clears it (close_after_response).
        self._fast = (
            not run.open_loop
            and not run.closes_after
            and cast(RunAccounting, run).source is None
            and self.streams.client is not None
            and self.streams.client.on_responses is not None
        )
        self._owner = cast(_H2Owner, run)

    def _attach_framer(self) -> Callable[[bytes], object]:
        self.streams = H2Streams(cast(RunAccounting, self.run), self)
        return _no_framer  # data_received below feeds the HTTP/2 client itself

    # -- transport events --
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._write = self.transport.write  # type: ignore[union-attr]
        run = self.run
        if run.stopping:
            transport.close()
            return
        alpn = _alpn_refusal(transport)
        if alpn:
            self.on_protocol_error(alpn)
            return
        self.opened_ns = now = monotonic_ns()
        if self.pending and self.connect_started >= self._measure:
            record_connect(self._rec, self.connect_started, self.tcp_done, now)
        client = self.streams.client
        assert client is not None
        self._feeding = True
        try:
            preface = client.initiate()
            transport.write(preface)  # type: ignore[attr-defined]
            self._rec.bytes_written += len(preface)
            run.connected(self)
        finally:
            self._feeding = False
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        client = self.streams.client
        if client is not None and not self.run.stopping and not self.broken:
            # Every stream still open ends as "closed" (a reset), in the client's words;
            # on a connection this side found broken, the run fails them with its reason.
            self._feeding = True
            try:
                client.feed_eof()
            finally:
                self._feeding = False
            self._continue()
        super().connection_lost(exc)

    def _release(self) -> None:
        super()._release()
        self.streams.release()

    def data_received(self, data: bytes) -> None:
        # Connection.data_received's count and the feed in one call, not two: the commonest
        # read (Go's lone HEADERS of a response, 0.37 a response) does nothing else, and
        # feed says so (it ended nothing and queued nothing: no stream may open, nothing to
        # write or close).
        self._rec.bytes_read += len(data)
        streams = self.streams
        client = streams.client
        if client is None:  # released: bytes after connection_lost are dropped
            return
        self._feeding = True
        try:
            if client.feed(data):  # a response's HEADERS alone (0.37 a read from Go): no more
                return
        finally:
            self._feeding = False
        ended = streams.ended
        if ended:
            streams.ended = 0
            run = self.run
            budget = run.budget
            if (
                self._fast
                and client.goaway is None
                and not client.failed
                and not client.closed
                and not run.stopping
                and (budget is None or budget > ended)
                and not self.transport.is_closing()  # type: ignore[union-attr]
            ):
                # The steady state (every read of DATA frames): what _after_streams,
                # ClosedRun.streams_done (take_many, send_many, check_finished) and _flush
                # do for it, in this call and one of H2Streams (issue 35: they were 14
                # Python calls a read). An inlined copy of RunAccounting.take_many for a
                # run with no source and a budget it cannot spend here (so none is refused
                # and check_finished cannot find the run finished: each taken request is
                # outstanding); tests/engine/test_rule_copies.py holds it to the rule.
                now = monotonic_ns()
                if now >= run.measure_start_ns:
                    if budget is not None:
                        run.budget = budget - ended
                    self._rec.sent += ended
                data = streams.send_taken(now, ended)
                if data:
                    self._write(data)  # type: ignore[misc]
                    self._rec.bytes_written += len(data)
                if streams.unopened:  # more than the server allows at once: the general way
                    self._flush()
                return
            # _continue, written out for the read that ended streams (each a read of DATA
            # frames): two calls fewer a read.
            self._feeding = True
            try:
                self._after_streams(monotonic_ns(), ended)
            finally:
                self._feeding = False
            self._flush()
        # client.outbound: has_output without its call.
        elif client.outbound or client.goaway is not None or client.failed:
            self._continue()
            self._flush()
        # Else the read ended no stream and asked for no answer (as a lone HEADERS read, its
        # DATA to come): no request may start and nothing would be written or closed.

    def _flush(self) -> None:
        """Open the streams of the requests taken since the last write, and write what the
        client has queued (requests, acknowledgements, WINDOW_UPDATEs) in one write; close
        a connection that is done (after a GOAWAY) or broken."""
        streams = self.streams
        client = streams.client
        transport = self.transport
        if client is None or transport is None or transport.is_closing():
            return
        data = streams.data_to_send()
        if data:
            transport.write(data)
            self._rec.bytes_written += len(data)
        if self.run.open_loop and (client.goaway is not None or client.failed):
            self._leave_pool()
        if client.failed:
            self.broken = self.broken or streams.failed_because
            transport.close()
        elif streams.done:
            # After a GOAWAY: the run opens another (not an error). Requests still waiting
            # for a stream here (more than the server allowed at once) fail as a reset.
            transport.close()

    def retire(self) -> None:
        """Close once. Several streams ending in one read each go to the run, which retires
        the connection each time it finds nothing outstanding; a second ``close()`` of an
        asyncio TLS transport drops its protocol, so the abort at the stop did nothing and
        the socket stayed open after the load (a ResourceWarning later)."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def _leave_pool(self) -> None:
        """Open loop: no stream may open here again; the run's pool forgets its free ones."""
        idle = cast(_OpenH2Owner, self.run).idle
        while self in idle:
            idle.remove(self)

    def _continue(self) -> None:
        """After a read (or a timeout, or the close), the streams that ended in it each
        let the run start the next request here: decided once the whole read is known, so
        that a GOAWAY later in the same read stops them (a request taken for a connection
        that can open no stream would fail unsent)."""
        ended = self.streams.take_ended()
        if not ended:
            return
        now = monotonic_ns()
        self._feeding = True
        try:
            self._after_streams(now, ended)
        finally:
            self._feeding = False

    def _after_streams(self, now: int, ended: int) -> None:
        """``ended`` streams ended: the run may start the next request here for each (in
        closed loop, taken at once: ``ClosedRun.streams_done``). A connection where no
        stream may open again (a GOAWAY) is, in closed loop, retired by the run once its
        last stream ended; in open loop it leaves the pool of free streams. (Nothing the
        run does here changes whether streams may open: asked once.)"""
        run = self.run
        if self.streams.may_continue:
            if run.open_loop:
                for _ in range(ended):
                    run.response_done(self, now, True)
            else:
                cast(_ClosedH2Owner, run).streams_done(self, now, ended)
        elif not run.open_loop:
            for _ in range(ended):
                run.response_done(self, now, False)
        else:
            self._leave_pool()
            self._owner.check_finished()

    # -- the run's side --
    def send(self, start: int, intended: int) -> None:
        """A request taken: its stream opens with the next write (see ``_flush``)."""
        self.streams.queue(start, intended)
        if not self._feeding:
            self._flush()

    def send_many(self, start: int, count: int) -> None:
        """Closed loop: ``count`` requests taken at once, as ``count`` calls of ``send``."""
        self.streams.queue_many(start, start, count)
        if not self._feeding:
            self._flush()

    def time_out(self, started_before: int, detail: str) -> None:
        """Cancel every request that started before ``started_before`` and count each as a
        ``timeout``; the connection goes on, or is dropped where ``H2Streams.expire`` says
        it must be (the run opens another)."""
        dropped = self.streams.expire(started_before, detail)
        if dropped and self.transport is not None:
            self.broken = self.broken or dropped
            self.transport.abort()
            return
        self._continue()
        self._flush()


def _no_framer(data: bytes) -> None:
    raise AssertionError("an HTTP/2 connection's bytes go to H2Connection.data_received")


def _alpn_refusal(transport: asyncio.BaseTransport) -> str:
    """Over TLS, why the server's ALPN choice is not HTTP/2 ("" if it chose h2, or the
    connection is cleartext)."""
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is None:
        return ""
    return alpn_refusal(ssl_object.selected_alpn_protocol())
