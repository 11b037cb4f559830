"""Listen loads (WebSocket connections held, the server's pushes counted) on every loop,
against a real push server on loopback: connections held counted exactly, pushes and
their stamps, pings answered, a server that closes mid-hold counted per connection, and
nothing hangs."""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from servers import ServerThread
from ws_push_servers import PushApp, PushOptions
from ws_servers import WsApp, WsOptions

from pytest_netbench import LoadResult, SpecError, ws_load, ws_spec
from pytest_netbench.cli import ExitCode, main

StartPush = Callable[..., tuple[ServerThread, PushApp]]
Consistent = Callable[[LoadResult], LoadResult]
HELD = 6


@pytest.fixture
def push_server() -> Iterator[StartPush]:
    started: list[ServerThread] = []

    def start(**options: object) -> tuple[ServerThread, PushApp]:
        app = PushApp(PushOptions(**options))  # type: ignore[arg-type]
        server = ServerThread(app).start()
        started.append(server)
        return server, app

    yield start
    for server in started:
        server.stop()


def url_of(server: ServerThread) -> str:
    return f"ws://127.0.0.1:{server.port}/feed"


def closes_once_settled(app: PushApp, count: int, within_s: float = 5.0) -> list[int]:
    """The codes of the clients' own closes, once ``count`` came or ``within_s`` passed (the
    load waits for the server's answer to each, but a second at most)."""
    deadline = time.monotonic() + within_s
    while len(app.seen.client_closes) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return sorted(app.seen.client_closes)


def test_held_connections_and_a_count_of_stamped_pushes(
    push_server: StartPush, loop: str, consistent: Consistent
) -> None:
    server, app = push_server(hold=HELD)
    r = consistent(
        ws_load(
            url_of(server), listen=True, connections=HELD, requests=120, stamp_field="ts", loop=loop
        )
    )
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (120, 120, 0, 0)
    assert app.seen.handshakes == HELD
    assert r.generator.connections_opened == HELD
    assert r.latency.count == 120 and r.max_ms >= r.p50_ms >= 0  # stamp to arrival
    assert r.bytes_read > 0
    # Each held connection closed cleanly at the end, pushes still arriving.
    assert closes_once_settled(app, HELD) == [1000] * HELD
    # In the streams' vocabulary: each held connection a stream, each push an event; the
    # server pushes 0.3 s after the last connection opened, then every 10 ms.
    s = r.stream
    assert s is not None and s.mode == "ws"
    assert (s.streams, s.events, s.events_per_stream.streams) == (HELD, 120, HELD)
    assert s.first_event.count == HELD and s.gap.count == 120 - HELD
    assert s.first_event.p50_ms >= 250, s.first_event
    assert 5 < s.gap.p50_ms < 60, s.gap
    assert s.first_byte.count == 0  # a push has no request to answer


def test_binary_stamps_and_pushes_without_one(
    push_server: StartPush, loop: str, consistent: Consistent
) -> None:
    server, _ = push_server(hold=2, binary=True, unstamped_every=4, close_after=8)
    r = consistent(
        ws_load(
            url_of(server), listen=True, connections=2, duration=30, stamp_binary=True, loop=loop
        )
    )
    # Each connection: 8 pushes (2 without a stamp), then a close: the load ends early.
    assert r.ok == 12 and r.errors["verify"] == 4 and r.errors["reset"] == 2
    assert (
        "too short for an 8-byte stamp" in r.error_samples["verify"]
        or "stamp" in r.error_samples["verify"]
    )


def test_a_server_that_closes_mid_hold_is_counted_per_connection(
    push_server: StartPush, loop: str, consistent: Consistent
) -> None:
    server, app = push_server(hold=HELD, close_after=5, close_code=4001)
    r = consistent(ws_load(url_of(server), listen=True, connections=HELD, duration=30, loop=loop))
    # Every connection is lost once, with its code; none is replaced, and the load ends
    # when the last is gone instead of waiting out its 30 s.
    assert r.errors["reset"] == HELD and r.status_codes == {4001: HELD}
    assert r.ok == 5 * HELD and r.in_flight == 0
    assert "code 4001" in r.error_samples["reset"] and "'enough'" in r.error_samples["reset"]
    assert app.seen.handshakes == HELD
    assert r.duration_s < 30


