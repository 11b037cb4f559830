"""Choosing the HTTP version of a ``protocol="auto"`` load once, before it runs.

Over https:// one TLS connection offers ALPN ``h2`` and ``http/1.1`` (as curl, browsers
and k6 do) and reads the server's choice; the load then runs as that concrete protocol,
so the engine, its worker processes and Dask shares never see ``"auto"``, and every
connection of the load speaks what the server chose. A server that answers no ALPN
protocol speaks HTTP/1.1 (RFC 7301: ALPN is an offer, and HTTP/1.1 the default over TLS).

Over http:// there is nothing to negotiate: ``_input.spec`` makes ``"auto"`` HTTP/1.1 already
(a spec built by hand becomes it here). A target that cannot be reached, or whose TLS
handshake fails, raises :class:`TargetUnreachableError` with the words of a load's own
connect errors.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import ssl

from pytest_netbench._engine.rules.connecting import (
    make_ssl_context,
    unreachable_message,
)
from pytest_netbench._engine.rules.failures import connect_failure
from pytest_netbench._errors import TargetUnreachableError
from pytest_netbench._model import HttpProtocol, LoadSpec

# What the negotiating connection offers, in order of preference.
OFFERED = ("h2", "http/1.1")


def negotiated_spec(spec: LoadSpec) -> LoadSpec:
    """``spec`` with a concrete protocol: unchanged unless it is ``"auto"``; then the
    server's ALPN choice, asked over one blocking TLS connection."""
    if spec.protocol != "auto":
        return spec
    if spec.scheme != "https":
        return _cleartext(spec)
    context = _offering_context(spec)
    try:
        sock = socket.create_connection((spec.host, spec.port), spec.connect_timeout_s)
    except OSError as exc:  # a timeout too
        raise _unreachable(spec, exc) from None
    with sock:
        try:
            with context.wrap_socket(sock, server_hostname=spec.host) as tls:
                chosen = tls.selected_alpn_protocol()
        except OSError as exc:  # ssl.SSLError, and a timeout too
            raise _unreachable(spec, exc, handshake=True) from None
    return _spoken(spec, chosen)


async def negotiated_spec_async(spec: LoadSpec) -> LoadSpec:
    """As :func:`negotiated_spec`, on the running loop (the server may be served by it)."""
    if spec.protocol != "auto":
        return spec
    if spec.scheme != "https":
        return _cleartext(spec)
    context = _offering_context(spec)
    timeout = spec.connect_timeout_s
    try:
        connecting = asyncio.open_connection(spec.host, spec.port)
        _, writer = await asyncio.wait_for(connecting, timeout)
    except OSError as exc:  # a timeout too
        raise _unreachable(spec, exc) from None
    try:
        await asyncio.wait_for(writer.start_tls(context, server_hostname=spec.host), timeout)
        tls = writer.get_extra_info("ssl_object")
        chosen = tls.selected_alpn_protocol() if tls is not None else None
    except OSError as exc:
        raise _unreachable(spec, exc, handshake=True) from None
    finally:
        # No TLS goodbye to wait for: the connection only asked a question.
        writer.transport.abort()
    return _spoken(spec, chosen)


def _cleartext(spec: LoadSpec) -> LoadSpec:
    # Without TLS, "auto" is HTTP/1.1, as curl and browsers without prior knowledge.
    return dataclasses.replace(spec, protocol="http1")


def _offering_context(spec: LoadSpec) -> ssl.SSLContext:
    # The load's own context (its certificate check), offering both versions.
    context = make_ssl_context(dataclasses.replace(spec, protocol="http1"))
    assert context is not None  # an https:// spec's
    context.set_alpn_protocols(list(OFFERED))
    return context


def _spoken(spec: LoadSpec, chosen: str | None) -> LoadSpec:
    # OpenSSL fails a handshake whose answer is not among the offered, so h2 or HTTP/1.1.
    protocol: HttpProtocol = "h2" if chosen == "h2" else "http1"
    return dataclasses.replace(spec, protocol=protocol, protocol_negotiated=True)


def _unreachable(
    spec: LoadSpec, exc: BaseException, *, handshake: bool = False
) -> TargetUnreachableError:
    asked = "cannot choose the HTTP version (protocol='auto')"
    if handshake and isinstance(exc, TimeoutError):
        return TargetUnreachableError(
            f"{asked}: {spec.url} accepted the connection but its TLS handshake got no answer"
            f" within {spec.connect_timeout_s:g} s: does the port speak TLS? (a plain-HTTP"
            " port wants http://)"
        )
    if isinstance(exc, TimeoutError):
        sample = f"connect timed out after {spec.connect_timeout_s:g} s"
    else:
        sample = connect_failure(exc).detail
    return TargetUnreachableError(f"{asked}: {unreachable_message(spec, 1, sample)}")
