"""The floor for a Python generator: the least a uvloop client can do per request.

An ``asyncio.Protocol`` per connection, an httptools parser that only defines
``on_message_complete``, latencies appended to an ``array('q')``, the next request written
at once. No error handling, no statistics, no timeouts: it exists only so the benchmark can
show how far the engine is from what Python can do, on the same server in the same run.

As a script: ``python bare_client.py CPU PORT CONNECTIONS DURATION_S``; prints one line
``BARE_REPORT {"ok": n, "elapsed_s": t, "cpu_s": c}`` (CPU of the run only, not start-up).
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

import httptools
import uvloop
from measured import run_measured


class _State:
    def __init__(self) -> None:
        self.latencies: array[int] = array("q")
        self.stopping = False


class _BareConnection(asyncio.Protocol):
    def __init__(self, state: _State, request: bytes) -> None:
        self.state = state
        self.request = request
        self.record = state.latencies.append
        self.parser = httptools.HttpResponseParser(self)
        self.start = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.write = transport.write  # type: ignore[attr-defined]
        self.start = monotonic_ns()
        self.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_message_complete(self) -> None:
        now = monotonic_ns()
        self.record(now - self.start)
        if not self.state.stopping:
            self.start = now
            self.write(self.request)


async def _drive(port: int, connections: int, duration_s: float, state: _State) -> None:
    loop = asyncio.get_running_loop()
    request = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: bare\r\n\r\n".encode()
    transports = []
    for _ in range(connections):
        transport, _ = await loop.create_connection(
            lambda: _BareConnection(state, request), "127.0.0.1", port
        )
        transports.append(transport)
    await asyncio.sleep(duration_s)
    state.stopping = True
    for transport in transports:
        transport.close()


def _child(cpu: int, port: int, connections: int, duration_s: float) -> None:
    os.sched_setaffinity(0, {cpu})
    state = _State()
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    uvloop.run(_drive(port, connections, duration_s, state))
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    report = {"ok": len(state.latencies), "elapsed_s": elapsed, "cpu_s": cpu_s}
    print("BARE_REPORT " + json.dumps(report), flush=True)


def run_bare(cpu: int, port: int, connections: int, duration_s: float) -> dict[str, float]:
    """Run the bare client pinned to ``cpu``; returns ok, elapsed_s, cpu_s."""
    argv = [sys.executable, __file__, str(cpu), str(port), str(connections), str(duration_s)]
    done = run_measured(argv, timeout_s=duration_s + 60)
    marker = "BARE_REPORT "
    lines = [line for line in done.stdout.splitlines() if line.startswith(marker)]
    if done.returncode != 0 or not lines:
        sys.exit(f"bare client failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    report: dict[str, float] = json.loads(lines[-1][len(marker) :])
    return report


if __name__ == "__main__":
    _child(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
