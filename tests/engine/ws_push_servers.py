"""A small WebSocket push server for the engine tests of listen loads (never random).

Each connection, once ``hold`` connections have opened (or at once when ``hold`` is 0),
waits ``start_after_s`` and then pushes a message every ``every_s``: JSON text
``{"seq": n, "ts": <epoch us>}``, or with ``binary`` an 8-byte big-endian epoch ns stamp
and the sequence number. It answers pings (unless ``answer_pings`` is off) and counts
them, closes with ``close_code`` after its ``close_after``-th push, and leaves the stamp
out of every ``unstamped_every``-th push it sends; it pings before every
``server_ping_every``-th push and counts the pongs; after its ``stall_after``-th push it
sends the first bytes of one more and stops there. Written apart from the package's
WebSocket code, as ``ws_servers`` is.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from dataclasses import dataclass, field

from ws_servers import _frame

_RFC6455_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@dataclass
class PushOptions:
    hold: int = 0  # start pushing once this many connections are open (0: at once)
    start_after_s: float = 0.3
    every_s: float = 0.01
    binary: bool = False
    answer_pings: bool = True
    close_after: int = 0  # close each connection after its Nth push (0: never)
    close_code: int = 4001
    unstamped_every: int = 0  # leave the stamp out of every Nth push of a connection
    server_ping_every: int = 0  # a ping of the server's before every Nth push
    stall_after: int = 0  # after its Nth push, half of one more, then nothing


@dataclass
class PushSeen:
    handshakes: int = 0
    pushes: int = 0
    pings: int = 0
    server_pings: int = 0
    pongs: int = 0  # answers to the server's pings
    open_now: int = 0
    client_closes: list[int] = field(default_factory=list)  # codes of clients' closes


class PushApp:
    def __init__(self, options: PushOptions | None = None) -> None:
        self.options = options or PushOptions()
        self.seen = PushSeen()
        self._all_open: asyncio.Event | None = None

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._all_open is None:
            self._all_open = asyncio.Event()
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        headers = {}
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        digest = hashlib.sha1(headers["sec-websocket-key"].encode() + _RFC6455_GUID).digest()
        writer.write(
            (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Accept: {base64.b64encode(digest).decode()}"
                "\r\n\r\n"
            ).encode()
        )
        await writer.drain()
        self.seen.handshakes += 1
        self.seen.open_now += 1
        if self.seen.handshakes >= self.options.hold:
            self._all_open.set()
        pusher = asyncio.ensure_future(self._push(writer))
        try:
            await self._read(reader, writer, pusher)
        finally:
            pusher.cancel()
            self.seen.open_now -= 1
            writer.close()

    async def _push(self, writer: asyncio.StreamWriter) -> bool:
        """Push until closing (True: with a close frame) or stalled (False)."""
        options = self.options
        assert self._all_open is not None
        await self._all_open.wait()
        await asyncio.sleep(options.start_after_s)
        n = 0
        while True:
            n += 1
            stamped = not (options.unstamped_every and n % options.unstamped_every == 0)
            if options.server_ping_every and n % options.server_ping_every == 0:
                writer.write(_frame(0x9, b"are you there %d" % n))
                self.seen.server_pings += 1
            if options.binary:
                stamp = time.time_ns() if stamped else 0
                writer.write(_frame(0x2, stamp.to_bytes(8, "big") + n.to_bytes(4, "big")))
            else:
                message = {"seq": n, "ts": time.time_ns() // 1000} if stamped else {"seq": n}
                writer.write(_frame(0x1, json.dumps(message).encode()))
            self.seen.pushes += 1
            if options.stall_after and n >= options.stall_after:
                writer.write(_frame(0x1, b'{"seq": "never whole"}')[:10])
                await writer.drain()
                return False  # the connection stays open, the push half sent
            if options.close_after and n >= options.close_after:
                writer.write(_frame(0x8, options.close_code.to_bytes(2, "big") + b"enough"))
                await writer.drain()
                return True
            await writer.drain()
            await asyncio.sleep(options.every_s)

    async def _read(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        pusher: asyncio.Future[bool],
    ) -> None:
        while True:
            try:
                first, second = await reader.readexactly(2)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            size = second & 0x7F
            if size == 126:
                size = int.from_bytes(await reader.readexactly(2), "big")
            key = await reader.readexactly(4)
            data = await reader.readexactly(size)
            payload = bytes(b ^ key[i % 4] for i, b in enumerate(data))
            opcode = first & 0x0F
            if opcode == 0x8:
                # A client's own close is answered with its code; one answering the
                # server's close (after close_after) is not.
                server_closed = (
                    pusher.done()
                    and not pusher.cancelled()
                    and pusher.exception() is None
                    and pusher.result()
                )
                if not server_closed:
                    self.seen.client_closes.append(int.from_bytes(payload[:2], "big"))
                    writer.write(_frame(0x8, payload[:2]))
                    await writer.drain()
                return
            if opcode == 0xA and payload.startswith(b"are you there"):
                self.seen.pongs += 1
            if opcode == 0x9:
                self.seen.pings += 1
                if self.options.answer_pings:
                    writer.write(_frame(0xA, payload))
