"""End-to-end: ``netbench.ws(...)`` in a test against a catalog WebSocket server (issue 23),
recorded like any load; bad arguments fail the test with the library's message."""

from __future__ import annotations

import pytest

WS_TESTS = """
import pytest


@pytest.fixture
def ws_echo(netbench_server):
    return netbench_server("tornado", app="ws")


def test_ws(netbench, ws_echo):
    r = netbench.ws(ws_echo, connections=3, requests=90)
    assert (r.sent, r.ok, r.errors_total) == (90, 90, 0)
    assert r.url.startswith("ws://127.0.0.1:")
    assert r.server is not None  # the managed server was sampled


def test_ws_path_and_subprotocol(netbench, ws_echo):
    url = f"ws://127.0.0.1:{ws_echo.port}/room/1"
    r = netbench.ws(url, server=ws_echo, requests=20, subprotocols=["chat"], binary=True)
    assert r.ok == 20


def test_ws_bad_url(netbench, ws_echo):
    netbench.ws(f"https://127.0.0.1:{ws_echo.port}/", requests=1)
"""


def test_a_websocket_load_is_recorded(pytester: pytest.Pytester) -> None:
    pytest.importorskip("tornado")
    pytester.makepyfile(WS_TESTS)
    result = pytester.runpytest_subprocess("--netbench", "--netbench-json=out.json")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*a WebSocket URL is ws:// or wss://*"])
    import json

    records = json.loads((pytester.path / "out.json").read_text())
    urls = {r["function"].rpartition("::")[2]: r["result"]["url"] for r in records["records"]}
    assert set(urls) == {"test_ws", "test_ws_path_and_subprotocol"}
    assert urls["test_ws_path_and_subprotocol"].endswith("/room/1")
    assert all(url.startswith("ws://127.0.0.1:") for url in urls.values())


LISTEN_TESTS = """
def test_pushes(netbench, netbench_server):
    server = netbench_server("aiohttp", app="ws")
    url = f"ws://127.0.0.1:{server.port}/push?every_ms=10"
    r = netbench.ws(url, server=server, listen=True, connections=4, requests=60, stamp_field="ts")
    assert (r.sent, r.ok, r.errors_total) == (60, 60, 0)
    assert r.latency.count == 60


def test_listen_options_need_listen(netbench, netbench_server):
    netbench.ws("ws://127.0.0.1:9/", ping_every=1, requests=1)
"""


def test_a_listen_load_is_recorded(pytester: pytest.Pytester) -> None:
    pytest.importorskip("aiohttp")
    pytester.makepyfile(LISTEN_TESTS)
    result = pytester.runpytest_subprocess("--netbench", "--netbench-json=out.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*ping_every is an option of a listen load*add listen=True*"])
    import json

    records = json.loads((pytester.path / "out.json").read_text())
    [record] = records["records"]
    assert record["result"]["ok"] == 60 and record["result"]["url"].endswith("every_ms=10")
