"""A loopback HTTP/1.1 server that keeps every request it read, for tests of what a load
sends: its request line, headers and body, and how many bytes it came in.

Serve it with ``servers.ServerThread(RecordingApp())``; it answers every request ``200 ok``
on a kept-alive connection (or closes, when the request says ``Connection: close``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Received:
    """One request as the server read it."""

    method: bytes
    path: bytes
    headers: dict[bytes, bytes]  # names in lower case
    body: bytes
    size: int  # bytes on the wire: head and body


@dataclass
class RecordingApp:
    """Answers ``200 ok`` to everything; ``received`` holds each request in arrival order
    (written only by the server's loop thread, read after the load)."""

    received: list[Received] = field(default_factory=list)

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head[:-4].split(b"\r\n")
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get(b"content-length", b"0")))
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            method, path, _ = lines[0].split(b" ", 2)
            self.received.append(Received(method, path, headers, body, len(head) + len(body)))
            close = headers.get(b"connection", b"").lower() == b"close"
            extra = b"Connection: close\r\n" if close else b""
            writer.write(b"HTTP/1.1 200 OK\r\n" + extra + b"Content-Length: 2\r\n\r\nok")
            try:
                await writer.drain()
            except ConnectionError:
                return
            if close:
                writer.close()
                return

    def paths(self) -> Counter[bytes]:
        return Counter(r.path for r in self.received)
