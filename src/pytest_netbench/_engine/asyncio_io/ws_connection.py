"""The asyncio engine's WebSocket connection: the opening handshake, then message round trips.

A :class:`Connection` whose first bytes out are the upgrade request and whose first bytes
in are read as its answer (``_proto.websocket.ClientHandshake``); once the server accepts,
the run is told the connection is ready (``connected``) and each message is sent as a
frame with its own masking key. The message that needed the connection is outstanding
from the connect on, so a handshake that hangs is that message's timeout, and one the
server refuses is that message's ``status`` error (the status counted in
``status_codes``), as the request an HTTP connection was opened for would be.

A close from the server fails the message outstanding as ``reset`` with the close's code
in its words, counts the code in ``status_codes`` (codes are 1000-4999, apart from HTTP
statuses), answers the close and lets the run open a new connection in its place.

When the load stops, an open WebSocket is closed cleanly rather than aborted
(:meth:`WsConnection.end_at_stop`): the client's close frame (code 1000) goes out after
whatever is still in the write buffer (a pong), the server's close is awaited, then the
transport closes; the load's ``timeout`` bounds the wait, and at most a second. Nothing
after the stop is counted, the close's bytes included.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from time import monotonic_ns
from typing import Protocol, cast

from pytest_netbench._engine.asyncio_io.connection import Connection, ConnectionOwner
from pytest_netbench._engine.rules.accounting import Outstanding
from pytest_netbench._engine.rules.failures import (
    ws_handshake_invalid,
    ws_refused,
    ws_server_closed,
)
from pytest_netbench._engine.rules.phases import record_connect, record_upgrade
from pytest_netbench._engine.rules.ws_rules import (
    answer_to_front,
    close_counts,
    count_code,
    refusal_counts,
)
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.websocket import (
    CLOSE_WAIT_MAX_S,
    ClientHandshake,
    HandshakeInvalid,
    HandshakeRefused,
    MessageFrames,
    WsFramer,
    WsSetup,
)
from pytest_netbench._proto.ws_ids import IdMatcher, id_framer
from pytest_netbench._stats.recorder import Recorder


class _FailingOwner(ConnectionOwner, Protocol):
    """The run, with the rule that fails a connection's outstanding messages."""

    spec: LoadSpec

    def fail_outstanding(
        self, requests: Outstanding, error: str, detail: str, err_no: int | None = None
    ) -> None: ...


