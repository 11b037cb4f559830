"""hello_app.py [--delay-ms N] [--crash-after N] [--status N] [--status-for PATH=N ...]
[--delay-for PATH=MS ...] [--work N] [--cycle-ms MS,MS,... --cycle-every N]
[--report-to FILE] -- a keep-alive HTTP/1.1 hello server (``--status 404``: every
answer has that status; ``--status-for /missing=404``: the answers to that path only;
``--delay-for /orders=2``: that path's answers 2 ms late; ``--work 5000``: 5000 rounds of
plain Python arithmetic per request, a few hundred µs of CPU, the same work in every copy;
``--cycle-ms 0,3,1 --cycle-every 200``: the first 200 answers 0 ms late, the next 200 3 ms,
then 1 ms, and round again, so two copies serving the same trials see the same noise;
``--report-to FILE``: where it ran, written at start as JSON: its own path, its working
directory, CPU affinity and ``NETBENCH_*`` environment).

Copied into each pytester directory by the ``hello_app`` fixture and run there as a script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def _busy(rounds: int) -> int:
    """Plain Python work: CPU in user time, as a slow request handler spends it."""
    total = 0
    for i in range(rounds):
        total += i * i % 7
    return total


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--crash-after", type=int, default=0)
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--status-for", action="append", default=[])
    parser.add_argument("--delay-for", action="append", default=[])
    parser.add_argument("--work", type=int, default=0)
    parser.add_argument("--cycle-ms", default="")
    parser.add_argument("--cycle-every", type=int, default=0)
    parser.add_argument("--report-to", default="")
    args = parser.parse_args()
    if args.report_to:
        seen = {
            "script": os.path.abspath(__file__),
            "cwd": os.getcwd(),
            "cpus": sorted(os.sched_getaffinity(0)),
            "env": {k: v for k, v in os.environ.items() if k.startswith("NETBENCH_")},
        }
        with open(args.report_to, "w") as report:
            json.dump(seen, report)
    cycle = [float(ms) / 1000.0 for ms in args.cycle_ms.split(",") if ms]
    response = RESPONSE.replace(b"200 OK", f"{args.status} Status".encode(), 1)
    by_path = {}
    for pair in args.status_for:
        path, _, code = pair.partition("=")
        by_path[path.encode()] = RESPONSE.replace(b"200 OK", f"{code} Status".encode(), 1)
    delays = {}
    for pair in args.delay_for:
        path, _, milliseconds = pair.partition("=")
        delays[path.encode()] = float(milliseconds) / 1000.0
    served = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if not head:
                    break
                served += 1
                length = _content_length(head)
                if length:
                    await reader.readexactly(length)  # a body must not run into the next head
                if args.crash_after and served >= args.crash_after:
                    print(f"hello_app: crashing on purpose after {served} requests", flush=True)
                    os._exit(3)
                if args.work:
                    _busy(args.work)
                if args.delay_ms:
                    await asyncio.sleep(args.delay_ms / 1000.0)
                if cycle and args.cycle_every:
                    pause = cycle[(served - 1) // args.cycle_every % len(cycle)]
                    if pause:
                        await asyncio.sleep(pause)
                target = head.split(b" ", 2)[1] if by_path or delays else b""
                if target in delays:
                    await asyncio.sleep(delays[target])
                writer.write(by_path.get(target, response))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    srv = await asyncio.start_server(handle, args.host, args.port, backlog=1024)
    port = srv.sockets[0].getsockname()[1]
    print(f"hello_app: serving on {args.host}", flush=True)
    print(f"NETBENCH_LISTENING port={port}", flush=True)
    async with srv:
        await srv.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
