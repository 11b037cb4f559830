"""The trio engine's listen load: WebSocket connections held open, the server's pushes read
and counted by ``listen_rules`` (the rules the asyncio engine's ``ws_listen`` follows).

A task per connection connects, opens the WebSocket (``trio_io.ws.open_websocket``) and
reads pushes until the load ends or the connection is lost; a pinger task sends every
connection its client ping every ``ping_every``. ``connect_first`` is the asyncio
engine's, so here the connections open as the share starts (before the window only with
a ``warmup``), and a connect or a handshake that fails inside the window is counted as a
held connection lost. None is replaced; when none is left, the load ends.
"""

from __future__ import annotations

from time import monotonic_ns, time_ns

import trio

from pytest_netbench._engine.rules.accounting import RunAccounting
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.connecting import (
    FirstContact,
    make_ssl_context,
)
from pytest_netbench._engine.rules.exchange import Exchange, build_exchange
from pytest_netbench._engine.rules.failures import (
    informative_cause,
    lost_connection,
    lost_held_connection,
    ws_handshake_invalid,
    ws_refused,
    ws_server_closed,
)
from pytest_netbench._engine.rules.listen_rules import Held, ListenRules
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.trio_io.connect import CONNECT_ERRORS, failure_of, open_stream
from pytest_netbench._engine.trio_io.timers import share_watcher, start_timers
from pytest_netbench._engine.trio_io.ws import HandshakeEnded, close_websocket, open_websocket
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.websocket import HandshakeInvalid, HandshakeRefused
from pytest_netbench._proto.ws_push import PushFramer
from pytest_netbench._stats.recorder import WorkerOutcome

_READ_SIZE = 64 * 1024


class _Listener:
    """One held connection: its rules' part, its stream once open, its framer."""

    __slots__ = (
        "broken",
        "close",
        "framer",
        "half_written",
        "held",
        "replies",
        "scope",
        "send_lock",
        "stream",
    )

    def __init__(self) -> None:
        self.held = Held()
        self.stream: trio.abc.Stream | None = None
        self.framer: PushFramer | None = None
        self.scope = trio.CancelScope()
        self.send_lock = trio.Lock()
        self.replies: list[bytes] = []
        self.broken = ""
        self.close: tuple[int, str] | None = None
        # A write cancelled half way: no clean close at the load's end.
        self.half_written = False


