"""WebSocket echo servers under rising connection counts, in seed 002's shape (issue 23).

Seed 002 flooded echo servers with more and more connections, one core for the server and
one for the client, and watched messages a second, latency, the server's CPU and its
context switches. Here the same for the catalog's WebSocket echo apps (tornado's
WebSocketHandler, aiohttp's WebSocketResponse, Go's gorilla/websocket, Node.js's ws
package), each pinned to one core and the generator to the other: every connection opens
with the handshake before the measured window, then sends a 64-byte text message and
awaits its echo, again and again (closed loop), every echo checked; a probe client every
100 ms (one more client that connects, opens the WebSocket, exchanges one message and
leaves) measures the client delay beside the load.

    pytest --netbench examples/test_websocket_echo.py                 # 1 s per load
    pytest --netbench examples/test_websocket_echo.py --netbench-scale 10

What to look at: the matrix, a row per server and connection count: messages a second,
the echoes' p50 and p99, the client delay (``probe.p99_ms``), the server's CPU seconds and
voluntary context switches during the window. Where does a server stop gaining from more
connections, how does the client delay grow with them, and which one pays for its rate
with the most context switches? On 2 shared cores a closed loop may saturate the
generator as much as the server; such results are kept, marked invalid.
"""

from __future__ import annotations

import os

import pytest

LOAD_S = 1.0
CONNECTIONS = [10, 100, 1000]
_CPUS = sorted(os.sched_getaffinity(0))
SERVER_CPUS, CLIENT_CPUS = (str(_CPUS[-1]), str(_CPUS[0])) if len(_CPUS) > 1 else (None, None)
SERVERS = [
    {"name": name, "app": "ws", "cpus": SERVER_CPUS}
    for name in ["tornado", "aiohttp", "go", "node"]
]

pytestmark = pytest.mark.netbench(
    metrics=[
        "rps",
        "p50_ms",
        "p99_ms",
        "probe.p99_ms",
        "server.cpu_s",
        "server.ctx_switches_voluntary",
    ]
)


@pytest.mark.parametrize("connections", CONNECTIONS)
@pytest.mark.parametrize("server", SERVERS, indirect=True)
def test_websocket_echo(netbench, server, connections):
    r = netbench.ws(
        server,
        connections=connections,
        duration=LOAD_S,
        connect_first=True,  # handshakes before the window, as seed 002 connected first
        cpus=CLIENT_CPUS,
        probe_every=0.1,  # "Client Delay": one more client every 100 ms
        timeout=30.0,
        allow_invalid=True,
        retries=0,
    )
    assert r.sent == r.ok + r.errors_total + r.in_flight
    assert r.errors_total == 0, r.error_samples  # every echo came back whole and equal
    assert r.generator.connections_ready == connections
    assert r.ok > 0
    assert r.probe is not None and r.probe.errors_total == 0, r.probe
    assert r.probe.ok > 0
