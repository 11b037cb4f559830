"""Sans-IO WebSocket (RFC 6455), the client's side of a load: the opening handshake, masked
frames out, and server frames in, reassembled into messages.

A message sent is one masked frame with a fresh masking key (RFC 6455 section 5.3); the
key is XORed over the whole payload as one integer (``int.from_bytes``), so masking a
small message costs about as much as one Python call whatever its size up to a few KiB.
An echo of a whole message in one read is recognised by one ``bytes`` comparison with the
frame the server must send back; anything else (fragments, control frames between them,
a message split over reads) goes through :class:`WsFramer`'s general parser.

The framer has the call shape of every other framer (``framing.Framer``): a complete data
message is one ``on_response(code, True)``, 0 when it is the echo expected and
``VERIFY_FAILED`` when not; a frame that breaks the protocol is one ``on_error(reason)``.
Besides, it hands back the bytes the client must answer with (a pong, the close reply)
through ``on_reply``, and a close from the server through ``on_close(code, reason)``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_netbench._proto.framing import OnError, OnResponse
from pytest_netbench._proto.tcp import OK, VERIFY_FAILED
from pytest_netbench._proto.ws_template import IdTemplate

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_DATA_OPCODES = frozenset({CONTINUATION, TEXT, BINARY})
_CONTROL_OPCODES = frozenset({CLOSE, PING, PONG})
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
# A close frame without a code is reported as RFC 6455's "no status received".
NO_STATUS = 1005
# The code of the client's own close when a load ends (RFC 6455 section 7.4.1), and the
# longest the engine then waits for the server's close (the load's timeout, if shorter).
NORMAL_CLOSURE = 1000
CLOSE_WAIT_MAX_S = 1.0
# The most a handshake answer's head may hold before it is refused as garbage.
_MAX_HEAD_BYTES = 16 * 1024
# The names of close codes (RFC 6455 section 7.4.1), for error messages.
CLOSE_CODE_NAMES = {
    1000: "normal closure",
    1001: "going away",
    1002: "protocol error",
    1003: "unsupported data",
    1005: "no status received",
    1007: "invalid payload data",
    1008: "policy violation",
    1009: "message too big",
    1010: "mandatory extension",
    1011: "internal error",
    1012: "service restart",
    1013: "try again later",
}

OnReply = Callable[[bytes], None]
OnClose = Callable[[int, str], None]


# -- the opening handshake --
def new_key() -> str:
    """A ``Sec-WebSocket-Key``: 16 random bytes, base64."""
    return base64.b64encode(os.urandom(16)).decode("ascii")


def accept_for(key: str) -> str:
    """The ``Sec-WebSocket-Accept`` a server must answer ``key`` with."""
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + _GUID).digest()).decode("ascii")


def render_handshake(
    host_header: str,
    target: str,
    key: str,
    subprotocols: Sequence[str] = (),
    headers: Sequence[tuple[str, str]] = (),
) -> bytes:
    """The upgrade request; ``headers`` go after the protocol's own."""
    lines = [
        f"GET {target} HTTP/1.1",
        f"Host: {host_header}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    if subprotocols:
        lines.append(f"Sec-WebSocket-Protocol: {', '.join(subprotocols)}")
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class HandshakeRefused(Exception):
    """The server answered the upgrade with another status than 101."""

    def __init__(self, status: int, status_line: str) -> None:
        super().__init__(f"handshake refused: the server answered {status_line!r}, not 101")
        self.status = status
        self.status_line = status_line


class HandshakeInvalid(Exception):
    """The answer is a 101 that breaks RFC 6455, or no HTTP answer at all."""


@dataclass(frozen=True, slots=True)
class Accepted:
    """A handshake the server accepted: the subprotocol it chose ("" for none), and the
    bytes that followed its answer (the first frames, when they came in the same read)."""

    subprotocol: str
    leftover: bytes


class ClientHandshake:
    """One connection's opening handshake: ``request`` to write, then :meth:`receive` the
    answer's bytes until it returns :class:`Accepted` (or raises why not)."""

    __slots__ = ("_buffer", "_subprotocols", "key", "request")

    def __init__(
        self,
        host_header: str,
        target: str,
        subprotocols: Sequence[str] = (),
        headers: Sequence[tuple[str, str]] = (),
        key: str | None = None,
    ) -> None:
        self.key = key or new_key()
        self._subprotocols = tuple(subprotocols)
        self.request = render_handshake(host_header, target, self.key, subprotocols, headers)
        self._buffer = bytearray()

    def receive(self, data: bytes | bytearray) -> Accepted | None:
        """None while the answer's head is incomplete; :class:`HandshakeRefused` for a
        status other than 101, :class:`HandshakeInvalid` for a 101 that breaks the rules."""
        self._buffer += data
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > _MAX_HEAD_BYTES:
                raise HandshakeInvalid(
                    f"no end of the handshake answer in its first {_MAX_HEAD_BYTES} bytes"
                )
            return None
        head = bytes(self._buffer[:end]).decode("latin-1")
        leftover = bytes(self._buffer[end + 4 :])
        status_line, *header_lines = head.split("\r\n")
        status = _status_of(status_line)
        if status != 101:
            raise HandshakeRefused(status, status_line)
        headers = _header_map(header_lines)
        return Accepted(self._check_upgrade(headers), leftover)

    def _check_upgrade(self, headers: dict[str, str]) -> str:
        if headers.get("upgrade", "").lower() != "websocket":
            raise HandshakeInvalid(
                f"the 101 answer's Upgrade header is {headers.get('upgrade')!r}, not 'websocket'"
            )
        if "upgrade" not in _tokens(headers.get("connection", "")):
            raise HandshakeInvalid(
                f"the 101 answer's Connection header is {headers.get('connection')!r},"
                " not 'Upgrade'"
            )
        accept = headers.get("sec-websocket-accept")
        if accept != accept_for(self.key):
            raise HandshakeInvalid(
                f"the 101 answer's Sec-WebSocket-Accept is {accept!r}, not"
                f" {accept_for(self.key)!r} (RFC 6455 section 4.2.2)"
            )
        if headers.get("sec-websocket-extensions"):
            raise HandshakeInvalid(
                "the server accepted extensions the client did not offer:"
                f" {headers['sec-websocket-extensions']!r}"
            )
        chosen = headers.get("sec-websocket-protocol", "")
        if chosen and chosen not in self._subprotocols:
            offered = ", ".join(self._subprotocols) or "none"
            raise HandshakeInvalid(
                f"the server chose the subprotocol {chosen!r}, which the client did not offer"
                f" (offered: {offered})"
            )
        return chosen


def _status_of(status_line: str) -> int:
    parts = status_line.split(" ", 2)
    code = parts[1] if len(parts) > 1 else ""
    # Three ASCII digits: str.isdigit() takes "²" for one, and int() refuses it (or a few
    # thousand digits).
    if not parts[0].startswith("HTTP/") or not (
        len(code) == 3 and code.isascii() and code.isdigit()
    ):
        raise HandshakeInvalid(f"the answer to the upgrade is not HTTP: {status_line[:80]!r}")
    return int(code)


def _header_map(lines: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon:
            raise HandshakeInvalid(f"a malformed header line in the 101 answer: {line[:80]!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


def _tokens(value: str) -> set[str]:
    return {token.strip().lower() for token in value.split(",")}


# -- frames out --
def frame_header(opcode: int, length: int, *, masked: bool, fin: bool = True) -> bytes:
    """A frame's first bytes up to (not including) the masking key."""
    first = (0x80 if fin else 0) | opcode
    mask_bit = 0x80 if masked else 0
    if length < 126:
        return bytes((first, mask_bit | length))
    if length < 1 << 16:
        return bytes((first, mask_bit | 126)) + length.to_bytes(2, "big")
    return bytes((first, mask_bit | 127)) + length.to_bytes(8, "big")


def mask(payload: bytes, key: bytes) -> bytes:
    """``payload`` XORed with the 4-byte ``key`` repeated (masking and unmasking alike)."""
    size = len(payload)
    if not size:
        return b""
    repeated = (key * (size // 4 + 1))[:size]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(repeated, "little")).to_bytes(
        size, "little"
    )


def client_frame(opcode: int, payload: bytes, key: bytes | None = None, fin: bool = True) -> bytes:
    """One masked frame as a client sends it (a fresh random key unless one is given)."""
    key = key if key is not None else os.urandom(4)
    return frame_header(opcode, len(payload), masked=True, fin=fin) + key + mask(payload, key)


def close_payload(code: int, reason: str = "") -> bytes:
    return code.to_bytes(2, "big") + reason.encode("utf-8")


def client_close_frame(code: int = NORMAL_CLOSURE) -> bytes:
    """The client's own close frame (masked), with ``code``."""
    return client_frame(CLOSE, close_payload(code))


class MessageFrames:
    """One message's frames, rendered per send with a fresh masking key.

    The payload is held as an integer, and the key repeated over its length is the key
    times a constant with a 1 every 32 bits (no carries: each 32-bit slot gets the key
    once), so each send is a multiply, an XOR and two ``to_bytes``.
    """

    __slots__ = ("_all_ones", "_header", "_payload_int", "_repeat", "_size", "echo", "size")

    def __init__(self, payload: bytes, *, text: bool) -> None:
        opcode = TEXT if text else BINARY
        self._size = len(payload)
        self._header = frame_header(opcode, self._size, masked=True)
        self._payload_int = int.from_bytes(payload, "little")
        words = (self._size + 3) // 4
        self._repeat = sum(1 << (32 * i) for i in range(words))
        self._all_ones = (1 << (8 * self._size)) - 1
        # What the server sends back for an echo: the same message, unmasked.
        self.echo = frame_header(opcode, self._size, masked=False) + payload
        self.size = len(self._header) + 4 + self._size  # bytes written per message

    def render(self, key: int) -> bytes:
        """The masked frame, ``key`` a 32-bit integer (its little-endian bytes are sent)."""
        masked = (self._payload_int ^ (key * self._repeat)) & self._all_ones
        return self._header + key.to_bytes(4, "little") + masked.to_bytes(self._size, "little")

    def next_frame(self) -> bytes:
        return self.render(random.getrandbits(32))


# -- frames in --
def _ignore(*_: object) -> None:
    """A released framer's callbacks."""


class WsFramer:
    """Server frames in: data messages reassembled and checked against the echo expected
    (``expected`` None: any message is the answer), pings answered, a close reported (and
    answered) once, broken frames refused."""

    __slots__ = (
        "_buffer",
        "_echo_frame",
        "_expected",
        "_max_message",
        "_message",
        "_message_opcode",
        "_on_close",
        "_on_error",
        "_on_reply",
        "_on_response",
        "closed",
        "failed",
    )

    def __init__(
        self,
        frames: MessageFrames,
        expected: bytes | None,
        on_response: OnResponse,
        on_error: OnError,
        on_reply: OnReply,
        on_close: OnClose,
    ) -> None:
        self._echo_frame = frames.echo
        self._expected = expected
        self._on_response = on_response
        self._on_error = on_error
        self._on_reply = on_reply
        self._on_close = on_close
        self._buffer = bytearray()
        self._message = bytearray()
        self._message_opcode = -1  # the opcode of a fragmented message under way
        # An answer far larger than the message sent is a broken server, not an echo.
        self._max_message = max(16 * 2**20, 4 * frames.size)
        self.failed = False
        self.closed = False

    def feed(self, data: bytes) -> None:
        if self.failed or self.closed:
            return
        if not self._buffer and self._message_opcode < 0 and data == self._echo_frame:
            self._on_response(OK, True)  # the common case: one read, one whole echo
            return
        self._buffer += data
        self._parse()

    def feed_eof(self) -> bool:
        return False

    def release(self) -> None:
        """The connection is gone: drop the callbacks into it (they would keep it and this
        framer in a reference cycle)."""
        self._on_response = self._on_error = self._on_reply = self._on_close = _ignore
        self.closed = True

    @property
    def open(self) -> bool:
        """Neither closed by the server nor broken: the client may close it cleanly."""
        return not (self.failed or self.closed)

    def close_from_client(self, on_closed: Callable[[], None]) -> bytes:
        """The load is over and the client closes (RFC 6455 section 5.5.1): returns its
        close frame (code 1000), to write after anything still owed (a pong). From here on
        data messages and pings are dropped unanswered, and the server's close, or a frame
        that breaks the rules, calls ``on_closed`` once: the engine may then close the
        transport."""

        def closed(*_: object) -> None:
            self._on_close = self._on_error = _ignore
            on_closed()

        self._on_response = self._on_reply = _ignore
        self._on_close = self._on_error = closed
        return client_close_frame()

    def _fail(self, reason: str) -> None:
        self.failed = True
        self._on_error(reason)

    def _parse(self) -> None:
        buffer = self._buffer
        while not (self.failed or self.closed) and len(buffer) >= 2:
            first, second = buffer[0], buffer[1]
            if second & 0x80:
                self._fail("the server sent a masked frame (RFC 6455 section 5.1: it must not)")
                return
            if first & 0x70:
                self._fail(f"a frame with reserved bits set (0x{first:02x}), no extension agreed")
                return
            length = second & 0x7F
            offset = 2
            if length == 126:
                if len(buffer) < 4:
                    return
                length, offset = int.from_bytes(buffer[2:4], "big"), 4
            elif length == 127:
                if len(buffer) < 10:
                    return
                length, offset = int.from_bytes(buffer[2:10], "big"), 10
                if length >> 63:
                    self._fail("a frame length with its most significant bit set")
                    return
            if length > self._max_message:
                self._fail(f"a frame of {length:,} bytes, more than {self._max_message:,}")
                return
            if len(buffer) < offset + length:
                return
            payload = bytes(buffer[offset : offset + length])
            del buffer[: offset + length]
            self._frame(bool(first & 0x80), first & 0x0F, payload)

    def _frame(self, fin: bool, opcode: int, payload: bytes) -> None:
        if opcode in _CONTROL_OPCODES:
            if not fin or len(payload) > 125:
                self._fail(f"a fragmented or oversized control frame (opcode 0x{opcode:x})")
            elif opcode == PING:
                self._on_reply(client_frame(PONG, payload))
            elif opcode == CLOSE:
                self._close(payload)
            return  # a pong answers nothing
        if opcode not in _DATA_OPCODES:
            self._fail(f"a frame with the unknown opcode 0x{opcode:x}")
            return
        if opcode == CONTINUATION:
            if self._message_opcode < 0:
                self._fail("a continuation frame with no fragmented message under way")
                return
        elif self._message_opcode >= 0:
            self._fail("a new data frame inside a fragmented message")
            return
        else:
            self._message_opcode = opcode
        self._message += payload
        if len(self._message) > self._max_message:
            self._fail(f"a message of more than {self._max_message:,} bytes")
            return
        if fin:
            message = bytes(self._message)
            self._message.clear()
            self._message_opcode = -1
            self._message_done(message)

    def _message_done(self, message: bytes) -> None:
        """A whole data message arrived (a push framer reads it otherwise: ``ws_push``)."""
        expected = self._expected  # None: any message answers the one outstanding
        ok = expected is None or message == expected
        self._on_response(OK if ok else VERIFY_FAILED, True)

    def _close(self, payload: bytes) -> None:
        if len(payload) == 1:
            self._fail("a close frame with a 1-byte payload (a code takes 2)")
            return
        code = int.from_bytes(payload[:2], "big") if payload else NO_STATUS
        reason = payload[2:].decode("utf-8", "replace")
        self.closed = True
        # Echo the code back, as RFC 6455 section 5.5.1 asks, then the engine closes.
        self._on_reply(client_frame(CLOSE, payload[:2]))
        self._on_close(code, reason)


def describe_close(code: int, reason: str) -> str:
    """A server's close in words: ``code 1011 (internal error): 'reason'``."""
    name = CLOSE_CODE_NAMES.get(code, "application" if code >= 4000 else "unnamed")
    said = f": {reason!r}" if reason else ""
    return f"code {code} ({name}){said}"


@dataclass(frozen=True, slots=True)
class WsSetup:
    """What every connection of a WebSocket load shares: how to open it (``handshake``
    makes one connection's, with its own key), the message it sends (``frames``, built
    once: it holds no state of a connection's) and the answer it expects (None: any; with
    ``ids``, the answer carrying the id of a message outstanding: see ``ws_ids``)."""

    host_header: str
    target: str
    subprotocols: tuple[str, ...]
    headers: tuple[tuple[str, str], ...]
    expected: bytes | None
    frames: MessageFrames
    ids: IdTemplate | None = None

    def handshake(self) -> ClientHandshake:
        return ClientHandshake(self.host_header, self.target, self.subprotocols, self.headers)

    def make_framer(
        self, on_response: OnResponse, on_error: OnError, on_reply: OnReply, on_close: OnClose
    ) -> WsFramer:
        return WsFramer(self.frames, self.expected, on_response, on_error, on_reply, on_close)

    def silent_framer(self) -> WsFramer:
        """A framer that reports nothing: for reading up to the server's close once the
        client closed (``WsFramer.close_from_client``)."""
        return WsFramer(self.frames, None, _ignore, _ignore, _ignore, _ignore)