def test_pings_are_answered_during_the_hold(
    push_server: StartPush, loop: str, consistent: Consistent
) -> None:
    server, app = push_server(hold=HELD, every_s=0.05)
    r = consistent(
        ws_load(
            url_of(server), listen=True, connections=HELD, duration=0.6, ping_every=0.1, loop=loop
        )
    )
    assert r.errors_total == 0 and r.ok > 0
    assert app.seen.pings >= HELD  # every connection pinged at least once
    assert closes_once_settled(app, HELD) == [1000] * HELD


def test_pings_due_as_the_load_ends_never_race_the_clean_close(
    push_server: StartPush, loop: str, consistent: Consistent
) -> None:
    # A ping every 2 ms to 50 connections: the pinger is often writing, or about to, at the
    # moment the run stops and each connection sends its close (trio refused the second
    # writer with BusyResourceError in 3 of 20 such loads before the close took the lock).
    server, _app = push_server(hold=50)
    for _ in range(10):
        r = consistent(
            ws_load(
                url_of(server),
                listen=True,
                connections=40,
                duration=0.2,
                ping_every=0.002,
                loop=loop,
            )
        )
        assert r.errors_total == 0


def test_a_ping_without_a_pong_loses_its_connection(
    push_server: StartPush, loop: str, consistent: Consistent
) -> None:
    server, _ = push_server(hold=HELD, answer_pings=False, every_s=0.05)
    r = consistent(
        ws_load(
            url_of(server),
            listen=True,
            connections=HELD,
            duration=30,
            ping_every=0.05,
            timeout=0.2,
            loop=loop,
        )
    )
    assert r.errors["timeout"] == HELD and "no pong" in r.error_samples["timeout"]
    assert r.duration_s < 30


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"ping_every": 1}, "add listen=True"),
        ({"listen": True, "rate": 10}, "no rate"),
        ({"listen": True, "message": "hi"}, "sends no messages: drop message"),
        ({"listen": True, "stamp_field": "ts", "stamp_binary": True}, "not both"),
        ({"listen": True, "ping_every": -1}, "ping_every must be a positive number"),
    ],
)
def test_bad_listen_options_are_refused_before_any_socket(
    options: dict[str, object], words: str
) -> None:
    with pytest.raises(SpecError, match=words):
        ws_spec("ws://127.0.0.1:9/", **options)  # type: ignore[arg-type]


def test_the_client_delay_probe_waits_for_a_first_push(
    push_server: StartPush, consistent: Consistent
) -> None:
    server, app = push_server(hold=0, start_after_s=0.0, every_s=0.02)
    r = consistent(
        ws_load(url_of(server), listen=True, connections=3, duration=0.8, probe_every=0.1)
    )
    probe = r.probe
    assert probe is not None and probe.sent >= 1
    assert (probe.ok, probe.errors_total) == (probe.sent, 0), probe.error_samples
    assert 0 < probe.p50_ms <= probe.p99_ms  # from its connect to the first push
    assert app.seen.handshakes >= 3 + probe.sent


def test_two_worker_processes_hold_their_shares(
    push_server: StartPush, consistent: Consistent
) -> None:
    server, app = push_server(hold=8)
    r = consistent(
        ws_load(
            url_of(server), listen=True, connections=8, requests=200, workers=2, stamp_field="ts"
        )
    )
    assert (r.sent, r.ok, r.errors_total) == (200, 200, 0)
    assert app.seen.handshakes == 8 and r.generator.connections_opened == 8


