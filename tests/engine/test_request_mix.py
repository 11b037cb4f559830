"""Request mixes on a real server: each kind sent in its turn or by weight, its bytes as
rendered, its figures counted apart and adding up to the load's."""

from __future__ import annotations

import asyncio
import math
import socket
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from servers import ServerThread, StartHttp

from pytest_netbench import LoadResult, http_load
from pytest_netbench._engine.asyncio_io.engine import ClosedRun
from pytest_netbench._engine.asyncio_io.fused_http import FusedMixConnection
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._input.spec import http_spec
from pytest_netbench._model import Request

MIX_LOOPS = ("uvloop", "asyncio")


@dataclass
class RoutedApp:
    """Answers by path: ``/slow`` after 20 ms, ``/missing`` with 404, ``/bye`` and then
    closes the connection; everything else at once. Keeps every request it read."""

    requests: list[tuple[bytes, dict[bytes, bytes], bytes]] = field(default_factory=list)

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return
            lines = head[:-4].split(b"\r\n")
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get(b"content-length", b"0")))
            self.requests.append((lines[0], headers, body))
            path = lines[0].split(b" ")[1]
            status, close = b"200 OK", False
            if path == b"/slow":
                await asyncio.sleep(0.02)
            elif path == b"/missing":
                status = b"404 Not Found"
            elif path == b"/bye":
                close = True
            extra = b"Connection: close\r\n" if close else b""
            writer.write(b"HTTP/1.1 " + status + b"\r\n" + extra + b"Content-Length: 2\r\n\r\nok")
            await writer.drain()
            if close:
                return


@pytest.fixture
def routed() -> Iterator[tuple[ServerThread, RoutedApp]]:
    app = RoutedApp()
    with ServerThread(app) as server:
        yield server, app


def paths(app: RoutedApp) -> Counter[bytes]:
    return Counter(line.split(b" ")[1] for line, _, _ in app.requests)


