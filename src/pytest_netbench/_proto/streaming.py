"""Sans-IO HTTP/1.1 responses read as they arrive: each response a stream of timed events.

A :class:`StreamFramer` is a response framer (``framing.Framer``) that also looks inside the
body as it comes: for a server-sent events stream (``mode="sse"``) each event the
:class:`~pytest_netbench._proto.sse.SseParser` completes, for any other body
(``mode="chunks"``) each chunk of a chunked body (each read of a body of another framing)
is an *event*; over HTTP/2, for a gRPC server-streaming call (``mode="grpc"``), each
message its DATA frames complete (its 5-byte prefix and the length it says). Each is
stamped with the
clock's time of the read that completed it. Per response it keeps the time of its first
byte, of its first event and of its last, the gaps between events, their count, whether an
end marker came (``[DONE]``: an event whose data is the marker, not counted as an event)
and what was wrong with it (:attr:`StreamFramer.problem`); then it calls ``on_response`` as
any framer does. The words of one vocabulary (first event, gap, events) serve every kind of
stream.

The framer hands its finished stream to the run through the exchange's :class:`StreamLedger`
(``ledger.last`` is the framer whose response just completed, read inside ``on_response``),
so the engine's connections stay what they are. A stream cut short (the connection lost,
or timed out) is still readable there: :meth:`StreamFramer.in_stream` says one had begun.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import httptools

from pytest_netbench._proto.framing import OnError, OnResponse
from pytest_netbench._proto.http import (
    MAX_HEAD_BYTES,
    feed_parser,
    non_final_status_problem,
)
from pytest_netbench._proto.sse import SseParser

# "openai": an OpenAI-compatible completion or chat stream (server-sent events of JSON
# chunks ending in ``data: [DONE]``), whose events are the chunks that carry a token.
# "grpc": a gRPC server-streaming call (``grpc_load``), whose events are its messages.
StreamMode = Literal["sse", "chunks", "openai", "grpc"]
# The modes of an HTTP load's ``stream=`` ("grpc" is a gRPC load's own).
STREAM_MODES: tuple[StreamMode, ...] = ("sse", "chunks", "openai")
# A gRPC message's prefix: a compressed flag and a 32-bit length (gRPC's PROTOCOL-HTTP2.md).
_GRPC_PREFIX = 5
# The start of an error answer's body kept for its error's words.
ERROR_BODY_BYTES = 200


@dataclass(frozen=True, slots=True)
class StreamCheck:
    """What makes a stream whole: ``events`` exactly (None: any count), and an end marker
    (the data of the last event, such as ``[DONE]``; None: none expected)."""

    events: int | None = None
    end_marker: str | None = None

    def problem(self, events: int, end_seen: bool) -> str:
        """Why a stream of ``events`` events (and its end marker, if ``end_seen``) is not
        whole; "" when it is."""
        if self.end_marker is not None and not end_seen:
            return f"the stream ended without its end marker {self.end_marker!r} ({events} events)"
        if self.events is not None and events != self.events:
            return f"expected {self.events} events, got {events}"
        return ""


class StreamLedger:
    """Where a framer leaves the stream that just completed (one per worker: a run is one
    thread), for the run rules to read inside ``on_response``."""

    __slots__ = ("check", "clock", "goodput", "last", "mode")

    def __init__(self, mode: StreamMode, check: StreamCheck, clock: Callable[[], int]) -> None:
        self.mode = mode
        self.check = check
        self.clock = clock
        self.last: StreamTimes | None = None
        # Goodput's SLO (vLLM's): the most TTFT, TPOT and E2EL a good stream has, in ns
        # (-1: that metric not in the SLO); None: no goodput counted.
        self.goodput: tuple[int, int, int] | None = None

    def framer(self, on_response: OnResponse, on_error: OnError) -> StreamFramer:
        return StreamFramer(self, on_response, on_error)


class StreamTimes:
    """One stream's events as they arrive, timed: what the run rules read of a stream
    (``ledger.last``), whether its pieces came framed by HTTP/1.1 (:class:`StreamFramer`)
    or as an HTTP/2 stream's DATA frames (``rules/h2_streams``: :meth:`begin`,
    :meth:`head_done`, :meth:`take_body` with each frame, ``each_piece`` set)."""

    __slots__ = (
        "_chunk_data",
        "_chunked",
        "_grpc_need",
        "_grpc_prefix",
        "_ledger",
        "_now",
        "_sse",
        "content_type",
        "done_ns",
        "each_piece",
        "end_seen",
        "error_body",
        "events",
        "first_byte_ns",
        "first_event_ns",
        "gaps",
        "last_event_ns",
        "problem",
        "status",
        "usage_tokens",
    )

    def __init__(self, ledger: StreamLedger) -> None:
        self._ledger = ledger
        self._now = 0
        self._chunked = self._chunk_data = False
        self.each_piece = False  # chunks mode: every piece an event (HTTP/2's DATA frames)
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.content_type = ""
        self.first_byte_ns = 0  # 0: no byte of this response yet
        self.first_event_ns = 0
        self.last_event_ns = 0
        self.events = 0
        self.gaps: array[int] = array("q")
        self.end_seen = False
        self.problem = ""
        self.error_body = b""
        self._sse = SseParser() if self._ledger.mode in ("sse", "openai") else None
        self.usage_tokens = -1  # openai: usage.completion_tokens, when the server sent it
        self.done_ns = 0  # openai: when data: [DONE] came
        # grpc: the bytes of the message being read still to come, and its prefix so far
        self._grpc_need = 0
        self._grpc_prefix = b""

    def in_stream(self) -> bool:
        """Whether a response has begun to arrive and not ended (a stream cut short)."""
        return self.first_byte_ns != 0

    def begin(self, now: int) -> None:
        """The response's first byte came at ``now``."""
        self._reset()
        self._now = self.first_byte_ns = now

    def head_done(self) -> None:
        """Its head is complete (``status`` and ``content_type`` set): an SSE load checks
        that the answer is an event stream."""
        if 200 <= self.status < 400 and self._sse is not None:
            media = self.content_type.partition(";")[0].strip().lower()
            if media != "text/event-stream":
                shown = self.content_type or "none"
                self.problem = f"not an event stream: Content-Type {shown!r}, not text/event-stream"

    def take_body(self, body: bytes, now: int | None = None) -> None:
        """A piece of the body (that came at ``now``; None: the read being fed)."""
        if now is not None:
            self._now = now
        status = self.status
        if not body:
            return
        if status >= 400 or status < 200:
            if len(self.error_body) < ERROR_BODY_BYTES:
                self.error_body += body[: ERROR_BODY_BYTES - len(self.error_body)]
            return
        if self._sse is None:
            if self._ledger.mode == "grpc":
                self._grpc_messages(body)
            elif self.each_piece:
                self._event(False)
            elif self._chunked:
                self._chunk_data = True  # the event is the chunk: on_chunk_complete
            elif self.last_event_ns != self._now or not self.events:
                self._event(False)  # no chunks to go by: each read is an event
            return
        if self.problem.startswith("not an event stream"):
            if len(self.error_body) < ERROR_BODY_BYTES:
                self.error_body += body[: ERROR_BODY_BYTES - len(self.error_body)]
            return
        sse = self._sse
        openai = self._ledger.mode == "openai"
        for event in sse.feed(body):
            if openai:
                self._token_chunk(event.data)
            else:
                self._event(self._ledger.check.end_marker == event.data)
        if sse.problem and not self.problem:
            self.problem = sse.problem

    def _token_chunk(self, data: str) -> None:
        """One event of an OpenAI-compatible stream, read as vLLM's benchmark reads it
        (``benchmarks/backend_request_func.py``): ``[DONE]`` ends it; a chunk is a token
        when its first choice carries text (``text``, or a chat ``delta.content``); a chunk
        with ``usage`` says how many tokens were made."""
        if data == "[DONE]":
            self.done_ns = self._now
            self._event(True)
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            self.problem = self.problem or f"malformed event: data is not JSON: {data[:60]!r}"
            return
        if not isinstance(chunk, dict):
            self.problem = self.problem or f"malformed event: not a JSON object: {data[:60]!r}"
            return
        choices = chunk.get("choices")
        if choices and isinstance(choices, list) and isinstance(choices[0], dict):
            first = choices[0]
            delta = first.get("delta")
            text = first.get("text") or (delta.get("content") if isinstance(delta, dict) else "")
            if text:
                self._event(False)
        usage = chunk.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            self.usage_tokens = usage["completion_tokens"]

    def _grpc_messages(self, body: bytes) -> None:
        """A piece of a gRPC call's body: each message it completes (its 5-byte prefix and
        the length it says) an event, timed at this piece."""
        pos = 0
        size = len(body)
        while pos < size:
            need = self._grpc_need
            if need:
                taken = min(need, size - pos)
                pos += taken
                self._grpc_need = need - taken
                if taken == need:
                    self._event(False)
                continue
            prefix = self._grpc_prefix + body[pos : pos + _GRPC_PREFIX - len(self._grpc_prefix)]
            pos += len(prefix) - len(self._grpc_prefix)
            if len(prefix) < _GRPC_PREFIX:
                self._grpc_prefix = prefix
                return
            self._grpc_prefix = b""
            if prefix[0] > 1 and not self.problem:
                self.problem = f"malformed gRPC message: a prefix flag of {prefix[0]}, not 0 or 1"
            self._grpc_need = int.from_bytes(prefix[1:], "big")
            if not self._grpc_need:
                self._event(False)  # an empty message

    def tokens(self) -> int:
        """The output tokens of an OpenAI-compatible stream: what its usage said, else its
        token chunks counted."""
        return self.usage_tokens if self.usage_tokens >= 0 else self.events

    def finish_problem(self) -> None:
        """The stream ended: a plain answer's words carry the start of its body."""
        if self.problem.startswith("not an event stream") and self.error_body:
            self.problem += f"; the body begins {self.error_body[:80]!r}"
        elif (self._grpc_need or self._grpc_prefix) and not self.problem:
            self.problem = (
                f"malformed gRPC stream: the call ended inside a message ({self.events} whole)"
            )

    def _event(self, is_end: bool) -> None:
        now = self._now
        if is_end:
            self.end_seen = True
            return
        if self.end_seen:
            self.problem = self.problem or "an event after the end marker"
        if self.events:
            self.gaps.append(now - self.last_event_ns)
        else:
            self.first_event_ns = now
        self.last_event_ns = now
        self.events += 1


