"""Seed 001: "Stand back... I'm going to try science!" (Python vs PyPy vs Node.js).

The write-up swept each implementation of a small HTTP service with autobench/httperf at
demanded rates from 20 to 2,000 req/s, once with 1 and once with 10 requests per
connection, with ~1 KiB responses (and ~64 KiB and 204 No Content for Gevent (10) and
Node.js (10)). It then checked httperf with a second tool (weighttp) at each server's peak:
the tools differed by 14-19 % in the servers' relative speed, but ranked them the same:
Node.js, Gevent, WsgiRef-PyPy, WsgiRef. Node.js beat Gevent on latency and errors at
1 KiB, less so at 64 KiB; PyPy helped wsgiref only slightly; Gevent beat wsgiref by less
than one might expect.

Here: the catalog's node, gevent and wsgiref servers, and wsgiref on PyPy (``python=
"pypy3"``, the bootstrap's ``.venv-pypy``, named once in this repository's pyproject.toml).
The hello app's ``/bytes/1024``, ``/bytes/65536`` and ``/status/204`` stand in for the
1 KiB, 64 KiB and empty event lists. wsgiref speaks HTTP/1.0 and closes every connection,
so, as in the write-up, it is swept with 1 request per connection only.

What to look at:

- the sweep tables (and with ``--netbench-plot DIR`` autobench's three graphs, a line per
  implementation): where ``answered`` stops following the demanded ``rate``, and where
  p99 and errors climb; 1 KiB, 64 KiB and 204 each have their own table and pictures;
- the crosscheck table: the same closed loop, no keep-alive, measured by netbench and by
  ab (the write-up used weighttp, not packaged for Debian), with the write-up's rank of
  each server as a parameter;
- at the end of the session, under "netbench examples", the rankings by both tools and
  the write-up's s1/s2/s3 differences of ratios: do both tools rank the servers the same?

Run it:

    pytest --netbench examples/test_seed_001_autobench_sweeps.py
    pytest --netbench examples/test_seed_001_autobench_sweeps.py --netbench-scale 50

The default run sweeps 500, 1,500 and 3,000 req/s for 1 s each; at ``--netbench-scale 50``
each sweep covers the write-up's 20 to 2,000 req/s in 10 steps, then 2,500 and 3,000, 50 s
a step (about an hour and forty minutes in all), and each crosscheck run is 500,000
requests (the write-up's weighttp ran 3,000, about 10 s against its servers; 10,000 take
about 2 s against these).
"""

from __future__ import annotations

import math

import pytest

from pytest_netbench import http_load

STEP_S = 1.0  # each rate's duration; x50 = 50 s
# The write-up's rates ran from 20 to 2,000 req/s, where its MongoDB-backed servers
# saturated (Gevent (1) peaked at 323 req/s). The catalog's hello apps are lighter, so the
# sweep goes on past 2,000 until the slower ones saturate.
# Much past 3,000 new connections a second the generator itself saturates on 2 cores.
RATES = [500, 1500, 3000]
FULL_RATES = [*range(20, 2001, 220), 2500, 3000]  # autobench's 20..2,000, then on
CROSSCHECK_REQUESTS = 10_000  # ~2 s a tool here; the write-up's weighttp -n 3000 took ~10 s
CROSSCHECK_CONNECTIONS = 50
PRIME_S = 0.3  # an unrecorded load before any measured one, whatever the scale
PRIME_PYPY_S = 4.0

# name in the write-up -> the catalog server and its interpreter
IMPLEMENTATIONS = {
    "Node.js": {"ref": "node"},
    "Gevent": {"ref": "gevent"},
    "WsgiRef": {"ref": "wsgiref"},
    "WsgiRef-PyPy": {"ref": "wsgiref", "python": "pypy3"},
}
# The write-up's order by peak req/s, both tools agreeing (descending).
WRITEUP_RANKING = ["Node.js", "Gevent", "WsgiRef-PyPy", "WsgiRef"]

