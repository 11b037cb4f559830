"""HTTP/2 loads through the engine (``protocol="h2"``, ``streams=``), over real sockets.

Against Go's net/http over h2c and TLS (``catalog.GO_H2``), an HTTP/1.1-only server and a
TLS server without ALPN h2, and the server of ``tests/servers/test_h2_real_sockets.py``
that misbehaves on purpose (a stream reset mid-body, a GOAWAY with streams in flight, a
garbage frame, an HTTP/1.1 answer, no answer at all). Counts are exact on every loop
(``loop``: uvloop, asyncio and trio); every result keeps ``sent == ok + errors_total +
in_flight``, a stream counting as one request.
"""

from __future__ import annotations

import importlib.util
import socket
import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import hpack
import pytest

from pytest_netbench import Request, SpecError, ToolchainMissing, feeders, http_load
from pytest_netbench._model import LoadResult
from pytest_netbench._proto import h2_frames as f
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server

HOST = "127.0.0.1"


def _sockets_module() -> object:
    """The real-socket tests of the sans-IO client: their Go server and misbehaving server."""
    path = Path(__file__).parents[1] / "servers" / "test_h2_real_sockets.py"
    spec = importlib.util.spec_from_file_location("_h2_real_sockets", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


_real = _sockets_module()
go_h2_binary = _real.go_h2_binary  # type: ignore[attr-defined]
misbehaving = _real.misbehaving  # type: ignore[attr-defined]
Scenario = Callable[[socket.socket, list[int]], None]


def errors(r: LoadResult) -> dict[str, int]:
    return {kind: count for kind, count in r.errors.items() if count}


def consistent(r: LoadResult) -> LoadResult:
    assert r.sent == r.ok + r.errors_total + r.in_flight, r
    return r


@pytest.fixture(scope="module", params=["h2c", "h2"])
def go_h2(request: pytest.FixtureRequest, go_h2_binary: str) -> Iterator[str]:
    """Go's net/http speaking HTTP/2: its base URL (http:// for h2c, https:// for TLS)."""
    server = Server.from_spec(catalog.get("go", app=request.param))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


def test_every_stream_is_a_request_counted_exactly(go_h2: str, loop: str) -> None:
    r = consistent(
        http_load(
            f"{go_h2}/",
            protocol="h2",
            loop=loop,
            streams=10,
            connections=2,
            requests=3000,
            verify_tls=False,
        )
    )
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (3000, 3000, 0, 0)
    assert r.status_codes == {200: 3000}
    assert r.generator.protocol == "h2" and r.generator.loop == loop
    assert r.generator.connections_opened == 2
    assert r.bytes_read > 0 and r.bytes_written > 0


def test_trailers_bodies_and_error_statuses(go_h2: str, loop: str) -> None:
    trailers = consistent(
        http_load(
            f"{go_h2}/trailers", protocol="h2", loop=loop, streams=4, requests=200, verify_tls=False
        )
    )
    assert trailers.ok == 200
    big = consistent(
        http_load(
            f"{go_h2}/bytes/100000",
            protocol="h2",
            loop=loop,
            streams=4,
            requests=40,
            verify_tls=False,
        )
    )
    assert big.ok == 40 and big.bytes_read > 40 * 100_000
    posted = consistent(
        http_load(
            f"{go_h2}/",
            protocol="h2",
            loop=loop,
            method="POST",
            body=b"b" * 70_000,
            streams=4,
            requests=20,
            verify_tls=False,
        )
    )
    assert posted.ok == 20
    failing = consistent(
        http_load(
            f"{go_h2}/status/503",
            protocol="h2",
            loop=loop,
            streams=5,
            requests=100,
            verify_tls=False,
        )
    )
    assert errors(failing) == {"status": 100} and failing.status_codes == {503: 100}


def test_a_duration_load_keeps_the_invariant(go_h2: str, loop: str) -> None:
    r = consistent(
        http_load(
            f"{go_h2}/",
            protocol="h2",
            loop=loop,
            streams=8,
            connections=3,
            duration=0.5,
            warmup=0.2,
            verify_tls=False,
        )
    )
    assert r.ok > 0 and r.errors_total == 0
    assert r.in_flight <= 3 * 8


@pytest.mark.parametrize("rate", [None, 2000])
def test_workers_share_the_streams(go_h2: str, loop: str, rate: float | None) -> None:
    r = consistent(
        http_load(
            f"{go_h2}/",
            protocol="h2",
            loop=loop,
            streams=5,
            connections=2,
            workers=2,
            requests=400,
            rate=rate,
            verify_tls=False,
        )
    )
    assert (r.ok, r.errors_total, r.in_flight) == (400, 0, 0)
    assert r.generator.protocol == "h2" and r.generator.workers == 2
    assert r.generator.loop == loop


def test_open_loop_sends_on_free_streams(go_h2: str, loop: str) -> None:
    r = consistent(
        http_load(
            f"{go_h2}/",
            protocol="h2",
            loop=loop,
            streams=5,
            connections=2,
            rate=2000,
            requests=1000,
            verify_tls=False,
        )
    )
    assert r.mode == "open"
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (1000, 1000, 0, 0)
    assert r.uncorrected is not None and r.uncorrected.count == 1000
    timed = consistent(
        http_load(
            f"{go_h2}/",
            protocol="h2",
            loop=loop,
            streams=4,
            rate=500,
            duration=0.6,
            verify_tls=False,
        )
    )
    assert timed.ok > 0 and timed.errors_total == 0


def test_an_open_loop_ramp_sends_what_its_integral_holds(go_h2: str, loop: str) -> None:
    """0 -> 400 req/s over 1 s holds 200 requests (the last falls due at the deadline)."""
    r = consistent(
        http_load(
            f"{go_h2}/",
            protocol="h2",
            loop=loop,
            streams=4,
            connections=2,
            rate=0,
            stages=[("1s", 400)],
            verify_tls=False,
        )
    )
    assert r.mode == "open" and 198 <= r.sent <= 200
    assert r.errors_total == 0


def test_connections_follow_the_stages_with_their_streams(go_h2: str, loop: str) -> None:
    """0 -> 3 connections, held, down to 0: each shed connection closes once its streams
    are answered, so nothing is cut short and nothing is in flight at the end."""
    r = consistent(
        http_load(
            f"{go_h2}/",
            protocol="h2",
            loop=loop,
            streams=4,
            stages=[("0.4s", 3), ("0.3s", 3), ("0.2s", 0), ("0.2s", 0)],
            verify_tls=False,
        )
    )
    assert r.mode == "closed" and r.ok > 0
    assert r.errors_total == 0 and r.in_flight == 0
    assert r.generator.connections_opened == 3


def test_connections_opened_first_then_their_streams(go_h2: str) -> None:
    r = consistent(
        http_load(
            f"{go_h2}/",
            protocol="h2",
            streams=4,
            connections=3,
            connect_first=True,
            requests=600,
            verify_tls=False,
        )
    )
    assert (r.sent, r.ok, r.errors_total) == (600, 600, 0)
    assert r.generator.connect_first and r.generator.connections_ready == 3
    assert r.generator.connections_opened == 3


@pytest.mark.parametrize("rate", [None, 3000])
def test_a_mix_counts_each_kind_on_its_streams(go_h2: str, rate: float | None, loop: str) -> None:
    mix = [
        Request("GET", "/", name="hello"),
        Request("GET", "/bytes/2000", name="bytes"),
        Request("POST", "/", body=b"x" * 100, name="post"),
        Request("GET", "/status/404", name="missing"),
    ]
    r = consistent(
        http_load(
            go_h2,
            protocol="h2",
            loop=loop,
            mix=mix,
            streams=6,
            connections=2,
            requests=1200,
            rate=rate,
            verify_tls=False,
        )
    )
    assert (r.sent, r.ok, errors(r), r.in_flight) == (1200, 900, {"status": 300}, 0)
    assert r.status_codes == {200: 900, 404: 300}
    for name in ("hello", "bytes", "post"):
        kind = r.by_request[name]
        assert (kind.sent, kind.ok, kind.errors_total, kind.in_flight) == (300, 300, 0, 0)
    missing = r.by_request["missing"]
    assert (missing.sent, missing.errors_total, dict(missing.status_codes)) == (
        300,
        300,
        {404: 300},
    )


def test_feeders_fill_each_streams_request(go_h2: str, loop: str) -> None:
    r = consistent(
        http_load(
            f"{go_h2}/bytes/${{size}}",
            protocol="h2",
            loop=loop,
            headers={"x-request": "${size}"},
            feeders={"size": feeders.count(start=1)},
            streams=5,
            connections=2,
            requests=200,
            verify_tls=False,
        )
    )
    assert (r.sent, r.ok, r.errors_total) == (200, 200, 0)
    assert r.bytes_read > sum(range(1, 201))  # each answer as long as its request asked
    mixed = consistent(
        http_load(
            go_h2,
            protocol="h2",
            loop=loop,
            mix=[
                Request("GET", "/bytes/${size}", name="sized"),
                Request("POST", "/", body="n=${size}", name="posted"),
                Request("GET", "/status/${code}", name="failing"),
            ],
            feeders={"size": feeders.count(start=1), "code": feeders.choice([404, 503])},
            streams=4,
            connections=2,
            requests=300,
            verify_tls=False,
        )
    )
    assert (mixed.sent, mixed.ok, errors(mixed)) == (300, 200, {"status": 100})
    assert set(mixed.status_codes) == {200, 404, 503}
    for name, ok in (("sized", 100), ("posted", 100), ("failing", 0)):
        kind = mixed.by_request[name]
        assert (kind.sent, kind.ok, kind.errors_total + kind.ok) == (100, ok, 100)


h2_server = _real.h2_server  # type: ignore[attr-defined]


def test_every_catalog_http2_server_over_h2c_and_tls(
    h2_server: tuple[str, Server], loop: str
) -> None:
    """Go, Node.js, hypercorn and nginx, each over h2c and TLS: counts exact, no errors."""
    mode, server = h2_server
    scheme = "http" if mode == "h2c" else "https"
    r = consistent(
        http_load(
            f"{scheme}://{HOST}:{server.port}/",
            protocol="h2",
            loop=loop,
            streams=10,
            connections=2,
            requests=600,
            verify_tls=False,
        )
    )
    assert (r.sent, r.ok, r.errors_total) == (600, 600, 0)
    assert r.status_codes == {200: 600}


# -- servers that do not speak HTTP/2 --
def test_an_http1_server_is_named_by_its_status_line(go_h2_binary: str, loop: str) -> None:
    try:
        spec = catalog.get("go")
    except ToolchainMissing as exc:
        pytest.skip(f"go cannot run here: {exc}")
    server = Server.from_spec(spec).start()
    try:
        r = consistent(
            http_load(
                f"http://{HOST}:{server.port}/", protocol="h2", loop=loop, streams=5, requests=20
            )
        )
    finally:
        server.stop()
    assert errors(r) == {"protocol": 20} and r.ok == 0
    assert (
        "the server answered in HTTP/1 (b'HTTP/1.1 404 Not Found')" in r.error_samples["protocol"]
    )


def test_a_tls_server_without_alpn_h2_is_named(
    http_server, self_signed: tuple[Path, Path], loop: str
) -> None:
    key, cert = self_signed
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server, _ = http_server(ssl_context=context)
    r = consistent(
        http_load(
            f"https://{HOST}:{server.port}/",
            protocol="h2",
            loop=loop,
            streams=3,
            requests=6,
            verify_tls=False,
        )
    )
    assert errors(r) == {"protocol": 6}
    assert "(ALPN) chose no protocol, not 'h2'" in r.error_samples["protocol"]


# -- a server that misbehaves on purpose --
def _one_connection(port: int, streams: int, loop: str, **options: object) -> LoadResult:
    return consistent(
        http_load(
            f"http://{HOST}:{port}/",
            protocol="h2",
            loop=loop,
            streams=streams,
            connections=1,
            requests=streams,
            **options,  # type: ignore[arg-type]
        )
    )


def test_a_stream_reset_mid_body_is_a_reset_with_its_code(misbehaving, loop: str) -> None:
    r = _one_connection(misbehaving(_real.rst_mid_body, 2), 2, loop)  # type: ignore[attr-defined]
    assert (r.ok, errors(r)) == (1, {"reset": 1})
    assert r.error_samples["reset"] == "stream reset by the server: INTERNAL_ERROR (0x2)"


def test_a_goaway_fails_the_streams_it_did_not_process(misbehaving, loop: str) -> None:
    r = _one_connection(misbehaving(_real.goaway_in_flight, 3), 3, loop)  # type: ignore[attr-defined]
    assert (r.ok, errors(r)) == (2, {"reset": 1})
    assert r.error_samples["reset"] == (
        "not processed: the server sent GOAWAY NO_ERROR (0x0) with last stream 3,"
        " saying b'going away'"
    )


def test_a_garbage_frame_fails_every_stream_as_protocol(misbehaving, loop: str) -> None:
    r = _one_connection(misbehaving(_real.garbage, 2), 2, loop)  # type: ignore[attr-defined]
    assert (r.ok, errors(r)) == (0, {"protocol": 2})
    assert "a DATA frame on stream 0" in r.error_samples["protocol"]


def test_an_http1_answer_fails_as_protocol(misbehaving, loop: str) -> None:
    r = _one_connection(misbehaving(_real.http1_answer, 1), 1, loop)  # type: ignore[attr-defined]
    assert errors(r) == {"protocol": 1}
    assert "HTTP/1.1 505 HTTP Version Not Supported" in r.error_samples["protocol"]


def _silent(conn: socket.socket, streams: list[int]) -> None:
    """Reads the requests and never answers, until the client closes."""
    _real.drain(conn)  # type: ignore[attr-defined]


def test_a_stream_that_is_not_answered_times_out_alone(misbehaving, loop: str) -> None:
    r = _one_connection(misbehaving(_silent_after_one, 3), 3, loop, timeout=0.3)
    assert (r.ok, errors(r)) == (1, {"timeout": 2})
    assert r.error_samples["timeout"] == "no response within 0.3s"


def _silent_after_one(conn: socket.socket, streams: list[int]) -> None:
    """Acknowledges the client's SETTINGS and answers the first stream only."""
    encoder = hpack.Encoder()
    answer = _real.response(encoder, streams[0], True)  # type: ignore[attr-defined]
    conn.sendall(f.SETTINGS_ACK + answer)
    _real.drain(conn)  # type: ignore[attr-defined]


def test_a_server_that_never_acknowledges_settings_is_dropped(misbehaving, loop: str) -> None:
    """Its streams time out, and the connection with them: the run opens another (which
    nothing answers either: the server serves one connection). A stream younger than the
    timeout when its connection is dropped (taken once the connect was done: a slow
    connect on a busy machine) fails as ``protocol``, naming the SETTINGS never
    acknowledged."""
    port = misbehaving(_silent, 2)
    r = consistent(
        http_load(
            f"http://{HOST}:{port}/",
            protocol="h2",
            loop=loop,
            streams=2,
            connections=1,
            duration=0.9,
            timeout=0.3,
        )
    )
    assert r.ok == 0 and set(errors(r)) <= {"timeout", "protocol"}
    assert r.errors["timeout"] >= 2 and r.generator.connections_opened >= 2
    if r.errors["protocol"]:
        assert "did not acknowledge the client's HTTP/2 SETTINGS" in r.error_samples["protocol"]


_LIMIT_SEEN: list[int] = []


def _two_at_a_time(conn: socket.socket, streams: list[int]) -> None:
    """Answers the first requests, lowers SETTINGS_MAX_CONCURRENT_STREAMS to 2, then
    answers requests two by two, noting how many the client had open at once."""
    encoder = hpack.Encoder()
    answers = b"".join(_real.response(encoder, s, True) for s in streams)  # type: ignore[attr-defined]
    conn.sendall(f.settings_frame([(f.SETTINGS_MAX_CONCURRENT_STREAMS, 2)]) + answers)
    data, waiting = b"", []
    while True:
        more = conn.recv(65536)
        if not more:
            return
        data += more
        while len(data) >= 9:
            length_kind, _, stream_id = f.FRAME_HEAD.unpack_from(data, 0)
            end = 9 + (length_kind >> 8)
            if len(data) < end:
                break
            if length_kind & 0xFF == f.HEADERS:
                waiting.append(stream_id)
            data = data[end:]
        _LIMIT_SEEN.append(len(waiting))
        if len(waiting) >= 2:
            conn.sendall(b"".join(_real.response(encoder, s, True) for s in waiting))  # type: ignore[attr-defined]
            waiting = []


def test_streams_over_the_servers_limit_wait_for_a_free_one(misbehaving, loop: str) -> None:
    r = consistent(
        http_load(
            f"http://{HOST}:{misbehaving(_two_at_a_time, 6)}/",
            protocol="h2",
            loop=loop,
            streams=6,
            connections=1,
            requests=26,
        )
    )
    assert (r.ok, r.errors_total, r.generator.connections_opened) == (26, 0, 1)
    assert max(_LIMIT_SEEN) == 2


def _streams_within(conn: socket.socket, most: int, quiet_s: float) -> list[int]:
    """The ids of the requests a client sends after its preface: up to ``most``, or as
    many as came before it was quiet for ``quiet_s``."""
    data, ids = b"", []
    while len(data) < len(f.PREFACE):
        more = conn.recv(65536)
        if not more:
            return ids
        data += more
    data = data[len(f.PREFACE) :]
    conn.settimeout(quiet_s)
    while len(ids) < most:
        while len(data) >= 9:
            length_kind, _, stream_id = f.FRAME_HEAD.unpack_from(data, 0)
            end = 9 + (length_kind >> 8)
            if len(data) < end:
                break
            if length_kind & 0xFF == f.HEADERS:
                ids.append(stream_id)
            data = data[end:]
        if len(ids) >= most:
            break
        try:
            more = conn.recv(65536)
        except TimeoutError:
            break
        if not more:
            break
        data += more
    conn.settimeout(5.0)
    return ids


@pytest.fixture
def goaway_every_connection() -> Iterator[int]:
    """A server that, on every connection, answers all its streams but the last (up to
    four, or as many as came within 0.3 s), sends GOAWAY naming the one before the last,
    and closes: its port."""
    listener = socket.create_server((HOST, 0))
    listener.settimeout(0.2)
    done = threading.Event()
    threads: list[threading.Thread] = []

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5.0)
            try:
                conn.sendall(f.settings_frame([(f.SETTINGS_MAX_CONCURRENT_STREAMS, 100)]))
                ids = _streams_within(conn, 4, 0.3)
                if not ids:
                    return
                encoder = hpack.Encoder()
                answers = b"".join(_real.response(encoder, s, True) for s in ids[:-1])  # type: ignore[attr-defined]
                last = ids[-2] if len(ids) > 1 else 0
                conn.sendall(answers + f.goaway(last, f.NO_ERROR, b"bye"))
                conn.shutdown(socket.SHUT_WR)
                _real.drain(conn)  # type: ignore[attr-defined]
            except OSError:
                pass

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            thread = threading.Thread(target=serve, args=(conn,), daemon=True)
            thread.start()
            threads.append(thread)

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    yield int(listener.getsockname()[1])
    done.set()
    acceptor.join(5.0)
    for thread in threads:
        thread.join(5.0)
    listener.close()
    assert not acceptor.is_alive() and not any(t.is_alive() for t in threads)


