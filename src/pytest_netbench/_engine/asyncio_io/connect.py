"""A connect on asyncio or uvloop: from a chosen source address, and over TLS in the step
each loop gets right (the loop-free parts, the TLS context and the words of a failed connect,
are in ``_engine.rules.connecting``)."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable

# Linux's value; Python names it only from 3.12.
_IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)


async def connect(
    loop: asyncio.AbstractEventLoop,
    protocol: asyncio.BaseProtocol,
    address: tuple[str, int],
    source: str | None,
    ssl_context: ssl.SSLContext | None,
    server_hostname: str | None,
    tcp_connected: Callable[[], None] | None = None,
) -> None:
    """Connect ``protocol`` to ``address`` (from the ``source`` address if given), over TLS
    if there is an ``ssl_context``; ``protocol.connection_made`` is called once the
    connection (and its handshake) is done.

    On uvloop the TLS handshake is a second step (``loop.start_tls`` over the connected
    transport, with a stand-in protocol until it is done), not
    ``create_connection(ssl=...)``: uvloop's create_connection leaves the future of a
    failed handshake unretrieved when its task is cancelled (at the end of a run, or on a
    connect timeout), and each printed a "Future exception was never retrieved ...
    SSLError" traceback when it was collected (ten at the end of an https load against a
    plain-HTTP port; 364 in ten loads of 100 connections); start_tls leaves none. asyncio's
    create_connection leaves nothing behind, so asyncio keeps the one step.
    """
    if ssl_context is None or (tcp_connected is None and not _is_uvloop(loop)):
        factory: Callable[[], asyncio.BaseProtocol] = lambda: protocol  # noqa: E731
        await _connect_tcp(loop, factory, address, source, ssl_context, server_hostname)
        return
    transport, stand_in = await _connect_tcp(loop, asyncio.Protocol, address, source)
    if tcp_connected is not None:
        tcp_connected()
    try:
        tls = await loop.start_tls(
            transport, stand_in, ssl_context, server_hostname=server_hostname
        )
    except BaseException:
        transport.abort()
        raise
    assert tls is not None  # start_tls returns the TLS transport (None only in typeshed)
    # The answer to a request goes to the protocol: nothing arrives before one is sent
    # (uvloop delivers what follows the handshake after this task has run).
    tls.set_protocol(protocol)
    protocol.connection_made(tls)


def _is_uvloop(loop: asyncio.AbstractEventLoop) -> bool:
    return type(loop).__module__.startswith("uvloop")


async def _connect_tcp(
    loop: asyncio.AbstractEventLoop,
    factory: Callable[[], asyncio.BaseProtocol],
    address: tuple[str, int],
    source: str | None,
    ssl_context: ssl.SSLContext | None = None,
    server_hostname: str | None = None,
) -> tuple[asyncio.Transport, asyncio.BaseProtocol]:
    """``create_connection``; from the IPv4 ``source`` address if given, its port chosen at
    connect time (``IP_BIND_ADDRESS_NO_PORT``), so one source address serves every
    destination with its whole ephemeral range, as a plain connect does."""
    if source is None:
        return await loop.create_connection(
            factory, *address, ssl=ssl_context, server_hostname=server_hostname
        )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_IP, _IP_BIND_ADDRESS_NO_PORT, 1)
        sock.bind((source, 0))
        await loop.sock_connect(sock, address)
    except BaseException:
        sock.close()
        raise
    return await loop.create_connection(
        factory, sock=sock, ssl=ssl_context, server_hostname=server_hostname
    )
