"""The sans-IO HTTP/2 client (``_proto/h2_client.py``) over real loopback sockets.

Against the catalog's HTTP/2 apps, started by name: Go's net/http, Node.js's http2 module,
hypercorn and nginx, each over h2c (``app="h2c"``) and over TLS with ALPN (``app="h2"``),
and against a Python server in this module that misbehaves on purpose: it resets a stream
mid-body, sends GOAWAY with streams in flight, sends a garbage frame, or answers in
HTTP/1.1. Each case is classified exactly, and every socket has a timeout, so none hangs.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import hpack
import pytest

from pytest_netbench import ToolchainMissing
from pytest_netbench._proto import h2_frames as f
from pytest_netbench._proto.grpc import encode_unary_block, frame_message
from pytest_netbench._proto.h2_client import H2ClientConnection, H2Request, StreamError
from pytest_netbench._proto.h2_headers import encode_request_block
from pytest_netbench._servers import build, catalog
from pytest_netbench._servers.launcher import Server

HOST = "127.0.0.1"
SOCKET_TIMEOUT_S = 10.0


@dataclass
class Outcome:
    statuses: dict[int, int] = field(default_factory=dict)
    errors: dict[int, StreamError] = field(default_factory=dict)


def drive(
    sock: socket.socket, request: H2Request, total: int, streams: int
) -> tuple[Outcome, H2ClientConnection]:
    """``total`` requests, ``streams`` at a time, in a closed loop on one connection, until
    every stream ended, the connection failed, or the server closed it."""
    outcome = Outcome()
    client = H2ClientConnection(
        request,
        outcome.statuses.__setitem__,
        outcome.errors.__setitem__,
        max_streams=streams,
    )
    sock.settimeout(SOCKET_TIMEOUT_S)
    preface = client.initiate()  # the first requests go in the same write, as h2load's
    left = total
    while True:
        _, opened = client.open_streams(left)
        left -= opened
        out = preface + client.data_to_send()
        preface = b""
        try:
            if out:
                sock.sendall(out)
        except OSError:
            # The server closed first: a failed connection's GOAWAY may find it gone.
            if not client.failed:
                client.feed_eof()
            return outcome, client
        if client.failed or client.closed or len(outcome.statuses) + len(outcome.errors) == total:
            return outcome, client
        if client.finished:
            return outcome, client
        data = sock.recv(65536)
        if data:
            client.feed(data)
        else:
            client.feed_eof()


# -- servers that speak HTTP/2 --
@pytest.fixture(scope="module")
def go_h2_binary() -> str:
    try:
        return str(build.ensure_built(catalog.GO_H2).artifact)
    except ToolchainMissing as exc:
        pytest.skip(f"the Go HTTP/2 server cannot be built here: {exc}")


KINDS_AND_MODES = [
    f"{kind} {mode}" for kind in ("go", "node", "hypercorn", "nginx") for mode in ("h2c", "h2")
]


@pytest.fixture(params=KINDS_AND_MODES)
def h2_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, Server]]:
    """A catalog server speaking HTTP/2, started by name: (mode, server)."""
    kind, mode = request.param.split()
    try:
        spec = catalog.get(kind, app=mode)
    except ToolchainMissing as exc:
        pytest.skip(f"{kind} cannot run here: {exc}")
    server = Server.from_spec(spec)
    server.start()
    try:
        yield mode, server
    finally:
        server.stop()


def connect(mode: str, port: int) -> socket.socket:
    sock = socket.create_connection((HOST, port), timeout=SOCKET_TIMEOUT_S)
    if mode == "h2c":
        return sock
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the server's certificate is made at its start
    context.set_alpn_protocols(["h2"])
    tls = context.wrap_socket(sock, server_hostname=HOST)
    assert tls.selected_alpn_protocol() == "h2"
    return tls


@pytest.mark.parametrize("path", ["/", "/trailers", "/bytes/100000"])
def test_every_request_completes_on_ten_streams(h2_server: tuple[str, Server], path: str) -> None:
    mode, server = h2_server
    scheme = "http" if mode == "h2c" else "https"
    request = H2Request(encode_request_block("GET", scheme, f"{HOST}:{server.port}", path))
    total = 300 if path != "/bytes/100000" else 40
    with connect(mode, server.port) as sock:
        outcome, client = drive(sock, request, total, streams=10)
    assert outcome.errors == {}
    assert sorted(outcome.statuses) == list(range(1, 2 * total, 2))
    assert set(outcome.statuses.values()) == {200}
    assert client.settings_acked and not client.failed


def test_request_bodies_go_under_the_servers_windows(h2_server: tuple[str, Server]) -> None:
    mode, server = h2_server
    scheme = "http" if mode == "h2c" else "https"
    block = encode_request_block("POST", scheme, f"{HOST}:{server.port}", "/")
    # Four bodies of 300 kB at a time are more than the server's connection window (Go's
    # 1 MiB, Node's 64 KiB): they wait for its WINDOW_UPDATEs.
    request = H2Request(block, b"b" * 300_000)
    with connect(mode, server.port) as sock:
        outcome, _ = drive(sock, request, 12, streams=4)
    assert outcome.errors == {}
    assert list(outcome.statuses.values()) == [200] * 12


def test_a_server_without_http2_is_named(go_h2_binary: str) -> None:
    # Go's hello app on ../go speaks HTTP/1.1 only: it reads the preface as a request for
    # "*" and answers 404.
    try:
        spec = catalog.get("go")
    except ToolchainMissing as exc:
        pytest.skip(f"go cannot run here: {exc}")
    server = Server.from_spec(spec).start()
    try:
        with socket.create_connection((HOST, server.port), timeout=SOCKET_TIMEOUT_S) as sock:
            request = H2Request(encode_request_block("GET", "http", HOST, "/"))
            outcome, client = drive(sock, request, 3, streams=3)
    finally:
        server.stop()
    assert client.failed
    assert [e.kind for e in outcome.errors.values()] == ["protocol"] * 3
    assert "the server answered in HTTP/1 (b'HTTP/1.1 404 Not Found')" in (outcome.errors[1].reason)


# -- gRPC unary calls, against grpcio --
@pytest.fixture(scope="module")
def grpc_port() -> Iterator[int]:
    try:
        spec = catalog.get("grpcio", app="grpc")
    except ToolchainMissing as exc:
        pytest.skip(f"grpcio cannot run here: {exc}")
    server = Server.from_spec(spec)
    server.start()
    try:
        yield server.port
    finally:
        server.stop()


def grpc_calls(
    port: int, method: str, message: bytes, total: int, timeout: float | None = None
) -> Outcome:
    block = encode_unary_block("http", f"{HOST}:{port}", method, timeout=timeout)
    request = H2Request(block, frame_message(message), grpc=True)
    with socket.create_connection((HOST, port), timeout=SOCKET_TIMEOUT_S) as sock:
        outcome, client = drive(sock, request, total, streams=10)
    assert not client.failed
    return outcome


def test_grpc_calls_complete(grpc_port: int) -> None:
    outcome = grpc_calls(grpc_port, "/netbench.Echo/Say", b"hello", 200)
    assert outcome.errors == {} and list(outcome.statuses.values()) == [200] * 200


@pytest.mark.parametrize(
    ("method", "message", "timeout", "code", "reason"),
    [
        ("/netbench.Echo/Fail", b"", None, 5, "grpc-status NOT_FOUND (5): no such thing"),
        ("/netbench.Echo/Nope", b"", None, 12, "grpc-status UNIMPLEMENTED (12)"),
        ("/netbench.Echo/Sleep", b"2000", 0.05, 4, "grpc-status DEADLINE_EXCEEDED (4)"),
    ],
)
def test_grpc_status_errors_are_counted_by_code(
    grpc_port: int, method: str, message: bytes, timeout: float | None, code: int, reason: str
) -> None:
    outcome = grpc_calls(grpc_port, method, message, 10, timeout)
    assert outcome.statuses == {}
    assert {(e.kind, e.cause, e.code) for e in outcome.errors.values()} == {
        ("status", "grpc_status", code)
    }
    assert all(e.reason.startswith(reason) for e in outcome.errors.values())
    assert len(outcome.errors) == 10


# -- a server that misbehaves on purpose --
Scenario = Callable[[socket.socket, list[int]], None]
_ENCODER_LOCK = threading.Lock()


def response(encoder: hpack.Encoder, stream_id: int, end_stream: bool) -> bytes:
    with _ENCODER_LOCK:
        block = encoder.encode([(":status", "200"), ("content-type", "text/plain")])
    return f.headers_frames(stream_id, block, end_stream, f.DEFAULT_MAX_FRAME_SIZE)


def read_requests(conn: socket.socket, count: int) -> list[int]:
    """Reads the client's preface and frames until ``count`` HEADERS came: their streams."""
    data = b""
    while len(data) < len(f.PREFACE):
        data += conn.recv(65536)
    assert data.startswith(f.PREFACE)
    data = data[len(f.PREFACE) :]
    streams: list[int] = []
    while True:
        while len(data) >= 9:
            length_kind, _, stream_id = f.FRAME_HEAD.unpack_from(data, 0)
            if len(data) < 9 + (length_kind >> 8):
                break
            if length_kind & 0xFF == f.HEADERS:
                streams.append(stream_id)
            data = data[9 + (length_kind >> 8) :]
        if len(streams) >= count:
            return streams
        more = conn.recv(65536)
        if not more:
            return streams
        data += more


