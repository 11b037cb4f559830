"""What opening a connection needs beside the loop: the TLS context, a connect from a
chosen source address, and the words for a connect that failed (the same on every loop,
so error samples read alike)."""

from __future__ import annotations

import asyncio
import errno as errno_mod
import socket
import ssl
from collections.abc import Callable

from pytest_netbench._model import LoadSpec


def make_ssl_context(spec: LoadSpec) -> ssl.SSLContext | None:
    """The client TLS context of an ``https`` load; None for plain connections."""
    if spec.scheme != "https":
        return None
    context = ssl.create_default_context()
    if not spec.verify_tls:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


# Linux's value; Python names it only from 3.12.
_IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)


async def connect_from(
    loop: asyncio.AbstractEventLoop,
    factory: Callable[[], asyncio.BaseProtocol],
    address: tuple[str, int],
    source: str,
    ssl_context: ssl.SSLContext | None,
    server_hostname: str | None,
) -> tuple[asyncio.BaseTransport, asyncio.BaseProtocol]:
    """``create_connection`` from the IPv4 ``source`` address. The port is chosen at
    connect time (``IP_BIND_ADDRESS_NO_PORT``), so one source address serves every
    destination with its whole ephemeral range, as a plain connect does."""
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


def describe_connect_error(exc: BaseException) -> str:
    """A short reason for the ``connect`` error sample ("connection refused", an errno name)."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ssl.SSLError):
        return f"TLS handshake failed: {getattr(exc, 'reason', None) or exc}"
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{errno_mod.errorcode.get(exc.errno, exc.errno)}: {exc.strerror}"
    return repr(exc)


def informative_cause(exc: BaseException) -> BaseException:
    """The error worth reporting inside a wrapped one: in ``__cause__`` (trio's TLS errors)
    or in an exception group ("all attempts to connect ... failed"); the first that says
    what went wrong (an ``SSLError``, an ``OSError`` with an errno)."""
    seen = 0
    while seen < 8:
        seen += 1
        if isinstance(exc, ssl.SSLError) or (isinstance(exc, OSError) and exc.errno):
            return exc
        inner = getattr(exc, "exceptions", None)
        if inner:
            exc = inner[0]
        elif exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            break
    return exc
