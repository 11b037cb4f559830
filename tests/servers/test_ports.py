"""Ports: reservations outside the ephemeral range, conflicts named, many launches at once."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_netbench._errors import PortInUseError, SpecError
from pytest_netbench._servers import ports
from pytest_netbench._servers.launcher import Server


@pytest.fixture
def foreign_listener(cleanup_pids):
    """A plain Python process (not started by the launcher) listening on a port."""
    code = textwrap.dedent(
        """
        import socket, sys, time
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        print(s.getsockname()[1], flush=True)
        while True:
            conn, _ = s.accept()
            conn.close()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "foreign-listener"], stdout=subprocess.PIPE
    )
    cleanup_pids.append(proc.pid)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    yield proc, port
    proc.kill()
    proc.wait()
    proc.stdout.close()


def test_reserved_ports_avoid_the_ephemeral_range():
    low, high = ports.ephemeral_range()
    held = [ports.reserve_port("127.0.0.1") for _ in range(20)]
    try:
        numbers = [r.port for r in held]
        assert len(set(numbers)) == len(numbers)
        assert all(not low <= p <= high for p in numbers)
        assert all(p >= 1024 for p in numbers)
    finally:
        for reservation in held:
            reservation.release()


def test_a_reserved_port_cannot_be_claimed_twice():
    reservation = ports.reserve_port("127.0.0.1")
    try:
        with pytest.raises(PortInUseError, match="reserved by another netbench server"):
            ports.claim_port("127.0.0.1", reservation.port)
    finally:
        reservation.release()
    ports.claim_port("127.0.0.1", reservation.port).release()


def test_port_used_by_another_process_is_an_error_naming_it(helpers, foreign_listener):
    proc, port = foreign_listener
    server = Server(helpers.netserver_command(), port=port)
    with pytest.raises(PortInUseError) as info:
        server.start()
    message = str(info.value)
    assert f"port {port} on 127.0.0.1 is already in use by pid {proc.pid}" in message
    assert "(python: " in message and "socket" in message  # its name and command line
    assert server.pid is None  # nothing was launched


def test_server_that_reports_a_port_it_does_not_own_is_refused(
    helpers, foreign_listener, tmp_path: Path
):
    # The readiness check would succeed against the other process: the launcher must see
    # that the listener is not in the server's tree, not benchmark the wrong program.
    proc, port = foreign_listener
    cmd = ["{python}", helpers.netserver, "--port", "0", "--lie-port", str(port)]
    server = Server(cmd, port_pattern=r"NETBENCH_LISTENING port=(\d+)", log_dir=tmp_path)
    with pytest.raises(PortInUseError) as info:
        server.start()
    assert f"did not bind port {port}" in str(info.value)
    assert f"pid {proc.pid}" in str(info.value)
    assert server.pid is not None and not helpers.alive(server.pid)


def test_claiming_a_port_checks_the_address_is_local():
    reservation = ports.reserve_port("127.0.0.1")
    port = reservation.port
    reservation.release()
    with pytest.raises(SpecError, match="not an address of this machine"):
        ports.claim_port("192.0.2.1", port)  # TEST-NET-1: never local
    ports.claim_port("127.0.0.1", port).release()  # the failed claim left no lock behind


def test_sixteen_concurrent_launches_from_threads(helpers):
    servers = [Server(helpers.netserver_command(), startup_timeout=30) for _ in range(16)]
    try:
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(Server.start, servers))
        numbers = [s.port for s in servers]
        assert len(set(numbers)) == 16
        for server in servers:
            with socket.create_connection((server.host, server.port), timeout=5):
                server.check_alive()
    finally:
        for server in servers:
            server.stop()
    assert not any(helpers.alive(s.pid) for s in servers if s.pid)


def test_sixteen_concurrent_launches_from_processes(helpers, subprocess_env):
    # Four processes, four threads each, all reserving at the same moment.
    launcher = str(helpers.fixtures / "launch_many.py")
    procs = [
        subprocess.Popen(
            [sys.executable, launcher, helpers.netserver, "4"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=subprocess_env,
        )
        for _ in range(4)
    ]
    numbers: list[int] = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        numbers.extend(json.loads(out))
    assert len(numbers) == 16
    assert len(set(numbers)) == 16


def test_an_ephemeral_range_covering_everything_still_allows_reservations(tmp_path, monkeypatch):
    wide = tmp_path / "ip_local_port_range"
    wide.write_text("1024\t65535\n")
    monkeypatch.setattr(ports, "_EPHEMERAL_RANGE_FILE", str(wide))
    assert ports.ephemeral_range() == (1024, 65535)
    reservation = ports.reserve_port("127.0.0.1")
    try:
        assert 20000 <= reservation.port <= 65535
    finally:
        reservation.release()
