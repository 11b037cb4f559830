"""WebSocket broadcast servers holding rising connection counts, in seed 002's shape
(issue 23, held connections and pushes).

The catalog's WebSocket apps (tornado's WebSocketHandler, aiohttp's WebSocketResponse,
Go's gorilla/websocket, Node.js's ws package) on ``/broadcast?every_ms=100``: every 100 ms
each stamps one message with its send time and writes it to every connection on it. The
server is pinned to one core and the generator to the other; the connections open before
the measured window and then only listen (``listen=True``), each pinged every second;
every push's delivery latency is measured from its stamp to its arrival, and a probe
client every 100 ms (one more client that connects and waits for its first push) measures
the client delay beside the load.

    pytest --netbench examples/test_websocket_push.py                 # 2 s per load
    pytest --netbench examples/test_websocket_push.py --netbench-scale 5

What to look at: the matrix, a row per server and connection count: pushes a second
(connections x 10 when the server keeps up), the delivery p50 and p99 (how long a
broadcast takes to reach everyone: the last connection written gets it last), the client
delay (``probe.p99_ms``), and the server's CPU seconds and voluntary context switches.
"""

from __future__ import annotations

import os

import pytest

LOAD_S = 2.0
EVERY_MS = 100
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
def test_websocket_broadcast(netbench, server, connections):
    r = netbench.ws(
        f"ws://127.0.0.1:{server.port}/broadcast?every_ms={EVERY_MS}",
        server=server,
        listen=True,  # held connections, opened before the window; pushes counted
        connections=connections,
        duration=LOAD_S,
        stamp_field="ts",  # the apps stamp {"ts": epoch us}: delivery latency
        ping_every=1.0,
        cpus=CLIENT_CPUS,
        probe_every=0.1,  # "Client Delay": one more client every 100 ms
        timeout=30.0,
        allow_invalid=True,
        retries=0,
    )
    assert r.sent == r.ok + r.errors_total + r.in_flight
    assert r.errors_total == 0, r.error_samples  # no connection lost, every stamp read
    assert r.generator.connections_ready == connections
    assert r.ok > 0
    assert r.probe is not None and r.probe.errors_total == 0, r.probe