def assert_kinds_add_up(result: LoadResult) -> None:
    """Each kind keeps the load's invariant, and the kinds sum to the load."""
    kinds = list(result.by_request.values())
    for kind in kinds:
        assert kind.sent == kind.ok + kind.errors_total + kind.in_flight, kind
        assert kind.latency.count == kind.ok
    assert sum(k.sent for k in kinds) == result.sent
    assert sum(k.ok for k in kinds) == result.ok
    assert sum(k.in_flight for k in kinds) == result.in_flight
    for error in result.errors:
        assert sum(k.errors.get(error, 0) for k in kinds) == result.errors[error]
    merged: Counter[int] = Counter()
    for kind in kinds:
        merged.update(kind.status_codes)
    assert merged == Counter(result.status_codes)


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_cycle_sends_each_kind_in_turn(
    routed: tuple[ServerThread, RoutedApp], loop: str, consistent: Callable[..., LoadResult]
) -> None:
    server, app = routed
    mix = [Request("GET", "/a", name="a"), Request("GET", "/b?x=1"), Request("GET", "/c")]
    result = consistent(http_load(server.url, mix=mix, requests=300, connections=3, loop=loop))

    assert list(result.by_request) == ["a", "GET /b?x=1", "GET /c"]
    assert [k.sent for k in result.by_request.values()] == [100, 100, 100]
    assert [k.ok for k in result.by_request.values()] == [100, 100, 100]
    assert paths(app) == {b"/a": 100, b"/b?x=1": 100, b"/c": 100}
    assert_kinds_add_up(result)


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_weighted_shares_hold_exactly_across_workers(
    routed: tuple[ServerThread, RoutedApp], loop: str, consistent: Callable[..., LoadResult]
) -> None:
    server, app = routed
    mix = [Request("GET", "/a", weight=3, name="a"), Request("GET", "/b", name="b")]
    result = consistent(
        http_load(server.url, mix=mix, mix_order="weighted", requests=400, workers=2, loop=loop)
    )
    # Each worker sends 200: 50 periods of a, a, a, b in some interleaving.
    assert (result.by_request["a"].sent, result.by_request["b"].sent) == (300, 100)
    assert paths(app) == {b"/a": 300, b"/b": 100}
    assert_kinds_add_up(result)


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_each_kind_has_its_own_latency_and_errors(
    routed: tuple[ServerThread, RoutedApp], loop: str, consistent: Callable[..., LoadResult]
) -> None:
    server, _ = routed
    mix = [
        Request("GET", "/fast", name="fast"),
        Request("GET", "/slow", name="slow"),
        Request("GET", "/missing", name="missing"),
    ]
    result = consistent(http_load(server.url, mix=mix, requests=60, connections=2, loop=loop))

    fast, slow, missing = (result.by_request[n] for n in ("fast", "slow", "missing"))
    assert (fast.ok, slow.ok, missing.ok) == (20, 20, 0)
    assert missing.errors["status"] == 20 and missing.status_codes == {404: 20}
    assert result.errors["status"] == 20
    assert slow.p50_ms > 10 * fast.p50_ms  # 20 ms of sleep against an immediate answer
    assert math.isnan(missing.p50_ms)
    assert slow.percentile(100) >= slow.p50_ms
    assert_kinds_add_up(result)


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_methods_headers_and_bodies_go_out_as_given(
    routed: tuple[ServerThread, RoutedApp], loop: str, consistent: Callable[..., LoadResult]
) -> None:
    server, app = routed
    mix = [
        Request("POST", "/items", headers=(("Content-Type", "application/json"),), body='{"a":1}'),
        Request("put", "/items/1", headers=(("X-Load", "own"),), body=b"xyz", name="update"),
    ]
    result = consistent(
        http_load(
            server.url, mix=mix, requests=4, connections=1, headers={"X-Load": "shared"}, loop=loop
        )
    )
    assert list(result.by_request) == ["POST /items", "update"]
    first, second = app.requests[:2]
    assert first[0] == b"POST /items HTTP/1.1"
    assert first[1][b"content-type"] == b"application/json"
    assert first[1][b"x-load"] == b"shared"
    assert first[2] == b'{"a":1}'
    assert second[0] == b"PUT /items/1 HTTP/1.1"
    assert second[1][b"x-load"] == b"own"  # the kind's header replaces the load's
    assert second[2] == b"xyz"
    assert result.by_request["update"].method == "PUT"
    assert result.bytes_written > 0


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_a_duration_run_counts_what_is_in_flight_by_kind(
    routed: tuple[ServerThread, RoutedApp], loop: str, consistent: Callable[..., LoadResult]
) -> None:
    server, _ = routed
    mix = [Request("GET", "/slow", name="slow"), Request("GET", "/fast", name="fast")]
    result = consistent(
        http_load(server.url, mix=mix, duration=0.5, connections=4, pipeline=2, loop=loop)
    )
    assert result.in_flight > 0  # 20 ms answers: the deadline always finds some out
    assert result.by_request["slow"].ok > 0 and result.by_request["fast"].ok > 0
    assert_kinds_add_up(result)


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_kinds_closed_by_the_server_and_new_connections_keep_counting(
    routed: tuple[ServerThread, RoutedApp], loop: str, consistent: Callable[..., LoadResult]
) -> None:
    server, app = routed
    mix = [Request("GET", "/a", name="a"), Request("GET", "/bye", name="bye")]
    result = consistent(http_load(server.url, mix=mix, requests=40, connections=2, loop=loop))
    assert (result.by_request["a"].ok, result.by_request["bye"].ok) == (20, 20)
    assert result.generator.connections_opened > 2  # every /bye closed its connection
    assert paths(app) == {b"/a": 20, b"/bye": 20}
    assert_kinds_add_up(result)


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_resets_and_keepalive_off_are_counted_by_kind(
    http_server: StartHttp, loop: str, consistent: Callable[..., LoadResult]
) -> None:
    server, app = http_server(reset_every=3)
    mix = [Request("GET", "/one", name="one"), Request("GET", "/two", name="two")]
    result = consistent(
        http_load(server.url, mix=mix, requests=60, connections=2, keepalive=False, loop=loop)
    )
    assert result.errors["reset"] == 20  # every third connection, one request each
    assert result.ok == 40
    assert sum(k.errors["reset"] for k in result.by_request.values()) == 20
    assert all(line.endswith(b"HTTP/1.1") for line in app.seen.request_lines)
    assert_kinds_add_up(result)


