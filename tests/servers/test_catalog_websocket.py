"""The catalog's WebSocket echo apps: started by the launcher, loaded on every loop with
exact message counts, stopped clean (a server whose framework is missing is skipped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_netbench import SpecError, ToolchainMissing, ws_load
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server

WS_SERVERS = catalog.names(app="ws")


@pytest.fixture(params=WS_SERVERS)
def ws_server(request: pytest.FixtureRequest) -> Iterator[Server]:
    try:
        spec = catalog.get(request.param, app="ws")
    except ToolchainMissing as exc:
        pytest.skip(f"{request.param} cannot run here: {exc}")
    server = Server.from_spec(spec)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_the_websocket_servers_are_the_expected_ones() -> None:
    assert WS_SERVERS == ["tornado", "aiohttp", "go", "node"]


def test_messages_echo_on_every_loop(ws_server: Server, loop: str) -> None:
    url = f"ws://127.0.0.1:{ws_server.port}/chat"
    text = ws_load(url, connections=4, requests=200, subprotocols="chat.v1, chat.v0", loop=loop)
    binary = ws_load(url, connections=2, requests=50, message=bytes(range(256)) * 8, loop=loop)
    for r in (text, binary):
        assert r.sent == r.ok + r.errors_total + r.in_flight
        assert r.errors_total == 0, r.error_samples
    assert (text.ok, binary.ok) == (200, 50)


def test_a_server_without_a_websocket_app_says_so() -> None:
    with pytest.raises(SpecError, match=r"has no 'ws' app.*does no WebSocket"):
        catalog.get("java", app="ws")


def test_pushes_are_held_counted_and_stamped_on_every_loop(ws_server: Server, loop: str) -> None:
    # Every ws app pushes on /push and /broadcast (see docs/catalog.md).
    base = f"ws://127.0.0.1:{ws_server.port}"
    held = ws_load(
        f"{base}/push?every_ms=10",
        listen=True,
        connections=5,
        requests=100,
        stamp_field="ts",
        ping_every=0.05,
        loop=loop,
    )
    assert (held.sent, held.ok, held.errors_total) == (100, 100, 0), held.error_samples
    assert held.generator.connections_opened == 5 and held.latency.count == 100
    closing = ws_load(
        f"{base}/push?every_ms=5&close_after=4&close_code=4002",
        listen=True,
        connections=5,
        duration=30,  # ends once the last connection is closed
        loop=loop,
    )
    assert closing.errors["reset"] == 5 and closing.status_codes == {4002: 5}
    assert closing.sent == closing.ok + closing.errors_total + closing.in_flight
    everyone = ws_load(
        f"{base}/broadcast?every_ms=10",
        listen=True,
        connections=5,
        requests=50,
        stamp_field="ts",
        loop=loop,
    )
    assert (everyone.ok, everyone.errors_total) == (50, 0), everyone.error_samples
