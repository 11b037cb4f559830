"""A server whose capacity is known (``paced_server.py``), run as a subprocess so its CPU
and the generator's do not share one interpreter."""

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
def paced_server() -> Iterator[StartPaced]:
    """``paced_server(500)`` -> the URL of a server answering at most 500 requests/s."""
    started: list[subprocess.Popen[bytes]] = []

    def start(rate: float) -> str:
        proc = subprocess.Popen(
            [sys.executable, str(PACED_SERVER), str(rate)],
            stdout=subprocess.PIPE,
        )
        started.append(proc)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        match = LISTENING.search(proc.stdout.readline() if ready else b"")
        if match is None:
            pytest.fail("the paced test server did not start")
        return f"http://127.0.0.1:{int(match.group(1))}/"

    yield start
    for proc in started:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
