"""The trio engine's HTTP/1.1 and WebSocket loads: what one connection says on its stream.

:class:`H1TrioRun` is a ``TrioRun`` (``trio_io.run``: the connection tasks, the connect,
the open-loop pool) whose connections write requests (or WebSocket messages, after the
opening handshake: ``trio_io.ws``) and read their answers through the same framers as the
asyncio engine. Every read goes through :meth:`H1TrioRun.read_once`, written once for both
loops of requests: within the oldest request's timeout, the end of the stream, a broken
answer, a WebSocket close, each failing what is outstanding in ``TrioRun.fail``'s words.

- closed loop: a connection keeps ``pipeline`` requests outstanding, the next taken as one
  is answered (:class:`_Next`), until the server closes it or says it will;
- open loop: a pooled connection takes one due request at a time from the work channel.
"""

from __future__ import annotations

from collections.abc import Iterator
from time import monotonic_ns

import trio

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.failures import ws_handshake_invalid, ws_refused
from pytest_netbench._engine.rules.phases import record_connect, watch_first_byte
from pytest_netbench._engine.rules.ws_rules import (
    answer_to_front,
    close_counts,
    count_code,
    refusal_counts,
)
from pytest_netbench._engine.trio_io.run import TrioRun
from pytest_netbench._engine.trio_io.slot import Slot
from pytest_netbench._engine.trio_io.ws import (
    HandshakeEnded,
    WsTalk,
    close_websocket,
    open_websocket,
)
from pytest_netbench._proto.framing import Framer, OnError, OnResponse
from pytest_netbench._proto.websocket import HandshakeInvalid, HandshakeRefused

_READ_SIZE = 256 * 1024
_STREAM_ERRORS = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)