def drain(conn: socket.socket) -> None:
    """Reads until the client closes, so that what was sent is not reset by a close."""
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass


def rst_mid_body(conn: socket.socket, streams: list[int]) -> None:
    encoder = hpack.Encoder()
    conn.sendall(
        response(encoder, streams[0], False)
        + f.frame(f.DATA, 0, streams[0], b"half of it")
        + f.rst_stream(streams[0], f.INTERNAL_ERROR)
        + response(encoder, streams[1], False)
        + f.frame(f.DATA, f.END_STREAM, streams[1], b"all of it")
    )
    drain(conn)


def goaway_in_flight(conn: socket.socket, streams: list[int]) -> None:
    encoder = hpack.Encoder()
    conn.sendall(
        response(encoder, streams[0], True)
        + f.goaway(streams[1], f.NO_ERROR, b"going away")
        + response(encoder, streams[1], True)
    )
    conn.close()


def garbage(conn: socket.socket, streams: list[int]) -> None:
    conn.sendall(b"\x00\x00\x01\x00\x00\x00\x00\x00\x00x")  # DATA on stream 0
    drain(conn)


def http1_answer(conn: socket.socket, streams: list[int]) -> None:
    conn.sendall(b"HTTP/1.1 505 HTTP Version Not Supported\r\nContent-Length: 0\r\n\r\n")
    # Closed with the client's preface unread, the socket would send a reset, which can
    # reach the client before the answer does: end the answer with a FIN and read on.
    conn.shutdown(socket.SHUT_WR)
    drain(conn)


