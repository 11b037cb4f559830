"""Each request's phases (connect, tls, wait, receive) on every loop, against servers whose
delays are set: wait is the time to the answer's first byte, receive the rest of it; a
WebSocket load's are its opening handshakes'."""

from __future__ import annotations

import asyncio
import re
import ssl
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from servers import ServerThread, StartHttp
from ws_servers import WsApp, WsOptions

from pytest_netbench import (
    LoadResult,
    Server,
    ToolchainMissing,
    catalog,
    http_load,
    sse_load,
    ws_load,
)
from pytest_netbench._compare.metrics import check_metrics, metric_value
from pytest_netbench._model import LoadResult as Model
from pytest_netbench._report.phases import phase_lines

Check = Callable[[LoadResult], LoadResult]
HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
# Within 2 ms as the issue asks, of the delays the server actually kept: a busy 2-core
# machine (five of us share it) wakes its sleeps late by a few ms at times (it runs in a
# thread of the test's process), so each phase's median is held to the server's own
# median of what it did, which is never less than what it was set to.
SLACK_MS = 2.0
WS_DELAY_SERVER = Path(__file__).parent / "ws_delay_server.py"
INTAKE_MS = 15.0


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


def test_a_closed_loop_without_keep_alive_times_every_connect_and_wait(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    # Closed loop, a connection per request: on asyncio's bare sockets each slot's
    # connection is renewed in place and writes its request as its connect returns; every
    # request still opened its connection, was timed from it, and waited after it.
    server, _ = http_server(delay_ms=2)
    r = consistent(http_load(server.url, loop=loop, connections=3, requests=60, keepalive=False))
    assert (r.ok, r.errors_total) == (60, 0)
    assert r.generator.connections_opened == 60
    assert r.generator.connections_peak <= 3
    assert r.phases.connect.count == r.phases.wait.count == r.phases.receive.count == 60
    assert r.phases.wait.min_ms >= 1.9  # the server's delay comes after the connect
    assert r.phases.wait.max_ms <= r.max_ms


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


def test_a_websocket_handshakes_phases_are_its_upgrade_answers(
    loop: str, consistent: Check
) -> None:
    # The 101's status line 30 ms after the upgrade request, the rest of its head 20 ms
    # later, from a server in a process of its own (in a thread of this one, the load
    # kept it from writing on time by 2-5 ms, the GIL being this process's). One message
    # a connection, so that no connection's round trips keep the client from reading
    # another's handshake. Three loads, the median of their medians: a load's handshakes
    # come at once, so a hiccup of this busy machine (4 ms seen) is in all of them.
    command = [sys.executable, str(WS_DELAY_SERVER), "0.030", "0.020"]
    with Server(command, port_pattern=r"NETBENCH_LISTENING port=(\d+)", name="ws-delay") as server:
        url = f"ws://127.0.0.1:{server.port}/echo"
        loads = [consistent(ws_load(url, loop=loop, connections=3, requests=3)) for _ in range(3)]
        kept = _kept(server, 9)
    for r in loads:
        assert (r.ok, r.errors_total) == (3, 0)
        # One of each per connection (its handshake), none per message.
        assert r.phases.connect.count == r.phases.wait.count == r.phases.receive.count == 3
        assert r.phases.tls.count == 0
        # Each message waited for its connection's handshake: its latency holds it.
        assert r.latency.max_ms >= r.phases.wait.min_ms + r.phases.receive.min_ms
    assert min(head for head, _ in kept) >= 30.0 and min(rest for _, rest in kept) >= 20.0
    # Each load's medians against those of the delays the server kept in it (its three
    # KEPT lines), and the median of that over the loads.
    off_wait, off_receive = [], []
    for n, r in enumerate(loads):
        heads, rests = zip(*kept[3 * n : 3 * n + 3], strict=True)
        off_wait.append(r.phases.wait.p50_ms - statistics.median(heads))
        off_receive.append(r.phases.receive.p50_ms - statistics.median(rests))
    # The rest of the 101 is timed by the server between two writes of its own: receive
    # matches it. wait also holds the server's intake of a new connection before it
    # reads the request and starts its 30 ms (on this busy machine, 3 connections at
    # once: up to 9 ms seen), so it is at least the delay kept and at most INTAKE_MS more.
    assert abs(statistics.median(off_receive)) <= SLACK_MS, (off_receive, kept)
    assert -SLACK_MS <= statistics.median(off_wait) <= INTAKE_MS, (off_wait, kept)
    r = loads[-1]
    assert metric_value(r, "phases.wait.p50_ms") == r.phases.wait.p50_ms
    assert Model.from_dict(r.to_dict()).phases.receive == r.phases.receive


def _kept(server: Server, count: int) -> list[tuple[float, float]]:
    """The delays the server kept, from its KEPT lines (waiting a little for them)."""
    deadline = time.monotonic() + 5.0
    while True:
        lines = re.findall(r"KEPT head=([0-9.]+) rest=([0-9.]+)", server.log_tail(lines=100))
        if len(lines) >= count or time.monotonic() > deadline:
            return [(float(head), float(rest)) for head, rest in lines]
        time.sleep(0.02)


def test_a_websocket_handshake_in_one_read_over_tls(
    loop: str, tls_context: ssl.SSLContext, consistent: Check
) -> None:
    app = WsApp(WsOptions())
    with ServerThread(app, ssl_context=tls_context) as server:
        url = f"wss://127.0.0.1:{server.port}/secure"
        r = consistent(ws_load(url, loop=loop, connections=2, requests=20, verify_tls=False))
    assert (r.ok, r.errors_total) == (20, 0)
    phases = r.phases
    assert phases.connect.count == phases.tls.count == phases.wait.count == 2
    assert phases.tls.min_ms > 0
    assert phases.receive.max_ms < 1.0  # the 101 came whole in one read
    # The text report says what they are.
    assert "  wait: upgrade request written to the 101's first byte" in phase_lines(r)


def test_a_refused_websocket_handshake_has_no_wait(loop: str) -> None:
    app = WsApp(WsOptions(refuse=403))
    with ServerThread(app) as server:
        r = ws_load(f"ws://127.0.0.1:{server.port}/", loop=loop, connections=1, requests=5)
    assert r.ok == 0 and r.errors["status"] == 5
    assert r.phases.wait.count == r.phases.receive.count == 0
