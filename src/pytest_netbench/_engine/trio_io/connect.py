"""A connect on trio, written once for every trio connection (HTTP/1.1, HTTP/2, WebSocket,
a listen load, a flow's user): TCP, then the TLS handshake when there is a context, within
the connect timeout. A stream half open when it fails or is cancelled is closed here, so
the caller either gets a whole stream or an exception it maps with :func:`failure_of`."""

from __future__ import annotations

import ssl
from collections.abc import Callable

import trio

from pytest_netbench._engine.rules.failures import Failure, connect_failure

# What a failed connect raises on trio (a TLS handshake's errors come as BrokenResourceError).
CONNECT_ERRORS = (trio.TooSlowError, OSError, trio.BrokenResourceError)


async def open_stream(
    host: str,
    port: int,
    ssl_context: ssl.SSLContext | None,
    server_hostname: str,
    timeout_s: float,
    tcp_connected: Callable[[], None] | None = None,
) -> trio.abc.Stream:
    """A connected stream (over TLS with a context); raises one of :data:`CONNECT_ERRORS`."""
    with trio.fail_after(timeout_s):
        stream = await trio.open_tcp_stream(host, port)
        if ssl_context is None:
            return stream
        if tcp_connected is not None:
            tcp_connected()  # the handshake is a phase of its own
        tls = trio.SSLStream(stream, ssl_context, server_hostname=server_hostname)
        try:
            await tls.do_handshake()
        except BaseException:
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
            raise
        return tls


def failure_of(exc: BaseException | None) -> Failure:
    """What a connect that raised ``exc`` counts as (a timeout: trio's ``TooSlowError``, or
    None)."""
    return connect_failure(None if isinstance(exc, trio.TooSlowError) else exc)
