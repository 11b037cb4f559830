"""A failure of each kind reads the same on every loop: the error sample of a load is the
engine's words for what happened (``_engine/rules/failures.py``), never the loop's.

Each test runs one load per loop against the same fault and compares the samples, and
pins the words themselves, so a report does not depend on the loop a load ran on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from pytest_netbench import LoadResult, TargetUnreachableError, http_load

LOOPS = ("asyncio", "uvloop", "trio")
StartServer = Callable[..., Any]


def samples(make: Callable[[str], LoadResult], kind: str) -> dict[str, str]:
    out = {}
    for loop in LOOPS:
        r = make(loop)
        assert r.sent == r.ok + r.errors_total + r.in_flight
        assert r.errors.get(kind, 0) > 0, (loop, dict(r.errors), r.error_samples)
        out[loop] = r.error_samples[kind]
    return out


@pytest.mark.parametrize("keepalive", [True, False], ids=["keep-alive", "close"])
def test_a_reset_reads_the_same_on_every_loop(fault_server: StartServer, keepalive: bool) -> None:
    server = fault_server("http", "--reset-every", "3")
    found = samples(
        lambda loop: http_load(
            server.url, loop=loop, connections=3, requests=30, keepalive=keepalive
        ),
        "reset",
    )
    assert set(found.values()) == {"connection reset by peer"}, found


@pytest.mark.parametrize("keepalive", [True, False], ids=["keep-alive", "close"])
def test_a_close_before_answering_reads_the_same_on_every_loop(
    fault_server: StartServer, keepalive: bool
) -> None:
    server = fault_server("http", "--close-every", "3")
    found = samples(
        lambda loop: http_load(
            server.url, loop=loop, connections=3, requests=30, keepalive=keepalive
        ),
        "reset",
    )
    assert set(found.values()) == {"server closed the connection before responding"}, found


def test_a_timeout_reads_the_same_on_every_loop(fault_server: StartServer) -> None:
    server = fault_server("http", "--stall-every", "2")
    found = samples(
        lambda loop: http_load(server.url, loop=loop, connections=2, requests=8, timeout=0.3),
        "timeout",
    )
    assert set(found.values()) == {"no complete response within 0.3s"}, found


def test_a_protocol_error_reads_the_same_on_every_loop(fault_server: StartServer) -> None:
    server = fault_server("http", "--malformed-every", "4")
    found = samples(
        lambda loop: http_load(server.url, loop=loop, connections=2, requests=16), "protocol"
    )
    assert len(set(found.values())) == 1, found
    assert "malformed" in found["trio"]


def test_a_status_error_reads_the_same_on_every_loop(fault_server: StartServer) -> None:
    server = fault_server("http", "--status-every", "2", "--status", "500")
    found = samples(
        lambda loop: http_load(server.url, loop=loop, connections=2, requests=8), "status"
    )
    assert set(found.values()) == {"HTTP 500"}, found


def test_a_refused_connect_reads_the_same_on_every_loop(fault_server: StartServer) -> None:
    # The server dies mid-run: connections lost, then connects refused (the target was
    # reached once, so the load goes on to its end and counts them).
    def killed_mid_run(loop: str) -> LoadResult:
        server = fault_server("http")
        killer = threading.Timer(0.3, server.process.kill)
        killer.start()
        try:
            return http_load(server.url, loop=loop, connections=2, duration=0.8)
        finally:
            killer.cancel()

    found = samples(killed_mid_run, "connect")
    # A connect racing the kill may be reset rather than refused: either way, in the same
    # words on every loop.
    words = {
        "connect failed: connection refused",
        "connect failed: ECONNRESET: Connection reset by peer",
    }
    assert set(found.values()) <= words, found


def test_a_target_never_reached_reads_the_same_on_every_loop(fault_server: StartServer) -> None:
    server = fault_server("http")
    server.process.kill()
    server.process.wait(10)
    messages = set()
    for loop in LOOPS:
        with pytest.raises(TargetUnreachableError) as caught:
            http_load(server.url, loop=loop, connections=2, requests=4)
        messages.add(str(caught.value).split(" attempts")[1].split(";", 1)[1])
    assert messages == {
        " connect failed: connection refused): is the server running and listening on that address?"
    }, messages
