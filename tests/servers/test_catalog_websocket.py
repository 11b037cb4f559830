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
