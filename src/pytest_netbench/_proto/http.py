"""Sans-IO HTTP/1.1 client framing: request bytes out, response boundaries in.

No sockets and no event loop here: a :class:`ResponseFramer` is fed whatever bytes arrived
and calls ``on_response(status, keep_alive)`` once per complete final response. It decides
completeness by Content-Length, chunked coding (trailers included), end of stream for
close-delimited bodies, and the no-body rules for HEAD, 1xx, 204 and 304. Malformed input
ends in ``on_error(reason)`` rather than an exception.

Parsing of the common case is done by httptools (llhttp, in C); HEAD responses have no body
whatever their headers say, which llhttp cannot be told through httptools, so a small
header-only framer handles connections that send HEAD.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import httptools

from pytest_netbench._model import LoadSpec, Request
from pytest_netbench._proto.framing import OnError, OnResponse

# llhttp sets no limit on a header block; this one is every HTTP/1.1 reader's.
MAX_HEAD_BYTES = 64 * 1024
HEAD_TOO_LARGE = "malformed response: header block larger than 64 KiB"
UPGRADE_REASON = "server switched protocols (101/Upgrade), which a load test cannot follow"


def parser_error_reason(exc: Exception) -> str:
    """The ``protocol`` error for an exception out of httptools' ``feed_data``."""
    if isinstance(exc, httptools.HttpParserUpgrade):
        return UPGRADE_REASON
    return f"malformed response: {exc}"


def callback_failure(exc: httptools.HttpParserCallbackError) -> BaseException:
    """What one of our own parser callbacks raised (httptools wraps it): a fault in this
    program, to be raised as itself, never counted against the server as a bad response."""
    return exc.__context__ or exc


def feed_parser(parser: httptools.HttpResponseParser, data: bytes) -> str:
    """Feed ``data`` to httptools: "" when it parsed, else the ``protocol`` error's reason
    (a fault of our own callbacks is raised as itself)."""
    try:
        parser.feed_data(data)
    except httptools.HttpParserCallbackError as exc:
        raise callback_failure(exc) from None
    except (httptools.HttpParserUpgrade, httptools.HttpParserError) as exc:
        return parser_error_reason(exc)
    return ""


def non_final_status_problem(status: int) -> str:
    """For a complete message whose status is below 200: "" for an interim 1xx response
    (the final one follows), else why the response is an error."""
    if status == 101:
        return UPGRADE_REASON
    if status < 100:
        return f"malformed response: status {status} is not a 3-digit code from 100"
    return ""


def render_spec_request(spec: LoadSpec, request: Request | None = None) -> bytes:
    """The request a load sends (or the ``request`` kind of its mix): origin form, or
    absolute form when it goes through a proxy.

    A mix's request carries the load's headers too, but for those it names itself.
    ``ValueError`` says what in the method, headers or target cannot be sent.
    """
    default_port = 443 if spec.scheme == "https" else 80
    host = f"[{spec.host}]" if ":" in spec.host else spec.host
    host_header = host if spec.port == default_port else f"{host}:{spec.port}"
    method, path, headers, body = spec.method, spec.target, spec.headers, spec.body
    if request is not None:
        own = {name.lower() for name, _ in request.headers}
        shared = tuple((name, value) for name, value in headers if name.lower() not in own)
        method, path, body = request.method, request.path, request.body
        headers = shared + request.headers
    target = path
    if spec.proxy is not None:
        target = f"{spec.scheme}://{host_header}{path}"
    return render_request(method, target, host_header, headers, body, keepalive=spec.keepalive)


def render_request(
    method: str,
    target: str,
    host_header: str,
    headers: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
    *,
    keepalive: bool = True,
) -> bytes:
    """Render one request once; the engine re-sends the same bytes object every time."""
    if not method or not method.isalpha():
        raise ValueError(f"HTTP method must be a token of letters, got {method!r}")
    if " " in target or not target:
        raise ValueError(f"request target must be non-empty with no spaces, got {target!r}")
    names = {name.lower() for name, _ in headers}
    lines = [f"{method.upper()} {target} HTTP/1.1"]
    if "host" not in names:
        lines.append(f"Host: {host_header}")
    if "user-agent" not in names:
        lines.append("User-Agent: netbench")
    for name, value in headers:
        if any(c in name + value for c in "\r\n") or ":" in name:
            raise ValueError(f"header {name!r} contains a line break or colon")
        lines.append(f"{name}: {value}")
    if body and "content-length" not in names and "transfer-encoding" not in names:
        lines.append(f"Content-Length: {len(body)}")
    if not keepalive and "connection" not in names:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + body


