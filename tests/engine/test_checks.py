"""Checks on responses (k6's ``check``) on every loop: a server that answers one request
in ten with a 200 whose body is an error page; a body check counts exactly those as its
failures, each a ``verify`` error, on the fused keep-alive path (whose cache of a read
already parsed must keep the verdict), the general path and connections opened per
request."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from servers import ServerThread

from pytest_netbench import LoadResult, Request, http_load

GOOD = b'{"ok": true, "id": 7}'
ERROR_PAGE = b"<html><body><h1>Error</h1>database unavailable</body></html>"


@dataclass
class ErrorPageApp:
    """Answers every request with 200; every ``every``-th one (counted across the
    connections) carries an HTML error page instead of the JSON. Its ok responses are the
    same bytes every time (no Date header), so the fused path's cache of a read the parser
    has already found to be one steady 200 answers most of them."""

    every: int = 10
    requests: int = 0
    error_pages: int = 0

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            self.requests += 1
            close = b"connection: close" in head.lower()
            if self.requests % self.every == 0:
                self.error_pages += 1
                body, kind = ERROR_PAGE, b"text/html"
            else:
                body, kind = GOOD, b"application/json"
            extra = b"Connection: close\r\n" if close else b""
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: "
                + kind
                + b"\r\n"
                + extra
                + b"Content-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            await writer.drain()
            if close:
                writer.close()
                return


@pytest.fixture
def error_pages() -> Iterator[Callable[[], tuple[ServerThread, ErrorPageApp]]]:
    started: list[ServerThread] = []

    def start() -> tuple[ServerThread, ErrorPageApp]:
        app = ErrorPageApp()
        server = ServerThread(app).start()
        started.append(server)
        return server, app

    yield start
    for server in started:
        server.stop()


CHECKS = ["no error page: body !contains Error", "status 2xx", "json ok == true"]


def _assert_error_pages_failed(result: LoadResult, failed: int) -> None:
    answered = result.ok + result.errors_total
    assert result.errors == {**dict.fromkeys(result.errors, 0), "verify": failed}
    page = result.checks["no error page"]
    assert (page.passes, page.failures) == (answered - failed, failed)
    assert result.checks["status 2xx"].failures == 0
    assert result.checks["status 2xx"].passes == answered
    # The error page is no JSON either: the same responses fail the JSON check.
    assert result.checks["json ok == true"].failures == failed
    assert "check 'no error page' failed" in result.error_samples["verify"]


@pytest.mark.parametrize("connections", [1, 4])
def test_a_request_count_counts_each_error_page(
    error_pages: Callable[[], tuple[ServerThread, ErrorPageApp]],
    loop: str,
    connections: int,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    server, app = error_pages()
    r = consistent(
        http_load(server.url + "/", requests=400, connections=connections, checks=CHECKS, loop=loop)
    )
    assert app.requests == 400 and app.error_pages == 40
    _assert_error_pages_failed(r, 40)
    assert r.ok == 360


def test_the_fused_path_and_its_cache_keep_the_verdict(
    error_pages: Callable[[], tuple[ServerThread, ErrorPageApp]],
    loop: str,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    """A duration run on one keep-alive connection: the fused path's steady state (asyncio,
    uvloop) with its cache of identical reads; the answers come in order, so the measured
    ones hold one error page in ten, exactly."""
    server, _ = error_pages()
    r = consistent(
        http_load(server.url + "/", duration=1.0, connections=1, checks=CHECKS, loop=loop)
    )
    answered = r.ok + r.errors_total
    assert answered > 50
    _assert_error_pages_failed(r, answered // 10)


def test_connections_opened_per_request(
    error_pages: Callable[[], tuple[ServerThread, ErrorPageApp]],
    loop: str,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    """keepalive=False: asyncio's bare sockets answer a first read seen before without a
    framer; with checks, the verdict is part of what is remembered."""
    server, app = error_pages()
    r = consistent(
        http_load(
            server.url + "/", requests=200, connections=2, keepalive=False, checks=CHECKS, loop=loop
        )
    )
    assert app.error_pages == 20
    _assert_error_pages_failed(r, 20)


def test_a_mix_checks_each_kind_with_its_own(
    error_pages: Callable[[], tuple[ServerThread, ErrorPageApp]],
    loop: str,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    """The load's checks apply to every kind; a kind's own only to it. The server's count
    runs across both kinds, so which kind gets an error page follows the cycle: on one
    connection, the 10th, 20th, ... requests are of the kind sent at even places."""
    server, app = error_pages()
    mix = [
        Request("GET", "/a", name="a", checks=["body contains ok"]),
        Request("GET", "/b", name="b", checks=["header Content-Type contains json"]),
    ]
    r = consistent(
        http_load(
            server.url, mix=mix, requests=200, connections=1, checks=["status 200"], loop=loop
        )
    )
    assert app.error_pages == 20
    assert r.checks["status 200"].passes == 200
    # Requests 10, 20, ... are all the second kind's (b): a's check never fails.
    assert (r.checks["body contains ok"].passes, r.checks["body contains ok"].failures) == (100, 0)
    header = r.checks["header Content-Type contains json"]
    assert (header.passes, header.failures) == (80, 20)
    assert r.by_request["b"].errors["verify"] == 20 and r.by_request["a"].errors_total == 0
    assert r.errors["verify"] == 20


def test_checks_in_worker_processes(
    error_pages: Callable[[], tuple[ServerThread, ErrorPageApp]],
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    """Each worker process builds the checks from the spec it was sent; their failures
    add up across the shares."""
    server, app = error_pages()
    r = consistent(
        http_load(server.url + "/", requests=400, connections=4, workers=2, checks=CHECKS)
    )
    assert app.error_pages == 40
    _assert_error_pages_failed(r, 40)
