"""The compiled steady state (``_engine/asyncio_io/compiled_steady.c``) on the servers users
run: each catalog server's keep-alive answer to a fixed GET, read off a real socket, is one
the compiled reader takes whole. A server whose answers it
quietly stopped taking (a header it does not know to be harmless, a new framing) would
cost every load against it up to a fifth more generator CPU a response, and this is where that
shows. Tests of the reader's exactness are ``tests/unit/test_compiled_steady.py``."""

from __future__ import annotations

import socket
import time

import httptools
import pytest

from pytest_netbench._engine.asyncio_io import fused_http
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server

pytestmark = pytest.mark.skipif(
    fused_http.SteadyReader is None, reason="compiled_steady is not built here"
)

# Every catalog server that keeps an HTTP/1.1 connection open (wsgiref closes each).
SERVERS = [
    "go", "nginx", "node", "java", "c", "rust", "starlette", "aiohttp", "tornado",
    "twisted_web", "gevent", "eventlet", "asyncio_uvloop", "socketserver",
]  # fmt: skip


class _Answer:
    """httptools' callbacks: where the first response ends."""

    def __init__(self) -> None:
        self.complete = False

    def on_message_complete(self) -> None:
        self.complete = True


def _one_answer(conn: socket.socket, request: bytes) -> bytes:
    """The bytes of the answer to ``request``, read until httptools finds its end."""
    conn.sendall(request)
    answer, parsed = b"", _Answer()
    parser = httptools.HttpResponseParser(parsed)
    deadline = time.monotonic() + 10
    while not parsed.complete:
        assert time.monotonic() < deadline, f"no whole answer in 10 s: {answer[:200]!r}"
        data = conn.recv(65536)
        assert data, f"closed after {answer[:200]!r}"
        answer += data
        parser.feed_data(data)
    return answer


@pytest.mark.parametrize("name", SERVERS)
def test_a_catalog_server_s_steady_answer_is_taken_whole(name: str) -> None:
    from pytest_netbench._engine.asyncio_io.compiled_steady import count_steady

    with Server.from_spec(catalog.get(name)) as server:
        host, port = server.host, server.port
        request = f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: netbench\r\n\r\n"
        with socket.create_connection((host, port), timeout=10) as conn:
            _one_answer(conn, request.encode())  # the first: the Python path's, always
            answer = _one_answer(conn, request.encode())
    assert count_steady(answer) == 1, answer[:400]
