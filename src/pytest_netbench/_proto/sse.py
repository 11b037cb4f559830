"""Sans-IO server-sent events (the WHATWG HTML standard, "Server-sent events", section
9.2.6 "Interpreting an event stream"): bytes in, whole events out.

A :class:`SseParser` is fed the body of a ``text/event-stream`` response in whatever pieces
it arrived and returns the events those pieces completed. Lines end in CRLF, LF or CR (a CR
at the end of one piece and an LF at the start of the next are one line end); a line
beginning with ``:`` is a comment; ``data:`` lines are joined with LF; ``event:``, ``id:``
and ``retry:`` set the event's type, the last event id and the reconnection time; a blank
line dispatches the event, if it has data. A byte-order mark at the very start is skipped.

The standard tells a browser to ignore a line whose field it does not know, or a ``retry:``
that is not digits; a load test reports them instead (:attr:`SseParser.problem`, the first
one, and :attr:`SseParser.malformed`, their count), as it reports a line that is not UTF-8,
and keeps parsing: the engine counts a stream with a problem as a ``verify`` error.
"""

from __future__ import annotations

from dataclasses import dataclass

_BOM = b"\xef\xbb\xbf"
_FIELDS = "data, event, id, retry"
# The most of a problem's line quoted in its words.
_QUOTE = 60


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its data (``data:`` lines joined with LF), its type
    (``event:``, "message" when none was given), the last event id at its dispatch and the
    reconnection time the stream asked for so far (ms; None: never)."""

    data: str
    event: str = "message"
    id: str = ""
    retry_ms: int | None = None


class SseParser:
    """Turns an event stream's bytes into :class:`SseEvent` objects (see the module)."""

    __slots__ = (
        "_buffer",
        "_data",
        "_event",
        "_skip_lf",
        "_started",
        "comments",
        "last_id",
        "malformed",
        "problem",
        "retry_ms",
    )

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._event = ""
        self._skip_lf = False  # the last piece ended in CR: an LF next ends no line
        self._started = False  # past the place where a byte-order mark may be
        self.last_id = ""
        self.retry_ms: int | None = None
        self.comments = 0
        self.malformed = 0
        self.problem = ""

    def feed(self, data: bytes) -> list[SseEvent]:
        """The events that ``data`` (the next piece of the body) completed, in order."""
        if self._skip_lf:
            self._skip_lf = False
            if data[:1] == b"\n":
                data = data[1:]
        buffer = self._buffer + data if self._buffer else data
        if not self._started:
            if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
                self._buffer = buffer
                return []
            self._started = True
            if buffer.startswith(_BOM):
                buffer = buffer[len(_BOM) :]
        cut = max(buffer.rfind(b"\n"), buffer.rfind(b"\r"))
        if cut < 0:
            self._buffer = buffer
            return []
        self._buffer = buffer[cut + 1 :]
        if cut == len(buffer) - 1 and buffer[cut] == 13:  # an LF next would end no line
            self._skip_lf = True
        events: list[SseEvent] = []
        # bytes.splitlines cuts at CRLF, LF and CR only: the standard's three line ends.
        for line in buffer[: cut + 1].splitlines():
            if not line:
                if self._data:
                    events.append(self._dispatch())
                else:
                    self._event = ""
                continue
            self._line(line)
        return events

    def _dispatch(self) -> SseEvent:
        data = "\n".join(self._data)
        event = SseEvent(data, self._event or "message", self.last_id, self.retry_ms)
        self._data = []
        self._event = ""
        return event

    def _line(self, raw: bytes) -> None:
        if raw[:1] == b":":
            self.comments += 1
            return
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            self._malformed(f"a line that is not UTF-8: {raw[:_QUOTE]!r}")
            return
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry_ms = int(value)
            else:
                self._malformed(f"retry: {value[:_QUOTE]!r} is not a whole number of ms")
        else:
            self._malformed(f"a line with no field the format knows ({_FIELDS}): {line[:_QUOTE]!r}")

    def _malformed(self, what: str) -> None:
        self.malformed += 1
        if not self.problem:
            self.problem = f"malformed event: {what}"

    def pending(self) -> bool:
        """Whether an event has begun (data lines, or a partial line) and not been
        dispatched: what a stream cut short leaves behind."""
        return bool(self._data or self._buffer.strip(_BOM))