class H1TrioRun(TrioRun):
    """A trio run whose connections speak HTTP/1.1, or WebSocket (see the module's
    docstring)."""

    def new_slot(self) -> Slot:
        return Slot()

    async def serve_closed(self, slot: Slot, stream: trio.abc.Stream, now: int) -> bool:
        slot.pending.clear()  # the permit is sent first (see _Next.initial)
        following = _Next(self, (now, now))
        await self.converse(slot, stream, following)
        return following.shed

    async def serve_open(self, slot: Slot, stream: trio.abc.Stream) -> None:
        while not self.stopping and not slot.broken and slot.keep_alive:
            if self.closes_after and slot.served >= self.closes_after:
                break
            intended = self.take_handed(slot, await self.work_recv.receive())
            if intended is None:
                break  # the window closed first; stop() has accounted for this request
            if slot.connected is not None:  # its first request: the connect was for it
                started, tcp_up, opened = slot.connected
                slot.connected = None
                if started >= self.measure_start_ns:
                    record_connect(self.recorder, started, tcp_up, opened)
            await self._one_open_exchange(slot, stream, (monotonic_ns(), intended))

    async def close_stream(self, slot: Slot, stream: trio.abc.Stream) -> None:
        websocket = self.exchange.websocket
        if websocket is not None and slot.ws_idle:
            await close_websocket(stream, websocket.silent_framer(), self.spec.timeout_s)

    # -- one connection's reads and writes --
    def _framer(self, slot: Slot) -> tuple[Framer, WsTalk | None]:
        """A framer for ``slot``'s answers (and a WebSocket's frame reader, its framer)."""
        on_response = lambda code, ka: self.on_response(slot, code, ka)  # noqa: E731
        on_error = lambda reason: setattr(slot, "broken", reason)  # noqa: E731
        talk = self._ws_talk(slot, on_response, on_error)
        framer: Framer = (
            talk.framer if talk is not None else self.exchange.make_framer(on_response, on_error)
        )
        watch_first_byte(framer, lambda: setattr(slot, "first", monotonic_ns()))
        slot.framer = framer
        return framer, talk

    async def read_once(
        self, slot: Slot, stream: trio.abc.Stream, framer: Framer, talk: WsTalk | None
    ) -> str:
        """One read, within the oldest outstanding request's timeout, fed to ``framer``:
        "" while the connection goes on, else why it ended ("timeout", "closed", or
        ``slot.broken``), what it had outstanding failed accordingly."""
        deadline = (slot.pending[0] - monotonic_ns()) / NS_PER_S + self.spec.timeout_s
        with trio.move_on_after(max(deadline, 0)) as scope:
            data = await stream.receive_some(_READ_SIZE)
        if scope.cancelled_caught:
            self.fail(slot, "timeout")
            return "timeout"
        if not data:
            framer.feed_eof()  # may complete a close-delimited response
            slot.ws_idle = False
            if slot.pending:
                self.fail(slot, "closed")
            self.check_finished()
            return "closed"
        self.recorder.bytes_read += len(data)
        framer.feed(data)  # type: ignore[arg-type]  # bytearray from TLS works too
        if talk is not None and await self._ws_answered(slot, stream, talk):
            return "closed"
        if slot.broken:
            self.fail(slot, "protocol")
            return slot.broken
        return ""

    async def converse(self, slot: Slot, stream: trio.abc.Stream, next_request: _Next) -> None:
        """Closed loop: send and read until the connection is done; ``next_request`` feeds
        more work (the caller closes ``stream``)."""
        framer, talk = self._framer(slot)
        try:
            for start, intended in next_request.initial(slot):
                await self._send(slot, stream, start, intended)
            while slot.pending:
                done_before = slot.served
                if await self.read_once(slot, stream, framer, talk):
                    break
                if slot.served > done_before:
                    self.check_finished()
                    if not slot.keep_alive:
                        if slot.pending:
                            self.fail(slot, "closed")
                        break
                    for start, intended in next_request.more(slot, slot.served - done_before):
                        await self._send(slot, stream, start, intended)
        except _STREAM_ERRORS as exc:
            self.fail(slot, "reset", exc)
        finally:
            if talk is not None and slot.ws_idle and talk.framer.open:
                await close_websocket(stream, talk.framer, self.spec.timeout_s)
            framer.release()  # see Framer.release
            slot.framer = None

    async def _one_open_exchange(
        self, slot: Slot, stream: trio.abc.Stream, current: tuple[int, int]
    ) -> None:
        """Open loop: send one request and read until it is answered (or the connection
        ended: ``slot.broken`` then says why)."""
        before = slot.served
        framer, talk = self._framer(slot)
        try:
            await self._send(slot, stream, *current)
            while slot.served == before and slot.pending:
                ended = await self.read_once(slot, stream, framer, talk)
                if ended:
                    slot.broken = slot.broken or ended
                    return
            self.check_finished()
        except _STREAM_ERRORS as exc:
            self.fail(slot, "reset", exc)
            slot.broken = "reset"

    async def _send(self, slot: Slot, stream: trio.abc.Stream, start: int, intended: int) -> None:
        slot.pending.append(start)
        if self.open_loop:
            slot.intended.append(intended)
        if self.source is not None:
            # Requests that vary: the next ready one (rendered here, in this thread, when
            # none is: take claimed it). The run counts their bytes from its batches.
            request_kind, data = self.next_request(intended)
            if self.mix:
                slot.request_kinds.append(request_kind)
            await stream.send_all(data)
            return
        websocket = self.exchange.websocket
        if websocket is not None:
            ids = slot.ws_ids
            # A fresh masking key for each message (and with answers by id, a fresh id).
            frame = websocket.frames.next_frame() if ids is None else ids.next_frame()
            slot.ws_idle = False  # a send cancelled half way leaves no clean close
            await stream.send_all(frame)
            slot.ws_idle = True
            self.recorder.bytes_written += len(frame)
            return
        for chunk in self.exchange.chunks:
            await stream.send_all(chunk)
        self.recorder.bytes_written += self.exchange.size

    # -- WebSocket (see trio_io.ws) --
    async def upgrade(
        self, slot: Slot, stream: trio.abc.Stream, timed_from: int = 0
    ) -> trio.abc.Stream | None:
        """A WebSocket load's opening handshake on a connected stream; None when it failed,
        counted against the message the connection was opened for (a refusal as
        ``status``, its status in ``status_codes``)."""
        if self.exchange.websocket is None:
            return stream
        oldest = slot.pending[0] if slot.pending else monotonic_ns()
        left_s = (oldest - monotonic_ns()) / NS_PER_S + self.spec.timeout_s
        try:
            accepted = await open_websocket(
                stream, self.exchange.websocket, left_s, self.recorder, timed_from
            )
            slot.ws_leftover = accepted.leftover
            slot.ws_idle = True
            return stream
        except HandshakeRefused as refused:
            if refusal_counts(slot.pending, self.measure_start_ns, self.stopping):
                count_code(self.recorder.status_codes, refused.status)
            self.fail_outstanding(slot, *ws_refused(refused))
        except HandshakeInvalid as invalid:
            slot.broken = ws_handshake_invalid(invalid).detail
            self.fail(slot, "protocol")
        except trio.TooSlowError:
            self.fail(slot, "timeout")
        except HandshakeEnded:
            self.fail(slot, "closed")
        except _STREAM_ERRORS as exc:
            self.fail(slot, "reset", exc)
        self.slots.discard(slot)
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)
        return None

    def _ws_talk(self, slot: Slot, on_response: OnResponse, on_error: OnError) -> WsTalk | None:
        """A WebSocket connection's frame reader, fed what came with the handshake."""
        if self.exchange.websocket is None:
            return None
        talk = WsTalk(
            self.exchange.websocket,
            on_response,
            on_error,
            lambda index: answer_to_front(index, slot.pending, slot.intended),
        )
        slot.ws_ids = talk.ids
        if slot.ws_leftover:
            talk.framer.feed(slot.ws_leftover)
            slot.ws_leftover = b""
        return talk

    async def _ws_answered(self, slot: Slot, stream: trio.abc.Stream, talk: WsTalk) -> bool:
        """After a read: write the pongs (and close reply) owed; True when the server
        closed, its close failing what is outstanding as ``reset`` with the code."""
        if talk.replies:
            slot.ws_idle = False
            self.recorder.bytes_written += await talk.send_replies(stream)
            slot.ws_idle = True
        if not talk.closed:
            return False
        slot.ws_idle = False
        if close_counts(monotonic_ns(), self.measure_start_ns, self.stopping):
            count_code(self.recorder.status_codes, talk.close_code)
        self.fail_outstanding(slot, "reset", talk.closed)
        return True


class _Next:
    """Closed loop: the next request starts as soon as one finishes."""

    def __init__(self, run: TrioRun, first: tuple[int, int] | None) -> None:
        self.run = run
        self.first = first
        self.shed = False  # a ramp shed this connection: it sends nothing more

    # Both hand out one request at a time, taken only when the one before it is written
    # (the caller sends each before asking for the next): a permit taken ahead of its write
    # would count as sent, yet be in no connection's outstanding requests if the run
    # stopped during that write, and in flight nowhere.
    def initial(self, slot: Slot) -> Iterator[tuple[int, int]]:
        if self.first:
            yield self.first
        yield from self.more(slot, self.run.spec.pipeline - bool(self.first))

    def more(self, slot: Slot, count: int) -> Iterator[tuple[int, int]]:
        run = self.run
        if self.shed or run.shed():
            self.shed = True
            return
        for _ in range(count):
            if run.closes_after and slot.served + len(slot.pending) >= run.closes_after:
                return
            now = monotonic_ns()
            if not run.take(now):
                return
            yield now, now