class WsConnection(Connection):
    """One WebSocket client connection (see the module's docstring)."""

    framer: WsFramer | None
    _ids: IdMatcher | None = None  # answers matched by id: this connection's ids
    _setup: WsSetup
    _frames: MessageFrames
    _handshake: ClientHandshake

    def __init__(self, run: ConnectionOwner) -> None:
        super().__init__(run)
        self._fast = False  # every message is rendered with its own masking key
        self.upgraded = False  # the handshake was accepted
        self._ended: asyncio.Future[None] | None = None  # a clean close under way
        self._give_up: asyncio.TimerHandle | None = None
        self._timed = False  # opened for a measured message: its handshake is timed

    def _attach_framer(self) -> Callable[[bytes], object]:
        setup = self.run.exchange.websocket
        if setup is None:
            raise TypeError("WsConnection needs a WebSocket exchange")
        self._setup = setup
        self._frames = setup.frames
        self._handshake = setup.handshake()
        if setup.ids is not None:  # answers matched by id (see _proto/ws_ids)
            self.framer, self._ids = id_framer(
                setup, self._answered, self.on_protocol_error, self._reply, self._server_closed
            )
        else:
            self.framer = setup.make_framer(
                self.on_response, self.on_protocol_error, self._reply, self._server_closed
            )
        return self._receive_handshake

    def _answered(self, code: int, index: int) -> None:
        """An answer matched by id to the ``index``-th message outstanding: that message
        becomes the oldest, which ``on_response`` records."""
        if self.run.open_loop:
            answer_to_front(index, self.pending, self.intended)
        else:
            answer_to_front(index, self.pending)
        self.on_response(code, True)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if self.run.stopping:
            transport.close()
            return
        self.opened_ns = now = monotonic_ns()
        # Opened for a measured message: its connect, TLS and opening handshake are timed
        # (rules.phases), the load's phases.
        self._timed = bool(self.pending) and self.connect_started >= self._measure
        if self._timed:
            record_connect(self._rec, self.connect_started, self.tcp_done, now)
        request = self._handshake.request
        self.transport.write(request)  # type: ignore[union-attr]
        self._rec.bytes_written += len(request)

    def _receive_handshake(self, data: bytes) -> None:
        now = monotonic_ns()  # the arrival of these bytes
        if not self._first:
            self._first = now  # the upgrade answer's first byte
        try:
            accepted = self._handshake.receive(data)
        except HandshakeRefused as refused:
            self._refused(refused)
            return
        except HandshakeInvalid as invalid:
            self.on_protocol_error(ws_handshake_invalid(invalid).detail)
            return
        if accepted is None:
            return
        if self._timed and not self.run.stopping:
            record_upgrade(self._rec, self.opened_ns, self._first, now)
        self._first = 0
        assert self.framer is not None
        self._feed = self.framer.feed
        self.upgraded = True
        self.run.connected(self)
        if accepted.leftover and self.transport is not None and not self.transport.is_closing():
            self._feed(accepted.leftover)

    def _refused(self, refused: HandshakeRefused) -> None:
        run = self.run
        self.broken = self.broken or str(refused)  # the connect phase's failure, if in it
        if refusal_counts(self.pending, self._measure, run.stopping):
            count_code(self._codes, refused.status)
        if not run.stopping:
            cast(_FailingOwner, run).fail_outstanding(self, *ws_refused(refused))
        if self.transport is not None:
            self.transport.abort()

    def _reply(self, frame: bytes) -> None:
        """A pong or the close reply the framer owes the server."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(frame)
            self._rec.bytes_written += len(frame)

    def _server_closed(self, code: int, reason: str) -> None:
        run = self.run
        if close_counts(monotonic_ns(), self._measure, run.stopping):
            count_code(self._codes, code)
        if self.pending and not run.stopping:
            cast(_FailingOwner, run).fail_outstanding(self, *ws_server_closed(code, reason))
        if self.transport is not None:
            self.transport.close()  # after the close reply, already written

    def send(self, start: int, intended: int) -> None:
        assert self.transport is not None
        frame = self._frames.next_frame() if self._ids is None else self._ids.next_frame()
        self.transport.write(frame)
        self._rec.bytes_written += len(frame)
        self.pending.append(start)
        if self.run.open_loop:
            self.intended.append(intended)

    # -- the end of the load --
    def retire(self) -> None:
        if self.close_cleanly() is None:
            super().retire()

    def end_at_stop(self) -> asyncio.Future[None] | None:
        """Close an open WebSocket cleanly (see the module's docstring), or let the clean
        close under way end; one still in its handshake, closed or broken is aborted as
        any connection is."""
        ending = self.close_cleanly()
        return ending if ending is not None else super().end_at_stop()

    def close_cleanly(self) -> asyncio.Future[None] | None:
        """Start the client's clean close (once); what is done when the connection is
        gone, or None where there is no WebSocket open to close."""
        if self._ended is not None:
            return self._ended
        transport, framer = self.transport, self.framer
        if (
            transport is None
            or framer is None
            or not self.upgraded
            or not framer.open
            or transport.is_closing()
        ):
            return None
        self._rec = Recorder(0, open_loop=False)  # bytes after the stop are not the load's
        loop = asyncio.get_running_loop()
        self._ended = loop.create_future()
        transport.write(framer.close_from_client(transport.close))
        limit_s = min(cast(_FailingOwner, self.run).spec.timeout_s, CLOSE_WAIT_MAX_S)
        self._give_up = loop.call_later(limit_s, transport.abort)
        return self._ended

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._give_up is not None:
            self._give_up.cancel()
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)
