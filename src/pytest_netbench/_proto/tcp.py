"""Sans-IO framing for raw TCP request/response exchanges.

An exchange is one request payload written and one response read back. The framers here
decide where a response ends and call ``on_response(code, True)`` with ``code`` 0 when it is
right and ``VERIFY_FAILED`` when the bytes differ from what was expected (an echo that came
back changed). They share the HTTP framers' call shape so the engine treats both alike.
"""

from __future__ import annotations

from pytest_netbench._proto.framing import OnError, OnResponse

OK = 0
VERIFY_FAILED = -1
FRAMINGS = ("echo", "fixed", "line", "length-prefixed")


def parse_framing(framing: str) -> dict[str, int | bytes] | None:
    """A framing name as :class:`DelimitedFramer` options; None for ``echo``.

    ``ValueError`` says what the accepted forms are, for the spec check to pass on.
    """
    if framing == "echo":
        return None
    kind, _, arg = framing.partition(":")
    if kind not in FRAMINGS or (kind != "line" and not _count(arg)):
        raise ValueError(
            f"unknown framing {framing!r}: use echo, fixed:<bytes>, line, line:<hex delim>"
            " or length-prefixed:<prefix bytes>, the bytes 1 or more"
        )
    if kind == "fixed":
        return {"size": int(arg)}
    if kind == "line":
        try:
            delimiter = bytes.fromhex(arg) if arg else b"\n"
        except ValueError:
            delimiter = b""
        if not delimiter:
            message = f"framing {framing!r}: the delimiter must be hex, e.g. line:0d0a"
            raise ValueError(message) from None
        return {"delimiter": delimiter}
    return {"prefix_bytes": int(arg)}


def _count(text: str) -> int:
    """``text`` as a count of bytes, 0 if it is none: ASCII digits (str.isdigit() also
    takes "²", which int() refuses), and few enough that int() takes them."""
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        return 0
    return int(text)


class EchoFramer:
    """Reads back exactly the payload that was sent and checks every byte.

    Each piece is compared where it lands in the payload with ``bytes.startswith`` at an
    offset (one ``memcmp``, no copy): comparing memoryview slices goes byte by byte (about
    3 ns a byte, which made a 512 KiB echo cost 1.5 ms of CPU). A buffered protocol
    receives straight into :meth:`free_space`, a view of ``scratch``, and reports with
    :meth:`received`; the bytes are checked at once, so every connection of a run can
    share one scratch buffer (a flood of 15,000 connections with 512 KiB payloads would
    otherwise hold 7.5 GiB of buffers). :meth:`feed` serves callers handed ``bytes``.
    """

    __slots__ = (
        "_expected",
        "_matches",
        "_on_error",
        "_on_response",
        "_scratch",
        "_seen",
        "failed",
    )

    def __init__(
        self,
        expected: bytes,
        on_response: OnResponse,
        on_error: OnError,
        scratch: bytearray | None = None,
    ) -> None:
        if not expected:
            raise ValueError("an echo exchange needs a non-empty payload")
        self._expected = expected
        # Only a buffered protocol's receive uses it: made on first use when not shared.
        self._scratch = memoryview(scratch) if scratch else None
        self._on_response = on_response
        self._on_error = on_error
        self._seen = 0
        self._matches = True
        self.failed = False

    def free_space(self) -> memoryview:
        """Where the next bytes of the echo go (never empty, never past the exchange)."""
        if self._scratch is None:
            self._scratch = memoryview(bytearray(min(len(self._expected), 65536)))
        return self._scratch[: len(self._expected) - self._seen]

    def received(self, size: int) -> None:
        """``size`` bytes were written into :meth:`free_space`."""
        assert self._scratch is not None, "received() before free_space()"
        self._check(self._scratch[:size])

    def feed(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            take = min(len(view), len(self._expected) - self._seen)
            self._check(view[:take])
            view = view[take:]

    def _check(self, piece: memoryview) -> None:
        """One piece of the echo, at most what the exchange still lacks."""
        if self._matches and not self._expected.startswith(piece, self._seen):
            self._matches = False
        self._seen += len(piece)
        if self._seen == len(self._expected):
            code = OK if self._matches else VERIFY_FAILED
            self._seen = 0
            self._matches = True
            self._on_response(code, True)

    def feed_eof(self) -> bool:
        return False

    def release(self) -> None:
        """Nothing here refers back to this framer."""


class DelimitedFramer:
    """Responses of a fixed size, ending in a delimiter, or behind a length prefix."""

    __slots__ = (
        "_buffer",
        "_delimiter",
        "_expected",
        "_max",
        "_on_error",
        "_on_response",
        "_prefix",
        "_size",
        "failed",
    )

    def __init__(
        self,
        on_response: OnResponse,
        on_error: OnError,
        *,
        size: int = 0,
        delimiter: bytes = b"",
        prefix_bytes: int = 0,
        expected: bytes | None = None,
        max_response: int = 64 * 1024 * 1024,
    ) -> None:
        if sum(bool(x) for x in (size, delimiter, prefix_bytes)) != 1:
            raise ValueError("give exactly one of size, delimiter or prefix_bytes")
        self._on_response = on_response
        self._on_error = on_error
        self._size = size
        self._delimiter = delimiter
        self._prefix = prefix_bytes
        self._expected = expected
        self._buffer = bytearray()
        self.failed = False
        self._max = max_response

    def feed(self, data: bytes) -> None:
        if self.failed:
            return
        self._buffer += data
        while (end := self._response_end()) > 0:
            message = bytes(self._buffer[:end])
            del self._buffer[:end]
            ok = self._expected is None or message == self._expected
            self._on_response(OK if ok else VERIFY_FAILED, True)
        if len(self._buffer) > self._max:
            self.failed = True
            self._on_error(f"response larger than {self._max} bytes without a frame boundary")

    def _response_end(self) -> int:
        buf = self._buffer
        if self._size:
            return self._size if len(buf) >= self._size else 0
        if self._delimiter:
            at = buf.find(self._delimiter)
            return at + len(self._delimiter) if at >= 0 else 0
        if len(buf) < self._prefix:
            return 0
        total = self._prefix + int.from_bytes(buf[: self._prefix], "big")
        return total if len(buf) >= total else 0

    def feed_eof(self) -> bool:
        return False

    def release(self) -> None:
        """Nothing here refers back to this framer."""


def chunked(payload: bytes, chunk: int) -> list[bytes]:
    """Split a request payload into the write sizes asked for (0 = one write)."""
    if chunk <= 0 or chunk >= len(payload):
        return [payload]
    return [payload[i : i + chunk] for i in range(0, len(payload), chunk)]
