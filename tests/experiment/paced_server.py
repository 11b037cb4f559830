"""An HTTP server with a known capacity: it answers at most R requests a second, one at a
time, first in first out (``python paced_server.py 500``).

Each request takes 1/R seconds of the server's one "worker": its answer leaves at
``max(arrival, previous answer) + 1/R``. Below R the latency stays near 1/R; above R the
queue, and the latency with it, grows for as long as the load lasts. The pacing is by the
clock, not by sleeping per request, so a late wake-up sends the answers that are due at
once and the long-run rate stays exactly R.

Listens on 127.0.0.1, on the port given after the rate or any free one, and prints
``NETBENCH_LISTENING port=<n>`` once it does.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


class PacedQueue:
    """Requests in arrival order, each answered at its turn."""

    def __init__(self, rate: float) -> None:
        self.service_s = 1.0 / rate
        self.waiting: deque[tuple[float, asyncio.Transport]] = deque()
        self.free_at = 0.0
        self.arrived = asyncio.Event()

    def add(self, transport: asyncio.Transport, requests: int) -> None:
        now = asyncio.get_running_loop().time()
        for _ in range(requests):
            self.waiting.append((now, transport))
        self.arrived.set()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self.waiting:
                self.arrived.clear()
                await self.arrived.wait()
            arrival, transport = self.waiting[0]
            done_at = max(arrival, self.free_at) + self.service_s
            delay = done_at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            self.waiting.popleft()
            self.free_at = done_at
            if not transport.is_closing():
                transport.write(RESPONSE)


class Http(asyncio.Protocol):
    def __init__(self, queue: PacedQueue) -> None:
        self.queue = queue
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        # GET requests without bodies: each ends at a blank line.
        self.buffer += data
        complete = self.buffer.count(b"\r\n\r\n")
        if complete and self.transport is not None:
            self.buffer = self.buffer[self.buffer.rindex(b"\r\n\r\n") + 4 :]
            self.queue.add(self.transport, complete)


async def main(rate: float, port: int) -> None:
    queue = PacedQueue(rate)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Http(queue), "127.0.0.1", port, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(f"NETBENCH_LISTENING port={port}", flush=True)
    await queue.serve()


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0))
