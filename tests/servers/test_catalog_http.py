"""HTTP details of the catalog servers: pipelining, request bodies, HTTP/1.0, bad requests.

Five servers frame HTTP by hand (asyncio_streams, asyncio_uvloop, trio, c, rust); these
tests hold them to what a client may send. Pipelining is checked on every keep-alive
server, since the load engine can pipeline.
"""

from __future__ import annotations

import http.client
import io
import socket
from collections.abc import Iterator

import pytest

from pytest_netbench import ToolchainMissing
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server

HAND_FRAMED = ["asyncio_streams", "asyncio_uvloop", "trio", "c", "rust"]
KEEP_ALIVE = [name for name in catalog.names(app="hello") if name != "wsgiref"]


class _Replay(io.BytesIO):
    """Bytes read back as a socket file that http.client may 'close' between responses."""

    def close(self) -> None:
        pass


class _RecordedSocket:
    def __init__(self, data: bytes) -> None:
        self._file = _Replay(data)

    def makefile(self, mode: str) -> _Replay:
        return self._file


def parse_responses(data: bytes, count: int) -> list[tuple[int, bytes]]:
    recorded = _RecordedSocket(data)
    responses = []
    for _ in range(count):
        response = http.client.HTTPResponse(recorded, method="GET")  # type: ignore[arg-type]
        response.begin()
        responses.append((response.status, response.read()))
    return responses


def exchange(server: Server, payload: bytes) -> bytes:
    """Send ``payload`` in one write and read until the server closes.

    The last request of every payload asks the server to close (``Connection: close``,
    plain HTTP/1.0, or garbage); no half-close, which some servers take as an abort.
    """
    assert server.port is not None
    with socket.create_connection((server.host, server.port), timeout=10) as conn:
        conn.sendall(payload)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.fixture
def hello_server(request: pytest.FixtureRequest) -> Iterator[Server]:
    try:
        spec = catalog.get(request.param, app="hello")
    except ToolchainMissing as exc:
        pytest.skip(str(exc))
    with Server.from_spec(spec) as server:
        yield server


def get(path: str, *headers: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: netbench", *headers, "", ""]
    return "\r\n".join(lines).encode()


@pytest.mark.parametrize("hello_server", KEEP_ALIVE, indirect=True)
def test_pipelined_requests_answered_in_order(hello_server: Server) -> None:
    payload = get("/") + get("/status/204") + get("/bytes/16") + get("/", "Connection: close")
    responses = parse_responses(exchange(hello_server, payload), 4)
    assert responses == [
        (200, b"Hello World!"),
        (204, b""),
        (200, b"x" * 16),
        (200, b"Hello World!"),
    ]


@pytest.mark.parametrize("hello_server", HAND_FRAMED, indirect=True)
def test_request_bodies_are_skipped(hello_server: Server) -> None:
    body = b"a=1&b=2\r\n\r\nGET /not-a-request HTTP/1.1\r\n\r\n"  # looks like a head
    post = (
        b"POST /status/204 HTTP/1.1\r\nHost: netbench\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    payload = post + get("/", "Connection: close")
    assert parse_responses(exchange(hello_server, payload), 2) == [
        (204, b""),
        (200, b"Hello World!"),
    ]


@pytest.mark.parametrize("hello_server", HAND_FRAMED, indirect=True)
def test_http10_closes_unless_asked_to_keep_alive(hello_server: Server) -> None:
    plain = exchange(hello_server, b"GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n")
    assert plain.count(b"HTTP/1.1 200") == 1  # answered once, then closed
    assert b"Connection: close" in plain
    kept = exchange(
        hello_server,
        b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n",
    )
    assert kept.count(b"HTTP/1.1 200") == 2
    assert b"Connection: keep-alive" in kept


@pytest.mark.parametrize("hello_server", HAND_FRAMED, indirect=True)
def test_garbage_gets_400_and_the_server_lives_on(hello_server: Server) -> None:
    answer = exchange(hello_server, b"NOT HTTP AT ALL\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400")
    assert parse_responses(exchange(hello_server, get("/", "Connection: close")), 1) == [
        (200, b"Hello World!")
    ]
    hello_server.check_alive()


@pytest.mark.parametrize("hello_server", ["c", "asyncio_uvloop"], indirect=True)
def test_unknown_path_and_bad_sizes(hello_server: Server) -> None:
    payload = (
        get("/nowhere") + get("/bytes/abc") + get("/status/999") + get("/", "Connection: close")
    )
    statuses = [status for status, _ in parse_responses(exchange(hello_server, payload), 4)]
    assert statuses == [404, 400, 400, 200]
