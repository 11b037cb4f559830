"""Sans-IO HTTP/2 client connection for a load: one fixed request on many streams.

No sockets and no loop. The engine writes :meth:`H2ClientConnection.initiate`'s bytes
once, then for each read calls :meth:`~H2ClientConnection.feed`, which calls
``on_response(stream_id, status)`` once per stream whose response ended (END_STREAM, after
trailers if any) and ``on_stream_error(stream_id, error)`` once per stream that ended any
other way; then :meth:`~H2ClientConnection.open_streams` for the new requests it wants
(bounded by ``max_streams`` and the server's SETTINGS_MAX_CONCURRENT_STREAMS) and
:meth:`~H2ClientConnection.data_to_send` for the bytes to write: requests, the answers the
protocol asks for (SETTINGS and PING acknowledgements, WINDOW_UPDATEs) and request bodies
as flow control lets them go. Every stream opened ends exactly once, in one callback or the
other, or stays open until the engine stops: the run rules' invariant holds per stream.

Windows follow h2load (nghttp2's ``src/h2load_http2_session.cc``): the client announces a
stream window of 2^30-1 in its SETTINGS and raises the connection's to 2^30-1 with a
WINDOW_UPDATE, so a server never waits for the client; the client gives back what it
received in one WINDOW_UPDATE once half a window is used, as nghttp2 does.

What ends a stream in error, by :class:`StreamError` ``cause``:

- ``rst_stream``: the server reset it (kind ``reset``, the error code named);
- ``goaway``: the server's GOAWAY named a last stream below it, so the server did not
  process it (kind ``reset``); streams at or below that id go on to their end;
- ``closed``: the connection closed with the stream open (kind ``reset``);
- ``protocol``: a malformed response on that stream (kind ``protocol``, answered with a
  RST_STREAM), or a frame that breaks the connection (every open stream, answered with a
  GOAWAY; :attr:`H2ClientConnection.failed` is then set);
- ``grpc_status``: a gRPC call (``H2Request(grpc=True)``) answered HTTP 200 with a
  ``grpc-status`` other than 0 (kind ``status``; ``code`` is the grpc-status, ``reason``
  names it and carries ``grpc-message``). A call answered 200 with no grpc-status is a
  ``protocol`` error; one answered another HTTP status goes to ``on_response`` as any.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from time import monotonic_ns
from typing import Literal

from pytest_netbench._model.grpc_status import status_name
from pytest_netbench._model.kinds import ErrorKind
from pytest_netbench._proto import h2_frames as f
from pytest_netbench._proto.h2_headers import ResponseHeaderDecoder

StreamErrorCause = Literal["rst_stream", "goaway", "closed", "protocol", "grpc_status"]

# h2load's default -w and -W: 30 bits.
DEFAULT_WINDOW = 2**30 - 1
# A header block split over CONTINUATION frames may not grow past this before it is refused.
_MAX_HEADER_BLOCK = 256 * 1024
_FIRST_BYTES_SHOWN = 60
# A read of one frame, at most the largest the client accepts (``feed``'s lone HEADERS).
_MOST_LONE = 9 + f.DEFAULT_MAX_FRAME_SIZE
_HEADERS, _END_HEADERS = f.HEADERS, f.END_HEADERS
_DATA, _END_STREAM, _MOST_FRAME = f.DATA, f.END_STREAM, f.DEFAULT_MAX_FRAME_SIZE
_STREAM_MASK = f.MAX_STREAM_ID
_LAST_STOP = _STREAM_MASK + 2  # open_streams: the stop of a range that ends at the last id
_FRAME_HEAD_UNPACK = f.FRAME_HEAD.unpack_from


def _headers_packer(block: bytes) -> Callable[[bytes, int, bytes], bytes]:
    """Packs one HEADERS frame of ``block``: (its first 5 bytes, its stream id, ``block``)."""
    return struct.Struct(f">5sI{len(block)}s").pack


@dataclass(frozen=True, slots=True)
class StreamError:
    """Why a stream ended without a response: ``kind`` is the run rules' error kind,
    ``cause`` what happened in HTTP/2's words, ``code`` the HTTP/2 error code involved
    (the server's, or the one the client answered with)."""

    kind: ErrorKind
    cause: StreamErrorCause
    code: int
    reason: str


OnStreamResponse = Callable[[int, int], None]
OnStreamError = Callable[[int, StreamError], None]
# A streaming load's look inside each response (``on_data``): (stream id, its final status,
# a DATA frame's payload without padding, or b"" when the final HEADERS came).
OnStreamData = Callable[[int, int, bytes], None]


@dataclass(frozen=True, slots=True)
class H2Request:
    """One request, prepared once for a whole load: its HPACK block (see
    ``h2_headers.encode_request_block``) and body; ``grpc``: a gRPC call, whose status is
    read from its trailers (``grpc.encode_unary_block``, ``grpc.frame_message``)."""

    block: bytes
    body: bytes = b""
    grpc: bool = False


class H2ClientConnection:
    """One HTTP/2 connection's client side (RFC 9113), sending one prepared request."""

    __slots__ = (
        "_body_windows",
        "_connection_window",
        "_continuing",
        "_decoder",
        "_ended",
        "_first_frame_seen",
        "_grpc",
        "_headers_head",
        "_headers_pack",
        "_heads",
        "_initial_send_window",
        "_known",
        "_lone_heads",
        "_max_send_frame",
        "_max_streams",
        "_next_id",
        "_on_response",
        "_on_stream_data",
        "_on_stream_error",
        "_outbound",
        "_pending_bodies",
        "_recv_buffer",
        "_recv_consumed",
        "_recv_update_at",
        "_request",
        "_send_window",
        "_server_max_streams",
        "_stream_received",
        "_stream_update_at",
        "_stream_window",
        "_streams",
        "clock",
        "closed",
        "connection_error",
        "failed",
        "goaway",
        "heads_at",
        "on_responses",
        "outbound",
        "settings_acked",
    )

    def __init__(
        self,
        request: H2Request,
        on_response: OnStreamResponse,
        on_stream_error: OnStreamError,
        *,
        max_streams: int = 100,
        stream_window: int = DEFAULT_WINDOW,
        connection_window: int = DEFAULT_WINDOW,
        on_data: OnStreamData | None = None,
    ) -> None:
        if max_streams < 1:
            raise ValueError(f"max_streams must be at least 1, got {max_streams}")
        for name, window in (("stream", stream_window), ("connection", connection_window)):
            if not f.DEFAULT_WINDOW <= window <= f.MAX_WINDOW:
                raise ValueError(f"{name}_window must be in 65535..2^31-1, got {window}")
        self._request = request
        self._grpc = request.grpc
        # When each open stream's final response HEADERS came, by ``clock``, once the read
        # that brought them is handled, if the stream is still open (the engine times the
        # answer's first byte by it: phases); a response that ended in that read came whole
        # in it, as HTTP/1.1 counts one, and is not entered. None: not kept. A dict and a
        # clock, not a callback: the commonest read (a lone HEADERS) makes no Python call.
        self.heads_at: dict[int, int] | None = None
        self.clock: Callable[[], int] = monotonic_ns
        self._heads: list[int] = []  # streams whose final HEADERS came in this read
        # Set, the HTTP responses (not a gRPC call's) that end in a read go to it once the
        # read is handled, as one list of (stream id, status) in the order they ended,
        # instead of one on_response call each: the engine counts them in one call (issue
        # 35; pairs: one append a response here, an unpacking loop there). A stream ended in
        # error is on_stream_error's as it comes. None: each response goes to on_response.
        self.on_responses: Callable[[list[tuple[int, int]]], None] | None = None
        self._ended: list[tuple[int, int]] = []
        self._on_response = on_response
        self._on_stream_error = on_stream_error
        self._on_stream_data = on_data
        self._max_streams = max_streams
        self._stream_window = stream_window
        self._connection_window = connection_window
        self._decoder = ResponseHeaderDecoder()
        self._known = self._decoder.known  # blocks decoded before: their status
        # Open streams: id -> final status once its HEADERS came, else 0.
        self._streams: dict[int, int] = {}
        self._next_id = 1
        self._outbound: list[bytes] = []
        # The same list, for the engine to ask whether anything waits to be written without
        # a call (``has_output``); emptied in place, never replaced.
        self.outbound = self._outbound
        self._recv_buffer = b""
        self._first_frame_seen = False
        # feed's shortcut for a read of one response's HEADERS: once the server's preface
        # came, and not for a gRPC call's nor a streaming load's (as _read_frames's hot path).
        self._lone_heads = False
        # (stream id, END_STREAM of its HEADERS, the block's pieces) while CONTINUATIONs come.
        self._continuing: tuple[int, bool, list[bytes]] | None = None
        # Receiving: what the server sent and was not yet given back, and when to.
        self._recv_consumed = 0
        self._recv_update_at = connection_window // 2
        self._stream_received: dict[int, int] = {}
        self._stream_update_at = stream_window // 2
        # Sending: what the server allows (request bodies only; HEADERS are not counted).
        self._server_max_streams = f.MAX_STREAM_ID  # no limit until its SETTINGS say one
        self._initial_send_window = f.DEFAULT_WINDOW
        self._send_window = f.DEFAULT_WINDOW
        self._max_send_frame = f.DEFAULT_MAX_FRAME_SIZE
        self._pending_bodies: dict[int, bytes] = {}
        self._body_windows: dict[int, int] = {}
        flags = f.END_HEADERS | (0 if request.body else f.END_STREAM)
        self._headers_head = f.FRAME_HEAD.pack(len(request.block) << 8 | f.HEADERS, flags, 0)[:5]
        self._headers_pack = _headers_packer(request.block)
        self.goaway: tuple[int, int] | None = None  # (last stream id, error code) received
        self.settings_acked = False
        self.failed = False
        self.closed = False
        self.connection_error: StreamError | None = None

    # -- what the engine asks --
    def initiate(self) -> bytes:
        """The client's connection preface: the magic, SETTINGS, the connection window."""
        settings = [
            (f.SETTINGS_ENABLE_PUSH, 0),
            (f.SETTINGS_INITIAL_WINDOW_SIZE, self._stream_window),
        ]
        preface = f.PREFACE + f.settings_frame(settings)
        if self._connection_window > f.DEFAULT_WINDOW:
            preface += f.window_update(0, self._connection_window - f.DEFAULT_WINDOW)
        return preface

    @property
    def open_stream_count(self) -> int:
        return len(self._streams)

    @property
    def free_streams(self) -> int:
        """How many new streams may open now: 0 after a GOAWAY, a failure, or the last id."""
        if self.goaway is not None or self.failed or self.closed:
            return 0
        limit = min(self._max_streams, self._server_max_streams) - len(self._streams)
        ids_left = (f.MAX_STREAM_ID - self._next_id) // 2 + 1
        return max(0, min(limit, ids_left))

    @property
    def finished(self) -> bool:
        """True once no stream is open and none may open: the engine closes the socket."""
        return not self._streams and self.free_streams == 0

    def open_streams(self, count: int) -> tuple[int, int]:
        """Open up to ``count`` new streams for the request: (first stream id, how many).
        Their ids are ``first, first + 2, ...``; their bytes join :meth:`data_to_send`."""
        # free_streams, written out without its min and max (three builtin calls a read
        # that frees streams, issue 35): as many as asked, up to what both sides allow.
        if self.goaway is not None or self.failed or self.closed:
            return 0, 0
        first = self._next_id
        streams = self._streams
        most = self._max_streams
        if self._server_max_streams < most:
            most = self._server_max_streams
        most -= len(streams)
        if most < count:
            count = most
        stop = first + 2 * count
        if stop > _LAST_STOP:  # past the last stream id: as many as are left
            count = (_STREAM_MASK - first) // 2 + 1
            stop = first + 2 * count
        if count <= 0:
            return 0, 0
        self._next_id = stop
        request = self._request
        block = request.block
        if not request.body and len(block) <= self._max_send_frame:
            head = self._headers_head
            out = self._outbound
            pack = self._headers_pack  # a frame in one C call (issue 35: ~80 ns a stream less)
            for stream_id in range(first, stop, 2):
                streams[stream_id] = 0
                out.append(pack(head, stream_id, block))
            return first, count
        for stream_id in range(first, stop, 2):
            streams[stream_id] = 0
            body = self._request.body
            self._outbound.append(
                f.headers_frames(stream_id, block, not body, self._max_send_frame)
            )
            if body:
                self._pending_bodies[stream_id] = body
                self._body_windows[stream_id] = self._initial_send_window
        if self._pending_bodies:
            self._send_bodies()
        return first, count

    def open_stream_for(self, request: H2Request) -> int:
        """Open one stream for ``request`` (a kind of a load's mix) instead of the
        connection's own request: its id, or 0 if no stream may open now. ``request`` must
        be of the same kind (gRPC or not) as the connection's."""
        if request is self._request:
            return self.open_streams(1)[0]
        own, own_head, own_pack = self._request, self._headers_head, self._headers_pack
        flags = f.END_HEADERS | (0 if request.body else f.END_STREAM)
        self._request = request
        self._headers_head = f.FRAME_HEAD.pack(len(request.block) << 8 | f.HEADERS, flags, 0)[:5]
        self._headers_pack = _headers_packer(request.block)
        try:
            return self.open_streams(1)[0]
        finally:
            self._request, self._headers_head, self._headers_pack = own, own_head, own_pack

    @property
    def has_output(self) -> bool:
        """Is anything queued for :meth:`data_to_send` (a request, an acknowledgement, a
        WINDOW_UPDATE, a reset)?"""
        return bool(self._outbound)

    def data_to_send(self) -> bytes:
        """Everything queued for the server since the last call, as one write."""
        if not self._outbound:
            return b""
        data = b"".join(self._outbound)
        self._outbound.clear()
        return data

    def cancel(self, stream_id: int) -> bool:
        """Give up on an open stream (the engine's timeout counts it): the server is told
        with RST_STREAM(CANCEL), no callback runs, and its late frames are dropped.
        False if the stream was not open."""
        if stream_id not in self._streams:
            return False
        del self._streams[stream_id]
        self._stream_received.pop(stream_id, None)
        self._pending_bodies.pop(stream_id, None)
        self._body_windows.pop(stream_id, None)
        self._outbound.append(f.rst_stream(stream_id, f.CANCEL))
        return True

    def shutdown(self) -> bytes:
        """The GOAWAY a client sends when it is done with the connection."""
        self.closed = True
        return f.goaway(0, f.NO_ERROR)

    # -- what the server sent --
    def feed(self, data: bytes) -> bool:
        """Read what the server sent. True when the read was one response's HEADERS alone
        (the commonest read from Go's net/http): nothing ended, nothing to write, so the
        engine has nothing to do after it (issue 35); False after any other read."""
        if self.failed or self.closed:
            return False
        if self._recv_buffer:
            buffer = self._recv_buffer + data
        elif self._lone_heads and len(data) >= 9:
            # The commonest reads from a server that writes each frame as it is ready (Go's
            # net/http): one final response's HEADERS alone, its body to come; and the last
            # DATA frames of responses whose HEADERS came (below).
            length_kind, flags, stream_id = _FRAME_HEAD_UNPACK(data)
            size = len(data)
            if (
                length_kind == (size - 9) << 8 | _HEADERS
                and flags == _END_HEADERS
                and size <= _MOST_LONE
            ):
                status = self._known.get(data[9:])
                stream_id &= _STREAM_MASK
                streams = self._streams
                if (
                    status is not None
                    and status >= 200
                    and streams.get(stream_id) == 0
                    and self._continuing is None
                ):
                    streams[stream_id] = status
                    heads_at = self.heads_at
                    if heads_at is not None:
                        heads_at[stream_id] = self.clock()
                    return True
            elif (
                (length_kind & 0xFF == _DATA or length_kind & 0xFF == _HEADERS)
                and self._continuing is None
                and self.on_responses is not None
            ):
                # A read of several frames, each the last DATA frame of a response whose
                # HEADERS came or a final response's HEADERS as the lone read's above (Go's
                # commonest reads after the lone HEADERS: 2-3 HEADERS, 1-4 DATA frames, or
                # all 10 of both): what _read_frames's two hot paths, _report_ended and
                # _report_heads do for them, without their set-up and calls (issue 35). From
                # the first frame that is neither, the rest of the read goes the general
                # way, which reports what this loop left in ``_ended`` and ``_heads``.
                pos = 0
                kind = length_kind & 0xFF
                streams, known, heads = self._streams, self._known, self._heads
                ended, received, bodies = self._ended, self._stream_received, self._pending_bodies
                consumed, update_at = self._recv_consumed, self._recv_update_at
                while True:
                    length = length_kind >> 8
                    end = pos + 9 + length
                    if end > size or length > _MOST_FRAME:
                        break
                    stream_id &= _STREAM_MASK
                    if kind == _DATA:
                        if not flags & _END_STREAM:
                            break
                        status = streams.get(stream_id)
                        if not status:  # not open, or its HEADERS not come
                            break
                        del streams[stream_id]
                        consumed += length  # _consume, written out
                        if consumed >= update_at:
                            self._outbound.append(f.window_update(0, consumed))
                            consumed = 0
                        if received:
                            received.pop(stream_id, None)
                        ended.append((stream_id, status))
                        if bodies:
                            self._cancel_body(stream_id)
                        if heads and heads[-1] == stream_id:
                            heads.pop()  # its HEADERS just before: came whole, no head time
                    else:  # HEADERS: as the lone read's, its time once the read is handled
                        if flags != _END_HEADERS:
                            break
                        status = known.get(data[pos + 9 : end])
                        if status is None or status < 200 or streams.get(stream_id) != 0:
                            break
                        streams[stream_id] = status
                        heads.append(stream_id)
                    pos = end
                    if size - pos < 9:
                        break
                    length_kind, flags, stream_id = _FRAME_HEAD_UNPACK(data, pos)
                    kind = length_kind & 0xFF
                    if kind != _DATA and kind != _HEADERS:
                        break
                self._recv_consumed = consumed
                if pos == size:
                    if ended:
                        self.on_responses(ended)
                        ended.clear()
                    if heads:
                        self._report_heads()
                    return False
                data = data[pos:]
            buffer = data
        else:
            buffer = data
        try:
            if not self._first_frame_seen:
                if len(buffer) < 9:
                    self._recv_buffer = buffer
                    return False
                self._check_server_preface(buffer)
            used = self._read_frames(buffer)
        except f.ConnectionViolation as exc:
            self._heads.clear()
            if self._ended:  # the responses before the violation ended: counted first
                self._report_ended()
            self._fail_connection(exc.code, exc.reason)
            return False
        self._recv_buffer = buffer[used:]
        if self._ended:
            self._report_ended()
        if self._heads:
            self._report_heads()
        return False

    def _report_ended(self) -> None:
        """The read is handled: the responses its hot paths ended, to ``on_responses``."""
        ended = self._ended
        assert self.on_responses is not None
        self.on_responses(ended)
        ended.clear()

    def _report_heads(self) -> None:
        """The read is handled: ``heads_at`` for each stream whose final HEADERS came in it
        and that is still open (its body to come in a later read)."""
        heads, heads_at, streams = self._heads, self.heads_at, self._streams
        if heads_at is not None:
            now = self.clock()
            for stream_id in heads:
                if streams.get(stream_id):
                    heads_at[stream_id] = now
        heads.clear()

    def feed_eof(self) -> None:
        """The server closed the connection: every open stream ends as ``closed``."""
        if self.failed or self.closed:
            return
        self.closed = True
        if self.goaway is not None:
            why = f"after GOAWAY {f.error_name(self.goaway[1])}"
        else:
            why = "without a GOAWAY"
        error = StreamError(
            "reset", "closed", f.NO_ERROR, f"the server closed the connection {why}, stream open"
        )
        self._end_all(error)

    # -- reading frames --
    def _check_server_preface(self, buffer: bytes) -> None:
        # RFC 9113 section 3.4: the server's preface is a SETTINGS frame. Anything else
        # is most likely a server that does not speak HTTP/2: say what it answered.
        if buffer.startswith(b"HTTP/"):
            line = buffer.split(b"\r\n", 1)[0][:_FIRST_BYTES_SHOWN]
            raise f.ConnectionViolation(
                f.PROTOCOL_ERROR,
                f"the server answered in HTTP/1 ({line!r}), not HTTP/2: it does not speak "
                "HTTP/2 over cleartext with prior knowledge (h2c) on this port",
            )
        if buffer[3] != f.SETTINGS:
            raise f.ConnectionViolation(
                f.PROTOCOL_ERROR,
                f"the server's first frame is not SETTINGS: {buffer[:_FIRST_BYTES_SHOWN]!r}",
            )
        self._first_frame_seen = True
        self._lone_heads = not self._grpc and self._on_stream_data is None

    def _read_frames(self, buffer: bytes) -> int:
        """Handles every whole frame in ``buffer``; returns how many bytes they took."""
        size = len(buffer)
        pos = 0
        unpack = f.FRAME_HEAD.unpack_from
        most, stream_mask = f.DEFAULT_MAX_FRAME_SIZE, f.MAX_STREAM_ID
        data_kind, headers_kind, end_stream_flag = f.DATA, f.HEADERS, f.END_STREAM
        streams = self._streams
        on_response = self._on_response
        ended = self._ended if self.on_responses is not None else None
        on_stream_data = self._on_stream_data
        http = not self._grpc  # a gRPC call ends with its trailers, never on DATA
        # A response's HEADERS in one frame, whose block was decoded before, may take the
        # hot path below (not a gRPC call's, nor a streaming load's, which looks inside).
        plain = http and on_stream_data is None
        end_headers_only = f.END_HEADERS
        known = self._known
        heads = self._heads
        while size - pos >= 9:
            length_kind, flags, stream_id = unpack(buffer, pos)
            length = length_kind >> 8
            if length > most:
                raise f.ConnectionViolation(
                    f.FRAME_SIZE_ERROR,
                    f"a frame of {length} bytes, above the client's SETTINGS_MAX_FRAME_SIZE "
                    f"of {most}: {buffer[pos : pos + 9]!r}",
                )
            end = pos + 9 + length
            if end > size:
                break
            kind = length_kind & 0xFF
            stream_id &= stream_mask
            if kind == data_kind and self._continuing is None:
                status = streams.get(stream_id)
                if status and on_stream_data is not None:
                    body = f.strip_padding("DATA", flags, buffer[pos + 9 : end])
                    on_stream_data(stream_id, status, body)
                pos = end
                if status and flags & end_stream_flag and http:
                    # The hot path: the last DATA frame of a response whose HEADERS came.
                    del streams[stream_id]
                    if heads and heads[-1] == stream_id:
                        heads.pop()  # came whole in this read: no on_head
                    # _consume, written out (padding included: it counts too).
                    consumed = self._recv_consumed + length
                    if consumed >= self._recv_update_at:
                        self._outbound.append(f.window_update(0, consumed))
                        consumed = 0
                    self._recv_consumed = consumed
                    if self._stream_received:
                        self._stream_received.pop(stream_id, None)
                    if ended is not None:
                        ended.append((stream_id, status))
                    else:
                        on_response(stream_id, status)
                    if self._pending_bodies:
                        self._cancel_body(stream_id)
                    continue
                self._on_data(flags, stream_id, length, status)
                if self.failed:
                    break
                continue
            payload = buffer[pos + 9 : end]
            pos = end
            if self._continuing is not None:
                self._on_continuation(kind, flags, stream_id, payload)
            elif kind == headers_kind:
                if flags == end_headers_only and plain:
                    # The hot path: a final response's HEADERS, no padding, priority or
                    # END_STREAM, whose block (decoded before, the table unchanged since)
                    # says a status of 200 or more, on an open stream still waiting for it:
                    # what _on_headers and _header_block would do, without their calls.
                    status = known.get(payload)
                    if status is not None and status >= 200 and streams.get(stream_id) == 0:
                        # Its body's last DATA frame next, whole in this read: the response
                        # ends here, as the DATA hot path above would end it.
                        after = end + 9
                        if after <= size:
                            next_kind, next_flags, next_id = unpack(buffer, end)
                            body_end = after + (next_kind >> 8)
                            if (
                                (next_kind & 0xFF) == data_kind
                                and next_flags & end_stream_flag
                                and (next_id & stream_mask) == stream_id
                                and body_end <= size
                                and (next_kind >> 8) <= most
                            ):
                                pos = body_end
                                del streams[stream_id]
                                consumed = self._recv_consumed + (next_kind >> 8)
                                if consumed >= self._recv_update_at:
                                    self._outbound.append(f.window_update(0, consumed))
                                    consumed = 0
                                self._recv_consumed = consumed
                                if self._stream_received:
                                    self._stream_received.pop(stream_id, None)
                                if ended is not None:
                                    ended.append((stream_id, status))
                                else:
                                    on_response(stream_id, status)
                                if self._pending_bodies:
                                    self._cancel_body(stream_id)
                                continue
                        streams[stream_id] = status
                        heads.append(stream_id)
                        continue
                self._on_headers(flags, stream_id, payload)
            else:
                self._on_control(kind, flags, stream_id, payload)
            if self.failed:
                break
        return pos

    def _consume(self, length: int) -> None:
        self._recv_consumed += length
        if self._recv_consumed >= self._recv_update_at:
            self._outbound.append(f.window_update(0, self._recv_consumed))
            self._recv_consumed = 0

    def _on_data(self, flags: int, stream_id: int, length: int, status: int | None) -> None:
        if stream_id == 0:
            raise f.ConnectionViolation(f.PROTOCOL_ERROR, "a DATA frame on stream 0")
        self._consume(length)  # padding included: it counts against the window too
        if status is None:
            self._check_known(stream_id, "DATA")
            return  # a stream already ended: its late frames are dropped
        if status == 0:
            self._stream_failed(stream_id, "a DATA frame before the response's HEADERS")
            return
        if flags & f.END_STREAM:  # a gRPC call's (an HTTP response's took the hot path)
            self._end_call(stream_id, status, None)
            return
        received = self._stream_received.get(stream_id, 0) + length
        if received >= self._stream_update_at:
            self._outbound.append(f.window_update(stream_id, received))
            received = 0
        self._stream_received[stream_id] = received

    def _on_headers(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise f.ConnectionViolation(f.PROTOCOL_ERROR, "a HEADERS frame on stream 0")
        block = f.strip_padding("HEADERS", flags, payload)
        if flags & f.PRIORITY_FLAG:
            if len(block) < 5:
                raise f.ConnectionViolation(f.FRAME_SIZE_ERROR, "a HEADERS frame too short")
            block = block[5:]
        end_stream = bool(flags & f.END_STREAM)
        if flags & f.END_HEADERS:
            self._header_block(stream_id, end_stream, block)
        else:
            self._continuing = (stream_id, end_stream, [block])

    def _on_continuation(self, kind: int, flags: int, stream_id: int, payload: bytes) -> None:
        assert self._continuing is not None
        expected, end_stream, pieces = self._continuing
        if kind != f.CONTINUATION or stream_id != expected:
            raise f.ConnectionViolation(
                f.PROTOCOL_ERROR,
                f"a frame of type {kind} on stream {stream_id} inside the header block of "
                f"stream {expected}, where only CONTINUATION frames may come",
            )
        pieces.append(payload)
        if sum(map(len, pieces)) > _MAX_HEADER_BLOCK:
            raise f.ConnectionViolation(
                f.PROTOCOL_ERROR, f"a header block over {_MAX_HEADER_BLOCK // 1024} KiB"
            )
        if flags & f.END_HEADERS:
            self._continuing = None
            self._header_block(stream_id, end_stream, b"".join(pieces))

    def _header_block(self, stream_id: int, end_stream: bool, block: bytes) -> None:
        # Decoded whatever becomes of the stream, and once: the HPACK table must stay in step.
        call: tuple[int, str] | None = None
        if self._grpc:
            status, code, message = self._decoder.call_status_of(block)
            call = (code, message)
        else:
            status = self._decoder.status_of(block)
        current = self._streams.get(stream_id)
        if current is None:
            self._check_known(stream_id, "HEADERS")
            return
        if current:  # trailers
            if not end_stream:
                self._stream_failed(stream_id, "trailers without END_STREAM")
                return
            if call is not None:
                self._end_call(stream_id, current, call)
                return
            del self._streams[stream_id]
            self._stream_received.pop(stream_id, None)
            self._response_ended(stream_id, current)
            self._cancel_body(stream_id)
            return
        if status < 100:
            self._stream_failed(stream_id, "a response header block with no valid :status")
            return
        if status < 200:
            if status == 101 or end_stream:
                self._stream_failed(stream_id, f"an interim {status} response ending the stream")
            return  # an interim response: the final one follows
        if self._on_stream_data is not None:
            self._on_stream_data(stream_id, status, b"")  # the response's head: first byte
        if end_stream and call is not None:
            self._end_call(stream_id, status, call)  # "trailers-only": status in the one block
        elif end_stream:
            del self._streams[stream_id]
            self._response_ended(stream_id, status)
            self._cancel_body(stream_id)
        else:
            self._streams[stream_id] = status
            self._heads.append(stream_id)  # on_head, once the read is handled

    def _response_ended(self, stream_id: int, status: int) -> None:
        """An HTTP response ended off the hot paths: to ``on_responses`` with the rest of the
        read's, if it is set, else to ``on_response`` now."""
        if self.on_responses is not None:
            self._ended.append((stream_id, status))
        else:
            self._on_response(stream_id, status)

    def _end_call(self, stream_id: int, status: int, trailers: tuple[int, str] | None) -> None:
        """A gRPC call's end: ok only with HTTP 200 and grpc-status 0 (``trailers``: the
        grpc-status and grpc-message its last header block said, None if it ended on DATA)."""
        del self._streams[stream_id]
        self._stream_received.pop(stream_id, None)
        self._cancel_body(stream_id)
        if status != 200:
            self._on_response(stream_id, status)
            return
        code, message = trailers if trailers is not None else (-1, "")
        if code == 0:
            self._on_response(stream_id, status)
            return
        if code < 0:
            what = "no grpc-status" if code == -1 else "a grpc-status that is not a number"
            error = StreamError(
                "protocol", "protocol", f.NO_ERROR, f"malformed gRPC response: {what}"
            )
        else:
            said = f": {message[:200]}" if message else ""
            error = StreamError(
                "status", "grpc_status", code, f"grpc-status {status_name(code)}{said}"
            )
        self._on_stream_error(stream_id, error)

    def _on_control(self, kind: int, flags: int, stream_id: int, payload: bytes) -> None:
        if kind == f.SETTINGS:
            self._on_settings(flags, stream_id, payload)
        elif kind == f.PING:
            if stream_id != 0 or len(payload) != 8:
                raise f.ConnectionViolation(
                    f.PROTOCOL_ERROR if stream_id else f.FRAME_SIZE_ERROR,
                    f"a PING frame of {len(payload)} bytes on stream {stream_id}",
                )
            if not flags & f.ACK:
                self._outbound.append(f.ping_ack(payload))
        elif kind == f.WINDOW_UPDATE:
            self._on_window_update(stream_id, payload)
        elif kind == f.RST_STREAM:
            self._on_rst_stream(stream_id, payload)
        elif kind == f.GOAWAY:
            self._on_goaway(stream_id, payload)
        elif kind == f.PRIORITY:
            if len(payload) != 5:
                raise f.ConnectionViolation(f.FRAME_SIZE_ERROR, "a PRIORITY frame not 5 bytes")
        elif kind == f.PUSH_PROMISE:
            raise f.ConnectionViolation(
                f.PROTOCOL_ERROR, "a PUSH_PROMISE, though the client's SETTINGS disabled push"
            )
        elif kind == f.CONTINUATION:
            raise f.ConnectionViolation(
                f.PROTOCOL_ERROR, f"a CONTINUATION frame on stream {stream_id} after no HEADERS"
            )
        # Frames of unknown types are ignored (RFC 9113 section 4.1).

    def _on_settings(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id != 0:
            raise f.ConnectionViolation(f.PROTOCOL_ERROR, f"a SETTINGS frame on stream {stream_id}")
        if flags & f.ACK:
            if payload:
                raise f.ConnectionViolation(f.FRAME_SIZE_ERROR, "a SETTINGS ACK with a payload")
            self.settings_acked = True
            return
        for key, value in f.parse_settings(payload):
            if key == f.SETTINGS_MAX_CONCURRENT_STREAMS:
                self._server_max_streams = value
            elif key == f.SETTINGS_MAX_FRAME_SIZE:
                self._max_send_frame = value
            elif key == f.SETTINGS_INITIAL_WINDOW_SIZE:
                delta = value - self._initial_send_window
                self._initial_send_window = value
                for body_stream in self._body_windows:
                    self._body_windows[body_stream] += delta
        self._outbound.append(f.SETTINGS_ACK)
        if self._pending_bodies:
            self._send_bodies()

    def _on_window_update(self, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise f.ConnectionViolation(f.FRAME_SIZE_ERROR, "a WINDOW_UPDATE frame not 4 bytes")
        increment = f.read_u32(payload) & f.MAX_WINDOW
        if stream_id == 0:
            if increment == 0:
                raise f.ConnectionViolation(f.PROTOCOL_ERROR, "a WINDOW_UPDATE of 0 on stream 0")
            self._send_window += increment
            if self._send_window > f.MAX_WINDOW:
                raise f.ConnectionViolation(
                    f.FLOW_CONTROL_ERROR, "WINDOW_UPDATEs raised the connection window past 2^31-1"
                )
        elif stream_id in self._body_windows:
            if increment == 0:
                self._stream_failed(stream_id, "a WINDOW_UPDATE of 0")
                return
            self._body_windows[stream_id] += increment
        else:
            self._check_known(stream_id, "WINDOW_UPDATE")
            return
        if self._pending_bodies:
            self._send_bodies()

    def _on_rst_stream(self, stream_id: int, payload: bytes) -> None:
        if stream_id == 0 or len(payload) != 4:
            raise f.ConnectionViolation(
                f.PROTOCOL_ERROR if stream_id == 0 else f.FRAME_SIZE_ERROR,
                f"a RST_STREAM frame of {len(payload)} bytes on stream {stream_id}",
            )
        if stream_id not in self._streams:
            self._check_known(stream_id, "RST_STREAM")
            return  # a reset after the response ended (a server stopping our body)
        code = f.read_u32(payload)
        self._end_stream_in_error(
            stream_id,
            StreamError(
                "reset", "rst_stream", code, f"stream reset by the server: {f.error_name(code)}"
            ),
        )

    def _on_goaway(self, stream_id: int, payload: bytes) -> None:
        if stream_id != 0 or len(payload) < 8:
            raise f.ConnectionViolation(
                f.PROTOCOL_ERROR if stream_id else f.FRAME_SIZE_ERROR,
                f"a GOAWAY frame of {len(payload)} bytes on stream {stream_id}",
            )
        last = f.read_u32(payload) & f.MAX_STREAM_ID
        code = f.read_u32(payload, 4)
        if self.goaway is not None:
            last = min(last, self.goaway[0])  # a later GOAWAY may only lower it
        self.goaway = (last, code)
        debug = payload[8:][:_FIRST_BYTES_SHOWN]
        said = f", saying {debug!r}" if debug else ""
        reason = (
            f"not processed: the server sent GOAWAY {f.error_name(code)} with last stream "
            f"{last}{said}"
        )
        for unprocessed in sorted(s for s in self._streams if s > last):
            self._end_stream_in_error(unprocessed, StreamError("reset", "goaway", code, reason))

    # -- ending streams --
    def _check_known(self, stream_id: int, what: str) -> None:
        """A frame on a stream that is not open: fine if the stream was (it ended and the
        server's frame crossed), a connection error if it never was."""
        if stream_id % 2 == 0 or stream_id >= self._next_id:
            raise f.ConnectionViolation(
                f.PROTOCOL_ERROR, f"a {what} frame on stream {stream_id}, which was never opened"
            )

    def _stream_failed(self, stream_id: int, what: str) -> None:
        """A malformed response on one stream (RFC 9113 section 8.1.1): the stream ends in
        a ``protocol`` error and the server is told with a RST_STREAM."""
        self._outbound.append(f.rst_stream(stream_id, f.PROTOCOL_ERROR))
        error = StreamError("protocol", "protocol", f.PROTOCOL_ERROR, f"malformed response: {what}")
        self._end_stream_in_error(stream_id, error)

    def _end_stream_in_error(self, stream_id: int, error: StreamError) -> None:
        del self._streams[stream_id]
        self._stream_received.pop(stream_id, None)
        self._pending_bodies.pop(stream_id, None)
        self._body_windows.pop(stream_id, None)
        self._on_stream_error(stream_id, error)

    def _end_all(self, error: StreamError) -> None:
        for stream_id in sorted(self._streams):
            self._end_stream_in_error(stream_id, error)

    def _fail_connection(self, code: int, reason: str) -> None:
        self.failed = True
        self._continuing = None
        self._outbound.append(f.goaway(0, code, reason.encode("utf-8", "replace")[:200]))
        self.connection_error = StreamError("protocol", "protocol", code, reason)
        self._end_all(self.connection_error)

    # -- request bodies, as flow control lets them go --
    def _send_bodies(self) -> None:
        for stream_id in list(self._pending_bodies):
            if self._send_window <= 0:
                return
            body = self._pending_bodies[stream_id]
            window = self._body_windows[stream_id]
            sent = 0
            while sent < len(body) and window > 0 and self._send_window > 0:
                size = min(len(body) - sent, window, self._send_window, self._max_send_frame)
                last = sent + size == len(body)
                chunk = body[sent : sent + size]
                self._outbound.append(
                    f.frame(f.DATA, f.END_STREAM if last else 0, stream_id, chunk)
                )
                sent += size
                window -= size
                self._send_window -= size
            self._body_windows[stream_id] = window
            if sent == len(body):
                del self._pending_bodies[stream_id]
                del self._body_windows[stream_id]
            else:
                self._pending_bodies[stream_id] = body[sent:]

    def _cancel_body(self, stream_id: int) -> None:
        """The response ended before the request's body was all sent: send no more of it
        (RFC 9113 section 8.1 lets a server answer early)."""
        if self._pending_bodies.pop(stream_id, None) is not None:
            del self._body_windows[stream_id]
            self._outbound.append(f.rst_stream(stream_id, f.CANCEL))
