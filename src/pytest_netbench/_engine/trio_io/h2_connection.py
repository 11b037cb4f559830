"""One HTTP/2 connection of the trio engine: many streams on one socket, a stream a request.

Its streams are kept by ``h2_streams.H2Streams``, written once for both loops, so a stream
is counted here exactly as on asyncio (``h2_connection``). A connection runs three kinds
of task:

- a reader: each read goes to the sans-IO client, whose callbacks record each stream that
  ended; then, once the whole read is handled, each ended stream lets the run start the
  next request here (closed loop: a permit taken and sent at once; open loop: a taker
  freed), unless a GOAWAY came (no stream opens after it). A stream older than the timeout
  is cancelled alone (RST_STREAM CANCEL) and counted as ``timeout``; a server that has not
  even acknowledged the client's SETTINGS by then does not speak HTTP/2 there, and the
  connection is dropped as on asyncio;
- a writer, the only one to write: whatever the client has queued (the preface, new
  streams, acknowledgements, WINDOW_UPDATEs, resets, a GOAWAY), one write per wake-up;
- open loop only, ``streams`` takers, each waiting on the run's work channel while its
  stream is free, so that the connections waiting there are a count of free streams, as
  the asyncio pool lists a connection once per free stream.

A connection ends when it is broken (a frame that breaks the protocol, an HTTP/1.1 answer:
every stream already failed as ``protocol`` in the client's words), when the server closes
it (each open stream a ``reset``), or after a GOAWAY once its last stream ended. Over TLS a
server whose ALPN chose anything but ``h2`` fails the request that opened the connection
as ``protocol``, naming what it chose (``alpn_refusal_of``).
"""

from __future__ import annotations

import math
from time import monotonic_ns

import trio

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.failures import lost_connection, stream_timeout
from pytest_netbench._engine.rules.h2_streams import H2Streams, alpn_refusal
from pytest_netbench._engine.trio_io.run import TrioRun
from pytest_netbench._engine.trio_io.slot import Slot

_READ_SIZE = 256 * 1024
_STREAM_ERRORS = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)


