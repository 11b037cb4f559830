"""HTTP/2 frames (RFC 9113 section 4 and 6): their numbers, and the bytes of the ones a
client writes. No state: the connection's rules are in ``h2_client``.

Every frame is a 9-byte header (24-bit length, type, flags, 31-bit stream id) and a
payload. :data:`FRAME_HEAD` reads the header in one ``unpack_from``: the first 32-bit word
holds the length and the type, so a frame's head costs one C call on the hot path.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS = 0x0, 0x1, 0x2, 0x3, 0x4
PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0x5, 0x6, 0x7, 0x8, 0x9

END_STREAM = 0x1  # DATA, HEADERS
ACK = 0x1  # SETTINGS, PING
END_HEADERS = 0x4  # HEADERS, CONTINUATION
PADDED = 0x8  # DATA, HEADERS
PRIORITY_FLAG = 0x20  # HEADERS

SETTINGS_HEADER_TABLE_SIZE = 0x1
SETTINGS_ENABLE_PUSH = 0x2
SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
SETTINGS_INITIAL_WINDOW_SIZE = 0x4
SETTINGS_MAX_FRAME_SIZE = 0x5
SETTINGS_MAX_HEADER_LIST_SIZE = 0x6

NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0x0, 0x1, 0x2, 0x3
SETTINGS_TIMEOUT, STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM = 0x4, 0x5, 0x6, 0x7
CANCEL, COMPRESSION_ERROR, CONNECT_ERROR, ENHANCE_YOUR_CALM = 0x8, 0x9, 0xA, 0xB
INADEQUATE_SECURITY, HTTP_1_1_REQUIRED = 0xC, 0xD
_ERROR_NAMES = {
    NO_ERROR: "NO_ERROR",
    PROTOCOL_ERROR: "PROTOCOL_ERROR",
    INTERNAL_ERROR: "INTERNAL_ERROR",
    FLOW_CONTROL_ERROR: "FLOW_CONTROL_ERROR",
    SETTINGS_TIMEOUT: "SETTINGS_TIMEOUT",
    STREAM_CLOSED: "STREAM_CLOSED",
    FRAME_SIZE_ERROR: "FRAME_SIZE_ERROR",
    REFUSED_STREAM: "REFUSED_STREAM",
    CANCEL: "CANCEL",
    COMPRESSION_ERROR: "COMPRESSION_ERROR",
    CONNECT_ERROR: "CONNECT_ERROR",
    ENHANCE_YOUR_CALM: "ENHANCE_YOUR_CALM",
    INADEQUATE_SECURITY: "INADEQUATE_SECURITY",
    HTTP_1_1_REQUIRED: "HTTP_1_1_REQUIRED",
}

# The protocol's defaults, in force until a SETTINGS frame says otherwise.
DEFAULT_WINDOW = 65_535
DEFAULT_MAX_FRAME_SIZE = 16_384
MAX_WINDOW = 2**31 - 1
MAX_FRAME_SIZE_LIMIT = 2**24 - 1
MAX_STREAM_ID = 2**31 - 1

# (length << 8 | type, flags, stream id): the reserved top bit of the id is masked off.
FRAME_HEAD = struct.Struct(">LBL")
_U32 = struct.Struct(">L")
_SETTING = struct.Struct(">HL")


class ConnectionViolation(Exception):
    """The peer broke the protocol for the whole connection (RFC 9113 section 5.4.1):
    ``code`` goes in our GOAWAY, ``reason`` says in words what was received."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def error_name(code: int) -> str:
    """``REFUSED_STREAM (0x7)``: an error code as RFC 9113 section 7 names it."""
    return f"{_ERROR_NAMES.get(code, 'unknown error code')} (0x{code:x})"


def frame(kind: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    return FRAME_HEAD.pack(len(payload) << 8 | kind, flags, stream_id) + payload


def settings_frame(settings: Iterable[tuple[int, int]]) -> bytes:
    return frame(SETTINGS, 0, 0, b"".join(_SETTING.pack(key, value) for key, value in settings))


SETTINGS_ACK = frame(SETTINGS, ACK, 0)


def window_update(stream_id: int, increment: int) -> bytes:
    return frame(WINDOW_UPDATE, 0, stream_id, _U32.pack(increment))


def ping_ack(opaque: bytes) -> bytes:
    return frame(PING, ACK, 0, opaque)


def rst_stream(stream_id: int, code: int) -> bytes:
    return frame(RST_STREAM, 0, stream_id, _U32.pack(code))


def goaway(last_stream_id: int, code: int, debug: bytes = b"") -> bytes:
    return frame(GOAWAY, 0, 0, _U32.pack(last_stream_id) + _U32.pack(code) + debug)


def headers_frames(stream_id: int, block: bytes, end_stream: bool, max_frame_size: int) -> bytes:
    """One header block as HEADERS and, past ``max_frame_size``, CONTINUATION frames."""
    flags = END_STREAM if end_stream else 0
    if len(block) <= max_frame_size:
        return frame(HEADERS, flags | END_HEADERS, stream_id, block)
    pieces = [block[i : i + max_frame_size] for i in range(0, len(block), max_frame_size)]
    frames = [frame(HEADERS, flags, stream_id, pieces[0])]
    frames.extend(frame(CONTINUATION, 0, stream_id, piece) for piece in pieces[1:-1])
    frames.append(frame(CONTINUATION, END_HEADERS, stream_id, pieces[-1]))
    return b"".join(frames)


def read_u32(payload: bytes, offset: int = 0) -> int:
    value: int = _U32.unpack_from(payload, offset)[0]
    return value


def parse_settings(payload: bytes) -> list[tuple[int, int]]:
    """The (identifier, value) pairs of a SETTINGS frame, checked as RFC 9113 section
    6.5.2 asks; unknown identifiers are kept (the caller ignores them)."""
    if len(payload) % 6:
        raise ConnectionViolation(
            FRAME_SIZE_ERROR, f"SETTINGS frame of {len(payload)} bytes, not a multiple of 6"
        )
    pairs = [_SETTING.unpack_from(payload, i) for i in range(0, len(payload), 6)]
    for key, value in pairs:
        if key == SETTINGS_ENABLE_PUSH and value > 1:
            raise ConnectionViolation(PROTOCOL_ERROR, f"SETTINGS_ENABLE_PUSH of {value}")
        if key == SETTINGS_INITIAL_WINDOW_SIZE and value > MAX_WINDOW:
            raise ConnectionViolation(
                FLOW_CONTROL_ERROR, f"SETTINGS_INITIAL_WINDOW_SIZE of {value}, above 2^31-1"
            )
        if key == SETTINGS_MAX_FRAME_SIZE and not (
            DEFAULT_MAX_FRAME_SIZE <= value <= MAX_FRAME_SIZE_LIMIT
        ):
            raise ConnectionViolation(
                PROTOCOL_ERROR, f"SETTINGS_MAX_FRAME_SIZE of {value}, outside 2^14..2^24-1"
            )
    return pairs


def strip_padding(kind_name: str, flags: int, payload: bytes) -> bytes:
    """The payload of a DATA or HEADERS frame without its padding (PADDED flag)."""
    if not flags & PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise ConnectionViolation(
            PROTOCOL_ERROR, f"{kind_name} frame whose padding is not shorter than its payload"
        )
    return payload[1 : len(payload) - payload[0]]
