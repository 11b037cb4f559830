"""A loopback HTTP/1.1 server that answers every request with 200 and, every tenth request
(counted across its connections), an HTML error page instead of its JSON: what a check of
the body must count as failures, exactly. ``python error_page_server.py [EVERY]`` prints
``NETBENCH_LISTENING port=<n>`` once listening, and serves until killed."""

from __future__ import annotations

import asyncio
import sys

GOOD = b'{"ok": true, "id": 7}'
ERROR_PAGE = b"<html><body><h1>Error</h1>database unavailable</body></html>"


def main() -> None:
    every = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    answered = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal answered
        while True:
            try:
                await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            answered += 1
            page = answered % every == 0
            body = ERROR_PAGE if page else GOOD
            kind = b"text/html" if page else b"application/json"
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: "
                + kind
                + b"\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            await writer.drain()
        writer.close()

    async def serve() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        print(f"NETBENCH_LISTENING port={port}", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
