"""Shared helpers for the launcher tests: the fixture server, and finding leftover processes.

Helpers are handed out as fixtures (not imported) because several test directories have a
conftest.py and ``from conftest import`` would pick whichever comes first on sys.path.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
NETSERVER = str(FIXTURES / "netserver.py")


def netserver_command(*extra: str) -> list[str]:
    """The fixture server told to bind the launcher's host and port."""
    return ["{python}", NETSERVER, "--host", "{host}", "--port", "{port}", *extra]


def marked_with(token: str, variable: str = "NETBENCH_OWNER") -> list[psutil.Process]:
    """Live (non-zombie) processes whose ``variable`` (a ``:`` chain) contains ``token``."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            marker = proc.environ().get(variable, "")
        except psutil.Error:
            continue
        if token in marker.split(":"):
            found.append(proc)
    return found


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def read_pids(pidfile: Path) -> list[int]:
    if not pidfile.exists():
        return []
    return [int(line) for line in pidfile.read_text().split()]


def ipv6_loopback_available() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.fixture
def subprocess_env() -> dict[str, str]:
    """Environment for helper scripts: the package importable, no inherited marker."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETBENCH_")}
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return env


@pytest.fixture
def neighbour() -> Iterator[Callable[..., psutil.Process]]:
    """``neighbour(cpu, cpu_seconds=None)`` starts a busy loop pinned to ``cpu`` as another
    job on the host would run it: no descendant of the test process, so never one of the
    load's own processes. Killed at teardown (checked by its start time, not its pid alone)."""
    started: list[psutil.Process] = []

    def start(cpu: int, cpu_seconds: float | None = None) -> psutil.Process:
        budget = [] if cpu_seconds is None else [str(cpu_seconds)]
        args = [sys.executable, str(FIXTURES / "busy_loop.py"), "--detach", str(cpu), *budget]
        done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=30)
        loop = psutil.Process(int(done.stdout))
        started.append(loop)
        return loop

    yield start
    for loop in started:
        with contextlib.suppress(psutil.Error):
            loop.kill()  # psutil checks it is still the process it was


@pytest.fixture
def cleanup_pids() -> Iterator[list[int]]:
    """Pids a test started outside the launcher; killed at teardown whatever happened."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()


class Helpers:
    """Namespace handed to tests by the ``helpers`` fixture."""

    fixtures = FIXTURES
    netserver = NETSERVER
    python = sys.executable
    netserver_command = staticmethod(netserver_command)
    marked_with = staticmethod(marked_with)
    alive = staticmethod(alive)
    wait_until = staticmethod(wait_until)
    read_pids = staticmethod(read_pids)
    ipv6_loopback_available = staticmethod(ipv6_loopback_available)


@pytest.fixture
def helpers() -> type[Helpers]:
    return Helpers
