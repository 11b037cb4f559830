"""The asyncio engine's listen load: WebSocket connections held open, the server's pushes
read and counted by ``listen_rules`` (the rules, shared with trio's ``trio_io.ws_listen``).

The connections open first (the driver's connect phase, at most ``connect_rate`` a
second), then each listens: a :class:`PushConnection` writes nothing but its pongs, its
close reply and, every ``ping_every``, a client ping. A connection lost is counted once
and not replaced; when none is left, the load ends.
"""

from __future__ import annotations

import asyncio
from time import monotonic_ns, time_ns
from typing import Any, cast

from pytest_netbench._engine.asyncio_io.connection import Connection, ConnectionOwner
from pytest_netbench._engine.asyncio_io.engine import BaseRun
from pytest_netbench._engine.asyncio_io.ws_connection import WsConnection
from pytest_netbench._engine.rules.failures import (
    lost_held_connection,
    ws_refused,
    ws_server_closed,
)
from pytest_netbench._engine.rules.listen_rules import Held, ListenRules
from pytest_netbench._proto.websocket import HandshakeRefused
from pytest_netbench._proto.ws_push import PushFramer


class PushConnection(WsConnection):
    """One held WebSocket connection: the handshake as any, then pushes in."""

    framer: PushFramer | None

    def __init__(self, run: ConnectionOwner) -> None:
        self.held = Held()
        self.close_code = 0
        self.close_words = ""
        super().__init__(run)

    @property
    def listen(self) -> ListenRun:
        return cast(ListenRun, self.run)

    def _attach_framer(self) -> Any:
        setup = self.run.exchange.websocket
        if setup is None:
            raise TypeError("PushConnection needs a WebSocket exchange")
        self._setup = setup
        self._frames = setup.frames
        self._handshake = setup.handshake()
        self.framer = PushFramer(
            self.listen.rules.stamps,
            self._pushed,
            self.on_protocol_error,
            self._reply,
            self._server_closed,
            self._ponged,
        )
        return self._receive_handshake

    def _pushed(self, stamp_ns: int, problem: str) -> None:
        self.listen.rules.push(self.held, stamp_ns, problem, monotonic_ns(), time_ns())

    def _ponged(self, payload: bytes) -> None:
        self.listen.rules.pong(self.held, payload)

    def _refused(self, refused: HandshakeRefused) -> None:
        failed = ws_refused(refused)
        self.listen.lose(self, failed.kind, failed.detail, refused.status)
        if self.transport is not None:
            self.transport.abort()

    def _server_closed(self, code: int, reason: str) -> None:
        self.close_code = code
        self.close_words = ws_server_closed(code, reason).detail
        if self.transport is not None:
            self.transport.close()  # after the close reply, already written

    def write(self, frame: bytes) -> None:
        self._reply(frame)

    @property
    def partial(self) -> bool:
        return self.framer is not None and self.framer.partial


class ListenRun(BaseRun):
    """Held connections of one share (see the module's docstring)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.connection_class = PushConnection
        self.rules = ListenRules(self)
        self.listening: set[PushConnection] = set()
        self.ping_timer: asyncio.TimerHandle | None = None

    def begin(self) -> None:
        if self.phase is not None:
            ready = self.phase.alive()
            self.phase = None
            for conn in ready:
                self.connected(conn)
        else:
            for _ in range(self.share.connections):
                self.open_connection(0, 0)
        if self.rules.ping_every_s is not None:
            self.ping_timer = self.loop.call_later(self.rules.ping_every_s, self._ping_all)
        self._check_left()

    def connected(self, conn: Connection) -> None:
        if self.phase is not None:
            self.phase.connected(conn)
            return
        push = cast(PushConnection, conn)
        self.listening.add(push)
        self.rules.hold(push.held, monotonic_ns())

    def lose(self, conn: PushConnection, kind: str, detail: str, code: int = 0) -> None:
        if conn.held.lost:
            return
        if self.phase is None:
            self.rules.lose(conn.held, kind, detail, code)
        else:
            conn.held.lost = True  # before the window: the phase's to count
            self.phase.failed(conn, f"connect failed: {detail}", timed_out=False)

    def fail_outstanding(
        self, requests: Any, error: str, detail: str, err_no: int | None = None
    ) -> None:
        """A connect that failed inside the window (``connect_first`` off)."""
        self.lose(cast(PushConnection, requests), error, detail)

    def lost(self, conn: Connection, exc: Exception | None) -> None:
        push = cast(PushConnection, conn)
        self.connections.discard(conn)
        self.listening.discard(push)
        if self.stopping:
            return
        if self.phase is not None and conn in self.phase.ready:
            self.phase.lost(conn)
            return
        if push.close_code:
            self.lose(push, "reset", push.close_words, push.close_code)
        elif conn.broken:
            self.lose(push, "protocol", conn.broken)
        else:
            lost = lost_held_connection(exc)
            self.lose(push, lost.kind, lost.detail)
        self._check_left()

    def after_connect_failure(self, conn: Connection) -> None:
        self._check_left()

    def after_lost(self, conn: Connection) -> None:
        self._check_left()

    def response_done(self, conn: Connection, now: int, keep_alive: bool) -> None:
        """Never called: a push is counted through ``listen_rules``."""

    def _check_left(self) -> None:
        if self.phase is None and not self.connections and not self.stopping:
            self.stop()  # every held connection is gone: nothing more to measure

    def _ping_all(self) -> None:
        self.ping_timer = None
        if self.stopping or self.rules.ping_every_s is None:
            return
        now = monotonic_ns()
        for conn in list(self.listening):
            frame = self.rules.ping(conn.held, now)
            if frame is not None:
                conn.write(frame)
            else:
                self.lose(conn, "timeout", self.rules.ping_timeout_words())
                if conn.transport is not None:
                    conn.transport.abort()
        self.ping_timer = self.loop.call_later(self.rules.ping_every_s, self._ping_all)

    def sweep(self) -> None:
        """Connects past ``connect_timeout`` are cancelled; a handshake not answered
        within ``timeout`` of the connect's start loses its connection."""
        now = monotonic_ns()
        for conn in list(self.connections):
            waited = now - conn.connect_started
            if conn.connect_task is not None:
                if waited > self.connect_timeout_ns:
                    conn.connect_task.cancel()
            elif conn not in self.listening and waited > self.timeout_ns:
                push = cast(PushConnection, conn)
                words = f"no answer to the WebSocket handshake within {self.spec.timeout_s}s"
                self.lose(push, "timeout", words)
                if conn.transport is not None:
                    conn.transport.abort()

    def stop(self) -> None:
        if self.stopping:
            return
        if self.ping_timer is not None:
            self.ping_timer.cancel()
        self.rules.end(sum(1 for conn in self.listening if conn.partial))
        super().stop()
