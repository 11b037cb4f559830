"""Connections opened before the window (``connect_first``): all of them, paced, from the
source addresses chosen, with the phase's figures in the result; against a server whose
accept queue overflows too; on the asyncio loops."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from collections.abc import Callable

import pytest
from servers import HOST, EchoApp, EchoOptions, PreparedSocketServer, StartEcho, StartHttp

from pytest_netbench import LoadResult, SpecError, echo_load, http_load
from pytest_netbench._input.spec import echo_spec
from pytest_netbench._load.api import run_spec

Check = Callable[[LoadResult], LoadResult]


def test_an_echo_flood_opens_every_connection_before_its_window(
    echo_server: StartEcho, consistent: Check
) -> None:
    server, app = echo_server(payload_size=512)
    r = consistent(echo_load("127.0.0.1", server.port, connections=20, requests=200))
    gen = r.generator
    assert gen.connect_first
    assert (gen.connections_ready, gen.connect_failures) == (20, 0)
    assert app.seen.connections == gen.connections_opened == 20
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (200, 200, 0, 0)
    assert gen.connect_s is not None and gen.connect_s > 0
    assert gen.connect_p50_ms is not None and gen.connect_max_ms is not None
    assert 0 < gen.connect_p50_ms <= (gen.connect_p99_ms or 0) <= gen.connect_max_ms


def test_the_window_measures_exchanges_not_connecting(echo_server: StartEcho) -> None:
    """Every connection was open when the window began: none of the window's exchanges
    waited for a connect, so no connection completed its first exchange late."""
    server, app = echo_server(payload_size=512)
    r = echo_load("127.0.0.1", server.port, connections=50, duration=0.5)
    assert r.generator.connections_ready == 50
    assert r.errors_total == 0
    assert r.in_flight == 50  # one exchange per connection cut off by the deadline
    assert app.seen.connections == 50


def test_connect_rate_paces_the_opening(echo_server: StartEcho) -> None:
    server, _ = echo_server(payload_size=64)
    r = echo_load(
        "127.0.0.1", server.port, connections=20, requests=40, payload_bytes=64, connect_rate=100
    )
    # 20 connects at 100 a second cannot all have started before 19/100 s.
    assert r.generator.connect_s is not None and r.generator.connect_s >= 0.9 * 19 / 100
    assert r.generator.connections_ready == 20


def test_two_workers_open_their_windows_together_once_both_are_ready(
    echo_server: StartEcho, consistent: Check
) -> None:
    server, app = echo_server(payload_size=512)
    r = consistent(echo_load("127.0.0.1", server.port, connections=30, requests=300, workers=2))
    assert r.generator.workers == 2
    assert r.generator.connections_ready == 30
    assert (r.sent, r.ok) == (300, 300)
    assert app.seen.connections == 30


def test_http_opens_first_when_asked(http_server: StartHttp, consistent: Check) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, connections=5, requests=50, connect_first=True))
    assert r.generator.connect_first and r.generator.connections_ready == 5
    assert (r.sent, r.ok) == (50, 50)
    assert app.seen.connections == 5
    plain = http_load(server.url, connections=5, requests=50)
    assert not plain.generator.connect_first and plain.generator.connect_s is None


def test_connections_come_from_the_source_addresses_given(echo_server: StartEcho) -> None:
    server, app = echo_server(payload_size=512)
    spec = echo_spec("127.0.0.1", server.port, connections=12, requests=120)
    r = run_spec(dataclasses.replace(spec, source_addresses=("127.0.0.2", "127.0.0.3")))
    assert (r.ok, r.errors_total) == (120, 0)
    assert sorted(set(app.seen.peers)) == ["127.0.0.2", "127.0.0.3"]
    assert app.seen.peers.count("127.0.0.2") == app.seen.peers.count("127.0.0.3") == 6


def test_the_hosts_accept_queue_overflows_are_counted(echo_server: StartEcho) -> None:
    server, _ = echo_server(payload_size=512)
    r = echo_load("127.0.0.1", server.port, connections=2, requests=4)
    assert isinstance(r.generator.listen_overflows, int) and r.generator.listen_overflows >= 0


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"connect_first": True, "rate": 100.0}, "closed-loop"),
        ({"connect_first": True, "loop": "trio"}, "asyncio"),
        ({"connect_rate": 100.0, "connect_first": False}, "--connect-first"),
        ({"connect_first": True, "connect_rate": 0}, "connect_rate must be > 0"),
    ],
)
def test_connect_first_mistakes_are_refused_before_any_socket(
    options: dict[str, object], words: str
) -> None:
    with pytest.raises(SpecError, match=words):
        echo_load("127.0.0.1", 9, connections=2, duration=1, **options)


def test_a_server_that_stops_accepting_costs_one_connect_timeout_and_is_named() -> None:
    """A listener that never accepts (backlog 1): its queue fills, further SYNs are dropped,
    so connects time out. Once no connect has succeeded for a whole connect timeout the
    phase gives up (not one timeout per missing connection, however it retries), and the
    result is invalid saying how many were open."""

    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        r = echo_load("127.0.0.1", port, connections=60, duration=0.3, connect_timeout=0.5)
    finally:
        listener.close()
    gen = r.generator
    assert gen.connect_failures >= 1
    assert gen.connect_s is not None and gen.connect_s < 3 * 0.5
    assert gen.connections_ready < 60
    assert "connect timeout" in gen.connect_failure_sample
    assert r.invalid_causes[0] == "connections_not_opened"
    assert f"{gen.connections_ready} of 60 ({gen.connect_failures} connects" in r.invalid_reasons[0]
    assert r.ok == 0
    assert (gen.connections_without_exchange or 0) >= gen.connections_ready


def test_connections_that_never_got_an_echo_are_counted(
    echo_server: StartEcho, consistent: Check
) -> None:
    server, _ = echo_server(payload_size=512, mute_first=3)
    r = consistent(echo_load("127.0.0.1", server.port, connections=10, duration=0.3))
    assert r.generator.connections_without_exchange == 3
    assert r.in_flight == 10  # the 3 mute ones and one exchange each of the 7 others
    assert r.ok > 0


class SlowAcceptor(PreparedSocketServer):
    """An echo server with an accept queue of one (``listen(1)``) that accepts one
    connection every ``every_s``: any connects faster than that overflow its queue, and
    the kernel drops their SYNs."""

    def __init__(self, app: EchoApp, every_s: float) -> None:
        super().__init__(app)
        self.every_s = every_s
        self.sock.listen(1)
        self.sock.setblocking(False)
        self.accepted = 0

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        clients: set[asyncio.Task[None]] = set()

        async def accept_slowly() -> None:
            while True:
                conn, _ = await loop.sock_accept(self.sock)
                self.accepted += 1
                reader, writer = await asyncio.open_connection(sock=conn)
                clients.add(asyncio.create_task(self._client(reader, writer)))
                await asyncio.sleep(self.every_s)

        acceptor = asyncio.create_task(accept_slowly())
        await self._until_stopped()
        for task in (acceptor, *clients):
            task.cancel()
        await asyncio.gather(acceptor, *clients, return_exceptions=True)


def test_an_overflowing_accept_queue_slows_the_phase_and_every_connection_opens(
    consistent: Check,
) -> None:
    """Connects arriving faster than the server accepts overflow its queue; the phase
    paces itself and starts the connects that timed out (or lost their SYN) again, so
    the window opens with every connection and counts no connect error. It gave up after
    48 timed-out connects before, with 3-6 of the 200 open."""
    with SlowAcceptor(EchoApp(EchoOptions(payload_size=64)), every_s=0.003) as server:
        r = consistent(
            echo_load(
                HOST,
                server.port,
                connections=200,
                payload_bytes=64,
                duration=0.5,
                connect_timeout=0.5,
            )
        )
        accepted = server.accepted
    gen = r.generator
    assert gen.listen_overflows  # the queue did overflow (the host's counter)
    assert (gen.connections_ready, gen.connect_failures) == (200, 0)
    assert r.errors["connect"] == 0
    assert r.valid, r.invalid_reasons
    assert accepted == 200
    assert gen.connect_s is not None and gen.connect_s > 0
