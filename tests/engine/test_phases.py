"""Each request's phases (connect, tls, wait, receive) on every loop, against servers whose
delays are set: wait is the time to the answer's first byte, receive the rest of it."""

from __future__ import annotations

import asyncio
import ssl
import statistics
import time
from collections.abc import Callable, Iterator

import pytest
from servers import ServerThread, StartHttp

from pytest_netbench import LoadResult, Server, ToolchainMissing, catalog, http_load, sse_load
from pytest_netbench._compare.metrics import check_metrics, metric_value
from pytest_netbench._model import LoadResult as Model

Check = Callable[[LoadResult], LoadResult]
HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
# Within 2 ms as the issue asks, of the delays the server actually kept: a busy 2-core
# machine (five of us share it) wakes its sleeps late by a few ms at times (it runs in a
# thread of the test's process), so each phase's median is held to the server's own
# median of what it did, which is never less than what it was set to.
SLACK_MS = 2.0


class TwoPartApp:
    """Answers each request's head ``head_s`` after it arrives, its body ``body_s`` later."""

    def __init__(self, head_s: float, body_s: float) -> None:
        self.head_s = head_s
        self.body_s = body_s
        self.connections = 0
        # What it actually did, in ms: request in to head out, head out to body out.
        self.heads_ms: list[float] = []
        self.bodies_ms: list[float] = []

    def kept(self) -> tuple[float, float]:
        """The medians of the head's and the body's delays as kept."""
        return statistics.median(self.heads_ms), statistics.median(self.bodies_ms)

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        while True:
            try:
                await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            arrived = time.monotonic_ns()
            await asyncio.sleep(self.head_s)
            head = time.monotonic_ns()
            writer.write(HEAD)
            await writer.drain()
            await asyncio.sleep(self.body_s)
            self.heads_ms.append((head - arrived) / 1e6)
            self.bodies_ms.append((time.monotonic_ns() - head) / 1e6)
            writer.write(b"hello")
            await writer.drain()


@pytest.fixture
def two_part() -> Iterator[Callable[..., ServerThread]]:
    started: list[ServerThread] = []

    def start(app: TwoPartApp, ssl_context: ssl.SSLContext | None = None) -> ServerThread:
        server = ServerThread(app, ssl_context=ssl_context).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _near(value: float, expected: float) -> bool:
    return abs(value - expected) <= SLACK_MS


def test_wait_is_the_time_to_first_byte_and_receive_the_rest(
    loop: str, two_part: Callable[..., ServerThread], consistent: Check
) -> None:
    app = TwoPartApp(0.030, 0.020)
    server = two_part(app)
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=40))
    assert (r.ok, r.errors_total) == (40, 0)
    wait, receive = r.phases.wait, r.phases.receive
    assert wait.count == receive.count == 40
    head_ms, body_ms = app.kept()
    assert head_ms >= 30.0 and body_ms >= 20.0
    assert _near(wait.p50_ms, head_ms), (wait, head_ms)
    assert _near(receive.p50_ms, body_ms), (receive, body_ms)
    # The parts add up to the latency, request by request (the medians to within a bucket).
    assert abs(wait.p50_ms + receive.p50_ms - r.p50_ms) <= 1.0
    # Two connections opened in the window, each for the request that waited for it.
    assert r.phases.connect.count == 2
    assert r.phases.tls.count == 0


