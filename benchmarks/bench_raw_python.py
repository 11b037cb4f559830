"""What a new connection per request costs in Python on the raw-socket path, with no I/O
(issue 35): a real ``ClosedRun`` of raw connections (``RawHttpConnection``, no keep-alive,
50 connections) whose sockets and epoll are stand-ins, so every pass of
``RawSockets.ready`` serves each connection's read of the known response, closes it and
renews it, as a wake-up of the loop does under load, without the system calls.

    python benchmarks/bench_raw_python.py [--repeat 40] [--fold]

Prints the lowest of ``--repeat`` passes of 20 wake-ups (1000 requests), in ns per
request: the lowest is the one least disturbed by the rest of the machine. With
``--fold`` each pass ends with the once-a-second fold of its samples
(``Recorder.close_bucket``), its cost spread over the pass's requests as a second's is
over its own; but the stand-in clocks make latencies of a few microseconds, cheaper to
count than a real second's, and the fold's fixed work (the microsecond slots' scan) weighs
forty times more over a pass of 1000 than over a second of 40,000: for the fold at a real
spread, ``bench_fold.py --close``. What the system calls cost is not here: the C of
their wrappers, the kernel.
Compare two versions of the engine by running it with ``PYTHONPATH`` on each one's
``src/``, in alternating processes.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import itertools
import select
import time
from typing import Any

from pytest_netbench._engine.asyncio_io import raw_connection
from pytest_netbench._engine.asyncio_io.engine import ClosedRun
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._input.spec import http_spec

CONNECTIONS = 50
WAKEUPS = 20
RESPONSE = bytearray(
    b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\nHello, World!"
)
_fds = itertools.count(1000)


class _Epoll:
    """Says every registered socket is readable: its answer is there."""

    def __init__(self, real: Any) -> None:
        self.real = real  # the one the loop watches (its descriptor)
        self.fds: dict[int, int] = {}
        self.closed = False

    def fileno(self) -> int:
        return int(self.real.fileno())

    def register(self, fd: int, mask: int) -> None:
        self.fds[fd] = mask

    def modify(self, fd: int, mask: int) -> None:
        self.fds[fd] = mask

    def poll(self, timeout: float, most: int) -> list[tuple[int, int]]:
        return [(fd, select.EPOLLIN) for fd in self.fds]

    def close(self) -> None:
        self.closed = True
        self.real.close()


class _Socket:
    """A connect under way that takes the request at once, and reads the answer whole."""

    epoll: _Epoll

    def __init__(self, family: int, kind: int) -> None:
        self.fd = next(_fds)

    def fileno(self) -> int:
        return self.fd

    def connect_ex(self, address: Any) -> int:
        return errno.EINPROGRESS

    def getpeername(self) -> Any:
        return ("127.0.0.1", 9)

    def send(self, data: bytes) -> int:
        return len(data)

    def recv(self, size: int) -> bytes:
        return bytes(RESPONSE)  # a new object each read, as the kernel's

    def close(self) -> None:
        self.epoll.fds.pop(self.fd, None)  # closing takes it out of the epoll


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--fold", action="store_true", help="fold each pass's samples")
    args = parser.parse_args()

    spec = http_spec("http://127.0.0.1:9/", connections=CONNECTIONS, duration=1000, keepalive=False)
    loop = asyncio.new_event_loop()
    start = time.monotonic_ns() - 10**9  # the window opened a second ago: measured
    raw_connection.bare_socket = _Socket  # type: ignore[misc]
    run = ClosedRun(loop, spec, build_exchange(spec), split_load(spec)[0], start, None)
    raw = run.raw
    assert raw is not None and raw.renews and raw.answers_known
    raw.epoll = _Socket.epoll = _Epoll(raw.epoll)  # type: ignore[assignment]
    run.begin()
    raw._later()  # connected at once: the requests go out
    for _ in range(WAKEUPS * 5):  # warm up: the answer becomes known, the code specializes
        raw.ready()
    recorder = run.recorder
    recorder.close_bucket()
    best = float("inf")
    completed = run.completed
    for _ in range(args.repeat):
        began = time.perf_counter_ns()
        for _ in range(WAKEUPS):
            raw.ready()
        if args.fold:
            recorder.close_bucket()
        best = min(best, time.perf_counter_ns() - began)
    requests = WAKEUPS * CONNECTIONS
    assert run.completed - completed == requests * args.repeat, run.completed - completed
    what = "with the fold" if args.fold else "without the fold"
    print(f"{best / requests:.0f} ns per request ({what}; lowest of {args.repeat} passes)")
    raw.close()
    loop.close()


if __name__ == "__main__":
    main()
