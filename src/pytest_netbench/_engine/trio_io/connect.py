"""A connect on trio, written once for every trio connection (HTTP/1.1, HTTP/2, WebSocket,
a listen load, a flow's user): TCP, then the TLS handshake when there is a context, within
the connect timeout. A stream half open when it fails or is cancelled is closed here, so
the caller either gets a whole stream or an exception it maps with :func:`failure_of`."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable
from typing import Any

import trio

from pytest_netbench._engine.rules.connecting import numeric_address
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
    address = numeric_address(host, port)
    # trio.fail_after, without the generator its context manager runs (issue 35): the
    # body returns or raises, so past the scope only its deadline can have ended it.
    with trio.move_on_after(timeout_s):
        if address is None:
            stream: trio.SocketStream = await trio.open_tcp_stream(host, port)
        else:
            stream = await _connect_to(address)
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
    raise trio.TooSlowError


async def close_stream(stream: trio.abc.Stream) -> None:
    """Close ``stream`` now, whatever cancels the caller (a shielded
    ``trio.aclose_forcefully``). A plain TCP stream's ``aclose`` is its socket's ``close``
    and a checkpoint that the forceful close cancels anyway: done directly, without the
    two cancel scopes around it, a third of what closing cost a trio load that opens a
    connection per request (issue 35)."""
    if type(stream) is trio.SocketStream:
        stream.socket.close()
        return
    with trio.CancelScope(shield=True):
        await trio.aclose_forcefully(stream)


async def _connect_to(address: tuple[Any, ...]) -> trio.SocketStream:
    """``trio.open_tcp_stream`` to one IP address, without its name lookup and its happy
    eyeballs' nursery and task, which a connect to a single address does not need: they
    were a third of the Python of a trio load that opens a connection per request
    (issue 35). The socket and the stream are the same (``SocketStream`` sets
    ``TCP_NODELAY``); a failed connect raises its ``OSError``, which
    ``connect_failure`` reads as it reads trio's wrapped one."""
    family = socket.AF_INET6 if len(address) == 4 else socket.AF_INET
    sock = trio.socket.socket(family, socket.SOCK_STREAM)
    try:
        await sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return trio.SocketStream(sock)


def failure_of(exc: BaseException | None) -> Failure:
    """What a connect that raised ``exc`` counts as (a timeout: trio's ``TooSlowError``, or
    None)."""
    return connect_failure(None if isinstance(exc, trio.TooSlowError) else exc)