class StreamFramer(StreamTimes):
    """Response boundaries, and each response's events timed (see the module)."""

    __slots__ = (
        "_delimited",
        "_head_bytes",
        "_on_error",
        "_on_response",
        "_parser",
        "_status",
        "failed",
        "on_first_byte",
    )

    def __init__(self, ledger: StreamLedger, on_response: OnResponse, on_error: OnError) -> None:
        super().__init__(ledger)
        self._on_response = on_response
        self._on_error = on_error
        self._parser = httptools.HttpResponseParser(self)
        self._status = 0
        self._head_bytes = 0
        self._delimited = False
        self.failed = False
        # Called as each answer's first byte is parsed: the request phases' end of wait.
        self.on_first_byte: Callable[[], None] | None = None

    # -- httptools callbacks --
    def on_message_begin(self) -> None:
        self.begin(self._now)
        if self.on_first_byte is not None:
            self.on_first_byte()
        self._delimited = self._chunked = self._chunk_data = False

    def on_header(self, name: bytes, value: bytes) -> None:
        lowered = name.lower()
        if lowered == b"content-type":
            self.content_type = value.decode("latin-1").strip()
        elif lowered == b"content-length":
            self._delimited = True
        elif lowered == b"transfer-encoding" and value.rstrip().lower().endswith(b"chunked"):
            self._delimited = self._chunked = True

    def on_headers_complete(self) -> None:
        self._head_bytes = 0
        self._status = self.status = self._parser.get_status_code()
        self.head_done()

    def on_body(self, body: bytes) -> None:
        self.take_body(body)

    def on_chunk_complete(self) -> None:
        if self._chunk_data:
            self._chunk_data = False
            self._event(False)

    def on_message_complete(self) -> None:
        status = self._status
        self._status = 0
        if self.failed:
            return
        if status >= 200:
            self.finish_problem()
            self._ledger.last = self
            self._on_response(status, bool(self._parser.should_keep_alive()))
            self.first_byte_ns = 0  # recorded: no longer a stream in progress
        else:
            problem = non_final_status_problem(status)
            if problem:
                self._fail(problem)
            self.first_byte_ns = 0

    # -- input --
    def feed(self, data: bytes) -> None:
        if self.failed:
            return
        self._now = self._ledger.clock()
        before = self._status
        problem = feed_parser(self._parser, data)
        if problem:
            self._fail(problem)
        elif before == 0 and self._status == 0 and self.first_byte_ns:
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._fail("malformed response: header block larger than 64 KiB")

    def feed_eof(self) -> bool:
        """The peer closed: a close-delimited stream (no length, not chunked) ends here."""
        if self.failed or not self.first_byte_ns or self._status == 0 or self._delimited:
            return False
        # (An event the close cut short is dropped, as the standard says.)
        self.on_message_complete()
        return True

    def release(self) -> None:
        # The parser and the connection's first-byte callback refer back: undone here.
        self._parser = None  # type: ignore[assignment]
        self.on_first_byte = None

    def _fail(self, reason: str) -> None:
        if self.failed:
            return
        self.failed = True
        self._on_error(reason)
