"""``protocol="auto"``: over https:// the server picks HTTP/2 or HTTP/1.1 by ALPN, asked once
before the load, and the load runs as what it picked; over http:// it is HTTP/1.1.

Real servers over real sockets: the catalog's TLS HTTP/2 servers (Go, hypercorn) must be
spoken to in HTTP/2, and an HTTPS server that speaks only HTTP/1.1 (answering no ALPN
protocol, or choosing ``http/1.1``) in HTTP/1.1 with every request counted; without
``"auto"`` the same server keeps HTTP/2's clear error. Bad combinations are refused before
any socket.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import HttpApp, ServerThread, StartHttp

from pytest_netbench import (
    SpecError,
    TargetUnreachableError,
    ToolchainMissing,
    http_load,
    http_load_async,
    http_spec,
    run_spec,
)
from pytest_netbench._model import LoadResult, LoadSpec
from pytest_netbench._report.summary import format_result
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server

HOST = "127.0.0.1"


def consistent(r: LoadResult) -> LoadResult:
    assert r.sent == r.ok + r.errors_total + r.in_flight, r
    return r


@pytest.fixture(params=["go", "hypercorn"])
def tls_h2_server(request: pytest.FixtureRequest) -> Iterator[Server]:
    """A catalog server speaking HTTP/2 over TLS (ALPN offers h2 and http/1.1)."""
    try:
        spec = catalog.get(request.param, app="h2")
    except ToolchainMissing as exc:
        pytest.skip(f"{request.param} cannot run here: {exc}")
    server = Server.from_spec(spec).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["no ALPN", "ALPN http/1.1"])
def tls_http1_server(
    request: pytest.FixtureRequest, http_server: StartHttp, self_signed: tuple[Path, Path]
) -> tuple[ServerThread, HttpApp]:
    """An HTTPS server that speaks only HTTP/1.1: it answers no ALPN protocol, or picks
    ``http/1.1`` of those offered."""
    key, cert = self_signed
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    if request.param == "ALPN http/1.1":
        context.set_alpn_protocols(["http/1.1"])
    return http_server(ssl_context=context)


def test_the_catalogs_tls_http2_servers_are_spoken_to_in_http2(tls_h2_server: Server) -> None:
    r = consistent(
        http_load(tls_h2_server.url, protocol="auto", connections=4, requests=400, verify_tls=False)
    )
    assert (r.sent, r.ok, r.errors_total) == (400, 400, 0)
    assert r.status_codes == {200: 400}
    assert r.generator.protocol == "h2"
    assert r.spec is not None and r.spec.protocol_negotiated
    assert "HTTP/2 (TLS, negotiated by ALPN), 1 stream/connection" in format_result(r, width=200)


def test_an_https_http1_server_is_spoken_to_in_http1_counted_exactly(
    tls_http1_server: tuple[ServerThread, HttpApp],
) -> None:
    server, app = tls_http1_server
    r = consistent(
        http_load(server.url + "/", protocol="auto", connections=3, requests=300, verify_tls=False)
    )
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (300, 300, 0, 0)
    assert r.generator.protocol == "http1"
    assert r.spec is not None and r.spec.protocol_negotiated
    # The load's 3 connections and the one that asked, which sent no request.
    assert (app.seen.requests, app.seen.connections) == (300, 4)
    assert "HTTP/1.1 (TLS, negotiated by ALPN), keep-alive" in format_result(r, width=200)


def test_the_choice_is_asked_on_the_callers_loop_too(
    tls_http1_server: tuple[ServerThread, HttpApp],
) -> None:
    server, app = tls_http1_server
    r = consistent(
        asyncio.run(
            http_load_async(server.url + "/", protocol="auto", requests=50, verify_tls=False)
        )
    )
    assert (r.sent, r.ok, r.generator.protocol) == (50, 50, "http1")
    assert app.seen.requests == 50


def test_without_auto_http2_keeps_its_clear_error(
    tls_http1_server: tuple[ServerThread, HttpApp],
) -> None:
    server, app = tls_http1_server
    r = consistent(
        http_load(server.url + "/", protocol="h2", streams=3, requests=6, verify_tls=False)
    )
    assert r.ok == 0 and {k: n for k, n in r.errors.items() if n} == {"protocol": 6}
    assert "not 'h2': it does not speak HTTP/2 over TLS" in r.error_samples["protocol"]
    assert app.seen.requests == 0


def test_over_cleartext_auto_is_http1_with_nothing_asked(http_server: StartHttp) -> None:
    server, app = http_server()
    spec = http_spec(server.url + "/", protocol="auto", pipeline=2)
    assert (spec.protocol, spec.protocol_negotiated) == ("http1", False)
    r = consistent(http_load(server.url + "/", protocol="auto", connections=2, requests=100))
    assert (r.ok, r.generator.protocol) == (100, "http1")
    assert (app.seen.requests, app.seen.connections) == (100, 2)
    by_hand = LoadSpec(kind="http", host=HOST, port=server.port, protocol="auto", requests=10)
    assert run_spec(by_hand).generator.protocol == "http1"


@pytest.fixture
def plain_listener() -> Iterator[tuple[socket.socket, int]]:
    """A listening socket the test answers from (or leaves silent): (listener, port)."""
    with socket.create_server((HOST, 0)) as listener:
        listener.settimeout(5)
        yield listener, listener.getsockname()[1]


def test_a_target_that_cannot_be_asked_is_unreachable() -> None:
    with socket.socket() as held, pytest.raises(TargetUnreachableError) as refused:
        held.bind((HOST, 0))  # bound, never listening: a connect is refused
        http_load(f"https://{HOST}:{held.getsockname()[1]}/", protocol="auto", requests=10)
    assert "cannot choose the HTTP version (protocol='auto')" in str(refused.value)
    assert "connection refused" in str(refused.value)


def test_a_plain_http_port_asked_over_tls_is_named(
    plain_listener: tuple[socket.socket, int],
) -> None:
    listener, port = plain_listener

    def answer_in_plain_http() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)  # the client's hello, read as a request would be
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    answering = threading.Thread(target=answer_in_plain_http)
    answering.start()
    with pytest.raises(TargetUnreachableError) as not_tls:
        http_load(f"https://{HOST}:{port}/", protocol="auto", requests=10)
    answering.join()
    assert "the port speaks plain HTTP, not TLS: use http://" in str(not_tls.value)


@pytest.mark.parametrize("calls", ["sync", "async"])
def test_a_silent_handshake_is_named_within_the_connect_timeout(
    plain_listener: tuple[socket.socket, int], calls: str
) -> None:
    _, port = plain_listener  # accepted by the kernel, never answered
    url, options = f"https://{HOST}:{port}/", {"protocol": "auto", "connect_timeout": 0.3}
    started = time.monotonic()
    with pytest.raises(TargetUnreachableError) as silent:
        if calls == "sync":
            http_load(url, requests=10, **options)  # type: ignore[arg-type]
        else:
            asyncio.run(http_load_async(url, requests=10, **options))  # type: ignore[arg-type]
    assert time.monotonic() - started < 3
    assert "its TLS handshake got no answer within 0.3 s: does the port speak TLS?" in str(
        silent.value
    )


@pytest.mark.parametrize(
    ("url", "options", "words"),
    [
        ("https", {"streams": 4}, "but protocol='auto' may speak HTTP/1.1"),
        ("http", {"streams": 4}, "pass protocol='h2' for streams"),
        ("https", {"pipeline": 2}, "only what both HTTP versions take: pipeline is HTTP/1.1's"),
        ("https", {"keepalive": False}, "keepalive=False is HTTP/1.1's"),
        ("https", {"probe_every": 1.0}, "speaks HTTP/1.1 only: drop probe_every"),
        ("https", {"proxy": "127.0.0.1:9"}, "pass protocol='http1' to keep HTTP/1.1's options"),
        ("https", {"protocol": "h3"}, "protocol must be one of http1, h2, auto"),
    ],
)
def test_what_auto_cannot_do_is_refused_before_any_socket(
    url: str, options: dict[str, object], words: str
) -> None:
    given = {"protocol": "auto", **options}
    with pytest.raises(SpecError) as caught:
        http_load(f"{url}://127.0.0.1:9/", requests=1, **given)  # type: ignore[arg-type]
    assert words in str(caught.value)
