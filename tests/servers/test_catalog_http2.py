"""The catalog's HTTP/2 and gRPC apps (issue 22): ``h2c`` (cleartext, prior knowledge) and
``h2`` (TLS, ALPN h2) on go, node, nginx and hypercorn, ``grpc`` on grpcio. Each is started
by name, found ready by its SETTINGS answer to the preface, and loaded with exact counts
(a server whose toolchain or framework is missing is skipped)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from pytest_netbench import (
    Http2Ready,
    ReadinessContext,
    Server,
    SpecError,
    ToolchainMissing,
    grpc_load,
    http_load,
)
from pytest_netbench._servers import catalog
from pytest_netbench._servers.readiness import LogFollower

H2_SERVERS = ["go", "node", "nginx", "hypercorn"]


def start(name: str, app: catalog.AppKind) -> Server:
    try:
        spec = catalog.get(name, app=app)
    except ToolchainMissing as exc:
        pytest.skip(f"{name} cannot run here: {exc}")
    server = Server.from_spec(spec)
    server.start()
    return server


@pytest.fixture(params=[f"{name} {app}" for name in H2_SERVERS for app in ("h2c", "h2")])
def h2_server(request: pytest.FixtureRequest) -> Iterator[Server]:
    name, app = request.param.split()
    server = start(name, app)
    try:
        yield server
    finally:
        server.stop()


def test_the_http2_and_grpc_servers_are_the_expected_ones() -> None:
    assert catalog.names(app="h2c") == H2_SERVERS
    assert catalog.names(app="h2") == H2_SERVERS
    assert catalog.names(app="grpc") == ["grpcio"]
    spec = catalog.get("nginx", app="h2")
    assert spec.command[-2:] == ("--http2", "h2") and spec.tls and spec.ready_http2
    assert spec.protocol == "http"
    assert not catalog.get("nginx").ready_http2  # hello stays HTTP/1.1


def test_every_http2_server_by_name_over_h2c_and_tls(h2_server: Server) -> None:
    tls = h2_server.tls
    assert h2_server.url.startswith("https://" if tls else "http://")
    r = http_load(
        h2_server.url + "/",
        protocol="h2",
        streams=10,
        connections=2,
        requests=400,
        verify_tls=False,
    )
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (400, 400, 0, 0), r.error_samples
    assert r.status_codes == {200: 400}
    assert r.generator.protocol == "h2"


def test_grpcio_by_name_counts_calls_and_statuses() -> None:
    server = start("grpcio", "grpc")
    try:
        assert server.url.startswith("http://")
        ok = grpc_load(
            server.url, "/netbench.Echo/Say", b"hi", connections=2, streams=5, requests=200
        )
        failed = grpc_load(server.url, "/netbench.Echo/Fail", b"", streams=5, requests=30)
    finally:
        server.stop()
    assert (ok.sent, ok.ok, ok.errors_total, ok.in_flight) == (200, 200, 0, 0), ok.error_samples
    assert ok.status_codes == {0: 200}
    assert (failed.sent, failed.ok, failed.errors.get("status")) == (30, 0, 30)
    assert failed.status_codes == {5: 30}  # NOT_FOUND


def test_a_server_without_http2_says_so() -> None:
    with pytest.raises(SpecError, match=r"'java' has no 'h2c' app.*does no HTTP/2 over cleartext"):
        catalog.get("java", app="h2c")
    with pytest.raises(SpecError, match=r"'grpcio' has no 'hello' app.*it has: grpc"):
        catalog.get("grpcio")
    with pytest.raises(SpecError, match=r"'hypercorn' has no 'grpc' app.*does no gRPC"):
        catalog.get("hypercorn", app="grpc")


def _poll(check: Http2Ready, port: int, tmp_path: object) -> str | None:
    log = LogFollower(str(tmp_path) + "/none.log")
    return check.poll(ReadinessContext("127.0.0.1", port, log, budget_s=2.0))


def test_the_http2_readiness_check_names_what_answered(tmp_path: object) -> None:
    """An HTTP/1.1 answer and a silent server are 'not ready' with the reason, bounded."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def answer_http1() -> None:
            for _ in range(2):
                conn, _ = listener.accept()
                with conn:
                    conn.recv(1024)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

        thread = threading.Thread(target=answer_http1, daemon=True)
        thread.start()
        reason = _poll(Http2Ready(), port, tmp_path)
        assert reason is not None and "in HTTP/1 (b'HTTP/1.1 400 Bad Request')" in reason
        reason = _poll(Http2Ready(tls=True), port, tmp_path)
        assert reason is not None and "TLS" in reason
        thread.join(timeout=5)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts (backlog), never answers
        reason = _poll(Http2Ready(timeout=0.2), silent.getsockname()[1], tmp_path)
        assert reason is not None and "no HTTP/2 SETTINGS frame within 0.20 s" in reason
