"""A crosscheck meets a server still warming up (issue 30): both tools must meet the same
server. The server here holds its first requests (a JIT compiling its hot path, counted in
requests so the test does not depend on the machine's speed); ab is the second tool."""

from __future__ import annotations

import shutil

import pytest
from servers import HttpApp, HttpOptions, ServerThread

from pytest_netbench import crosscheck

pytestmark = pytest.mark.skipif(
    shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)"
)

COLD_REQUESTS = 100
COLD_DELAY_MS = 20.0


def cold_app(delay_ms: float = COLD_DELAY_MS) -> HttpApp:
    return HttpApp(HttpOptions(cold_requests=COLD_REQUESTS, cold_delay_ms=delay_ms))


def test_a_server_that_changed_between_netbenchs_runs_is_marked_unsteady() -> None:
    # Cold for 0.875 s of netbench's first 1 s run (25 rounds of 35 ms at 4 connections):
    # its throughput is a fraction of the warm one's. At 20 ms (half the run cold) a CI
    # machine loaded beside the suite once made the warm run 21 % slower than the cold one.
    app = cold_app(delay_ms=35.0)
    with ServerThread(app) as server:
        result = crosscheck(server.url + "/", tool="wrk", duration=1, connections=4, warmup=0)
    assert result.warmup_s == 0
    # netbench met the cold requests; wrk and netbench's second run a warm server.
    assert result.netbench.max_ms >= 35.0
    assert result.again is not None and result.again.p50_ms < COLD_DELAY_MS
    assert result.drift > 0.15 and not result.steady


def test_the_warmup_runs_before_both_tools_so_both_meet_a_warm_server() -> None:
    app = cold_app()
    with ServerThread(app) as server:
        result = crosscheck(server.url + "/", tool="wrk", duration=1, connections=4)
    assert result.warmup_s == 1.0  # the default for a crosscheck
    # The warm-up took the cold requests: at 4 connections they last about half a second.
    assert result.netbench.p50_ms < COLD_DELAY_MS
    assert result.again is not None and result.again.p50_ms < COLD_DELAY_MS
    assert result.to_dict()["warmup_s"] == 1.0


def test_no_bracket_runs_netbench_once() -> None:
    with ServerThread(HttpApp()) as server:
        result = crosscheck(
            server.url + "/", tool="wrk", duration=1, connections=2, warmup=0, bracket=False
        )
    assert result.again is None and result.steady and result.netbench.ok > 0