class H2Slot(Slot):
    """One HTTP/2 connection of a trio run: its requests (``pending``, ``intended``,
    ``request_kinds``) as streams (``streams``), and the tasks that move its bytes."""

    __slots__ = (
        "_closing",
        "_expiry_ns",
        "_freed",
        "_gone",
        "_read_scope",
        "_reads",
        "_takers",
        "_timeout_ns",
        "_wake",
        "run",
        "shed",
        "streams",
    )

    def __init__(self, run: TrioRun) -> None:
        super().__init__()
        self.run = run
        self.streams = H2Streams(run, self)
        spec = run.spec
        self._timeout_ns = int(spec.timeout_s * NS_PER_S)
        # Streams time out in groups, as the asyncio engine's sweeper finds them: a wake-up
        # this long after the oldest stream's timeout also takes those started just after it.
        sweep_s = min(max(min(spec.timeout_s, spec.connect_timeout_s) / 10, 0.01), 0.25)
        self._expiry_ns = self._timeout_ns + int(sweep_s * NS_PER_S)
        self.shed = False  # closed loop: a ramp shed it; it sends nothing more
        self._wake = trio.Event()  # the writer has something to write
        self._closing = False  # the writer writes what is queued, then stops
        self._gone = False  # the connection was lost (counted once)
        self._read_scope: trio.CancelScope | None = None
        self._reads = 0  # reads handled so far (see _reads_settled)
        self._takers = trio.CancelScope()
        self._freed = trio.Semaphore(0)  # open loop: one release per stream that ended

    # -- the run's side --
    def send(self, start: int, intended: int) -> None:
        """A request taken: its stream opens with the writer's next write."""
        self.streams.queue(start, intended)
        self._queued(1)

    def send_many(self, start: int, count: int) -> None:
        """Closed loop: ``count`` requests taken at once, as ``count`` calls of ``send``."""
        self.streams.queue_many(start, start, count)
        self._queued(count)

    def _queued(self, count: int) -> None:
        """``count`` requests were just queued: the writer is woken, and a reader that
        waited with none outstanding now times out with the oldest of them."""
        scope = self._read_scope
        if scope is not None and len(self.pending) == count:
            scope.deadline = min(scope.deadline, self._deadline())  # the reader waited idle
        self._wake.set()

    def fill(self) -> None:
        """Closed loop: a new connection's first requests, as many as its streams."""
        run = self.run
        if run.shed():
            self.shed = True
            return
        for _ in range(run.spec.outstanding_per_connection - len(self.pending)):
            now = monotonic_ns()
            if not run.take(now):
                return
            self.send(now, now)

    async def serve(self, stream: trio.abc.Stream) -> None:
        """Write, read and (open loop) take requests until the connection is done; the
        caller closes ``stream``."""
        client = self.streams.client
        assert client is not None
        preface = client.initiate()
        self._wake.set()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._write_loop, stream, preface, nursery.cancel_scope)
            if self.run.open_loop:
                nursery.start_soon(self._take_all)
            await self._read_loop(stream)
            self._takers.cancel()
            # What is queued still goes out (resets, a GOAWAY), within the request timeout.
            self._closing = True
            self._wake.set()
            nursery.cancel_scope.deadline = trio.current_time() + self.run.spec.timeout_s

    async def refuse(self, refusal: str) -> None:
        """Open loop, a server whose ALPN refused h2: the first request due fails here as
        ``protocol`` (as on asyncio, where a connection is opened for a waiting one)."""
        run = self.run
        item = await run.work_recv.receive()
        intended = self._accept(item)
        if intended is None:
            return
        self.pending.append(monotonic_ns())
        self.intended.append(intended)
        self.broken = refusal
        run.fail(self, "protocol")

    # -- the tasks --
    async def _read_loop(self, stream: trio.abc.Stream) -> None:
        client = self.streams.client
        assert client is not None
        recorder = self.run.recorder
        try:
            while not self._finished():
                with trio.CancelScope(deadline=self._deadline()) as scope:
                    self._read_scope = scope
                    data = await stream.receive_some(_READ_SIZE)
                self._read_scope = None
                if scope.cancelled_caught:
                    self._time_out()
                    continue
                if not data:
                    self._lost(None)
                    return
                recorder.bytes_read += len(data)
                self._reads += 1
                client.feed(data if type(data) is bytes else bytes(data))
                self._after_streams()
                if client.has_output or self.streams.unopened:
                    self._wake.set()  # else no write to make (a response's HEADERS alone)
        except _STREAM_ERRORS as exc:
            self._read_scope = None
            self._lost(exc)

    async def _write_loop(
        self, stream: trio.abc.Stream, preface: bytes, scope: trio.CancelScope
    ) -> None:
        recorder = self.run.recorder
        try:
            while True:
                await self._wake.wait()
                await self._reads_settled()
                self._wake = trio.Event()
                data = preface + self.streams.data_to_send()
                preface = b""
                if data:
                    await stream.send_all(data)
                    recorder.bytes_written += len(data)
                if self._closing and not self._wake.is_set():
                    return
        except _STREAM_ERRORS as exc:
            self._lost(exc)
            scope.cancel()

    async def _reads_settled(self) -> None:
        """Wait while the reader still takes in what has already come: over TLS a read
        gives one record (trio's SSLStream), so a write after each would carry the answer
        to one response; once the reader waits on the socket, one write carries them all."""
        while True:
            reads = self._reads
            await trio.lowlevel.cancel_shielded_checkpoint()
            if self._reads == reads:
                return

    async def _take_all(self) -> None:
        with self._takers:
            async with trio.open_nursery() as takers:
                for _ in range(self.run.spec.outstanding_per_connection):
                    takers.start_soon(self._take_loop)

    async def _take_loop(self) -> None:
        """Open loop: one stream's turn on the work channel; it waits there while free."""
        run = self.run
        while True:
            item = await run.work_recv.receive()
            intended = self._accept(item)
            if intended is None:
                return
            self.send(monotonic_ns(), intended)
            await self._freed.acquire()

    def _accept(self, item: tuple[int, bool, bool]) -> int | None:
        """A due request the work channel gave this connection (see ``TrioRun.hand_out``):
        its due time, counted as sent; None if it cannot go here."""
        run = self.run
        if not run.stopping and (self._gone or self.broken or not self.streams.may_continue):
            # A GOAWAY (or the end) came after it was handed here: it goes to another.
            if self.arriving:
                self.arriving = False
                run.connecting -= 1
            run.work_send.send_nowait(item)
            run.ensure_takers()
            return None
        return run.take_handed(self, item)  # None once stopping: stop() accounted for it

    # -- what a read (or a timeout, or the end) leads to --
    def _deadline(self) -> float:
        """When the oldest request times out, on trio's clock (never, with none)."""
        if not self.pending:
            return math.inf
        left_ns = self.pending[0] + self._expiry_ns - monotonic_ns()
        return trio.current_time() + max(left_ns, 0) / NS_PER_S

    def _after_streams(self) -> None:
        """The streams that ended in a read (or a timeout, or the close) each let the run
        start the next request here: decided once the whole read is known, so that a
        GOAWAY later in the same read stops them."""
        ended = self.streams.take_ended()
        if not ended:
            return
        run = self.run
        may_continue = self.streams.may_continue
        if run.open_loop:
            if may_continue:
                for _ in range(ended):
                    self._freed.release()
            else:
                self._takers.cancel()  # no stream opens here again
        elif may_continue and not self.shed and run.ramp is None:
            # No ramp may shed this connection: the requests taken at once, as asyncio's
            # ClosedRun.streams_done takes them (take_many).
            now = monotonic_ns()
            taken = run.take_many(now, ended)
            if taken:
                self.send_many(now, taken)
        elif may_continue and not self.shed:
            for _ in range(ended):
                if run.shed():
                    self.shed = True
                    break
                now = monotonic_ns()
                if not run.take(now):
                    break
                self.send(now, now)
        run.check_finished()

    def _finished(self) -> bool:
        """Is the connection done? Broken (its requests failed as ``protocol``), or after
        a GOAWAY with no stream open, or (closed loop) with nothing outstanding."""
        if self.broken or self._gone:
            return True
        run = self.run
        streams = self.streams
        client = streams.client
        if client is None:
            return True
        if client.failed:
            self.broken = streams.failed_because
            if self.pending:  # requests that waited for a stream
                run.fail(self, "protocol")
            return True
        if streams.done:
            if self.pending:  # more than the server allowed at once, never sent
                run.fail_outstanding(self, *lost_connection(None))
            return True
        return not run.open_loop and not self.pending

    def _time_out(self) -> None:
        """The oldest streams outlived the timeout: each is cancelled alone and counted as
        ``timeout``; or the connection is dropped where ``H2Streams.expire`` says it must be
        (its other requests fail as ``protocol``)."""
        run = self.run
        detail = stream_timeout(run.spec.timeout_s).detail
        dropped = self.streams.expire(monotonic_ns() - self._timeout_ns, detail)
        if not dropped:
            self._after_streams()
            self._wake.set()  # the RST_STREAMs
            return
        self.broken = dropped
        if self.pending:
            run.fail(self, "protocol")
        run.check_finished()

    def _lost(self, exc: BaseException | None) -> None:
        """The server closed the connection (``exc`` None) or it broke: each stream still
        open ends as ``closed`` in the client's words, and the requests still waiting for
        a stream fail as the connection's loss."""
        if self._gone:
            return
        self._gone = True
        run = self.run
        client = self.streams.client
        if client is not None and not run.stopping and not self.broken:
            client.feed_eof()
            self._after_streams()
        if self.pending:
            run.fail_outstanding(self, *lost_connection(exc))


def alpn_refusal_of(stream: trio.abc.Stream) -> str:
    """Over TLS, why the server's ALPN choice is not HTTP/2 ("" if it chose h2, or the
    connection is cleartext)."""
    if not isinstance(stream, trio.SSLStream):
        return ""
    return alpn_refusal(stream.selected_alpn_protocol())