TOOLS = {"sweep": "sweep peak", "netbench": "netbench", "ab": "ab"}
# impl -> {"sweep": peak answered req/s at 1 request per connection, "netbench": ..., "ab": ...}
PEAKS: dict[str, dict[str, float]] = {}


def start(netbench_server, impl):
    """A fresh server, primed (an unrecorded load) so its first measured step meets it
    warm: PyPy's JIT needs seconds of traffic, which autobench's long runs gave it."""
    spec = IMPLEMENTATIONS[impl]
    server = netbench_server(spec["ref"], python=spec.get("python"))
    prime_s = PRIME_PYPY_S if spec.get("python") else PRIME_S
    http_load(server.url + "/bytes/1024", connections=10, duration=prime_s, keepalive=False)
    return server


def rates_for(full_size):
    return FULL_RATES if full_size else RATES


def check_sweep(result):
    for step in result.steps:
        r = step.result
        assert r.sent == r.ok + r.errors_total + r.in_flight
    # Below saturation a correct server answers what it is sent: the first step is far below.
    first = result.steps[0].result
    assert first.errors_total == 0, first.error_samples


@pytest.mark.parametrize(
    ("impl", "per_connection"),
    [
        ("Node.js", 10),
        ("Node.js", 1),
        ("Gevent", 10),
        ("Gevent", 1),
        ("WsgiRef", 1),
        ("WsgiRef-PyPy", 1),
    ],
)
def test_sweep_1k(netbench, netbench_server, full_size, impl, per_connection):
    """The main graphs: Gevent vs Node.js, sync vs async, PyPy vs CPython (1 KiB)."""
    server = start(netbench_server, impl)
    r = netbench.sweep(
        server.url + "/bytes/1024",
        rates=rates_for(full_size),
        duration=STEP_S,
        requests_per_connection=per_connection,
        timeout=5.0,  # httperf's --timeout 5 in autobench's configuration
        # Past a server's capacity an open loop queues; the generator is not at fault, but
        # on 2 shared cores it can be: keep such steps in the table (marked) instead of
        # failing the sweep.
        allow_invalid=True,
        retries=0,
    )
    check_sweep(r)
    if per_connection == 1:
        PEAKS.setdefault(impl, {})["sweep"] = max(s.answered_rate for s in r.steps)


@pytest.mark.parametrize("impl", ["Node.js", "Gevent"])
def test_sweep_64k(netbench, netbench_server, full_size, impl):
    """The 64K smackdown: Gevent (10) vs Node.js (10) with ~64 KiB responses."""
    server = start(netbench_server, impl)
    r = netbench.sweep(
        server.url + "/bytes/65536",
        rates=rates_for(full_size),
        duration=STEP_S,
        requests_per_connection=10,
        timeout=5.0,
        allow_invalid=True,  # as above
        retries=0,
    )
    check_sweep(r)
    assert r.steps[0].result.bytes_read >= 65536 * r.steps[0].result.ok


@pytest.mark.parametrize("impl", ["Node.js", "Gevent"])
def test_sweep_204(netbench, netbench_server, full_size, impl):
    """The empty result set: every response 204 No Content, Gevent (10) vs Node.js (10)."""
    server = start(netbench_server, impl)
    r = netbench.sweep(
        server.url + "/status/204",
        rates=rates_for(full_size),
        duration=STEP_S,
        requests_per_connection=10,
        timeout=5.0,
        allow_invalid=True,  # as above
        retries=0,
    )
    check_sweep(r)
    assert set(r.steps[0].result.status_codes) == {204}


