"""Fault injection against real server subprocesses: exact error counts and the invariant.

Faults are numbered (every Nth connection or request), so each count is exact whatever
the scheduling; every test runs on every engine loop.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from typing import Any

import pytest

from pytest_netbench import ERROR_KINDS, LoadResult, TargetUnreachableError, echo_load, http_load

Check = Callable[[LoadResult], LoadResult]
StartServer = Callable[..., Any]  # the fault_server fixture (tests/integration/conftest.py)


def only(errors: LoadResult, **expected: int) -> dict[str, int]:
    """The error mapping expected: the kinds given, zero for every other kind."""
    base = dict.fromkeys(ERROR_KINDS, 0)
    base.update(expected)
    assert dict(errors.errors) == base, errors.error_samples
    return base


def test_reset_every_fourth_connection(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--reset-every", "4")
    r = consistent(http_load(server.url, loop=loop, connections=4, requests=40, keepalive=False))
    only(r, reset=10)
    assert (r.sent, r.ok) == (40, 30)
    assert r.generator.connections_opened == 40
    assert "reset" in r.error_samples["reset"] or "closed" in r.error_samples["reset"]


def test_malformed_answer_every_fifth_request(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--malformed-every", "5")
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=50))
    only(r, protocol=10)
    assert r.ok == 40
    assert "malformed" in r.error_samples["protocol"]
    # A broken connection is replaced unless the requests ran out: 2 + 10, less up to 2.
    assert 10 <= r.generator.connections_opened <= 12


def test_5xx_answers_are_status_errors_counted_per_code(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--status-every", "3", "--status", "503")
    r = consistent(http_load(server.url, loop=loop, connections=3, requests=30))
    only(r, status=10)
    assert r.ok == 20
    assert dict(r.status_codes) == {200: 20, 503: 10}
    assert r.error_samples["status"] == "HTTP 503"
    assert r.latency.count == 20  # failed answers are not in the latency figures
    assert r.generator.connections_opened == 3  # a 5xx keeps the connection


def test_unsolicited_bytes_are_protocol_errors(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    # The server greets every connection before any request, as an SMTP server would.
    server = fault_server("http", "--greet", "220 welcome\r\n")
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=10, keepalive=False))
    only(r, protocol=10)
    assert r.generator.connections_opened == 10


def test_server_closing_before_answering_is_a_reset(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--close-every", "3")
    r = consistent(http_load(server.url, loop=loop, connections=3, requests=30, keepalive=False))
    only(r, reset=10)
    assert r.ok == 20
    assert "closed" in r.error_samples["reset"]


def test_server_killed_mid_run_ends_in_reset_and_connect_errors_without_hanging(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http")
    killer = threading.Timer(0.3, server.process.kill)
    killer.start()
    try:
        r = consistent(
            http_load(server.url, loop=loop, connections=4, duration=0.8, connect_timeout=0.5)
        )
    finally:
        killer.cancel()
    assert server.process.wait(5) == -9
    assert r.ok > 0
    assert r.errors["reset"] + r.errors["connect"] > 0
    assert r.errors["timeout"] == r.errors["protocol"] == r.errors["status"] == 0
    if r.errors["connect"]:
        # Refused once the port is closed; a connect caught in the dying backlog is reset.
        sample = r.error_samples["connect"]
        assert "refused" in sample or "ECONNRESET" in sample, sample


def test_stalled_connections_time_out_exactly(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--stall-every", "5")
    r = consistent(
        http_load(server.url, loop=loop, connections=4, requests=20, keepalive=False, timeout=0.5)
    )
    only(r, timeout=4)
    assert r.ok == 16
    assert "0.5" in r.error_samples["timeout"]


def test_connection_close_after_each_response_reconnects_without_errors(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--framing", "connection-close")
    r = consistent(http_load(server.url, loop=loop, connections=3, requests=30))
    only(r)
    assert r.ok == 30
    assert r.generator.connections_opened == 30


def test_slow_answers_at_the_deadline_are_in_flight_not_errors(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--delay-ms", "2000")
    r = consistent(http_load(server.url, loop=loop, connections=3, duration=0.3))
    only(r)
    assert (r.sent, r.ok, r.in_flight) == (3, 0, 3)


def test_failures_during_warmup_are_not_counted(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--status-every", "1", "--status", "500")
    r = consistent(http_load(server.url, loop=loop, connections=2, duration=0.2, warmup=0.2))
    # consistent() checks status_codes add up to the measured answers only.
    assert r.ok == 0
    assert r.errors["status"] == r.sent - r.in_flight > 0
    assert set(r.status_codes) == {500}


def test_open_loop_resets_are_exact(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--reset-every", "2")
    r = consistent(http_load(server.url, loop=loop, rate=200, requests=20, keepalive=False))
    only(r, reset=10)
    assert r.ok == 10


def test_open_loop_against_a_stalled_server_times_out_or_stays_in_flight(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("http", "--stall-every", "1")
    # The drain waits out the request timeout, so every request sent ends as a timeout.
    r = consistent(http_load(server.url, loop=loop, rate=50, duration=0.6, timeout=0.2))
    assert r.ok == 0
    assert r.in_flight == 0
    assert r.errors_total == r.errors["timeout"] == r.sent > 0
    # Without it, those sent in the last 0.2 s had not yet timed out at the deadline.
    r = consistent(
        http_load(server.url, loop=loop, rate=50, duration=0.6, timeout=0.2, drain=False)
    )
    assert r.ok == 0
    assert r.errors_total == r.errors["timeout"] > 0
    assert r.in_flight > 0


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_refused_target_is_unreachable(loop: str) -> None:
    port = unused_port()
    with pytest.raises(TargetUnreachableError, match="refused"):
        http_load(f"http://127.0.0.1:{port}/", loop=loop, connections=2, requests=5)
    with pytest.raises(TargetUnreachableError, match="refused"):
        echo_load("127.0.0.1", port, loop=loop, connections=2, duration=0.2)


def test_echo_server_killed_mid_run(
    loop: str, fault_server: StartServer, consistent: Check
) -> None:
    server = fault_server("echo")
    killer = threading.Timer(0.3, server.process.kill)
    killer.start()
    try:
        r = consistent(echo_load("127.0.0.1", server.port, loop=loop, connections=2, duration=0.8))
    finally:
        killer.cancel()
    assert r.ok > 0
    assert r.errors["reset"] + r.errors["connect"] > 0
    assert r.errors["verify"] == r.errors["timeout"] == 0


def test_a_load_too_big_for_one_process_runs_spread_over_workers(
    fault_server: StartServer,
) -> None:
    """The generator may hold 700 files (hard limit, lowered in a child): 1,500
    connections run anyway, spread over 3 worker processes, and the result says why."""
    server = fault_server("echo")
    code = textwrap.dedent(
        f"""
        import json, resource
        resource.setrlimit(resource.RLIMIT_NOFILE, (600, 700))
        from pytest_netbench import echo_load
        r = echo_load("127.0.0.1", {server.port}, connections=1500, requests=3000)
        print(json.dumps(r.to_dict()))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout.splitlines()[-1])
    assert data["generator"]["workers"] == 3
    assert "spread over 3 worker processes" in data["generator"]["notes"][0]
    assert data["generator"]["connections_ready"] == 1500
    assert (data["sent"], data["ok"], data["errors_total"]) == (3000, 3000, 0)
