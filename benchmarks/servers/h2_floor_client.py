"""The floor for netbench's HTTP/2: ``_proto/h2_client`` driven by the least a uvloop
client can do, before any engine exists around it (issue 22).

An ``asyncio.Protocol`` per connection feeding an ``H2ClientConnection``; each response
recorded as a latency in an ``array('q')`` (start times kept per stream id in a dict, as
streams end out of order); after each read, as many new streams as ended, in one write. No
timeouts, no statistics: what the engine integration adds must be measured against this.

As a script: ``python h2_floor_client.py CPU PORT CONNECTIONS STREAMS DURATION_S``; prints
one line ``H2_REPORT {"ok": n, "errors": e, "elapsed_s": t, "cpu_s": c}`` (CPU of the run
only, not start-up).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import time
from array import array
from time import monotonic_ns

import uvloop

from pytest_netbench._proto.h2_client import H2ClientConnection, H2Request, StreamError
from pytest_netbench._proto.h2_headers import encode_request_block


class _State:
    def __init__(self) -> None:
        self.latencies: array[int] = array("q")
        self.errors = 0
        self.stopping = False


class _FloorConnection(asyncio.Protocol):
    def __init__(self, state: _State, request: H2Request, streams: int) -> None:
        self.state = state
        self.record = state.latencies.append
        self.starts: dict[int, int] = {}
        self.client = H2ClientConnection(
            request, self.on_response, self.on_error, max_streams=streams
        )
        self.streams = streams

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.write = transport.write  # type: ignore[attr-defined]
        preface = self.client.initiate()
        self.open(self.streams)
        self.write(preface + self.client.data_to_send())

    def open(self, count: int) -> None:
        first, opened = self.client.open_streams(count)
        now = monotonic_ns()
        starts = self.starts
        for stream_id in range(first, first + 2 * opened, 2):
            starts[stream_id] = now

    def on_response(self, stream_id: int, status: int) -> None:
        self.record(monotonic_ns() - self.starts.pop(stream_id))

    def on_error(self, stream_id: int, error: StreamError) -> None:
        self.starts.pop(stream_id, None)
        self.state.errors += 1

    def data_received(self, data: bytes) -> None:
        client = self.client
        client.feed(data)
        if not self.state.stopping:
            free = client.free_streams
            if free:
                self.open(free)
        out = client.data_to_send()
        if out:
            self.write(out)


async def _drive(port: int, connections: int, streams: int, duration_s: float, state: _State):
    loop = asyncio.get_running_loop()
    request = H2Request(encode_request_block("GET", "http", f"127.0.0.1:{port}", "/"))
    transports = []
    for _ in range(connections):
        transport, _ = await loop.create_connection(
            lambda: _FloorConnection(state, request, streams), "127.0.0.1", port
        )
        transports.append(transport)
    await asyncio.sleep(duration_s)
    state.stopping = True
    for transport in transports:
        transport.close()


def _child(cpu: int, port: int, connections: int, streams: int, duration_s: float) -> None:
    os.sched_setaffinity(0, {cpu})
    state = _State()
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    uvloop.run(_drive(port, connections, streams, duration_s, state))
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    report = {"ok": len(state.latencies), "errors": state.errors, "elapsed_s": elapsed}
    report["cpu_s"] = cpu_s
    print("H2_REPORT " + json.dumps(report), flush=True)


if __name__ == "__main__":
    _child(*(int(arg) for arg in sys.argv[1:5]), float(sys.argv[5]))