class ResponseFramer:
    """Finds response boundaries for a connection that sends no HEAD requests.

    Per response only two Python callbacks run (head complete, message complete): header
    fields go straight into a dict through its C ``__setitem__`` and are looked at only
    when the stream ends mid-body, the one case where a close-delimited body must be told
    from a truncated one.
    """

    __slots__ = (
        "_head_bytes",
        "_headers",
        "_on_error",
        "_on_response",
        "_parser",
        "_passed_boundary",
        "_status",
        "failed",
        "on_header",
        "on_message_begin",
    )
    # Set by time_first_bytes only: httptools calls back what the parser found when made.
    on_message_begin: Callable[[], None]

    def __init__(self, on_response: OnResponse, on_error: OnError) -> None:
        self._on_response = on_response
        self._on_error = on_error
        self._headers: dict[bytes, bytes] = {}
        self.on_header = self._headers.__setitem__  # a C call per header, not a Python one
        self._status = 0  # of the current message once its head is complete, else 0
        self._head_bytes = 0
        self._passed_boundary = False
        self.failed = False
        self._parser = httptools.HttpResponseParser(self)

    def release(self) -> None:
        # The parser calls back into this framer: the one cycle a framer makes itself. A
        # connection that times first bytes is called back too (time_first_bytes).
        self._parser = None  # type: ignore[assignment]
        self.on_message_begin = _nothing

    def time_first_bytes(self, began: Callable[[], None]) -> None:
        """Call ``began`` as each response's first byte is parsed (before any is fed): the
        parser is made again to call it straight, with no frame of this framer between."""
        self.on_message_begin = began
        self._parser = httptools.HttpResponseParser(self)

    def on_headers_complete(self) -> None:
        self._passed_boundary = True
        self._head_bytes = 0
        self._status = self._parser.get_status_code()

    def on_message_complete(self) -> None:
        status = self._status
        self._status = 0
        self._passed_boundary = True
        self._headers.clear()
        if self.failed:
            return
        if status >= 200:
            self._on_response(status, bool(self._parser.should_keep_alive()))
        else:
            problem = non_final_status_problem(status)
            if problem:
                self._fail(problem)

    # -- input --
    def feed(self, data: bytes) -> None:
        if self.failed:
            return
        self._passed_boundary = False
        problem = feed_parser(self._parser, data)
        if problem:
            self._fail(problem)
        elif self._status == 0 and not self._passed_boundary:
            self._count_head_bytes(len(data))

    def _count_head_bytes(self, size: int) -> None:
        # llhttp sets no limit on a header block; without one, a server that never ends
        # its head would hold the request until the timeout while memory grows. A head
        # begun inside a feed (one that passed a message boundary) is counted from the
        # next feed, so the bound is one read more than MAX_HEAD_BYTES and never a false
        # alarm on pipelined small responses.
        self._head_bytes += size
        if self._head_bytes > MAX_HEAD_BYTES:
            self._fail(HEAD_TOO_LARGE)

    def feed_eof(self) -> bool:
        """The peer closed. Returns True if that completed a close-delimited response."""
        # Headers stay in the dict until their message completes, so a body cut short by
        # the close can still be told from one delimited by it.
        if self.failed or self._status == 0 or _is_length_delimited(self._headers):
            return False
        status = self._status
        self._status = 0
        self._headers.clear()
        if status >= 200:
            self._on_response(status, False)
        return True

    def take_over(self, data: bytes) -> None:
        """Continue a stream that another parser followed up to the start of ``data``.

        ``data`` must begin at a response boundary. Responses it completes were already
        delivered by that parser, so they are parsed here without ``on_response``; the one
        still open at its end is this framer's from now on.
        """
        deliver = self._on_response
        self._on_response = _already_delivered
        try:
            self.feed(data)
        finally:
            self._on_response = deliver

    def _fail(self, reason: str) -> None:
        if self.failed:
            return  # one error per connection: the engine drops it on the first
        self.failed = True
        self._on_error(reason)


def _nothing() -> None:
    """``on_begin`` of a HEAD framer whose engine does not time first bytes."""


def _already_delivered(status: int, keep_alive: bool) -> None:
    """``on_response`` while :meth:`ResponseFramer.take_over` replays delivered responses."""


def _is_length_delimited(headers: dict[bytes, bytes]) -> bool:
    for name, value in headers.items():
        lowered = name.lower()
        if lowered == b"content-length":
            return True
        # Any final coding but chunked leaves the body delimited by the close (RFC 9112 6.3).
        if lowered == b"transfer-encoding" and value.rstrip().lower().endswith(b"chunked"):
            return True
    return False


