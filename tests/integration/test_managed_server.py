"""Loads against a managed :class:`Server`: its figures land in the result, and its death
during (or before) a load is reported, not hidden."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_netbench import LoadResult, Scenario, Server, ServerCrashed, http_load, run_scenarios

Check = Callable[[LoadResult], LoadResult]
SERVERS_SCRIPT = str(Path(__file__).parents[1] / "engine" / "servers.py")


@pytest.fixture
def managed(tmp_path: Path) -> Iterator[Server]:
    server = Server(
        [sys.executable, SERVERS_SCRIPT, "http", "--port", "{port}"],
        port_pattern=r"NETBENCH_LISTENING port=(\d+)",
        name="test-http",
        log_dir=tmp_path,
        startup_timeout=20,
    )
    with server:
        yield server


def test_server_figures_land_in_the_result(loop: str, managed: Server, consistent: Check) -> None:
    r = consistent(http_load(managed.url, server=managed, loop=loop, connections=4, requests=300))
    assert (r.ok, r.errors_total) == (300, 0)
    assert r.server is not None
    assert r.server.pid == managed.pid
    assert r.server.cpu_s >= 0
    assert r.server.rss_peak_mb > 0
    assert r.server.threads_peak >= 1
    assert r.server.fds_peak >= 1
    assert r.to_dict()["server"]["pid"] == managed.pid


def test_server_killed_during_the_load_makes_the_result_invalid(
    managed: Server, consistent: Check
) -> None:
    assert managed.pid is not None
    killer = threading.Timer(0.3, os.kill, (managed.pid, signal.SIGKILL))
    killer.start()
    try:
        r = consistent(http_load(managed.url, server=managed, connections=2, duration=0.8))
    finally:
        killer.cancel()
    assert r.ok > 0
    assert r.errors["reset"] + r.errors["connect"] > 0
    assert not r.valid
    assert any("server died during the load" in reason for reason in r.invalid_reasons)


def test_dead_server_is_reported_before_any_load(managed: Server) -> None:
    assert managed.pid is not None
    os.kill(managed.pid, signal.SIGKILL)
    for _ in range(500):  # until the kernel has delivered the signal (bounded: 5 s)
        if not managed.running:
            break
        time.sleep(0.01)
    with pytest.raises(ServerCrashed, match=r"SIGKILL|signal 9"):
        http_load(managed.url, server=managed, requests=1)


def test_scenarios_sample_the_server_they_all_load(managed: Server) -> None:
    # It serves every scenario at once: its CPU is the total's, per request of all of them;
    # the total's phases are every scenario's together.
    r = run_scenarios(
        managed.url,
        {
            "browse": Scenario("/items", connections=2, requests=120),
            "admin": Scenario("/report", start=0.1, connections=1, requests=30),
        },
        server=managed,
    )
    total = r.total
    assert (total.sent, total.ok) == (150, 150)
    assert total.server is not None and total.server.pid == managed.pid
    assert total.server.rss_peak_mb > 0 and total.server.cpu_ms_per_request >= 0
    assert total.phases.wait.count == 150
    assert total.by_request["admin"].phases.wait.count == 30
    assert all(s.server is None for s in r.by_scenario.values())  # not split by guesswork
