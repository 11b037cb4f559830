"""An HTTP server that warms up, as a JIT does, with figures known in advance
(``python warming_server.py 200 1000 1.0``): for its first 1.0 s, counted from its first
request, it answers at most 200 requests a second; from then on 1,000. First in first out,
paced by the clock as ``paced_server.py`` is (whose connection protocol it reuses).

Listens on 127.0.0.1, any free port, and prints ``NETBENCH_LISTENING port=<n>``.
"""

from __future__ import annotations

import asyncio
import sys

from paced_server import Http, PacedQueue


class WarmingQueue(PacedQueue):
    """A paced queue whose service time drops once the warm-up is over."""

    def __init__(self, slow_rate: float, fast_rate: float, slow_for_s: float) -> None:
        super().__init__(slow_rate)
        self.fast_service_s = 1.0 / fast_rate
        self.slow_for_s = slow_for_s
        self.first_arrival: float | None = None

    def add(self, transport: asyncio.Transport, requests: int) -> None:
        if self.first_arrival is None:
            self.first_arrival = asyncio.get_running_loop().time()
        super().add(transport, requests)

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        slow_service_s = self.service_s
        while True:
            if not self.waiting:
                self.arrived.clear()
                await self.arrived.wait()
            arrival, transport = self.waiting[0]
            begins = max(arrival, self.free_at)
            assert self.first_arrival is not None
            warm = begins >= self.first_arrival + self.slow_for_s
            done_at = begins + (self.fast_service_s if warm else slow_service_s)
            delay = done_at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            self.waiting.popleft()
            self.free_at = done_at
            if not transport.is_closing():
                transport.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


async def main(slow_rate: float, fast_rate: float, slow_for_s: float) -> None:
    queue = WarmingQueue(slow_rate, fast_rate, slow_for_s)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Http(queue), "127.0.0.1", 0, backlog=4096)
    print(f"NETBENCH_LISTENING port={server.sockets[0].getsockname()[1]}", flush=True)
    await queue.serve()


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])))
