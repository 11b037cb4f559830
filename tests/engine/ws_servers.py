"""A small WebSocket echo server for the engine tests, with numbered faults (never random).

Written apart from ``pytest_netbench._proto.websocket`` on purpose (its own accept key,
its own frame reader), so a mistake there cannot hide by being made on both sides. Served
by ``servers.ServerThread`` on 127.0.0.1, port 0.

"Every Nth message" counts data messages across all connections, so a test can assert
exact counts of what the client must have seen.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from dataclasses import dataclass, field

_RFC6455_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@dataclass
class WsOptions:
    refuse: int = 0  # answer every handshake with this status instead of 101
    subprotocols: tuple[str, ...] = ()  # the ones it speaks: the client's first of them wins
    force_subprotocol: str = ""  # answer with this subprotocol whatever was offered
    fragment: bool = False  # echo each message in three fragments, a ping between two
    ping_every: int = 0  # every Nth message: a ping before its echo
    close_every: int = 0  # every Nth message: a close with close_code instead of its echo
    close_code: int = 1011
    corrupt_every: int = 0  # every Nth message: a frame with a reserved bit set instead
    stall_every: int = 0  # every Nth message: never answered (its connection stays open)
    reply: bytes = b""  # answer every message with this text instead of its echo
    ignore_close: bool = False  # never answer a client's close (nor close the connection)
    # Answers by id: each message is a JSON object whose id_field is echoed in an answer
    # {id_field: id, "n": seq}; a connection's messages are held until `reverse` came (or
    # 50 ms passed without more) and answered last first; every wrong_id_every-th answer
    # carries the id 0 instead (no message has it).
    id_field: str = ""
    reverse: int = 1
    wrong_id_every: int = 0
    # The upgrade answer in two parts: its status line head_delay_s after the request
    # came, the rest of its head rest_delay_s later (each connection's phases).
    head_delay_s: float = 0.0
    rest_delay_s: float = 0.0


@dataclass
class WsSeen:
    connections: int = 0
    handshakes: int = 0  # accepted
    messages: int = 0
    pongs: int = 0
    answers: int = 0  # answers by id sent
    close_replies: list[int] = field(default_factory=list)  # codes of clients' closes
    offered: list[str] = field(default_factory=list)  # each handshake's protocol header
    masked: bool = True  # every client frame was masked
    # With head_delay_s or rest_delay_s, the delays kept, in ms: the request in to the
    # status line out, and that to the rest out.
    heads_ms: list[float] = field(default_factory=list)
    rests_ms: list[float] = field(default_factory=list)


def _frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    first = (0x80 if fin else 0) | opcode
    size = len(payload)
    if size < 126:
        return bytes((first, size)) + payload
    if size < 65536:
        return bytes((first, 126)) + size.to_bytes(2, "big") + payload
    return bytes((first, 127)) + size.to_bytes(8, "big") + payload


class WsApp:
    """An echo server speaking just enough RFC 6455 to test a client against."""

    def __init__(self, options: WsOptions | None = None) -> None:
        self.options = options or WsOptions()
        self.seen = WsSeen()

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.seen.connections += 1
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        arrived = time.monotonic_ns()
        headers = {}
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        options = self.options
        if options.refuse:
            writer.write(
                f"HTTP/1.1 {options.refuse} Forbidden\r\nContent-Length: 0\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            await writer.drain()
            return
        offered_header = headers.get("sec-websocket-protocol", "")
        self.seen.offered.append(offered_header)
        offered = [p.strip() for p in offered_header.split(",") if p.strip()]
        chosen = options.force_subprotocol or next(
            (p for p in offered if p in options.subprotocols), ""
        )
        digest = hashlib.sha1(headers["sec-websocket-key"].encode() + _RFC6455_GUID).digest()
        answer = [
            "HTTP/1.1 101 Switching Protocols",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Accept: {base64.b64encode(digest).decode()}",
        ]
        if chosen:
            answer.append(f"Sec-WebSocket-Protocol: {chosen}")
        whole = ("\r\n".join(answer) + "\r\n\r\n").encode()
        if options.head_delay_s or options.rest_delay_s:
            status, rest = whole.split(b"\r\n", 1)
            await asyncio.sleep(options.head_delay_s)
            sent = time.monotonic_ns()
            writer.write(status + b"\r\n")
            await writer.drain()
            await asyncio.sleep(options.rest_delay_s)
            self.seen.heads_ms.append((sent - arrived) / 1e6)
            self.seen.rests_ms.append((time.monotonic_ns() - sent) / 1e6)
            whole = rest
        writer.write(whole)
        self.seen.handshakes += 1
        closing = False  # this server sent a close first
        held = _Held(writer, self)
        while True:
            opcode, payload = await self._read_frame(reader)
            if opcode == 0x8:
                self.seen.close_replies.append(int.from_bytes(payload[:2], "big"))
                if options.ignore_close:
                    continue  # the client's bound must end its wait
                if not closing:  # the client closed first: answer with its code, as RFC 6455
                    writer.write(_frame(0x8, payload[:2]))
                    await writer.drain()
                writer.close()
                return
            if opcode == 0xA:
                self.seen.pongs += 1
                continue
            if options.id_field:
                held.add(payload)
                continue
            closing = closing or self._closes(self.seen.messages + 1)
            if not await self._answer(writer, opcode, payload):
                return

    def _closes(self, n: int) -> bool:
        """Whether the ``n``th message is answered with a close."""
        options = self.options
        if options.stall_every and n % options.stall_every == 0:
            return False
        if options.corrupt_every and n % options.corrupt_every == 0:
            return False
        return bool(options.close_every and n % options.close_every == 0)

    async def _answer(self, writer: asyncio.StreamWriter, opcode: int, payload: bytes) -> bool:
        """Answer one data message; False once this connection is done."""
        options = self.options
        self.seen.messages += 1
        n = self.seen.messages
        if options.stall_every and n % options.stall_every == 0:
            return True  # read on, answer nothing: the client's timeout must end it
        if options.corrupt_every and n % options.corrupt_every == 0:
            writer.write(bytes((0x80 | 0x40 | opcode, 2)) + b"no")  # RSV1, no extension
            return True  # the client must drop the connection
        if options.close_every and n % options.close_every == 0:
            writer.write(_frame(0x8, options.close_code.to_bytes(2, "big") + b"bye"))
            await writer.drain()
            return True  # read on: the client's close reply ends the connection
        if options.ping_every and n % options.ping_every == 0:
            writer.write(_frame(0x9, b"ping %d" % n))
        if options.reply:
            writer.write(_frame(0x1, options.reply))
        elif options.fragment and len(payload) >= 3:
            third = len(payload) // 3
            writer.write(_frame(opcode, payload[:third], fin=False))
            writer.write(_frame(0x9, b"between"))
            writer.write(_frame(0x0, payload[third : 2 * third], fin=False))
            writer.write(_frame(0x0, payload[2 * third :]))
        else:
            writer.write(_frame(opcode, payload))
        await writer.drain()
        return True

    async def _read_frame(self, reader: asyncio.StreamReader) -> tuple[int, bytes]:
        first, second = await reader.readexactly(2)
        size = second & 0x7F
        if size == 126:
            size = int.from_bytes(await reader.readexactly(2), "big")
        elif size == 127:
            size = int.from_bytes(await reader.readexactly(8), "big")
        if not second & 0x80:
            self.seen.masked = False
            return first & 0x0F, await reader.readexactly(size)
        key = await reader.readexactly(4)
        data = await reader.readexactly(size)
        return first & 0x0F, bytes(b ^ key[i % 4] for i, b in enumerate(data))


class _Held:
    """One connection's messages held for answers by id, answered last first."""

    def __init__(self, writer: asyncio.StreamWriter, app: WsApp) -> None:
        self.writer = writer
        self.app = app
        self.messages: list[bytes] = []
        self.timer: asyncio.TimerHandle | None = None

    def add(self, payload: bytes) -> None:
        self.app.seen.messages += 1
        self.messages.append(payload)
        if self.timer is not None:
            self.timer.cancel()
        if len(self.messages) >= self.app.options.reverse:
            self.flush()
        else:
            self.timer = asyncio.get_running_loop().call_later(0.05, self.flush)

    def flush(self) -> None:
        self.timer = None
        options = self.app.options
        for payload in reversed(self.messages):
            self.app.seen.answers += 1
            message_id = json.loads(payload)[options.id_field]
            if options.wrong_id_every and self.app.seen.answers % options.wrong_id_every == 0:
                message_id = 0
            answer = {options.id_field: message_id, "n": self.app.seen.answers}
            if not self.writer.is_closing():
                self.writer.write(_frame(0x1, json.dumps(answer).encode()))
        self.messages.clear()
