"""Hello-world throughput and latency of reference servers, one matrix at the end.

    pytest --netbench examples/                       # about two minutes on 2 cores
    pytest --netbench examples/ --netbench-scale 5    # longer loads, steadier numbers
    pytest --netbench examples/ --netbench-trials 3 --netbench-markdown results.md

Servers whose toolchain is missing on this machine are skipped with the reason. Every
load runs in closed loop (a fixed number of keep-alive connections) for one second after
a short warm-up; numbers on a shared 2-core machine are indicative, not a ranking.
"""

from __future__ import annotations

import pytest

SERVERS = [
    "asyncio_uvloop",
    "tornado",
    "twisted_web",
    "gevent",
    "aiohttp",
    "go",
    "node",
    "nginx",
    "c",
    "rust",
]


@pytest.mark.parametrize("connections", [10, 100])
@pytest.mark.parametrize("server", SERVERS, indirect=True)
def test_hello(netbench, server, connections):
    r = netbench.http(server.url, connections=connections, duration=1.0, warmup=0.2)
    assert r.sent == r.ok + r.errors_total + r.in_flight
    assert r.errors_total == 0, r.error_samples
    assert r.ok > 0