def test_connections_opened_inside_the_window_without_connect_first(
    push_server: StartPush, consistent: Consistent
) -> None:
    server, app = push_server(hold=4)
    r = consistent(
        ws_load(url_of(server), listen=True, connections=4, requests=100, connect_first=False)
    )
    assert (r.sent, r.ok, r.errors_total) == (100, 100, 0) and app.seen.handshakes == 4


def test_a_refused_handshake_is_told_and_nothing_hangs(loop: str) -> None:
    with ServerThread(WsApp(WsOptions(refuse=403))) as server:
        r = ws_load(url_of(server), listen=True, connections=3, duration=30, loop=loop)
    assert r.ok == 0 and r.duration_s < 30
    if loop == "trio":  # inside the window: an error per connection, the status counted
        assert r.errors["status"] == 3 and r.status_codes == {403: 3}
    else:  # the connect phase's: the result is invalid, saying why
        assert not r.valid and "HTTP/1.1 403 Forbidden" in r.invalid_reasons[0]
        assert "did not accept the WebSocket handshake" in r.invalid_reasons[0]


def test_the_command_line_listens(
    push_server: StartPush, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server, _ = push_server(hold=3)
    out = tmp_path / "r.json"
    argv = ["ws", url_of(server), "--listen", "-c", "3", "-n", "30", "--stamp-field", "ts"]
    assert main([*argv, "--ping-every", "0.05", "--json", str(out)]) == ExitCode.OK
    text = capsys.readouterr().out
    assert "Pushes:         30 sent, 30 ok, 0 errors, 0 in flight" in text
    assert "listening, stamp in field 'ts', a ping every 0.05 s" in " ".join(text.split())
    assert "Latency (ms) of 30 ok pushes, from stamp to arrival" in text
    data = json.loads(out.read_text())
    assert data["spec"]["listen"] is True and data["spec"]["stamp_field"] == "ts"
    with pytest.raises(SystemExit) as exited:
        main(["ws", url_of(server), "--stamp-binary", "-n", "1"])
    assert exited.value.code == ExitCode.USAGE
    assert "add listen=True (CLI: --listen)" in capsys.readouterr().err


def test_the_servers_pings_are_answered_between_pushes(
    push_server: StartPush, loop: str, consistent: Consistent
) -> None:
    server, app = push_server(hold=3, server_ping_every=2, every_s=0.02)
    r = consistent(ws_load(url_of(server), listen=True, connections=3, duration=0.8, loop=loop))
    assert r.errors_total == 0 and r.ok > 0
    assert app.seen.server_pings > 0 and app.seen.pongs > 0


def test_a_push_half_arrived_at_the_end_is_in_flight(
    push_server: StartPush, loop: str, consistent: Consistent
) -> None:
    server, _ = push_server(hold=3, stall_after=4, start_after_s=0.0)
    r = consistent(ws_load(url_of(server), listen=True, connections=3, duration=0.6, loop=loop))
    assert r.in_flight == 3 and r.errors_total == 0


def test_wss_pushes_over_tls(
    tls_context: ssl.SSLContext, loop: str, consistent: Consistent
) -> None:
    app = PushApp(PushOptions(hold=3, every_s=0.01))
    with ServerThread(app, ssl_context=tls_context) as server:
        url = f"wss://127.0.0.1:{server.port}/feed"
        r = consistent(
            ws_load(url, listen=True, connections=3, requests=60, verify_tls=False, loop=loop)
        )
    assert (r.sent, r.ok, r.errors_total) == (60, 60, 0) and app.seen.handshakes == 3


def test_a_count_of_pushes_is_kept_when_one_more_is_half_arrived(
    push_server: StartPush, loop: str, consistent: Consistent
) -> None:
    server, _ = push_server(hold=2, stall_after=5, start_after_s=0.5)
    r = consistent(ws_load(url_of(server), listen=True, connections=2, requests=10, loop=loop))
    # Both connections' 5 pushes make the count; the half push after them is not sent.
    assert (r.sent, r.ok, r.in_flight) == (10, 10, 0)
