"""One virtual user's keep-alive connection on asyncio (uvloop or plain): one request at a
time, timed and recorded by the share's :class:`FlowAccounting`.

:meth:`UserConnection.start` takes the request (counted as sent), opens the connection if
it has none, writes the bytes and returns a :class:`Streamed` response as soon as its head
has come, its body handed over piece by piece as it arrives (httpx's ``client.stream()``
and ``aiter_lines()`` see each piece at its own time); the request is timed and recorded
when its body ends. :meth:`UserConnection.exchange` reads it whole. A failure is recorded
under its kind (connect, reset, timeout, protocol) by the inherited rules and raised as
:class:`RequestFailed`, which the transport turns into the httpx exception a user expects.
The connection keeps its outstanding request as the engine's connections do (``pending``,
``intended``, ``request_kinds``: here each request's step), so stopping the run counts it
in flight by the same rule.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from time import monotonic_ns
from typing import Protocol, cast

from pytest_netbench._engine.asyncio_io.connect import connect
from pytest_netbench._engine.rules.failures import connect_failure, lost_connection
from pytest_netbench._flow.accounting import FlowAccounting
from pytest_netbench._proto.http_message import ResponseReader, WholeResponse


class LoadStopped(BaseException):
    """The load ended: the session stops where it is (a BaseException, so a flow's own
    ``except Exception`` does not swallow it)."""


class RequestFailed(Exception):
    """A request of the flow failed; already recorded under ``kind``."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


Headers = tuple[tuple[bytes, bytes], ...]


