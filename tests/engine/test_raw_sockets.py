"""Connections on bare sockets (``asyncio_io.raw_connection``), where the run's rules meet
the raw path's own bookkeeping: a connect given up twice in one loop turn is one failed
connect (one reopen, one permit), and a connection's first read that is stable but not a
whole response is parsed once, not again on every connection (issue 34).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from time import monotonic_ns
from typing import Any

import pytest
from servers import ServerThread, StartHttp

from pytest_netbench import LoadResult, http_load, http_spec
from pytest_netbench._engine.asyncio_io import raw_connection
from pytest_netbench._engine.asyncio_io.engine import ClosedRun
from pytest_netbench._engine.asyncio_io.raw_connection import RawHttpConnection
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.share import split_load

Check = Callable[[LoadResult], LoadResult]
OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\n"
OK_BODY = b"hello, world"


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


class HeadThenBody:
    """Answers each request with its head in one write and its body in another, 20 ms
    later, then closes: every connection's first read is the same head, never whole (a
    client that did not read for 20 ms would read both: still one read parsed once)."""

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        writer.write(OK_HEAD)
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(OK_BODY)
        await writer.drain()
        writer.close()


def test_a_stable_first_read_that_is_no_whole_response_is_parsed_once(
    monkeypatch: pytest.MonkeyPatch, consistent: Check
) -> None:
    checked: list[bytes] = []
    only_final_response = raw_connection.only_final_response

    def counted(data: bytes) -> tuple[int, bool] | None:
        checked.append(data)
        return only_final_response(data)

    monkeypatch.setattr(raw_connection, "only_final_response", counted)
    with ServerThread(HeadThenBody()) as server:
        result = consistent(
            http_load(server.url, loop="asyncio", connections=2, requests=40, keepalive=False)
        )
    assert (result.ok, result.errors_total) == (40, 0)
    assert result.generator.connections_opened == 40
    # Each connection's first read is the head alone (the body comes later). Seen twice,
    # it is checked once, found to be no whole response, and remembered as such.
    assert checked.count(OK_HEAD) == 1, len(checked)
    assert len(checked) == len(set(checked))  # no read is checked twice
