"""One virtual user's keep-alive connection on trio: the same request, response and
failures as the asyncio one (``connection``), moved by trio's streams.

A flow awaits each answer, so the exchange itself writes the request and reads until the
reader has the whole response: no reader task, and the request's timeout is one cancel
scope around both.
"""

from __future__ import annotations

import ssl

import trio

from pytest_netbench._engine.rules.failures import Failure, lost_connection
from pytest_netbench._engine.trio_io.connect import CONNECT_ERRORS, failure_of, open_stream
from pytest_netbench._flow.accounting import FlowAccounting
from pytest_netbench._flow.connection import RequestFailed, UserConnection
from pytest_netbench._proto.http_message import ResponseReader, WholeResponse

_READ_BYTES = 256 * 1024


class TrioFlowConnection(UserConnection):
    """A virtual user's connection on trio; reopened after the server closes it."""

    def __init__(self, accounting: FlowAccounting, ssl_context: ssl.SSLContext | None) -> None:
        super().__init__(accounting, ssl_context)
        self.stream: trio.abc.Stream | None = None
        self.reader = ResponseReader(self._on_response, self._on_error)
        self.one_at_a_time = trio.Lock()
        self._response: WholeResponse | None = None
        self._broken = ""

    async def exchange(self, data: bytes, method: str, step: int) -> WholeResponse:
        """Send one request of ``step`` and return its whole response (requests made at
        once go one after another, as on asyncio)."""
        async with self.one_at_a_time:
            return await self._exchange(data, method, step)

    async def _exchange(self, data: bytes, method: str, step: int) -> WholeResponse:
        acct = self.accounting
        self.take(step)
        if self.stream is None:
            await self._open()
        stream = self.stream
        assert stream is not None
        self.reader.expect(method)
        self._response = None
        self._broken = ""
        timeout_s = acct.spec.timeout_s
        lost: Failure | None = None
        with trio.move_on_after(timeout_s) as scope:
            try:
                await stream.send_all(data)
                acct.recorder.bytes_written += len(data)
                while self._response is None and not self._broken:
                    chunk = await stream.receive_some(_READ_BYTES)
                    if not chunk:
                        if not self.reader.feed_eof() and not self._broken:
                            lost = lost_connection(None)
                        break
                    acct.recorder.bytes_read += len(chunk)
                    self.reader.feed(bytes(chunk))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                lost = lost_connection(exc)
        if self._broken:
            await self._failed("protocol", self._broken)
        if lost is not None:
            await self._failed(*lost)
        if scope.cancelled_caught or self._response is None:
            await self._failed("timeout", f"no complete response within {timeout_s}s")
        response = self._response
        assert response is not None
        if not response.keep_alive:
            await self._drop()
        return response

    async def _open(self) -> None:
        acct = self.accounting
        spec = acct.spec
        self.reader = ResponseReader(self._on_response, self._on_error)
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
    def _on_response(self, response: WholeResponse) -> None:
        if not self.settle(response):
            self._on_error("malformed response: a response arrived with no request sent")
            return
        self._response = response

    def _on_error(self, reason: str) -> None:
        self._broken = reason

    # -- failing and closing --
    async def _failed(self, kind: str, detail: str, err_no: int | None = None) -> None:
        """Record the outstanding request as failed, drop the stream, raise into the flow."""
        self.accounting.fail_outstanding(self, kind, detail, err_no)
        await self._drop()
        raise RequestFailed(kind, detail)

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
