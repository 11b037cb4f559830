"""Hello-world latency of reference servers under the same load, one matrix at the end.

    pytest --netbench examples/test_hello_servers.py          # well under a minute on 2 cores
    pytest --netbench examples/test_hello_servers.py --netbench-scale 5   # steadier numbers
    pytest --netbench examples/test_hello_servers.py --netbench-trials 3 \
        --netbench-markdown results.md
    pytest --netbench examples/test_hello_servers.py \
        --netbench-metrics p50_ms,p99_ms,server.cpu_ms_per_request

(``pytest --netbench examples/`` runs this comparison and the five write-ups beside it,
the ``test_seed_*.py`` modules, in 3.5 to 5 minutes: see docs/examples.md.)

Every server gets the same open-loop load: RATE requests per second on a pool of keep-alive
connections, latency measured from when each request was due (so a server that stalls is
charged for the queue it causes). An open loop at a fixed rate is used on purpose: on a
small machine a closed loop ("as fast as possible") against a fast server mostly measures
the generator, and netbench marks such results invalid rather than report them. The rps
column shows the rate was achieved; p99 is the comparison. Servers whose toolchain is
missing here are skipped with the reason.
"""

from __future__ import annotations

import pytest

RATE = 1000  # requests per second; every server in the list sustains it on 2 busy cores

SERVERS = [
    "asyncio_uvloop",
    "aiohttp",
    "tornado",
    "twisted_web",
    "gevent",
    "go",
    "node",
    "nginx",
    "c",
    "rust",
]


@pytest.mark.parametrize("connections", [10, 100])
@pytest.mark.parametrize("server", SERVERS, indirect=True)
def test_hello(netbench, server, connections):
    r = netbench.http(server.url, connections=connections, rate=RATE, duration=1.0, warmup=0.2)
    assert r.sent == r.ok + r.errors_total + r.in_flight
    assert r.errors_total == 0, r.error_samples
    assert r.ok > 0
