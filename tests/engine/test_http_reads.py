"""Responses that arrive in pieces, and odd ones, on every loop.

On uvloop and asyncio a closed-loop keep-alive GET runs on the fused path (the connection
is the parser's callback object) until a read ends inside a response; from then on the
sans-IO framer has the stream. These tests make reads end at awkward places and check
that every response is counted exactly once and every bad one is an error of the right
kind, whichever path ends up handling it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from servers import ServerThread, StartHttp, render_response

from pytest_netbench import LoadResult, SpecError, feeders, http_load, http_spec
from pytest_netbench._engine.asyncio_io.connection import Connection, VariedConnection
from pytest_netbench._engine.asyncio_io.engine import ClosedRun, OpenRun
from pytest_netbench._engine.asyncio_io.fused_http import FusedHttpConnection, FusedOpenConnection
from pytest_netbench._engine.asyncio_io.raw_connection import RawHttpConnection
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._proto.http import ResponseFramer

Check = Callable[[LoadResult], LoadResult]
HEAD_LENGTH = len(render_response("length", 200, False, False)[0]) - len(b"Hello, World!")

Part = bytes | float  # bytes to write, or seconds to wait before the next part


class ScriptedApp:
    """Answers every request on a connection with the same script, then maybe closes."""

    def __init__(self, script: Sequence[Part], *, close_after: bool = False) -> None:
        self.script = script
        self.close_after = close_after

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            for part in self.script:
                if isinstance(part, float):
                    await writer.drain()
                    await asyncio.sleep(part)
                else:
                    writer.write(part)
            await writer.drain()
            if self.close_after:
                writer.close()
                return


@pytest.fixture
def scripted() -> Iterator[Callable[..., ServerThread]]:
    started: list[ServerThread] = []

    def start(script: Sequence[Part], *, close_after: bool = False) -> ServerThread:
        server = ServerThread(ScriptedApp(script, close_after=close_after)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.mark.parametrize("framing", ["length", "chunked"])
@pytest.mark.parametrize(
    "split_at",
    [5, HEAD_LENGTH - 2, HEAD_LENGTH + 3],
    ids=["status-line", "head-end", "body"],
)
def test_responses_split_across_reads_are_counted_once(
    loop: str, http_server: StartHttp, consistent: Check, framing: str, split_at: int
) -> None:
    server, app = http_server(framing=framing, split_at=split_at)
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=30))
    assert (r.sent, r.ok, r.errors_total) == (30, 30, 0)
    assert dict(r.status_codes) == {200: 30}
    assert r.generator.connections_opened == app.seen.connections == 2
    assert r.bytes_read == 30 * len(render_response(framing, 200, False, False)[0])


def test_interim_1xx_responses_are_skipped(
    loop: str, scripted: Callable[..., ServerThread], consistent: Check
) -> None:
    server = scripted(
        [b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]
    )
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=20))
    assert (r.ok, r.errors_total) == (20, 0)
    assert dict(r.status_codes) == {200: 20}


def test_a_switch_of_protocols_is_a_protocol_error(
    loop: str, scripted: Callable[..., ServerThread], consistent: Check
) -> None:
    server = scripted([b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"])
    r = consistent(http_load(server.url, loop=loop, connections=1, requests=3))
    assert r.ok == 0
    assert r.errors["protocol"] == 3
    assert "101" in r.error_samples["protocol"]


@pytest.mark.parametrize("split", [False, True], ids=["one-read", "split-read"])
def test_a_body_cut_short_by_the_close_is_a_reset(
    loop: str, scripted: Callable[..., ServerThread], consistent: Check, split: bool
) -> None:
    head = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 100\r\n\r\n"
    script: list[Part] = [head, 0.002, b"x" * 40] if split else [head + b"x" * 40]
    server = scripted(script, close_after=True)
    r = consistent(http_load(server.url, loop=loop, connections=1, requests=4))
    assert (r.ok, r.errors["reset"]) == (0, 4)


@pytest.mark.parametrize("split", [False, True], ids=["one-read", "split-read"])
def test_a_body_delimited_by_the_close_is_a_response(
    loop: str, scripted: Callable[..., ServerThread], consistent: Check, split: bool
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
    script: list[Part] = [head, 0.002, b"x" * 40] if split else [head + b"x" * 40]
    server = scripted(script, close_after=True)
    r = consistent(http_load(server.url, loop=loop, connections=1, requests=4))
    assert (r.ok, r.errors_total) == (4, 0)
    assert r.bytes_read == 4 * (len(head) + 40)


def test_a_header_block_that_never_ends_is_a_protocol_error(
    loop: str, scripted: Callable[..., ServerThread], consistent: Check
) -> None:
    line = b"X-Filler: " + b"f" * 1014 + b"\r\n"
    script: list[Part] = [b"HTTP/1.1 200 OK\r\n"]
    for _ in range(80):  # 80 KiB of header lines, in reads the client sees one by one
        script += [line * 8, 0.0005]
    server = scripted(script, close_after=True)
    r = consistent(http_load(server.url, loop=loop, connections=1, requests=1, timeout=10))
    assert r.errors["protocol"] == 1
    assert "64 KiB" in r.error_samples["protocol"]


class PairedApp:
    """Reads pipelined requests two at a time and answers both in one write, a 200 and a
    404, as a server that flushes once it has no request left to read does (Go's
    net/http): every read the client makes then holds the same two responses."""

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        missing = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
        while True:
            try:
                await reader.readuntil(b"\r\n\r\n")
                await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            writer.write(ok + missing)
            await writer.drain()


def test_identical_reads_of_two_responses_count_both(loop: str, consistent: Check) -> None:
    # The fused path answers a read byte for byte the last one without the parser only
    # if that read held a single 200: here, taking the pair for one 200 would write one
    # request where two were answered, and the server would wait for the second.
    with ServerThread(PairedApp()) as server:
        r = consistent(
            http_load(server.url, loop=loop, connections=2, pipeline=2, duration=0.6, timeout=0.2)
        )
    codes = r.status_codes
    assert codes[200] >= 3  # enough reads for the fused path to know the pair's bytes
    assert abs(codes[200] - codes[404]) <= 2  # a pair cut by the stop, per connection
    assert r.errors_total == r.errors["status"] == codes[404]


class EveryAnswerDiffers:
    """Answers every request with bytes unlike any before: an id in a header and in the
    body, and a body whose length cycles through 0..199 bytes of padding (as
    benchmarks/servers/hello_go's vary mode). The first ``varying`` answers of a
    connection differ, the rest repeat one answer."""

    def __init__(self, varying: int) -> None:
        self.varying = varying
        self.answered = 0

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        on_connection = 0
        while True:
            try:
                await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            self.answered += 1
            on_connection += 1
            n = min(on_connection, self.varying)
            body = b'{"id":%d,"pad":"%s"}' % (n, b"x" * (n % 200))
            writer.write(
                b"HTTP/1.1 200 OK\r\nX-Request-Id: %d\r\nContent-Length: %d\r\n\r\n%s"
                % (n, len(body), body)
            )
            await writer.drain()


@pytest.mark.parametrize("varying", [10**9, 150], ids=["always", "then-the-same"])
def test_answers_that_never_repeat_are_each_counted(
    loop: str, consistent: Check, varying: int
) -> None:
    # On the fused path a connection looks for a read that repeats the one before, and
    # gives up after a run of reads that differ (more than 64 here); every answer is
    # still parsed and counted, those that start to repeat after it gave up too.
    app = EveryAnswerDiffers(varying)
    with ServerThread(app) as server:
        r = consistent(http_load(server.url, loop=loop, connections=2, duration=0.8))
    assert r.errors_total == 0
    assert r.status_codes == {200: r.ok}
    assert 0 < r.ok <= app.answered
    assert r.ok > 2 * 64  # past the look-out's budget on at least one connection


OK_CLOSE = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"
OK_OPEN = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


class GoesOnAfterClose:
    """Answers each request in a write of its own, the ``close_at``-th with ``Connection:
    close`` (or ``OK_CLOSE`` to every one), and then goes on answering what was pipelined
    behind it, as a broken server would."""

    def __init__(self, close_at: int = 0) -> None:
        self.close_at = close_at

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        answered = 0
        while True:
            try:
                await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            answered += 1
            closing = not self.close_at or answered == self.close_at
            writer.write(OK_CLOSE if closing else OK_OPEN)
            await writer.drain()
            await asyncio.sleep(0.002)  # each answer a read of its own


def test_a_response_after_connection_close_is_an_error_on_a_known_stream(
    loop: str, consistent: Check
) -> None:
    # Nine identical 200s make the fused path know that read; the tenth says close, and
    # the parser refuses the pipelined answer behind it, even one byte for byte known.
    with ServerThread(GoesOnAfterClose(close_at=10)) as server:
        r = consistent(
            http_load(server.url, loop=loop, connections=1, pipeline=2, duration=0.5, timeout=1)
        )
    opened = r.generator.connections_opened
    assert opened >= 2  # a connection ended at its close (counts, not a speed)
    assert r.ok <= 10 * opened  # no connection went on past its close
    # The request pipelined behind the close fails: asyncio reads the answer the server
    # should not have sent (protocol), trio closes at once (reset).
    assert r.errors["protocol"] + r.errors["reset"] >= opened - 1


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"keepalive": False, "pipeline": 2}, "pipeline=2 needs keep-alive"),
        ({"requests_per_connection": 1, "pipeline": 2}, "lower pipeline to at most 1"),
        ({"requests_per_connection": 2, "pipeline": 4}, "lower pipeline to at most 2"),
    ],
)
def test_pipelining_more_than_a_connection_carries_is_refused(
    options: dict[str, Any], says: str
) -> None:
    # The asyncio engine used to send them all (trio capped them): a connection without
    # keep-alive carried two requests, where a bare socket's first read is taken for all
    # it will read.
    with pytest.raises(SpecError, match=says):
        http_spec("http://127.0.0.1:9/", **options)
    http_spec("http://127.0.0.1:9/", keepalive=False, requests_per_connection=4, pipeline=4)


@pytest.mark.parametrize(
    ("script", "framed"),
    [
        ([OK_CLOSE], False),  # known from the second connection on: no framer after that
        ([OK_OPEN], False),  # keep-alive said, but the client closes after its one request
        ([b"HTTP/1.1 100 Continue\r\n\r\n" + OK_CLOSE], True),  # two messages: framed
        ([b"HTTP/1.1 100 Continue\r\n\r\n", 0.002, OK_CLOSE], True),  # a 1xx is no answer
        ([OK_OPEN + OK_OPEN], True),  # an answer too many, in the same read
        ([OK_CLOSE[:20], 0.002, OK_CLOSE[20:]], True),  # never one read
    ],
    ids=["close", "keep-alive-said", "interim", "interim-alone", "one-too-many", "split"],
)
def test_a_connection_per_request_needs_a_framer_only_for_new_bytes(
    loop: str,
    scripted: Callable[..., ServerThread],
    consistent: Check,
    monkeypatch: pytest.MonkeyPatch,
    script: list[Part],
    framed: bool,
) -> None:
    # On bare sockets a connection's first read, once the run has found those bytes to be
    # one whole final response, is delivered as that response without a framer; any
    # other read is the framer's, and the counts are the same either way.
    made = []
    framer_init = ResponseFramer.__init__

    def counted(framer: ResponseFramer, *args: Any) -> None:
        made.append(1)
        framer_init(framer, *args)

    monkeypatch.setattr(ResponseFramer, "__init__", counted)
    server = scripted(script, close_after=True)
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=40, keepalive=False))
    assert (r.ok, r.errors_total, dict(r.status_codes)) == (40, 0, {200: 40})
    assert r.generator.connections_opened == 40
    if loop != "trio":  # trio has no bare-socket path: a framer per connection
        assert (len(made) == 40) if framed else (len(made) <= 3), len(made)


def _run_kind(url: str = "http://127.0.0.1:9/", **options: object) -> type[Connection]:
    spec = http_spec(url, **options)  # type: ignore[arg-type]
    share = split_load(spec)[0]
    event_loop = asyncio.new_event_loop()
    try:
        args = (event_loop, spec, build_exchange(spec), share, 0, None)
        run = ClosedRun(*args) if spec.rate is None else OpenRun(*args)
        run.stop()
        return run.connection_class
    finally:
        event_loop.close()


def test_only_keep_alive_without_head_takes_the_fused_path() -> None:
    assert _run_kind() is FusedHttpConnection
    assert _run_kind(pipeline=4) is FusedHttpConnection
    assert _run_kind(method="POST", body=b"x") is FusedHttpConnection
    assert _run_kind(method="HEAD") is Connection
    assert _run_kind(keepalive=False) is RawHttpConnection
    assert _run_kind(requests_per_connection=10) is RawHttpConnection
    assert _run_kind(rate=100.0) is FusedOpenConnection
    assert _run_kind(rate=100.0, keepalive=False) is RawHttpConnection
    assert _run_kind(rate=100.0, method="HEAD") is Connection


def test_only_plain_tcp_to_an_ip_address_opens_raw_sockets() -> None:
    # A connection per request (or a few) on a bare socket: see raw_connection.
    assert _run_kind("http://[::1]:9/", keepalive=False) is RawHttpConnection
    assert _run_kind("http://localhost:9/", keepalive=False) is Connection  # may be 2 addresses
    assert _run_kind("https://127.0.0.1:9/", keepalive=False) is Connection
    fed = {"n": feeders.count()}
    assert _run_kind("http://127.0.0.1:9/${n}", keepalive=False, feeders=fed) is VariedConnection
