"""Seed 000: "Scala and Python: An informal TCP performance benchmark" (Brian Clapper).

The write-up ran ``ab -c 1000 -n 100000`` (no ``-k``: every request on a new connection)
against deliberately naive servers, after "priming the pump" with a few thousand
requests, and again with ``-c 50``. It ranked a Scala (JVM) server first, then fapws3
(C, libev), Python's ``SocketServer``, a Twisted TCP server, ``twisted.web`` and a Python
actor server last; going from 1,000 to 50 connections helped the JVM and fapws3 and
changed little for the rest, while the longest request took 9 to 94 s at 1,000.

Here: the catalog's Python servers (socketserver, twisted, twisted_web, tornado, gevent,
eventlet, asyncio streams) and three foreign ones standing in for the write-up's
(java for the JVM, c for the libev one, go), each with the same closed loop: REQUESTS
requests without keep-alive, at 1,000 and at 50 connections, after a warm-up.

What to look at: the matrix has the write-up's columns (mean req/s, time per request =
the mean latency, the 50/75/90 % latencies and the longest request), a row per server and
a column group per connection count. Does the order of the servers hold at both
connection counts, and how far does the longest request run from the median at 1,000?
(The catalog's ``twisted`` hello app is ``twisted.web`` too, so its row and
``twisted_web``'s measure the same code twice: how far they differ is the noise.)

Run it:

    pytest --netbench examples/test_seed_000_ab_naive_servers.py   # 2,000 requests a load
    pytest --netbench examples/test_seed_000_ab_naive_servers.py --netbench-scale 50
                                                            # 100,000 a load, as ab -n 100000

A closed loop as fast as possible against the fastest servers (go, c, java) runs the
generator flat out on a 2-core machine; those results may be marked invalid (``!`` in the
matrix) with that reason, as ab's figures would have been the client's too.
"""

from __future__ import annotations

import pytest

REQUESTS = 2_000  # x50 (--netbench-scale 50) = the write-up's ab -n 100000
WARMUP_S = 0.2  # "priming the pump": a few thousand requests first (x50 = 10 s)

SERVERS = [
    "java",  # the write-up's Scala server: the JVM
    "c",  # fapws3: C on an event loop (libev there, epoll here)
    "go",
    "socketserver",
    "twisted",
    "twisted_web",
    "tornado",
    "gevent",
    "eventlet",
    "asyncio_streams",
]

pytestmark = pytest.mark.netbench(
    metrics=["rps", "mean_ms", "p50_ms", "p75_ms", "p90_ms", "max_ms"]
)


@pytest.mark.parametrize("connections", [1000, 50])
@pytest.mark.parametrize("server", SERVERS, indirect=True)
def test_ab_without_keepalive(netbench, server, connections, netbench_scale):
    r = netbench.http(
        server.url,
        connections=connections,
        requests=REQUESTS,
        keepalive=False,
        warmup=WARMUP_S,
        # On two shared cores a closed loop against the fastest servers saturates the
        # generator (ab's figures had the same limit): keep the result, marked invalid,
        # rather than fail or run it three times.
        allow_invalid=True,
        retries=0,
    )
    assert r.sent == r.ok + r.errors_total + r.in_flight
    assert r.errors_total == 0, r.error_samples
    assert r.ok == r.sent == round(REQUESTS * netbench_scale)  # every request answered