def test_a_one_read_answer_has_no_receive_time(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, _ = http_server(delay_ms=5)
    r = consistent(http_load(server.url, loop=loop, connections=2, duration=0.5))
    assert r.ok > 0
    assert r.phases.wait.count == r.ok == r.phases.receive.count
    assert r.phases.receive.max_ms < 1.0
    assert _near(r.phases.wait.p50_ms, 5.0 + 0.5)
    assert r.phases.wait.p50_ms <= r.p50_ms + 0.01


def test_over_tls_one_handshake_per_connection(
    loop: str,
    two_part: Callable[..., ServerThread],
    tls_context: ssl.SSLContext,
    consistent: Check,
) -> None:
    app = TwoPartApp(0.005, 0.0)
    server = two_part(app, tls_context)
    r = consistent(http_load(server.url, loop=loop, connections=3, requests=30, verify_tls=False))
    assert (r.ok, r.errors_total) == (30, 0)
    assert r.phases.tls.count == r.phases.connect.count == app.connections == 3
    assert r.phases.tls.min_ms > 0
    # The request that opened its connection waits from the handshake's end, not before.
    assert r.phases.wait.max_ms < r.max_ms


def test_open_loop_says_which_requests_waited_for_a_connection(
    loop: str, two_part: Callable[..., ServerThread], consistent: Check
) -> None:
    app = TwoPartApp(0.040, 0.0)
    server = two_part(app)
    # 100 req/s at 40 ms each on at most 2 connections: most requests wait for one.
    r = consistent(
        http_load(server.url, loop=loop, rate=100, duration=0.6, connections=2, max_connections=2)
    )
    assert r.ok > 0
    assert r.phases.waited_for_connection > 0
    # Their wait for a connection is not in their phases: wait is the server's delay.
    assert _near(r.phases.wait.p50_ms, app.kept()[0]), (r.phases.wait, app.kept())


def test_phases_are_metrics_and_survive_the_json_form(
    two_part: Callable[..., ServerThread], consistent: Check
) -> None:
    server = two_part(TwoPartApp(0.010, 0.005))
    r = consistent(http_load(server.url, connections=1, requests=10))
    assert check_metrics(["phases.wait.p99_ms", "phases.receive.p50_ms"])
    assert metric_value(r, "phases.wait.p99_ms") == r.phases.wait.p99_ms
    back = Model.from_dict(r.to_dict())
    assert back.phases.wait == r.phases.wait
    assert back.phases.percentile("receive", 50) == pytest.approx(
        r.phases.percentile("receive", 50)
    )


def test_each_kind_of_a_mix_has_its_own_phases(
    loop: str, two_part: Callable[..., ServerThread], http_server: StartHttp, consistent: Check
) -> None:
    from pytest_netbench import Request

    mix = [Request("GET", "/a", name="a"), Request("GET", "/b", name="b")]
    app = TwoPartApp(0.030, 0.020)
    server = two_part(app)
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=20, mix=mix))
    assert r.ok == 20
    head_ms, body_ms = app.kept()
    for kind in ("a", "b"):
        phases = r.by_request[kind].phases
        assert phases.wait.count == r.by_request[kind].ok > 0
        assert _near(phases.wait.p50_ms, head_ms), (kind, phases.wait, head_ms)
        assert _near(phases.receive.p50_ms, body_ms), (kind, phases.receive, body_ms)
    assert r.phases.wait.count == 20  # the load's: its kinds' together
    # A fast server: the fused mix path records none per answer; each kind's are derived.
    fast, _ = http_server()
    r = consistent(http_load(fast.url, loop=loop, connections=2, duration=0.3, mix=mix))
    assert r.phases.wait.count == r.ok > 0
    assert sum(r.by_request[k].phases.receive.count for k in ("a", "b")) == r.ok


def test_each_request_that_opened_its_connection_has_its_connect_timed(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    # Open loop, a connection per request: every request opened its connection, on every
    # loop alike (trio opens a pooled connection ahead of the request it then takes).
    server, _ = http_server()
    r = consistent(http_load(server.url, loop=loop, rate=200, requests=100, keepalive=False))
    assert (r.ok, r.errors_total) == (100, 0)
    assert r.phases.connect.count == 100


def test_a_streams_wait_ends_at_its_first_byte_and_the_stream_is_received(
    loop: str, consistent: Check
) -> None:
    # The Go catalog server writes its head at once, then events from 30 ms on.

    try:
        spec = catalog.get("go")
    except ToolchainMissing as exc:
        pytest.skip(str(exc))
    with Server.from_spec(spec) as server:
        url = server.url.rstrip("/") + "/sse?first_ms=30&every_ms=10&events=5"
        r = consistent(sse_load(url, connections=2, requests=10, loop=loop))
    assert r.ok == 10 and r.stream is not None
    assert r.phases.wait.count == r.phases.receive.count == 10
    # The answer's first byte (its head) is its wait's end; the events are its receive.
    assert r.phases.wait.p50_ms < r.stream.first_event.p50_ms < r.phases.wait.p50_ms + 70
    assert r.phases.receive.p50_ms > r.stream.first_event.p50_ms - r.phases.wait.p50_ms
