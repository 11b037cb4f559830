"""The httpx transport whose I/O is the engine: what a flow's ``client`` sends through.

httpx builds each request (cookies, auth, JSON, redirects, headers) as users know it;
:class:`EngineTransport` names its step, renders its bytes with the engine's HTTP/1.1
rendering, sends it on the virtual user's own keep-alive connection (timed and recorded
there) and hands the response back as an ``httpx.Response`` as soon as its head has come,
its body as it arrives: ``client.stream()`` and ``aiter_lines()`` see each piece at its
own time, and ``client.get()`` reads it to its end as before. A request the engine
counted as failed comes back as the httpx exception a user expects (``ConnectError``,
``ReadTimeout``, ``RemoteProtocolError``, ``ReadError``), and the virtual user remembers it,
so a session it ends is reported as failed at that step, of that kind.
"""

from __future__ import annotations

import httpx

from pytest_netbench._flow.accounting import FlowAccounting
from pytest_netbench._flow.connection import Body, RequestFailed, UserConnection
from pytest_netbench._flow.steps import STEP_EXTENSION, RequestFailure, SessionTrail, step_name
from pytest_netbench._proto.http import render_request

_ERRORS: dict[str, type[httpx.TransportError]] = {
    "connect": httpx.ConnectError,
    "timeout": httpx.ReadTimeout,
    "protocol": httpx.RemoteProtocolError,
    "reset": httpx.ReadError,
}


class EngineTransport(httpx.AsyncBaseTransport):
    """One virtual user's transport: its steps, its connection, its last failure."""

    def __init__(
        self, accounting: FlowAccounting, connection: UserConnection, trail: SessionTrail
    ) -> None:
        self.accounting = accounting
        self.connection = connection
        self.trail = trail

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        self.connection.check_origin(url.scheme, url.host, url.port, str(url))
        method = request.method
        self.trail.step = name = step_name(method, url.path, request.extensions)
        step = self.accounting.step(name, method, url.path)
        body = await request.aread()
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in request.headers.raw
            if k.lower() != b"transfer-encoding"  # the body is read whole: it has a length
        ]
        if body and not any(k.lower() == "content-length" for k, _ in headers):
            headers.append(("Content-Length", str(len(body))))
        target = url.raw_path.decode("ascii")
        data = render_request(method, target, self.connection.host_header, headers, body)
        try:
            streamed = await self.connection.start(data, method, step)
        except RequestFailed as exc:
            raise self._failed(exc, request, name) from None
        return httpx.Response(
            streamed.status,
            headers=list(streamed.headers),
            stream=_BodyStream(self, streamed.body, request, name),
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": streamed.reason,
                STEP_EXTENSION: name,
            },
            request=request,
        )

    def _failed(self, exc: RequestFailed, request: httpx.Request, name: str) -> Exception:
        """The httpx exception of a failed request; the session remembers it."""
        error = _ERRORS[exc.kind](f"{exc.detail} ({name})", request=request)
        self.trail.failure = RequestFailure(error, exc.kind, name)
        return error


class _BodyStream(httpx.AsyncByteStream):
    """A response's body for httpx, piece by piece as the connection gets it; a failure
    mid-body is the httpx exception a user expects, remembered by the session."""

    def __init__(
        self, transport: EngineTransport, body: Body, request: httpx.Request, name: str
    ) -> None:
        self.transport = transport
        self.body = body
        self.request = request
        self.name = name

    def __aiter__(self) -> _BodyStream:
        return self  # an iterator, not an async generator: nothing left to finalize

    async def __anext__(self) -> bytes:
        try:
            return await self.body.__aiter__().__anext__()
        except RequestFailed as exc:
            raise self.transport._failed(exc, self.request, self.name) from None

    async def aclose(self) -> None:
        await self.body.aclose()
