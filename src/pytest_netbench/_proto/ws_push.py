"""Sans-IO reading of what a WebSocket server pushes to a held connection: each whole data
message a push, its send time read from a stamp it carries, and the client's pings.

A listen load's connection never sends data of its own; it answers the server's pings
(as every WebSocket client does), sends pings of its own to keep the connection alive,
and reads every message the server pushes. :class:`PushFramer` is the round-trip
framer (``websocket.WsFramer``: fragments put together, control frames between them,
a close reported once, broken frames refused) with each whole message handed to
``on_push(stamp_ns, problem)`` instead of compared with an echo, and each pong to
``on_pong``.

A stamp is the server's send time, in the server's wall clock since the epoch: a field of
a JSON text message (``stamp_field``), or a binary message's first 8 bytes, big-endian
(``stamp_binary``). Its unit is read from its size, as a present-day epoch time in
seconds is about 1.7e9, in ms 1.7e12, in us 1.7e15 and in ns 1.7e18: a number below
1e11 is seconds (a float keeps its fraction), below 1e14 milliseconds, below 1e17
microseconds, otherwise nanoseconds. A message without a readable stamp is a push with a
problem (the engine counts it as ``verify``), never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from pytest_netbench._proto.framing import OnError
from pytest_netbench._proto.websocket import (
    BINARY,
    CONTINUATION,
    PING,
    PONG,
    TEXT,
    MessageFrames,
    OnClose,
    OnReply,
    WsFramer,
    client_frame,
)

OnPush = Callable[[int, str], None]
OnPong = Callable[[bytes], None]

_DATA_OPCODES = frozenset({CONTINUATION, TEXT, BINARY})
_NS_PER_S = 1_000_000_000
# Where one unit of an epoch stamp ends and the next begins (see the module's docstring).
_SECONDS_BELOW = 1e11
_MS_BELOW = 1e14
_US_BELOW = 1e17
_BINARY_STAMP_BYTES = 8
_INF = float("inf")  # JSON's 1e999: no time
# What the framer's size checks need of a message; a listen load sends none.
_NO_MESSAGE = MessageFrames(b"", text=True)


def epoch_ns(value: float) -> int:
    """An epoch stamp in seconds, ms, us or ns (told apart by size) as nanoseconds."""
    if value < _SECONDS_BELOW:
        return round(value * _NS_PER_S)
    if value < _MS_BELOW:
        return round(value * 1_000_000)
    if value < _US_BELOW:
        return round(value * 1_000)
    return int(value)


@dataclass(frozen=True, slots=True)
class StampReader:
    """Where a push carries its send time: a JSON field (``json_field``), or the first
    8 bytes of a binary message (``binary``)."""

    json_field: str | None = None
    binary: bool = False

    def read(self, message: bytes) -> tuple[int, str]:
        """(the stamp in epoch ns, "") or (0, what is wrong with the message's stamp)."""
        if self.binary:
            if len(message) < _BINARY_STAMP_BYTES:
                return 0, f"a push of {len(message)} bytes, too short for an 8-byte stamp"
            value: object = int.from_bytes(message[:_BINARY_STAMP_BYTES], "big")
        else:
            field = self.json_field
            try:
                document = json.loads(message)
            except (ValueError, RecursionError):  # RecursionError: nested past the parser
                return 0, f"a push that is not JSON, so it has no {field!r} stamp: {message[:40]!r}"
            if not isinstance(document, dict) or field not in document:
                return 0, f"a push without the stamp field {field!r}: {message[:40]!r}"
            value = document[field]
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < _INF:
            stamp = epoch_ns(value)
            if stamp > 0:  # not a fraction of a nanosecond after the epoch either
                return stamp, ""
        return 0, f"a push whose stamp is not a positive epoch time: {value!r}"


def ping_frame(sent_ns: int) -> bytes:
    """A client ping (masked) carrying its send time, so its pong tells the round trip."""
    return client_frame(PING, sent_ns.to_bytes(8, "big"))


def ping_sent_ns(payload: bytes) -> int:
    """The send time a pong carries back (-1: not a pong of :func:`ping_frame`'s)."""
    return int.from_bytes(payload, "big") if len(payload) == 8 else -1


class PushFramer(WsFramer):
    """Server frames in on a held connection (see the module's docstring)."""

    __slots__ = ("_on_pong", "_on_push", "_stamps")

    def __init__(
        self,
        stamps: StampReader | None,
        on_push: OnPush,
        on_error: OnError,
        on_reply: OnReply,
        on_close: OnClose,
        on_pong: OnPong,
    ) -> None:
        super().__init__(_NO_MESSAGE, None, _no_response, on_error, on_reply, on_close)
        self._stamps = stamps
        self._on_push = on_push
        self._on_pong = on_pong

    @property
    def partial(self) -> bool:
        """A push has begun to arrive and has not ended (in flight, if the load ends now)."""
        if self._message_opcode >= 0:
            return True
        buffer = self._buffer
        return bool(buffer) and (buffer[0] & 0x0F) in _DATA_OPCODES

    def feed(self, data: bytes | bytearray) -> None:
        if self.failed or self.closed:
            return
        if not self._buffer and self._message_opcode < 0 and len(data) >= 2:
            # The common case: one read, one whole small unfragmented text or binary push.
            first, second = data[0], data[1]
            if (first == 0x81 or first == 0x82) and len(data) == 2 + second and second < 126:
                self._message_done(bytes(data[2:]))
                return
        self._buffer += data
        self._parse()

    def release(self) -> None:
        super().release()
        self._on_push = _ignore_push
        self._on_pong = _ignore_pong

    def close_from_client(self, on_closed: Callable[[], None]) -> bytes:
        """As a round trip's framer closes; pushes and pongs after it are not counted."""
        self._on_push = _ignore_push
        self._on_pong = _ignore_pong
        return super().close_from_client(on_closed)

    def _frame(self, fin: bool, opcode: int, payload: bytes) -> None:
        if opcode == PONG and fin and len(payload) <= 125:
            self._on_pong(payload)
            return
        super()._frame(fin, opcode, payload)

    def _message_done(self, message: bytes) -> None:
        stamps = self._stamps
        if stamps is None:
            self._on_push(0, "")
        else:
            stamp, problem = stamps.read(message)
            self._on_push(stamp, problem)


def _no_response(code: int, keep_alive: bool) -> None:
    """A push framer reports messages through ``on_push`` only."""


def _ignore_push(stamp_ns: int, problem: str) -> None:
    """A released framer's ``on_push``."""


def _ignore_pong(payload: bytes) -> None:
    """A released framer's ``on_pong``."""
