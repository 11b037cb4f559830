"""A tiny asyncio HTTP server whose every request costs a set time, for the gate benchmark.

``python tiny_asyncio.py sleep 20000`` waits 20 ms per request (latency-bound, like a
server waiting on a backend); ``python tiny_asyncio.py cpu 300`` spins 300 us
(CPU-bound). It listens on a port the kernel picks and prints ``NETBENCH_LISTENING
port=N``.
"""

from __future__ import annotations

import asyncio
import sys
import time

BODY = b"hello"
RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n" % len(BODY)
) + BODY


def spin(us: float) -> None:
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


async def handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, work: str, us: float
) -> None:
    try:
        while True:
            await reader.readuntil(b"\r\n\r\n")
            if work == "sleep":
                await asyncio.sleep(us / 1e6)
            else:
                spin(us)
            writer.write(RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(work: str, us: float) -> None:
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, work, us), "127.0.0.1", 0, backlog=512
    )
    port = server.sockets[0].getsockname()[1]
    print(f"NETBENCH_LISTENING port={port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2])))