@pytest.mark.parametrize("rate", [None, 300])
def test_a_goaway_on_every_connection_moves_the_load_to_new_ones(
    goaway_every_connection: int, rate: float | None, loop: str
) -> None:
    """Each connection: its streams but one ok, one reset by the GOAWAY, then a new
    connection; the requests its answers freed are not taken for a connection that can
    open no stream (they would fail unsent, as resets beyond one a connection)."""
    r = consistent(
        http_load(
            f"http://{HOST}:{goaway_every_connection}/",
            protocol="h2",
            loop=loop,
            streams=4,
            connections=2,
            requests=200,
            rate=rate,
            timeout=2.0,
        )
    )
    opened = r.generator.connections_opened
    assert (r.ok, errors(r), r.in_flight) == (200 - opened, {"reset": opened}, 0)
    assert opened >= 50  # four streams a connection at most
    assert r.error_samples["reset"].startswith("not processed: the server sent GOAWAY")


# -- what an HTTP/2 load refuses --
@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"streams": 4}, "pass protocol='h2' too"),
        ({"protocol": "h2", "pipeline": 2}, "over HTTP/2 use streams="),
        (
            {"protocol": "h2", "headers": {"Connection": "close"}},
            "'Connection' is connection-specific, which HTTP/2 forbids",
        ),
        ({"protocol": "h3"}, "protocol must be one of http1, h2"),
    ],
)
def test_what_cannot_be_done_is_refused_before_any_socket(
    options: dict[str, object], words: str
) -> None:
    with pytest.raises(SpecError, match=None) as caught:
        http_load("http://127.0.0.1:9/", requests=1, **options)  # type: ignore[arg-type]
    assert words in str(caught.value)


