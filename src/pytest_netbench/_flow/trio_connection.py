"""One virtual user's keep-alive connection on trio: the same request, response and
failures as the asyncio one (``connection``), moved by trio's streams.

A flow awaits each answer, so the exchange itself writes the request and reads until the
reader has the response's head, and its body reads on as the flow asks for more: no
reader task, and the request's timeout is one deadline over all of it.
"""

from __future__ import annotations

import ssl

import trio

from pytest_netbench._engine.rules.failures import Failure, lost_connection
from pytest_netbench._engine.trio_io.connect import CONNECT_ERRORS, failure_of, open_stream
from pytest_netbench._flow.accounting import FlowAccounting
from pytest_netbench._flow.connection import Headers, RequestFailed, Streamed, UserConnection
from pytest_netbench._proto.http_message import ResponseReader, WholeResponse

_READ_BYTES = 256 * 1024


class _TrioBody:
    """The body of a response on trio: read from the connection as the flow iterates."""

    def __init__(self, owner: TrioFlowConnection, deadline: float) -> None:
        self.owner = owner
        self.deadline = deadline
        self.done = False

    def __aiter__(self) -> _TrioBody:
        return self  # an iterator, not an async generator: nothing left to finalize

    async def __anext__(self) -> bytes:
        owner = self.owner
        while not self.done:
            if owner._parts:
                return owner._parts.pop(0)
            if owner._response is not None:
                if not owner._response.keep_alive:
                    await owner._drop()
                await self._close(ended=True)
                break
            try:
                await owner.read_more(self.deadline)
            except RequestFailed:
                await self._close(ended=True)
                raise
        raise StopAsyncIteration

    async def _close(self, *, ended: bool) -> None:
        if not self.done:
            self.done = True
            await self.owner.body_done(ended)

    async def aclose(self) -> None:
        await self._close(ended=False)


class TrioFlowConnection(UserConnection):
    """A virtual user's connection on trio; reopened after the server closes it."""

    def __init__(self, accounting: FlowAccounting, ssl_context: ssl.SSLContext | None) -> None:
        super().__init__(accounting, ssl_context)
        self.stream: trio.abc.Stream | None = None
        self.reader = self._new_reader()
        self.one_at_a_time = trio.Lock()
        self._response: WholeResponse | None = None
        self._head: tuple[int, bytes, Headers] | None = None
        self._parts: list[bytes] = []
        self._broken = ""

    def _new_reader(self) -> ResponseReader:
        reader = ResponseReader(self._on_response, self._on_error)
        reader.on_head = self._on_head
        reader.on_part = self._parts_append
        return reader

    async def start(self, data: bytes, method: str, step: int) -> Streamed:
        """Send one request of ``step``; return its response once its head has come (the
        next request waits until this one's body has ended, or been closed, as on
        asyncio)."""
        await self.one_at_a_time.acquire()
        try:
            return await self._start(data, method, step)
        except BaseException:
            self.one_at_a_time.release()
            raise

    async def _start(self, data: bytes, method: str, step: int) -> Streamed:
        acct = self.accounting
        self.take(step)
        if self.stream is None:
            await self._open()
        stream = self.stream
        assert stream is not None
        self.reader.expect(method)
        self._response = None
        self._head = None
        self._parts = []
        self._broken = ""
        deadline = trio.current_time() + acct.spec.timeout_s
        with trio.move_on_at(deadline):
            try:
                await stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                await self._failed(*lost_connection(exc))
            acct.recorder.bytes_written += len(data)
        while self._head is None:
            await self.read_more(deadline)
        status, reason, headers = self._head
        return Streamed(status, reason, headers, _TrioBody(self, deadline))

    async def read_more(self, deadline: float) -> None:
        """Read once more (a failure raised into the flow, recorded)."""
        stream = self.stream
        lost: Failure | None = None
        chunk = b""
        with trio.move_on_at(deadline) as scope:
            try:
                assert stream is not None
                chunk = bytes(await stream.receive_some(_READ_BYTES))
                if not chunk and not self.reader.feed_eof() and not self._broken:
                    lost = lost_connection(None)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                lost = lost_connection(exc)
        if chunk:
            self.accounting.recorder.bytes_read += len(chunk)
            self.reader.feed(chunk)
        if self._broken:
            await self._failed("protocol", self._broken)
        if lost is not None:
            await self._failed(*lost)
        if scope.cancelled_caught:
            timeout_s = self.accounting.spec.timeout_s
            await self._failed("timeout", f"no complete response within {timeout_s}s")

    async def body_done(self, ended: bool) -> None:
        """The flow is done with the body (``_TrioBody``): the next request may go."""
        if not ended:
            self.abandon()
            await self._drop()
        self._parts = []
        self.one_at_a_time.release()

    async def _open(self) -> None:
        acct = self.accounting
        spec = acct.spec
        self.reader = self._new_reader()
        acct.live += 1  # opening counts: every user may open at once
        acct.count_opened(acct.live)
        try:
            self.stream = await open_stream(
                spec.host, spec.port, self.ssl_context, spec.host, spec.connect_timeout_s
            )
        except CONNECT_ERRORS as exc:
            acct.live -= 1
            await self._failed(*failure_of(exc))

    # -- the reader's answers --
    def _on_head(self, status: int, reason: bytes, headers: Headers) -> None:
        self.head_status = status
        self._head = (status, reason, headers)

    def _parts_append(self, part: bytes) -> None:
        self._parts.append(part)

    def _on_response(self, response: WholeResponse) -> None:
        if not self.settle(response):
            self._on_error("malformed response: a response arrived with no request sent")
            return
        self._response = response
        self.kept_alive = response.keep_alive
        if self._head is None:  # a response without a streamed head (to HEAD): whole
            self._on_head(response.status, response.reason, response.headers)
        if response.body:
            self._parts.append(response.body)

    def _on_error(self, reason: str) -> None:
        self._broken = reason

    # -- failing and closing --
    async def _failed(self, error: str, detail: str, err_no: int | None = None) -> None:
        """Record the outstanding request as failed, drop the stream, raise into the flow."""
        self.accounting.fail_outstanding(self, error, detail, err_no)
        await self._drop()
        raise RequestFailed(error, detail)

    async def _drop(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            self.accounting.live -= 1
            await trio.aclose_forcefully(stream)

    def close(self) -> None:
        """Close the socket now (the run has stopped; its tasks are being cancelled)."""
        stream, self.stream = self.stream, None
        if stream is None:
            return
        self.accounting.live -= 1
        inner = stream.transport_stream if isinstance(stream, trio.SSLStream) else stream
        if isinstance(inner, trio.SocketStream):
            inner.socket.close()