class TrioListenRun(RunAccounting):
    """One share's held connections on trio (see the module's docstring)."""

    def __init__(
        self, spec: LoadSpec, share: WorkerShare, exchange: Exchange, start_at_ns: int
    ) -> None:
        super().__init__(spec, share, exchange, start_at_ns)
        self.rules = ListenRules(self)
        self.listeners: set[_Listener] = set()
        self.recorder.count_connections = self.listeners.__len__  # per timeline row
        self.ssl_context = make_ssl_context(spec)
        self.cancel_scope = trio.CancelScope()
        self.contact = FirstContact()
        self.started = 0  # connection tasks started

    def stop(self) -> None:
        if self.stopping:
            return
        self.recorder.freeze_connections()
        self.rules.end(sum(1 for c in self.listeners if c.framer is not None and c.framer.partial))
        self.stop_counting(())
        self.cancel_scope.cancel()

    def lose(self, conn: _Listener, error: str, detail: str, code: int = 0) -> None:
        self.rules.lose(conn.held, error, detail, code)
        conn.scope.cancel()

    def _gone(self, conn: _Listener) -> None:
        self.listeners.discard(conn)
        if not self.listeners and self.started >= self.share.connections:
            self.stop()  # every held connection is gone: nothing more to measure

    # -- one connection --
    async def hold(self) -> None:
        conn = _Listener()
        self.listeners.add(conn)
        self.count_opened(len(self.listeners))
        try:
            with conn.scope:
                await self._hold(conn)
        finally:
            if conn.stream is not None:
                with trio.CancelScope(shield=True):
                    # The lock: the pinger may have taken it just before the run stopped,
                    # and two writers on one trio stream is an error, not a wait.
                    async with conn.send_lock:
                        await self._close_cleanly(conn)
                        await trio.aclose_forcefully(conn.stream)
            if conn.framer is not None:
                conn.framer.release()
            self._gone(conn)

    async def _close_cleanly(self, conn: _Listener) -> None:
        framer = conn.framer
        if conn.stream is None or framer is None or not framer.open:
            return
        if conn.held.lost or conn.half_written:
            return
        await close_websocket(conn.stream, framer, self.spec.timeout_s)

    async def _hold(self, conn: _Listener) -> None:
        spec = self.spec
        try:
            stream = await open_stream(
                self.exchange.connect_host,
                self.exchange.connect_port,
                self.ssl_context,
                spec.host,
                spec.connect_timeout_s,
            )
            conn.stream = stream
        except CONNECT_ERRORS as exc:
            failed = failure_of(exc)
            self.lose(conn, failed.kind, failed.detail)
            if self.contact.failed(informative_cause(exc), monotonic_ns()):
                self.stop()  # nothing listens there: the share raises (see FirstContact)
            return
        self.contact.reached = True
        setup = self.exchange.websocket
        assert setup is not None
        try:
            accepted = await open_websocket(stream, setup, spec.timeout_s, self.recorder)
        except HandshakeRefused as refused:
            failed = ws_refused(refused)
            self.lose(conn, failed.kind, failed.detail, refused.status)
        except HandshakeInvalid as invalid:
            failed = ws_handshake_invalid(invalid)
            self.lose(conn, failed.kind, failed.detail)
        except HandshakeEnded as ended:
            self.lose(conn, "reset", str(ended))
        except trio.TooSlowError:
            words = f"no answer to the WebSocket handshake within {spec.timeout_s}s"
            self.lose(conn, "timeout", words)
        except (OSError, trio.BrokenResourceError) as exc:
            lost = lost_connection(exc)
            self.lose(conn, lost.kind, lost.detail)
        else:
            await self._listen(conn, stream, accepted.leftover)

    async def _listen(self, conn: _Listener, stream: trio.abc.Stream, leftover: bytes) -> None:
        rules = self.rules
        held = conn.held
        rec = self.recorder

        def on_close(code: int, reason: str) -> None:
            conn.close = (code, reason)

        def on_error(reason: str) -> None:
            conn.broken = conn.broken or reason

        framer = conn.framer = PushFramer(
            rules.stamps,
            lambda stamp, problem: rules.push(held, stamp, problem, monotonic_ns(), time_ns()),
            on_error,
            conn.replies.append,
            on_close,
            lambda payload: rules.pong(held, payload),
        )
        rules.hold(held, monotonic_ns())
        data: bytes | bytearray = leftover
        try:
            while True:
                if data:
                    framer.feed(data)
                if conn.replies:
                    await self.send(conn, b"".join(conn.replies))
                    conn.replies.clear()
                if conn.broken:
                    self.lose(conn, "protocol", conn.broken)
                    return
                if conn.close is not None:
                    code, reason = conn.close
                    failed = ws_server_closed(code, reason)
                    self.lose(conn, failed.kind, failed.detail, code)
                    return
                data = await stream.receive_some(_READ_SIZE)
                if not data:
                    lost = lost_held_connection(None)
                    self.lose(conn, lost.kind, lost.detail)
                    return
                rec.bytes_read += len(data)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            lost = lost_held_connection(exc)
            self.lose(conn, lost.kind, lost.detail)

    async def send(self, conn: _Listener, data: bytes) -> None:
        """Write on ``conn`` (its pongs and close reply, or the pinger's ping)."""
        assert conn.stream is not None
        async with conn.send_lock:
            conn.half_written = True
            await conn.stream.send_all(data)
            conn.half_written = False
        self.recorder.bytes_written += len(data)


async def _pinger(run: TrioListenRun, every_s: float) -> None:
    while True:
        await trio.sleep(every_s)
        now = monotonic_ns()
        for conn in list(run.listeners):
            if conn.framer is None:
                continue  # still opening
            frame = run.rules.ping(conn.held, now)
            if frame is None:
                run.lose(conn, "timeout", run.rules.ping_timeout_words())
                continue
            try:
                with trio.move_on_after(every_s):
                    await run.send(conn, frame)
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # the connection's own task reports its loss


async def run_listen_trio(
    spec: LoadSpec, share: WorkerShare, released_ns: int, watch: ShareWatch | None
) -> WorkerOutcome:
    """Run one share of a listen load on the running trio loop."""
    start_at = share.start_at(released_ns)
    exchange = build_exchange(spec)
    await trio.sleep(max(start_at - monotonic_ns(), 0) / NS_PER_S)
    run = TrioListenRun(spec, share, exchange, start_at)
    watcher = share_watcher(run, watch)
    with run.cancel_scope:
        async with trio.open_nursery() as nursery:
            start_timers(nursery, run, watcher)
            if spec.duration_s is not None:
                end_at = run.deadline_ns

                async def stopper() -> None:
                    await trio.sleep(max(end_at - monotonic_ns(), 0) / NS_PER_S)
                    run.close_window()

                nursery.start_soon(stopper)
            if spec.ping_every_s is not None:
                nursery.start_soon(_pinger, run, spec.ping_every_s)
            for _ in range(share.connections):
                run.started += 1
                nursery.start_soon(run.hold)
    if not run.stopping:
        run.stop()
    if run.contact.gave_up:
        raise run.contact.error(spec)
    return run.finish("trio")