@pytest.mark.parametrize(
    ("writeup_rank", "impl"), list(enumerate(WRITEUP_RANKING, start=1)), ids=WRITEUP_RANKING
)
def test_sanity_check(netbench, netbench_server, writeup_rank, impl):
    """The write-up's second-tool check: the same load by netbench and by ab."""
    # Primed in start(): both tools meet a warm server, or PyPy's JIT would warm up during
    # netbench's run and favour ab, which runs second.
    server = start(netbench_server, impl)
    r = netbench.crosscheck(
        server.url + "/bytes/1024",
        tool="ab",
        requests=CROSSCHECK_REQUESTS,
        connections=CROSSCHECK_CONNECTIONS,
        keepalive=False,  # the write-up checked its "(1)" runs: 1 request per connection
        # Against node a closed loop as fast as possible can saturate netbench's single
        # worker on 2 shared cores; the row is kept (marked) rather than failing the check.
        allow_invalid=True,
        retries=0,
    )
    nb = r.netbench
    assert nb.sent == nb.ok + nb.errors_total + nb.in_flight
    assert nb.errors_total == 0, nb.error_samples
    assert r.other.errors_total == 0, r.other.command
    PEAKS.setdefault(impl, {}).update(netbench=nb.rps, ab=r.other.rps)


@pytest.mark.netbench
def test_both_tools_rank_alike(writeup, full_size):
    """Both tools' order of the servers by req/s, and the write-up's s1..s3."""
    missing = [i for i in WRITEUP_RANKING if not {"netbench", "ab"} <= PEAKS.get(i, {}).keys()]
    if missing:
        pytest.skip(f"no crosscheck of {', '.join(missing)} in this session")
    tools = [t for t in TOOLS if all(t in PEAKS[impl] for impl in WRITEUP_RANKING)]
    writeup("Peak req/s at 1 request per connection, by each tool, in the write-up's order:")
    writeup(f"  {'':12}" + "".join(f"{impl:>14}" for impl in WRITEUP_RANKING))
    for tool in tools:
        cells = "".join(f"{PEAKS[impl][tool]:>14,.0f}" for impl in WRITEUP_RANKING)
        writeup(f"  {TOOLS[tool]:12}{cells}")
    top = max(rates_for(full_size))
    if "sweep" in tools and any(PEAKS[i]["sweep"] >= 0.95 * top for i in WRITEUP_RANKING):
        writeup(f"  (a sweep peak near the top rate, {top:,}/s, is a lower bound)")
    rankings = {
        tool: sorted(WRITEUP_RANKING, key=lambda impl, tool=tool: -PEAKS[impl][tool])
        for tool in tools
    }
    writeup("Order, highest first:")
    writeup(f"  {'write-up':12}" + " > ".join(WRITEUP_RANKING))
    for tool, order in rankings.items():
        writeup(f"  {TOOLS[tool]:12}" + " > ".join(order))
    same = rankings["netbench"] == rankings["ab"]
    writeup(f"netbench and ab rank the servers {'the SAME' if same else 'DIFFERENTLY'}.")
    # The write-up's check, with its formula: the difference between the two tools' ratios
    # of neighbours (s1 = WsgiRef-PyPy:WsgiRef, s2 = WsgiRef:Gevent, s3 = Gevent:Node.js).
    # It found 0.14 to 0.19.
    writeup("The write-up's s1..s3, |ratio by netbench - ratio by ab| (it found 0.14-0.19):")
    pairs = [("WsgiRef-PyPy", "WsgiRef"), ("WsgiRef", "Gevent"), ("Gevent", "Node.js")]
    for n, (a, b) in enumerate(pairs, start=1):
        by_netbench = _ratio(PEAKS[a]["netbench"], PEAKS[b]["netbench"])
        by_ab = _ratio(PEAKS[a]["ab"], PEAKS[b]["ab"])
        writeup(
            f"  s{n} = |{a}:{b}| = |{by_netbench:.2f} - {by_ab:.2f}|"
            f" = {abs(by_netbench - by_ab):.2f}"
        )
    for impl in WRITEUP_RANKING:
        assert PEAKS[impl]["netbench"] > 0 and PEAKS[impl]["ab"] > 0


def _ratio(a, b):
    return a / b if b else math.nan