@pytest.mark.alone  # timing arithmetic within 2 ms: nothing else of the suite beside it
def test_phases_split_an_answer_at_its_headers(go_h2: str, loop: str) -> None:
    """HEADERS 30 ms after the request, the body 20 ms later: wait ~30, receive ~20 (the
    first byte of an HTTP/2 answer is taken as its HEADERS frame's arrival)."""
    for _attempt in range(3):  # a neighbour's burst can delay a read by a few ms: again
        r = consistent(
            http_load(
                f"{go_h2}/split/30/20", protocol="h2", streams=2, connections=1, requests=20,
                verify_tls=False, loop=loop,
            )
        )  # fmt: skip
        assert (r.ok, r.errors_total) == (20, 0)
        assert r.phases.wait.count == r.phases.receive.count == 20
        near = abs(r.phases.wait.p50_ms - 30.0) <= 2.0
        if near and abs(r.phases.receive.p50_ms - 20.0) <= 2.0:
            break
    assert abs(r.phases.wait.p50_ms - 30.0) <= 2.0, r.phases.wait
    assert abs(r.phases.receive.p50_ms - 20.0) <= 2.0, r.phases.receive
    assert r.phases.connect.count == 1
    assert r.phases.tls.count == (1 if go_h2.startswith("https") else 0)