@pytest.fixture
def misbehaving() -> Iterator[Callable[[Scenario, int], int]]:
    """``start(scenario, streams)``: a server for one connection that sends its SETTINGS,
    reads ``streams`` requests, then plays ``scenario``; returns its port."""
    threads: list[threading.Thread] = []
    listeners: list[socket.socket] = []

    def start(scenario: Scenario, streams: int) -> int:
        listener = socket.create_server((HOST, 0))
        listener.settimeout(SOCKET_TIMEOUT_S)
        listeners.append(listener)

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(SOCKET_TIMEOUT_S)
                if scenario is not http1_answer:
                    conn.sendall(f.settings_frame([(f.SETTINGS_MAX_CONCURRENT_STREAMS, 100)]))
                    ids = read_requests(conn, streams)
                else:
                    ids = []
                scenario(conn, ids)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        threads.append(thread)
        return int(listener.getsockname()[1])

    yield start
    for thread in threads:
        thread.join(SOCKET_TIMEOUT_S)
        assert not thread.is_alive(), "the test server did not finish"
    for listener in listeners:
        listener.close()


def run_against(port: int, streams: int) -> tuple[Outcome, H2ClientConnection]:
    request = H2Request(encode_request_block("GET", "http", f"{HOST}:{port}", "/"))
    with socket.create_connection((HOST, port), timeout=SOCKET_TIMEOUT_S) as sock:
        return drive(sock, request, streams, streams)


def test_rst_stream_mid_body(misbehaving) -> None:
    outcome, client = run_against(misbehaving(rst_mid_body, 2), 2)
    assert outcome.statuses == {3: 200}
    error = outcome.errors[1]
    assert (error.kind, error.cause, error.code) == ("reset", "rst_stream", f.INTERNAL_ERROR)
    assert not client.failed


def test_goaway_with_streams_in_flight(misbehaving) -> None:
    outcome, client = run_against(misbehaving(goaway_in_flight, 3), 3)
    assert outcome.statuses == {1: 200, 3: 200}
    assert [(s, e.kind, e.cause) for s, e in outcome.errors.items()] == [(5, "reset", "goaway")]
    assert client.goaway == (3, f.NO_ERROR) and client.finished


def test_garbage_frame(misbehaving) -> None:
    outcome, client = run_against(misbehaving(garbage, 2), 2)
    assert client.failed and outcome.statuses == {}
    assert [(s, e.kind, e.code) for s, e in outcome.errors.items()] == [
        (1, "protocol", f.PROTOCOL_ERROR),
        (3, "protocol", f.PROTOCOL_ERROR),
    ]
    assert "a DATA frame on stream 0" in outcome.errors[1].reason


def test_http1_answer(misbehaving) -> None:
    outcome, client = run_against(misbehaving(http1_answer, 1), 1)
    assert client.failed
    assert "answered in HTTP/1 (b'HTTP/1.1 505 HTTP Version Not Supported')" in (
        outcome.errors[1].reason
    )