def serve_then_close(listener: socket.socket, connections: int) -> None:
    """Answer one request on each of ``connections`` connections, then stop listening."""
    with listener:
        for _ in range(connections):
            conn, _ = listener.accept()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(4096)
                conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_failed_connects_are_counted_under_a_kind(
    loop: str, consistent: Callable[..., LoadResult]
) -> None:
    # The server stops listening after 20 connections: the connects after that fail
    # before any kind was written on them, and each still counts under one kind.
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = threading.Thread(target=serve_then_close, args=(listener, 20), daemon=True)
    server.start()
    mix = [Request("GET", "/a", name="a"), Request("GET", "/b", name="b")]
    result = consistent(
        http_load(
            f"http://127.0.0.1:{port}/",
            mix=mix,
            duration=0.5,
            connections=2,
            keepalive=False,
            loop=loop,
        )
    )
    server.join(5)
    assert result.ok == 20
    assert result.errors["connect"] > 0
    assert all(k.errors["connect"] > 0 for k in result.by_request.values())
    assert_kinds_add_up(result)


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_open_loop_mixes_take_their_turns(
    routed: tuple[ServerThread, RoutedApp], loop: str, consistent: Callable[..., LoadResult]
) -> None:
    server, app = routed
    mix = [Request("GET", "/a", name="a"), Request("GET", "/b", name="b")]
    result = consistent(http_load(server.url, mix=mix, rate=400, requests=200, loop=loop))
    assert result.mode == "open"
    assert (result.by_request["a"].sent, result.by_request["b"].sent) == (100, 100)
    assert result.uncorrected is not None and result.uncorrected.count == result.ok
    assert paths(app) == {b"/a": 100, b"/b": 100}
    assert_kinds_add_up(result)


def test_head_only_mixes_are_framed_without_bodies(
    http_server: StartHttp, consistent: Callable[..., LoadResult]
) -> None:
    server, app = http_server()
    mix = [Request("HEAD", "/x", name="x"), Request("HEAD", "/y", name="y")]
    result = consistent(http_load(server.url, mix=mix, requests=20, connections=2))
    assert (result.by_request["x"].ok, result.by_request["y"].ok) == (10, 10)
    assert app.seen.requests == 20


def test_a_single_request_load_has_no_kinds(
    http_server: StartHttp, consistent: Callable[..., LoadResult]
) -> None:
    server, _ = http_server()
    result = consistent(http_load(server.url, requests=10, connections=1))
    assert result.by_request == {}
    assert result.to_dict()["by_request"] == {}


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_a_keep_alive_duration_mix_takes_the_fused_path_and_counts_alike(
    routed: tuple[ServerThread, RoutedApp], loop: str, consistent: Callable[..., LoadResult]
) -> None:
    server, app = routed
    mix = [
        Request("GET", "/a", name="a", weight=2),
        Request("POST", "/b", body=b"x" * 100, name="b"),
    ]
    spec = http_spec(server.url, mix=mix, mix_order="weighted", duration=0.5, connections=4)
    loop_for_check = asyncio.new_event_loop()
    try:
        share = split_load(spec)[0]
        run = ClosedRun(loop_for_check, spec, build_exchange(spec), share, 0, None)
    finally:
        loop_for_check.close()
    assert run.connection_class is FusedMixConnection
    result = consistent(
        http_load(server.url, mix=mix, mix_order="weighted", duration=0.5, connections=4, loop=loop)
    )
    a, b = result.by_request["a"], result.by_request["b"]
    assert a.ok > 0 and b.ok > 0
    assert abs(a.sent - 2 * b.sent) <= 2 * 4  # the order runs on, a connection's worth apart
    seen = paths(app)
    for kind, path in ((a, b"/a"), (b, b"/b")):
        assert kind.ok <= seen[path] <= kind.sent  # what it sent reached the server
    assert result.bytes_written == sum(
        len(r) * k.sent for r, k in zip(build_exchange(spec).mix_requests, (a, b), strict=True)
    )
    assert_kinds_add_up(result)


@pytest.mark.parametrize("loop", MIX_LOOPS)
def test_a_fused_mix_hands_split_responses_to_the_framer(
    http_server: StartHttp, loop: str, consistent: Callable[..., LoadResult]
) -> None:
    # Every response arrives in two reads: the first one hands the connection over to the
    # sans-IO framer, which must go on recording each response under its kind.
    server, _ = http_server(split_at=10)
    mix = [Request("GET", "/a", name="a"), Request("GET", "/b", name="b")]
    result = consistent(http_load(server.url, mix=mix, duration=0.4, connections=2, loop=loop))
    assert result.errors_total == 0
    assert result.by_request["a"].ok > 0 and result.by_request["b"].ok > 0
    assert abs(result.by_request["a"].sent - result.by_request["b"].sent) <= 2
    assert_kinds_add_up(result)
