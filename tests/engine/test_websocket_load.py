"""WebSocket loads on every loop against real servers on loopback: each fault the server
can make is classified exactly, the counting rules hold, and nothing hangs."""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from servers import ServerThread, StartEcho, StartHttp
from ws_servers import WsApp, WsOptions

from pytest_netbench import LoadResult, SpecError, TargetUnreachableError, ws_load, ws_spec
from pytest_netbench.cli import ExitCode, main

StartWs = Callable[..., tuple[ServerThread, WsApp]]
Consistent = Callable[[LoadResult], LoadResult]
MESSAGES = 120
T = TypeVar("T")


@pytest.fixture
def ws_server() -> Iterator[StartWs]:
    started: list[ServerThread] = []

    def start(**options: object) -> tuple[ServerThread, WsApp]:
        app = WsApp(WsOptions(**options))  # type: ignore[arg-type]
        server = ServerThread(app).start()
        started.append(server)
        return server, app

    yield start
    for server in started:
        server.stop()


def url_of(server: ServerThread, path: str = "/echo") -> str:
    return f"ws://127.0.0.1:{server.port}{path}"


def test_round_trips_are_counted_per_message(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, app = ws_server()
    r = consistent(ws_load(url_of(server), connections=4, requests=MESSAGES, loop=loop))
    assert (r.sent, r.ok, r.errors_total) == (MESSAGES, MESSAGES, 0)
    assert app.seen.messages == MESSAGES and app.seen.masked
    assert app.seen.handshakes == 4  # one per connection, kept open throughout
    assert client_closes(app, 4) == [1000] * 4  # each closed cleanly at the end
    assert r.url == f"ws://127.0.0.1:{server.port}/echo"
    assert r.latency.count == MESSAGES and r.bytes_written > 0 and r.bytes_read > 0


def test_binary_message_and_a_large_one(ws_server: StartWs, loop: str) -> None:
    server, _ = ws_server()
    message = bytes(range(256)) * 300  # 76,800 bytes: the 64-bit length form
    r = ws_load(url_of(server), connections=2, requests=10, message=message, loop=loop)
    assert (r.ok, r.errors_total) == (10, 0)


def test_handshake_refused_names_the_status_line(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, app = ws_server(refuse=403)
    r = consistent(ws_load(url_of(server), connections=2, requests=20, loop=loop))
    assert (r.ok, r.errors["status"], r.errors_total) == (0, 20, 20)
    assert dict(r.status_codes) == {403: 20}
    assert "HTTP/1.1 403 Forbidden" in r.error_samples["status"]
    assert app.seen.messages == 0


def test_subprotocol_negotiation(ws_server: StartWs, loop: str) -> None:
    server, app = ws_server(subprotocols=("chat.v2", "chat.v1"))
    r = ws_load(url_of(server), requests=10, subprotocols=["chat.v3", "chat.v2"], loop=loop)
    assert (r.ok, r.errors_total) == (10, 0)
    assert set(app.seen.offered) == {"chat.v3, chat.v2"}


def test_a_subprotocol_not_offered_is_a_protocol_error(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, _ = ws_server(force_subprotocol="bogus")
    r = consistent(ws_load(url_of(server), requests=6, subprotocols="chat", loop=loop))
    assert (r.ok, r.errors["protocol"]) == (0, 6)
    assert "'bogus'" in r.error_samples["protocol"]


def test_fragmented_echoes_with_a_ping_between_are_reassembled(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, app = ws_server(fragment=True)
    r = consistent(ws_load(url_of(server), connections=3, requests=60, loop=loop))
    assert (r.ok, r.errors_total) == (60, 0)
    assert app.seen.pongs == 60  # every ping between fragments was answered


def settled(read: Callable[[], T], expected: T, within_s: float = 5.0) -> T:
    """What ``read`` gives once it gives ``expected``, or once ``within_s`` passed. The load
    closes each connection cleanly at its end, the pong it owed first, and waits for the
    server's close, so the server has seen both by then; but a clean close is bounded
    (1 s at most), and on a busy machine the server thread may be later still."""
    deadline = time.monotonic() + within_s
    while (value := read()) != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return value


def client_closes(app: WsApp, count: int) -> list[int]:
    """The close codes of the clients' own closes, once ``count`` came."""
    return settled(lambda: sorted(app.seen.close_replies), [1000] * count)


def test_pings_during_a_load_are_answered(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, app = ws_server(ping_every=5)
    r = consistent(ws_load(url_of(server), connections=3, requests=MESSAGES, loop=loop))
    assert (r.ok, r.errors_total) == (MESSAGES, 0)
    # Every ping answered, the last ones too: the clean close at the end sends them first.
    assert settled(lambda: app.seen.pongs, MESSAGES // 5) == MESSAGES // 5
    assert client_closes(app, 3) == [1000] * 3


@pytest.mark.parametrize("reverse", [1, 3])
def test_answers_matched_by_the_id_they_carry(
    ws_server: StartWs, loop: str, consistent: Consistent, reverse: int
) -> None:
    """Each message carries its own id; the server holds a connection's messages until
    `reverse` came and answers them last first: every answer finds its message."""
    server, app = ws_server(id_field="ref", reverse=reverse)
    r = consistent(
        ws_load(
            url_of(server),
            connections=2,
            requests=60,
            answer="id",
            id_field="ref",
            message='{"op": "get", "key": "k1"}',
            pipeline=reverse,
            loop=loop,
        )
    )
    assert (r.sent, r.ok, r.errors_total) == (60, 60, 0)
    assert app.seen.messages == 60 and r.latency.count == 60


def test_an_answer_with_an_unknown_id_is_a_verify_error(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, _ = ws_server(id_field="id", wrong_id_every=10)  # answers 10, 20, ...: id 0
    r = consistent(ws_load(url_of(server), connections=2, requests=60, answer="id", loop=loop))
    assert (r.ok, r.errors["verify"], r.errors_total) == (54, 6, 6)
    assert "'id' field holds no id of a message outstanding" in r.error_samples["verify"]


def test_open_loop_answers_by_id(ws_server: StartWs, loop: str, consistent: Consistent) -> None:
    server, _ = ws_server(id_field="id")
    r = consistent(
        ws_load(url_of(server), connections=2, rate=400, requests=80, answer="id", loop=loop)
    )
    assert (r.mode, r.sent, r.ok, r.errors_total) == ("open", 80, 80, 0)


def test_a_server_close_mid_load_is_a_reset_with_its_code(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, app = ws_server(close_every=10, close_code=1011)
    r = consistent(ws_load(url_of(server), connections=2, requests=100, loop=loop))
    assert (r.ok, r.errors["reset"], r.errors_total) == (90, 10, 10)
    assert dict(r.status_codes) == {1011: 10}
    assert "code 1011 (internal error): 'bye'" in r.error_samples["reset"]
    assert app.seen.messages == 100
    # Each close was answered with its code, and the run opened a connection in its place
    # (but for the last: the 100th message was a close); the one open at the end closed
    # with 1000.
    assert app.seen.handshakes == 11
    expected = [1000] + [1011] * 10
    assert settled(lambda: sorted(app.seen.close_replies), expected) == expected


def test_a_corrupt_frame_is_a_protocol_error(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, _ = ws_server(corrupt_every=10)
    r = consistent(ws_load(url_of(server), connections=2, requests=100, loop=loop))
    assert (r.ok, r.errors["protocol"], r.errors_total) == (90, 10, 10)
    assert "reserved bits" in r.error_samples["protocol"]


@pytest.mark.parametrize("answer", ["echo", "any"])
def test_a_server_that_acknowledges_instead_of_echoing(
    ws_server: StartWs, loop: str, consistent: Consistent, answer: str
) -> None:
    server, _ = ws_server(reply=b'{"ack": true}')
    r = consistent(ws_load(url_of(server), connections=2, requests=30, answer=answer, loop=loop))
    if answer == "echo":
        assert (r.ok, r.errors["verify"]) == (0, 30)  # an ack is not the echo
    else:
        assert (r.ok, r.errors_total) == (30, 0)  # any next message answers


def test_wss_round_trips_over_tls(
    tls_context: ssl.SSLContext, loop: str, consistent: Consistent
) -> None:
    app = WsApp(WsOptions(ping_every=10))
    with ServerThread(app, ssl_context=tls_context) as server:
        url = f"wss://127.0.0.1:{server.port}/secure"
        r = consistent(ws_load(url, connections=3, requests=60, verify_tls=False, loop=loop))
    assert (r.sent, r.ok, r.errors_total) == (60, 60, 0)
    assert r.url == url and app.seen.handshakes == 3
    assert settled(lambda: app.seen.pongs, 6) == 6  # the last ones too, over TLS
    assert client_closes(app, 3) == [1000] * 3


def test_wss_probe_and_certificate_check(tls_context: ssl.SSLContext) -> None:
    with ServerThread(WsApp(), ssl_context=tls_context) as server:
        url = f"wss://127.0.0.1:{server.port}/"
        r = ws_load(url, connections=2, duration=0.5, verify_tls=False, probe_every=0.05)
        assert r.probe is not None and r.probe.sent >= 1
        assert (r.probe.ok, r.probe.errors_total) == (r.probe.sent, 0), r.probe.error_samples
        with pytest.raises(TargetUnreachableError, match="CERTIFICATE_VERIFY_FAILED"):
            ws_load(url, connections=1, requests=2)  # verify_tls is on by default


def test_two_worker_processes_share_the_messages(
    ws_server: StartWs, consistent: Consistent
) -> None:
    server, app = ws_server()
    r = consistent(ws_load(url_of(server), connections=4, requests=100, workers=2))
    assert (r.sent, r.ok, r.errors_total) == (100, 100, 0)
    assert app.seen.messages == 100 and app.seen.handshakes == 4


def test_a_duration_run_keeps_the_invariant(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, _ = ws_server(ping_every=7)
    r = consistent(ws_load(url_of(server), connections=3, duration=0.5, loop=loop))
    assert r.ok > 0 and r.errors_total == 0
    assert r.in_flight <= 3


def test_an_unanswered_message_is_a_timeout(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, _ = ws_server(stall_every=15)
    r = consistent(ws_load(url_of(server), connections=3, requests=45, timeout=0.5, loop=loop))
    assert (r.ok, r.errors["timeout"], r.errors_total) == (42, 3, 3)


def test_a_plain_http_answer_is_a_refused_handshake(
    http_server: StartHttp, loop: str, consistent: Consistent
) -> None:
    server, _ = http_server()
    r = consistent(ws_load(f"ws://127.0.0.1:{server.port}/", requests=4, loop=loop))
    assert (r.ok, r.errors["status"]) == (0, 4)
    assert "'HTTP/1.1 200 OK', not 101" in r.error_samples["status"]


def test_a_raw_tcp_echo_is_not_http(
    echo_server: StartEcho, loop: str, consistent: Consistent
) -> None:
    server, _ = echo_server()  # echoes the upgrade request back
    r = consistent(ws_load(f"ws://127.0.0.1:{server.port}/", requests=4, loop=loop))
    assert (r.ok, r.errors["protocol"]) == (0, 4)
    assert "not HTTP: 'GET / HTTP/1.1'" in r.error_samples["protocol"]


def test_the_client_delay_probe_opens_a_websocket_beside_the_load(ws_server: StartWs) -> None:
    server, app = ws_server(ping_every=3)  # a ping to the probe too, now and then
    r = ws_load(url_of(server), connections=4, duration=0.8, probe_every=0.05)
    probe = r.probe
    assert probe is not None and probe.sent >= 1
    assert (probe.ok, probe.errors_total) == (probe.sent, 0), probe.error_samples
    assert 0 < probe.p50_ms <= probe.p99_ms
    # Each probe was a connection and a handshake of its own, beside the load's 4.
    assert app.seen.handshakes >= 4 + probe.sent
    assert r.sent == r.ok + r.errors_total + r.in_flight


def test_a_clean_close_waits_no_longer_than_its_bound(ws_server: StartWs, loop: str) -> None:
    """A server that never answers the client's close: the load still ends, each
    connection's wait bounded (a second at most; here the load's 0.3 s timeout)."""
    server, app = ws_server(ignore_close=True)
    started = time.monotonic()
    r = ws_load(url_of(server), connections=3, requests=30, timeout=0.3, loop=loop)
    assert (r.ok, r.errors_total) == (30, 0)
    assert settled(lambda: sorted(app.seen.close_replies), [1000] * 3) == [1000] * 3
    assert time.monotonic() - started < 30  # bounded, not waiting on the server forever


def test_a_refused_probe_is_a_status_error(ws_server: StartWs) -> None:
    server, _ = ws_server(refuse=403)
    r = ws_load(url_of(server), connections=1, duration=0.5, probe_every=0.05)
    assert r.probe is not None and r.probe.sent >= 1
    assert r.probe.errors["status"] == r.probe.sent
    assert "HTTP/1.1 403 Forbidden" in r.probe.error_samples["status"]


@pytest.mark.parametrize(
    ("url", "options", "words"),
    [
        ("http://127.0.0.1:9/", {}, "a WebSocket URL is ws:// or wss://"),
        ("ws://127.0.0.1:9/", {"subprotocols": ["a b"]}, "not a valid name"),
        ("ws://127.0.0.1:9/", {"headers": {"Upgrade": "x"}}, "handshake's own"),
        ("ws://127.0.0.1:9/", {"message_bytes": 0}, "positive"),
        ("ws://127.0.0.1:9/", {"pipeline": 2}, "need answers matched by id"),
        ("ws://127.0.0.1:9/", {"answer": "ids"}, "answer must be one of echo, any, id"),
        ("ws://127.0.0.1:9/", {"id_field": "ref"}, "add answer='id'"),
        ("ws://127.0.0.1:9/", {"answer": "id", "message": "[1]"}, "must be a JSON object"),
        ("ws://127.0.0.1:9/", {"answer": "id", "message": "{"}, "must be JSON"),
        ("ws://127.0.0.1:9/", {"answer": "id", "binary": True}, "JSON text: drop binary"),
        ("ws://127.0.0.1:9/", {"answer": "id", "rate": 10, "pipeline": 2}, "closed-loop"),
    ],
)
def test_bad_input_is_refused_before_any_socket(url: str, options: object, words: str) -> None:
    with pytest.raises(SpecError, match=words):
        ws_spec(url, **options)  # type: ignore[arg-type]


def test_open_loop_messages_on_schedule(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, app = ws_server(ping_every=10, close_every=50)
    r = consistent(ws_load(url_of(server), connections=4, rate=500, requests=200, loop=loop))
    assert r.mode == "open"
    assert (r.sent, r.ok, r.errors["reset"], r.errors_total) == (200, 196, 4, 4)
    assert dict(r.status_codes) == {1011: 4}
    # A ping before every 10th echo; the 50th, 100th, ... were closes instead.
    assert app.seen.messages == 200
    assert settled(lambda: app.seen.pongs, 20 - 4) == 20 - 4
    # Every connection ended with the server's close (1011) or, open at the end, the
    # client's own (1000).
    at_end = app.seen.handshakes - 4
    expected = [1000] * at_end + [1011] * 4
    assert settled(lambda: sorted(app.seen.close_replies), expected) == expected


def test_the_command_line_runs_a_websocket_load(
    ws_server: StartWs, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server, app = ws_server(subprotocols=("chat",))
    out = tmp_path / "r.json"
    argv = ["ws", url_of(server), "-n", "40", "-c", "2", "--subprotocols", "chat", "--json"]
    code = main([*argv, str(out), "--message", "héllo", "-H", "Origin: http://127.0.0.1"])
    assert code == ExitCode.OK
    text = capsys.readouterr().out
    assert "Messages:       40 sent, 40 ok, 0 errors" in text
    assert "6 B text messages, subprotocols" in text  # "héllo" in UTF-8
    data = json.loads(out.read_text())
    assert (data["sent"], data["ok"], data["spec"]["kind"]) == (40, 40, "ws")
    assert app.seen.offered == ["chat", "chat"]


def test_the_html_report_counts_messages(ws_server: StartWs, tmp_path: Path) -> None:
    """The HTML report's table of loads and its timeline picture read in messages a second."""
    from pytest_netbench._report.plots.load import timeline_figure

    server, _ = ws_server()
    page = tmp_path / "r.html"
    assert main(["ws", url_of(server), "-n", "40", "-c", "2", "--html", str(page)]) == 0
    assert "<th class=num>msg/s</th>" in page.read_text() and "req/s" not in page.read_text()
    r = ws_load(url_of(server), connections=2, requests=40)
    assert timeline_figure(r, title="t").axes[0].get_ylabel() == "ok messages (msg/s)"


def test_the_command_line_refuses_bad_input_as_usage(ws_server: StartWs) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["ws", "https://127.0.0.1:9/", "-n", "1"])
    assert exited.value.code == ExitCode.USAGE


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])  # connect_first is asyncio's
def test_a_handshake_refused_in_the_connect_phase_is_a_failed_connect(
    ws_server: StartWs, loop: str, consistent: Consistent
) -> None:
    server, _ = ws_server(refuse=403)
    url = url_of(server)
    r = consistent(ws_load(url, connections=3, requests=30, connect_first=True, loop=loop))
    # The phase counts each refusal as a failed connect at once (it waited out its limit
    # before), then the window's messages are refused as any.
    assert r.generator.connections_ready == 0 and r.errors["status"] == 30
    assert not r.valid and "'HTTP/1.1 403 Forbidden', not 101" in r.invalid_reasons[0]


@pytest.mark.parametrize(
    ("options", "kind"),
    [({"refuse": 403}, "status"), ({"close_every": 5, "close_code": 1011}, "reset")],
    ids=["refused", "closed"],
)
def test_a_websocket_failure_reads_the_same_on_every_loop(
    ws_server: StartWs, options: dict[str, int], kind: str
) -> None:
    # The words come from the engine's rules (_engine/rules/failures.py), not the loop.
    server, _ = ws_server(**options)
    samples = {
        loop: ws_load(url_of(server), connections=1, requests=10, loop=loop).error_samples[kind]
        for loop in ("asyncio", "uvloop", "trio")
    }
    assert len(set(samples.values())) == 1, samples
