"""What the fused keep-alive HTTP/1.1 path costs per response in Python and httptools, with
no I/O (issue 35): a real ``ClosedRun`` and ``FusedHttpConnection`` whose transport is a
stand-in, fed whole responses through ``data_received`` as uvloop would hand them over.

    python benchmarks/bench_fused_python.py [--repeat 40] [--same]

By default every response differs (an id and a body of 20 to 230 bytes, as the Go
server's ``vary`` mode answers), so each is parsed; ``--same`` feeds one response again
and again, which the identical-read shortcut answers without the parser. Prints the
lowest of ``--repeat`` passes over 1000 responses, in ns per response: the lowest is the
one least disturbed by the rest of the machine. Compare two versions of the engine by
running it with ``PYTHONPATH`` on each one's ``src/``, in alternating processes.

On a busy machine the lowest pass still moves by a few per cent. Instructions do not: this
machine has no hardware counters for ``perf stat``, but valgrind counts user-space
instructions exactly, and the difference of two pass counts leaves the start-up out:

    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        python benchmarks/bench_fused_python.py --repeat 12     # then --repeat 2

(instructions per response: the difference of the two "I refs" over 10,000).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import deque
from collections.abc import Callable

from pytest_netbench._engine.asyncio_io.engine import ClosedRun
from pytest_netbench._engine.asyncio_io.fused_http import FusedHttpConnection
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._input.spec import http_spec

RESPONSES = 1000


class _Transport:
    """Takes the next request and drops it: the run is all there is to measure. Its
    ``write`` is a C call, as uvloop's is, so that no Python frame of the stand-in's own
    is counted (a Python ``write`` added about 200 instructions a response)."""

    def __init__(self) -> None:
        self.write: Callable[[bytes], None] = deque(maxlen=0).append

    def abort(self) -> None:
        pass

    def close(self) -> None:
        pass


def response(i: int) -> bytes:
    body = b'{"id":%d,"pad":"%s"}' % (i, b"x" * (i % 200))
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: %d\r\n"
        b"Date: Sun, 29 Nov 2026 11:00:00 GMT\r\nContent-Length: %d\r\n\r\n" % (i, len(body))
    ) + body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--same", action="store_true", help="the same response every time")
    args = parser.parse_args()

    spec = http_spec("http://127.0.0.1:9/", connections=1, duration=1000)
    loop = asyncio.new_event_loop()
    start = time.monotonic_ns() - 10**9  # the window opened a second ago: measured
    run = ClosedRun(loop, spec, build_exchange(spec), split_load(spec)[0], start, None)
    conn = FusedHttpConnection(run)
    assert type(conn) is FusedHttpConnection
    conn.transport = transport = _Transport()  # type: ignore[assignment]
    conn._write = transport.write
    conn.pending.append(time.monotonic_ns())
    reads = [response(7 if args.same else i) for i in range(RESPONSES)]
    feed = conn.data_received
    for data in reads:  # warm up: the look-out for repeats settles, the code specializes
        feed(data)
    best = float("inf")
    for _ in range(args.repeat):
        began = time.perf_counter_ns()
        for data in reads:
            feed(data)
        best = min(best, time.perf_counter_ns() - began)
    conn.settle_counts()
    assert not conn.broken and run.completed == RESPONSES * (args.repeat + 1), run.completed
    kind = "the same response" if args.same else "every response different"
    print(f"{best / RESPONSES:.0f} ns per response ({kind}; lowest of {args.repeat} passes)")
    loop.close()


if __name__ == "__main__":
    main()