class _Messages:
    """Counts what a parser saw (``only_final_response``)."""

    __slots__ = ("begun", "completed", "keep_alive", "parser", "status")

    def __init__(self) -> None:
        self.begun = self.completed = self.status = 0
        self.keep_alive = False
        self.parser = httptools.HttpResponseParser(self)

    def on_message_begin(self) -> None:
        self.begun += 1

    def on_message_complete(self) -> None:
        self.completed += 1
        self.status = self.parser.get_status_code()
        self.keep_alive = bool(self.parser.should_keep_alive())


def only_final_response(data: bytes) -> tuple[int, bool] | None:
    """``(status, keep_alive)`` if ``data``, read by a new parser, is one whole final
    response and nothing else, as a :class:`ResponseFramer` made for it would deliver it;
    else None. A framer fed the same bytes from its start does the same, so a caller that
    sees them again can deliver that answer without one (``raw_connection``)."""
    messages = _Messages()
    try:
        messages.parser.feed_data(data)
    except (httptools.HttpParserError, httptools.HttpParserUpgrade):
        return None
    if messages.begun != 1 or messages.completed != 1 or messages.status < 200:
        return None
    return messages.status, messages.keep_alive


class HeadResponseFramer:
    """Response boundaries for HEAD requests: a response ends with its header block."""

    __slots__ = ("_buffer", "_on_error", "_on_response", "failed", "on_begin")

    def __init__(self, on_response: OnResponse, on_error: OnError) -> None:
        self.on_begin: Callable[[], None] = _nothing  # as ResponseFramer's
        self._on_response = on_response
        self._on_error = on_error
        self._buffer = b""
        self.failed = False

    def feed(self, data: bytes) -> None:
        if self.failed:
            return
        if not self._buffer:
            self.on_begin()
        self._buffer += data
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > MAX_HEAD_BYTES:
                    self._fail(HEAD_TOO_LARGE)
                elif b"\n\n" in self._buffer:  # would otherwise wait for a CRLF that never comes
                    self._fail("malformed response: lines end in a bare LF, not CRLF")
                return
            head, self._buffer = self._buffer[:end], self._buffer[end + 4 :]
            parsed = _parse_head(head)
            if isinstance(parsed, str):
                self._fail(f"malformed response: {parsed}")
                return
            status, keep_alive = parsed
            if status == 101:
                self._fail(UPGRADE_REASON)
                return
            if 100 <= status < 200:
                continue
            self._on_response(status, keep_alive)
            if self._buffer:
                self.on_begin()  # the next answer began in the same read

    def feed_eof(self) -> bool:
        return False

    def release(self) -> None:
        """Drop the connection's callback (``on_begin``): nothing else refers back."""
        self.on_begin = _nothing

    def _fail(self, reason: str) -> None:
        self.failed = True
        self._on_error(reason)


def _parse_head(head: bytes) -> tuple[int, bool] | str:
    """(status, keep_alive) of one response head, or the reason it is malformed."""
    if b"\n" in head.replace(b"\r\n", b""):  # as llhttp refuses it, whatever the reads
        return "lines end in a bare LF, not CRLF"
    status_line, _, rest = head.partition(b"\r\n")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or parts[0] not in (b"HTTP/1.1", b"HTTP/1.0") or not parts[1].isdigit():
        return f"bad status line {status_line[:60]!r}"
    status = int(parts[1])
    if not 100 <= status <= 999:
        return f"bad status code in {status_line[:60]!r}"
    connection = []
    for line in rest.split(b"\r\n") if rest else ():
        name, sep, value = line.partition(b":")
        if not sep or not name.strip():
            return f"bad header line {line[:60]!r}"
        if name.strip().lower() == b"connection":
            connection.append(value)
    return status, head_keeps_alive(parts[0] == b"HTTP/1.0", connection)


def head_keeps_alive(http_10: bool, connection: Iterable[bytes]) -> bool:
    """Whether a response that ends with its head (to HEAD) leaves the connection open,
    from its version and its Connection fields (comma-separated lists, maybe repeated):
    llhttp cannot be asked, as it takes a head with no length for a close-delimited body."""
    options = {token.strip() for value in connection for token in value.lower().split(b",")}
    if b"close" in options:
        return False
    return not http_10 or b"keep-alive" in options


def framer_for(method: str) -> type[ResponseFramer] | type[HeadResponseFramer]:
    return HeadResponseFramer if method.upper() == "HEAD" else ResponseFramer
