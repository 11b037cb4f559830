"""A keep-alive HTTP/1.1 server that writes down every request it reads, for the tests of
what the ``netbench`` command sends: ``python request_log_server.py LOG`` listens on
127.0.0.1 (a free port, printed as ``NETBENCH_LISTENING port=<n>``) and appends one JSON
line per request to LOG: its request line, its headers (names in lower case) and its body.

It answers 200 with a two-byte body, 404 to a path starting ``/missing``, and 503 to
every second request to a path starting ``/flaky``, so a mix's kinds can differ in their
figures.
"""

from __future__ import annotations

import asyncio
import json
import sys


class Recorder:
    def __init__(self, log_path: str) -> None:
        self.log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 (open for the run)
        self.flaky = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head[:-4].decode("latin-1").split("\r\n")
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                record = {"line": lines[0], "headers": headers, "body": body.decode("latin-1")}
                self.log.write(json.dumps(record) + "\n")
                self.log.flush()
                writer.write(self.response(lines[0].split(" ")[1]))
                await writer.drain()
        finally:
            writer.close()

    def response(self, path: str) -> bytes:
        status = "200 OK"
        if path.startswith("/missing"):
            status = "404 Not Found"
        elif path.startswith("/flaky"):
            self.flaky += 1
            if self.flaky % 2 == 0:
                status = "503 Service Unavailable"
        return f"HTTP/1.1 {status}\r\nContent-Length: 2\r\n\r\nok".encode()


async def main(log_path: str) -> None:
    recorder = Recorder(log_path)
    server = await asyncio.start_server(recorder.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"NETBENCH_LISTENING port={port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
