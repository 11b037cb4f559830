"""Connections on bare sockets (``asyncio_io.raw_connection``), where the run's rules meet
the raw path's own bookkeeping: a connect given up twice in one loop turn is one failed
connect (one reopen, one permit) (issue 34).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from time import monotonic_ns
from typing import Any

import pytest
from servers import StartHttp

from pytest_netbench import http_spec
from pytest_netbench._engine.asyncio_io.engine import ClosedRun
from pytest_netbench._engine.asyncio_io.raw_connection import RawHttpConnection
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.share import split_load


@pytest.fixture
def event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_two_cancels_of_a_connect_in_one_turn_reopen_its_slot_once(
    event_loop: asyncio.AbstractEventLoop, http_server: StartHttp
) -> None:
    # The sweeper (a connect timeout) and the connect phase, or the stop, may both give up
    # one connect in the same turn of the loop: the run must hear of one failed connect,
    # so the slot is reopened once, with one permit.
    server, _ = http_server(stall_every=1)  # no answer: nothing else opens a connection
    spec = http_spec(server.url, keepalive=False, connections=1, requests=20)
    share = split_load(spec)[0]
    run = ClosedRun(event_loop, spec, build_exchange(spec), share, monotonic_ns(), None)
    assert run.connection_class is RawHttpConnection
    run.contact.reached = True  # a server listens: a failed connect is retried at once
    failed: list[object] = []
    connect_failed = run.connect_failed

    def counted(conn: Any, exc: BaseException | None) -> None:
        failed.append(conn)
        connect_failed(conn, exc)

    run.connect_failed = counted  # type: ignore[method-assign]

    async def scenario() -> tuple[int, int, int, dict[str, int]]:
        run.begin()  # one connection, connecting (on loopback, told on the next turn)
        (first,) = run.connections
        assert first.connect_task is not None
        first.connect_task.cancel()
        first.connect_task.cancel()  # the same turn
        for _ in range(3):
            await asyncio.sleep(0)
        errors = {kind: n for kind, n in run.recorder.errors.items() if n}
        return len(failed), run.opened, run.recorder.sent, errors

    try:
        failures, opened, sent, errors = event_loop.run_until_complete(scenario())
    finally:
        run.stop()
    # One failed connect; the first connection and the one reopened in its place; a
    # permit for each (the failed request and its successor), not two for one slot.
    assert (failures, opened, sent) == (1, 2, 2)
    assert errors == {"connect": 1}  # the first request, as a connect given up
