"""The server behind a port, found by the sockets listening there: one tree's root however
many of its processes hold the socket, and none where unrelated processes listen apart
(SO_REUSEPORT). Real processes, each listening on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from pytest_netbench._servers.listening import find_listening_server

# Listens on the port given (SO_REUSEPORT), with FORKS children sharing the socket; says
# "ready" once they are all started, then waits to be killed.
LISTENER = """
import os, socket, sys, time
port, forks = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("127.0.0.1", port))
s.listen()
for _ in range(forks):
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
print("ready", flush=True)
time.sleep(60)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def listeners() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def _listen(stack: ExitStack, port: int, forks: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", LISTENER, str(port), str(forks)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )

    def stop() -> None:
        os.killpg(proc.pid, signal.SIGKILL)  # the group: the forks too
        proc.wait(timeout=10)
        assert proc.stdout is not None
        proc.stdout.close()

    stack.callback(stop)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def test_a_socket_its_children_share_names_the_parent(listeners: ExitStack) -> None:
    port = _free_port()
    parent = _listen(listeners, port, forks=3)
    server = find_listening_server(port)
    assert server is not None and server.pid == parent.pid


def test_unrelated_listeners_on_one_port_name_none(listeners: ExitStack) -> None:
    port = _free_port()
    _listen(listeners, port, forks=1)
    _listen(listeners, port, forks=0)
    assert find_listening_server(port) is None
