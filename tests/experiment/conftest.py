"""Test servers of known speed (``paced_server.py``, ``warming_server.py``), run as
subprocesses so their CPU and the generator's do not share one interpreter."""

from __future__ import annotations

import re
import select
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

PACED_SERVER = Path(__file__).with_name("paced_server.py")
LISTENING = re.compile(rb"NETBENCH_LISTENING port=(\d+)")

StartPaced = Callable[[float], str]


@pytest.fixture
def script_server() -> Iterator[Callable[..., str]]:
    """``script_server(path, *args)``: start the test server script ``path`` with ``args``
    and return its URL once it listens; every one started is killed at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start(script: Path, *args: float) -> str:
        proc = subprocess.Popen(
            [sys.executable, str(script), *map(str, args)], stdout=subprocess.PIPE
        )
        started.append(proc)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        match = LISTENING.search(proc.stdout.readline() if ready else b"")
        if match is None:
            pytest.fail(f"the test server {script.name} did not start")
        return f"http://127.0.0.1:{int(match.group(1))}/"

    yield start
    for proc in started:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.fixture
def paced_server(script_server: Callable[..., str]) -> StartPaced:
    """``paced_server(500)`` -> the URL of a server answering at most 500 requests/s."""
    return lambda rate: script_server(PACED_SERVER, rate)
