"""The asyncio engine's HTTP/2 connection: many streams on one socket, a stream a request.

A :class:`Connection` whose bytes go to the sans-IO client (``_proto.h2_client``) instead
of an HTTP/1.1 framer. The run sees it as a connection with several requests outstanding
(``pending``: the start of each, oldest first, as a pipelined HTTP/1.1 connection's), so
its rules apply unchanged: the closed loop keeps ``spec.per_connection`` (``streams``)
outstanding, in-flight requests at the stop are ``pending``, a connection lost fails what
it still has. What differs is that streams end out of order and one at a time:

- each stream's start is kept beside its id (``_ids``, in the order the streams opened,
  the same order as ``pending``); a request taken while the server allows no more streams
  (its SETTINGS_MAX_CONCURRENT_STREAMS) waits at the tail of ``pending`` (``_unsent``)
  and opens as soon as a stream ends;
- a stream's response is recorded by the run's ``record``, a stream that ended in error
  (the ``StreamError`` of the client: reset with its code, GOAWAY, protocol, gRPC status)
  by ``fail_request`` with its kind and reason; once the whole read is handled (a GOAWAY
  in it included), each stream that ended lets the run start the next request here
  (``response_done``), and their streams open in one write;
- a mix's kinds (``record_kind``, ``kinds`` as ``MixConnection``'s) each send their own
  header block, encoded once; with feeders each stream's block is made from the request
  its source rendered (``h2_headers.encode_rendered_request``);
- a stream that outlives the timeout is cancelled alone (RST_STREAM CANCEL) and counted
  as ``timeout``; the connection goes on, unless its server has not even acknowledged the
  client's SETTINGS: then it is dropped and replaced, as an HTTP/1.1 one after a timeout;
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

from pytest_netbench._engine.connection import Connection, ConnectionOwner
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.h2_client import H2ClientConnection, H2Request, StreamError
from pytest_netbench._proto.h2_headers import encode_rendered_request


class _H2Owner(ConnectionOwner, Protocol):
    """The run, with its spec and the rule that fails one request of a connection."""

    spec: LoadSpec

    def fail_request(
        self, intended: int, kind: str, detail: str, request: int = -1, code: int = -1
    ) -> None: ...

    def check_finished(self) -> None: ...


class _OpenH2Owner(_H2Owner, Protocol):
    """An open-loop run: its pool of free streams (a connection is there once for each)."""

    idle: list[Connection]


class H2Connection(Connection):
    """One HTTP/2 client connection (see the module's docstring)."""

    _client: H2ClientConnection | None

    def __init__(self, run: ConnectionOwner) -> None:
        self._ids: deque[int] = deque()  # open streams, oldest first (as `pending`)
        self._unsent = 0  # requests taken that wait for a stream (at the tail of `pending`)
        # A mix: the kind of each request in `pending` (as MixConnection's); each kind's
        # request, its block encoded once. Feeders: each request's block encoded as it is
        # sent, from the bytes its source rendered (``encode_rendered_request``).
        self.kinds: deque[int] = deque()
        self._mix = run.exchange.h2_mix
        spec = cast(_H2Owner, run).spec
        self._varied = bool(spec.feeders)
        self._scheme = spec.scheme
        # A gRPC load: an ok call is counted under grpc-status 0, a failed one under its code.
        self._grpc = spec.grpc_method is not None
        # The requests waiting for a stream, when each stream may carry another.
        self._per_stream = bool(self._mix) or self._varied
        self._unsent_requests: deque[H2Request] = deque()
        self._feeding = False
        self._ended = 0  # streams ended during this read, whose next requests wait for it
        super().__init__(run)
        self._fast = False
        self._owner = cast(_H2Owner, run)

    def _attach_framer(self) -> Callable[[bytes], object]:
        request = self.run.exchange.h2
        if request is None:
            raise TypeError("H2Connection needs an HTTP/2 exchange")
        self._client = H2ClientConnection(
            request,
            self._on_stream_response,
            self._on_stream_error,
            max_streams=cast(_H2Owner, self.run).spec.per_connection,
        )
        return self._feed_h2

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
        assert self._client is not None
        self._feeding = True
        try:
            preface = self._client.initiate()
            transport.write(preface)  # type: ignore[attr-defined]
            self._rec.bytes_written += len(preface)
            run.connected(self)
        finally:
            self._feeding = False
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        client = self._client
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
        self._client = None  # its callbacks are this connection's bound methods

    def _feed_h2(self, data: bytes) -> None:
        client = self._client
        if client is None:
            return
        self._feeding = True
        try:
            client.feed(data)
        finally:
            self._feeding = False
        self._continue()
        self._flush()

    def _flush(self) -> None:
        """Open the streams of the requests taken since the last write, and write what the
        client has queued (requests, acknowledgements, WINDOW_UPDATEs) in one write; close
        a connection that is done (after a GOAWAY) or broken."""
        client = self._client
        transport = self.transport
        if client is None or transport is None or transport.is_closing():
            return
        if self._unsent and self._per_stream:
            waiting = self._unsent_requests
            while waiting:
                stream_id = client.open_stream_for(waiting[0])
                if not stream_id:
                    break
                waiting.popleft()
                self._unsent -= 1
                self._ids.append(stream_id)
        elif self._unsent:
            first, count = client.open_streams(self._unsent)
            if count:
                self._unsent -= count
                self._ids.extend(range(first, first + 2 * count, 2))
        data = client.data_to_send()
        if data:
            transport.write(data)
            self._rec.bytes_written += len(data)
        if self.run.open_loop and (client.goaway is not None or client.failed):
            self._leave_pool()
        if client.failed:
            self.broken = self.broken or (
                client.connection_error.reason if client.connection_error else "HTTP/2 failure"
            )
            transport.close()
        elif client.finished and len(self.pending) == self._unsent:
            # After a GOAWAY: the run opens another (not an error). Requests still waiting
            # for a stream here (more than the server allowed at once) fail as a reset.
            transport.close()

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
        ended = self._ended
        if not ended:
            return
        self._ended = 0
        now = monotonic_ns()
        self._feeding = True
        try:
            for _ in range(ended):
                self._after_stream(now)
        finally:
            self._feeding = False

    def _after_stream(self, now: int) -> None:
        """A stream ended: the run may start the next request here. A connection where no
        stream may open again (a GOAWAY) is, in closed loop, retired by the run once its
        last stream ended; in open loop it leaves the pool of free streams."""
        run = self.run
        if self._may_continue():
            run.response_done(self, now, True)
        elif not run.open_loop:
            run.response_done(self, now, False)
        else:
            self._leave_pool()
            self._owner.check_finished()

    # -- the client's callbacks: one per stream that ended --
    def _pop_stream(self, stream_id: int) -> tuple[int, int, int]:
        """Forget a stream that ended: (its start, its intended start, its mix kind or
        -1)."""
        ids = self._ids
        pending = self.pending
        open_loop = self.run.open_loop
        if ids[0] == stream_id:
            ids.popleft()
            start = pending.popleft()
            kind = self.kinds.popleft() if self._mix else -1
            return start, self.intended.popleft() if open_loop else start, kind
        index = ids.index(stream_id)
        del ids[index]
        start = pending[index]
        del pending[index]
        kind = -1
        if self._mix:
            kind = self.kinds[index]
            del self.kinds[index]
        if not open_loop:
            return start, start, kind
        intended = self.intended[index]
        del self.intended[index]
        return start, intended, kind

    def _may_continue(self) -> bool:
        """May this connection carry more requests? Not after a GOAWAY or a failure. A
        server's SETTINGS_MAX_CONCURRENT_STREAMS below ``streams`` does not stop it: the
        requests over its limit wait for a stream (``_unsent``)."""
        client = self._client
        return (
            client is not None and client.goaway is None and not client.failed and not client.closed
        )

    def _on_stream_response(self, stream_id: int, status: int) -> None:
        now = monotonic_ns()
        start, intended, kind = self._pop_stream(stream_id)
        run = self.run
        if self._grpc and status == 200:
            status = 0  # grpc-status OK (h2_client ends a call ok only so)
        if kind < 0:
            run.record(status, start, intended, now)
        else:
            run.record_kind(status, start, intended, now, kind)
        self.served += 1
        self._ended += 1

    def _on_stream_error(self, stream_id: int, error: StreamError) -> None:
        _, intended, kind = self._pop_stream(stream_id)
        code = error.code if error.cause == "grpc_status" else -1
        self._owner.fail_request(intended, error.kind, error.reason, kind, code)
        self.served += 1
        self._ended += 1

    # -- the run's side --
    def send(self, start: int, intended: int) -> None:
        """A request taken: its stream opens with the next write (see ``_flush``)."""
        self.pending.append(start)
        if self.run.open_loop:
            self.intended.append(intended)
        if self._per_stream:
            kind, data = self.run.next_request(intended)
            if self._mix:
                self.kinds.append(kind)
            if self._varied:
                self._unsent_requests.append(
                    H2Request(*encode_rendered_request(data, self._scheme))
                )
            else:  # a mix of fixed requests (the rendered bytes only said which kind)
                self._unsent_requests.append(self._mix[kind])
        self._unsent += 1
        if not self._feeding:
            self._flush()

    def time_out(self, started_before: int, detail: str) -> None:
        """Cancel every request that started before ``started_before`` (its stream reset
        with CANCEL, or, not yet opened, dropped) and count each as a ``timeout``; the
        connection goes on. Unless the server has not even acknowledged the client's
        SETTINGS by then: it does not speak HTTP/2 there, so the connection is dropped
        (its other requests fail as ``protocol``) and the run opens another."""
        client = self._client
        pending = self.pending
        open_loop = self.run.open_loop
        dead = client is not None and not client.settings_acked
        self._feeding = True
        try:
            while pending and pending[0] < started_before:
                start = pending.popleft()
                intended = self.intended.popleft() if open_loop else start
                kind = self.kinds.popleft() if self._mix else -1
                if self._ids:
                    stream_id = self._ids.popleft()
                    if client is not None:
                        client.cancel(stream_id)
                else:
                    self._unsent -= 1
                    if self._per_stream:
                        self._unsent_requests.popleft()
                self._owner.fail_request(intended, "timeout", detail, kind)
                self.served += 1
                if not dead:
                    self._ended += 1
        finally:
            self._feeding = False
        if dead and self.transport is not None:
            self.broken = self.broken or (
                f"the server did not acknowledge the client's HTTP/2 SETTINGS ({detail}):"
                " it does not speak HTTP/2 on this connection"
            )
            self.transport.abort()
            return
        self._continue()
        self._flush()


def _alpn_refusal(transport: asyncio.BaseTransport) -> str:
    """Over TLS, why the server's ALPN choice is not HTTP/2 ("" if it chose h2, or the
    connection is cleartext)."""
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is None:
        return ""
    chosen = ssl_object.selected_alpn_protocol()
    if chosen == "h2":
        return ""
    said = f"chose {chosen!r}" if chosen else "chose no protocol"
    return (
        f"the server's TLS handshake (ALPN) {said}, not 'h2': it does not speak HTTP/2 over"
        " TLS on this port; use protocol='http1' for it, or protocol='auto' to speak what"
        " the server picks"
    )
