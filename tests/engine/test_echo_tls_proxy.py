"""Conformance beyond plain HTTP: raw TCP echo (chunked writes, verification), TLS and
proxies, on every engine loop against servers the tests start themselves."""

from __future__ import annotations

import ssl
from collections.abc import Callable

import pytest
from servers import StartEcho, StartHttp

from pytest_netbench import (
    LoadResult,
    SpecError,
    TargetUnreachableError,
    echo_load,
    http_load,
)

Check = Callable[[LoadResult], LoadResult]


@pytest.mark.parametrize(("size", "chunk"), [(4096, 1000), (512, None), (1, None)])
def test_echo_exchanges_are_exact_with_chunked_writes(
    loop: str,
    echo_server: StartEcho,
    consistent: Check,
    size: int,
    chunk: int | None,
) -> None:
    server, app = echo_server(payload_size=size)
    r = consistent(
        echo_load(
            "127.0.0.1",
            server.port,
            loop=loop,
            connections=3,
            requests=60,
            payload_bytes=size,
            chunk=chunk,
        )
    )
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (60, 60, 0, 0)
    assert r.bytes_written == r.bytes_read == 60 * size
    assert app.seen.requests == 60
    assert app.seen.connections == r.generator.connections_opened == 3
    assert r.status_codes == {}
    assert r.url == f"tcp://127.0.0.1:{server.port}"


def test_corrupted_echoes_are_verify_errors_exactly(
    loop: str, echo_server: StartEcho, consistent: Check
) -> None:
    server, app = echo_server(payload_size=700, corrupt_every=7)
    r = consistent(
        echo_load(
            "127.0.0.1",
            server.port,
            loop=loop,
            connections=4,
            requests=50,
            payload_bytes=700,
            chunk=256,
        )
    )
    assert r.errors["verify"] == 50 // 7
    assert r.ok == 50 - 50 // 7
    assert r.errors_total == r.errors["verify"]
    assert "differ" in r.error_samples["verify"]
    assert app.seen.requests == 50


def test_echo_duration_run_keeps_the_invariant(
    loop: str, echo_server: StartEcho, consistent: Check
) -> None:
    server, _ = echo_server()
    r = consistent(
        echo_load("127.0.0.1", server.port, loop=loop, connections=2, duration=0.3, chunk=100)
    )
    assert r.ok > 0
    assert r.errors_total == 0


def test_echo_open_loop_with_a_request_count(
    loop: str, echo_server: StartEcho, consistent: Check
) -> None:
    server, _ = echo_server()
    r = consistent(echo_load("127.0.0.1", server.port, loop=loop, rate=400, requests=40))
    assert (r.mode, r.sent, r.ok) == ("open", 40, 40)


def test_line_framing_against_an_echo_server(
    loop: str, echo_server: StartEcho, consistent: Check
) -> None:
    server, _ = echo_server()
    payload = b"PING " + b"x" * 40 + b"\n"
    r = consistent(
        echo_load(
            "127.0.0.1",
            server.port,
            loop=loop,
            payload=payload,
            framing="line",
            connections=2,
            requests=30,
        )
    )
    assert (r.ok, r.errors_total) == (30, 0)


@pytest.mark.parametrize("framing", ["fixed", "fixed:x", "length-prefixed", "sized:4"])
def test_bad_framing_is_a_spec_error_before_any_traffic(framing: str) -> None:
    with pytest.raises(SpecError, match="framing"):
        echo_load("127.0.0.1", 9, framing=framing, requests=1)


def test_tls_without_verification_works_with_a_self_signed_server(
    loop: str, http_server: StartHttp, tls_context: ssl.SSLContext, consistent: Check
) -> None:
    server, app = http_server(ssl_context=tls_context)
    assert server.url.startswith("https://127.0.0.1:")
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=20, verify_tls=False))
    assert (r.sent, r.ok, r.errors_total) == (20, 20, 0)
    assert app.seen.requests == 20
    assert r.generator.connections_opened == 2


def test_tls_without_keepalive_handshakes_every_request(
    loop: str, http_server: StartHttp, tls_context: ssl.SSLContext, consistent: Check
) -> None:
    server, app = http_server(ssl_context=tls_context)
    r = consistent(
        http_load(
            server.url, loop=loop, connections=2, requests=10, verify_tls=False, keepalive=False
        )
    )
    assert (r.ok, r.errors_total) == (10, 0)
    assert app.seen.connections == 10


def test_tls_verification_is_on_by_default_and_fails_as_connect_errors(
    loop: str, http_server: StartHttp, tls_context: ssl.SSLContext
) -> None:
    server, app = http_server(ssl_context=tls_context)
    with pytest.raises(TargetUnreachableError) as failure:
        http_load(server.url, loop=loop, connections=2, requests=4)
    message = str(failure.value)
    assert "CERTIFICATE_VERIFY_FAILED" in message
    assert "pass verify_tls=False (CLI: --no-verify-tls)" in message
    assert app.seen.requests == 0


def test_proxy_receives_the_absolute_form_target(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    proxy, app = http_server()
    r = consistent(
        http_load(
            "http://127.0.0.1:9/path?q=1",
            proxy=f"127.0.0.1:{proxy.port}",
            loop=loop,
            connections=2,
            requests=6,
        )
    )
    assert (r.ok, r.errors_total) == (6, 0)
    assert app.seen.request_lines == [b"GET http://127.0.0.1:9/path?q=1 HTTP/1.1"] * 6


def test_proxy_url_form_is_accepted(loop: str, http_server: StartHttp) -> None:
    proxy, app = http_server()
    r = http_load(
        "http://localhost:8080/", proxy=f"http://127.0.0.1:{proxy.port}", loop=loop, requests=2
    )
    assert r.ok == 2
    assert app.seen.request_lines[0] == b"GET http://localhost:8080/ HTTP/1.1"