class Body(Protocol):
    """A streamed response's body: its pieces as they arrive, then closed (by its end, a
    failure, or :meth:`aclose`, which abandons what is left unread)."""

    def __aiter__(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


@dataclass(slots=True)
class Streamed:
    """A response whose head has come; its body comes piece by piece (``body``)."""

    status: int
    reason: bytes
    headers: Headers
    body: Body

    async def read(self) -> bytes:
        try:
            return b"".join([part async for part in self.body])
        finally:
            await self.body.aclose()


class _Link(asyncio.Protocol):
    """One TCP connection of a :class:`FlowConnection`. A link its owner has dropped (a
    failure, a close) still gets its last callbacks from the loop; they are ignored, so
    they never touch the connection opened after it."""

    def __init__(self, owner: FlowConnection) -> None:
        self.owner = owner
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        if self.owner.link is self:
            self.owner.received(data)

    def eof_received(self) -> bool | None:
        if self.owner.link is self:
            self.owner.reader.feed_eof()
        return None  # the transport closes itself; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner.accounting.live -= 1
        if self.owner.link is self:
            self.owner.lost(exc)


class UserConnection:
    """What a virtual user's connection is on any loop: its outstanding request (as the
    engine's connections keep theirs), the load's origin, and settling a response by the
    run's rules. The loop's subclass moves the bytes."""

    def __init__(self, accounting: FlowAccounting, ssl_context: ssl.SSLContext | None) -> None:
        self.accounting = accounting
        self.ssl_context = ssl_context
        self.pending: deque[int] = deque()
        self.intended: deque[int] = deque()
        self.request_kinds: deque[int] = deque()
        # How late the session began (open model): its requests are due this much earlier
        # than they start, so their corrected latency carries the delay.
        self.lag_ns = 0
        self.head_status = 0  # of the response being read
        self.kept_alive = True  # whether the last response left the connection open
        spec = accounting.spec
        self.origin = (spec.scheme, spec.host, spec.port)
        host = f"[{spec.host}]" if ":" in spec.host else spec.host
        self.host_header = (
            host if spec.port == _default_port(spec.scheme) else f"{host}:{spec.port}"
        )

    def check_origin(self, scheme: str, host: str, port: int | None, url: str) -> None:
        """A flow sends only to the load's own origin: any other is its bug, said so."""
        if (scheme, host, port or _default_port(scheme)) != self.origin:
            scheme, host, port = self.origin
            raise ValueError(
                f"the flow requested {url}, but a flow load sends only to the URL it was"
                f" given ({scheme}://{host}:{port}): use paths (client.get('/items'))"
            )

    def take(self, step: int) -> None:
        """The request of ``step`` starts now: counted as sent, outstanding until settled."""
        now = monotonic_ns()
        intended = now - self.lag_ns
        if not self.accounting.take_step(intended, step):
            raise LoadStopped
        self.pending.append(now)
        self.intended.append(intended)
        self.request_kinds.append(step)

    def settle(self, response: WholeResponse) -> bool:
        """Record the outstanding request's response; False if none was outstanding."""
        now = monotonic_ns()
        if not self.pending:
            return False
        start = self.pending.popleft()
        intended = self.intended.popleft()
        step = self.request_kinds.popleft()
        self.accounting.record_kind(response.status, start, intended, now, step)
        return True

    async def start(self, data: bytes, method: str, step: int) -> Streamed:
        raise NotImplementedError

    async def exchange(self, data: bytes, method: str, step: int) -> WholeResponse:
        """Send one request of ``step`` and return its whole response."""
        streamed = await self.start(data, method, step)
        body = await streamed.read()
        return WholeResponse(
            streamed.status, streamed.reason, streamed.headers, body, self.kept_alive
        )

    def abandon(self) -> None:
        """The flow closed a response before its body ended: it is recorded as answered
        now (the flow chose to stop reading), and its connection dropped."""
        if self.pending:
            self.settle(WholeResponse(self.head_status, b"", (), b"", False))

    def close(self) -> None:
        raise NotImplementedError


class _End:
    """The end of a streamed body."""


_END = _End()


class _Body:
    """The body of a response on asyncio: its pieces from the connection's queue, as the
    link receives them."""

    def __init__(self, owner: FlowConnection, timer: asyncio.TimerHandle) -> None:
        self.owner = owner
        self.timer = timer
        self.done = False

    def __aiter__(self) -> _Body:
        return self  # an iterator, not an async generator: nothing left to finalize

    async def __anext__(self) -> bytes:
        parts = self.owner.parts
        if self.done or parts is None:
            raise StopAsyncIteration
        part = await parts.get()
        if isinstance(part, _End):
            self._close(ended=True)
            raise StopAsyncIteration
        if isinstance(part, RequestFailed):
            self._close(ended=True)
            raise part
        return part

    def _close(self, *, ended: bool) -> None:
        if not self.done:
            self.done = True
            self.owner.body_done(self.timer, ended)

    async def aclose(self) -> None:
        self._close(ended=False)


class FlowConnection(UserConnection):
    """A virtual user's connection on asyncio; reopened after the server closes it."""

    def __init__(self, accounting: FlowAccounting, ssl_context: ssl.SSLContext | None) -> None:
        super().__init__(accounting, ssl_context)
        self.link: _Link | None = None
        self.reader = self._new_reader()
        self.one_at_a_time = asyncio.Lock()
        # The response being read: its head (a future), then its body's pieces, its end
        # (_END) or its failure (RequestFailed), in order.
        self.head: asyncio.Future[Headers] | None = None
        self.parts: asyncio.Queue[bytes | _End | RequestFailed] | None = None
        self.reason = b""

    def _new_reader(self) -> ResponseReader:
        reader = ResponseReader(self._on_response, self._on_error)
        reader.on_head = self._on_head
        reader.on_part = self._on_part
        return reader

    async def start(self, data: bytes, method: str, step: int) -> Streamed:
        """Send one request of ``step``; return its response once its head has come.
        Requests a session makes at once (``asyncio.gather``) go one after another: HTTP/1.1
        has one request at a time on a connection, and each is timed from its own write (the
        next waits until this one's body has ended, or been closed)."""
        await self.one_at_a_time.acquire()
        try:
            head, timer = await self._start(data, method, step)
        except BaseException:
            self.one_at_a_time.release()
            raise
        return Streamed(self.head_status, *head, body=_Body(self, timer))

    async def _start(
        self, data: bytes, method: str, step: int
    ) -> tuple[tuple[bytes, Headers], asyncio.TimerHandle]:
        acct = self.accounting
        self.take(step)
        if self.link is None:
            await self._open()
        link = self.link
        assert link is not None and link.transport is not None
        self.reader.expect(method)
        loop = asyncio.get_running_loop()
        self.head = loop.create_future()
        self.parts = asyncio.Queue()
        self.reason = b""
        link.transport.write(data)
        acct.recorder.bytes_written += len(data)
        timer = loop.call_later(acct.spec.timeout_s, self._timed_out)
        try:
            headers = await self.head
        except BaseException:
            timer.cancel()
            raise
        return (self.reason, headers), timer

    def body_done(self, timer: asyncio.TimerHandle, ended: bool) -> None:
        """The flow is done with the body (``_Body``): the next request may go."""
        timer.cancel()
        if not ended:
            self.abandon()
            self._drop()
        self.head = self.parts = None
        self.one_at_a_time.release()

    async def _open(self) -> None:
        acct = self.accounting
        spec = acct.spec
        loop = asyncio.get_running_loop()
        hostname = spec.host if self.ssl_context is not None else None
        self.reader = self._new_reader()
        link = _Link(self)
        acct.live += 1  # opening counts: every user may open at once
        acct.count_opened(acct.live)
        try:
            async with asyncio.timeout(spec.connect_timeout_s):
                await connect(loop, link, (spec.host, spec.port), None, self.ssl_context, hostname)
        except TimeoutError:
            acct.live -= 1
            self._fail(*connect_failure(None))
        except OSError as exc:  # refused, unreachable, TLS (ssl.SSLError is an OSError)
            acct.live -= 1
            self._fail(*connect_failure(exc))
        self.link = link

    # -- the current link's events --
    def received(self, data: bytes) -> None:
        self.accounting.recorder.bytes_read += len(data)
        self.reader.feed(data)

    def lost(self, exc: Exception | None) -> None:
        self.link = None
        if not self.pending:
            return
        if self.reader.failed:
            return  # already failed as a protocol error
        lost = lost_connection(exc)
        self._fail_waiter(lost.kind, lost.detail)

    # -- the reader's answers --
    def _on_head(self, status: int, reason: bytes, headers: Headers) -> None:
        self.head_status = status
        self.reason = reason
        if self.head is not None and not self.head.done():
            self.head.set_result(headers)

    def _on_part(self, part: bytes) -> None:
        if self.parts is not None:
            self.parts.put_nowait(part)

    def _on_response(self, response: WholeResponse) -> None:
        if not self.settle(response):
            self._on_error("malformed response: a response arrived with no request sent")
            return
        self.kept_alive = response.keep_alive
        if not response.keep_alive:
            self._drop()
        # A response without a streamed head (to HEAD) comes whole: its head now.
        self._on_head(response.status, response.reason, response.headers)
        if self.parts is not None:
            if response.body:
                self.parts.put_nowait(response.body)
            self.parts.put_nowait(_END)

    def _on_error(self, reason: str) -> None:
        self._fail_waiter("protocol", reason)

    def _timed_out(self) -> None:
        timeout_s = self.accounting.spec.timeout_s
        self._fail_waiter("timeout", f"no complete response within {timeout_s}s")

    # -- failing --
    def _fail_waiter(self, error: str, detail: str) -> None:
        """Record the outstanding request as failed, drop the link, wake the flow (where
        it waits for the head, or reads the body)."""
        self.accounting.fail_outstanding(self, error, detail)
        self._drop()
        failure = RequestFailed(error, detail)
        if self.head is not None and not self.head.done():
            self.head.set_exception(failure)
        elif self.parts is not None:
            self.parts.put_nowait(failure)

    def _fail(self, error: str, detail: str, err_no: int | None = None) -> None:
        """A failed connect: recorded, and raised into the flow."""
        self.accounting.fail_outstanding(self, error, detail, err_no)
        raise RequestFailed(error, detail)

    def _drop(self) -> None:
        link, self.link = self.link, None
        if link is not None and link.transport is not None:
            link.transport.abort()

    def close(self) -> None:
        self._drop()


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80
