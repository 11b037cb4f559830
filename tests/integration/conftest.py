"""Fault-injecting servers as real subprocesses (so a test can SIGKILL one mid-run)."""

from __future__ import annotations

import re
import select
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVERS_SCRIPT = Path(__file__).parents[1] / "engine" / "servers.py"
LISTENING = re.compile(rb"NETBENCH_LISTENING port=(\d+)")


@dataclass
class RunningServer:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


StartServer = Callable[..., RunningServer]


@pytest.fixture(autouse=True)
def _bounded(hang_guard: None) -> None:
    """No integration test may hang the suite."""


@pytest.fixture
def fault_server(tmp_path: Path) -> Iterator[StartServer]:
    """``fault_server("http", "--status-every", "3")`` -> a server subprocess on 127.0.0.1.

    Arguments are those of ``tests/engine/servers.py``; every process is killed at teardown.
    """
    started: list[RunningServer] = []

    def start(kind: str = "http", *args: str) -> RunningServer:
        log = tmp_path / f"server-{len(started)}.log"
        with log.open("wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, str(SERVERS_SCRIPT), kind, *args],
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        line = proc.stdout.readline() if ready else b""
        match = LISTENING.search(line)
        if match is None:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            pytest.fail(f"test server did not start: {line!r}\n{log.read_text()}")
        server = RunningServer(proc, int(match.group(1)), log)
        started.append(server)
        return server

    yield start
    for server in started:
        server.process.kill()
        server.process.wait(10)
        assert server.process.stdout is not None
        server.process.stdout.close()
