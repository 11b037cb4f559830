"""Sans-IO HTTP/1.1 responses read whole: status, headers and body, for user code.

The load engine's framers (``http.py``) find response boundaries and keep nothing else; a
user flow hands each response to its own code (``r.json()``, ``r.cookies``), so this
reader keeps the status line, the header fields and the body of each response. Its
framing rules are the framers': httptools (llhttp) for Content-Length, chunked and
close-delimited bodies, the same reasons for malformed input, 1xx skipped, 101 refused,
and a HEAD response ending with its header block. One request is outstanding at a time
(a flow awaits each answer), so the reader is told the method before each response.

A reader may hand a response over as it arrives instead (a flow's ``client.stream()``):
with ``on_head`` set, a final response's status, reason and headers go there as soon as
its head is complete, and with ``on_part`` set each piece of its body goes there as it is
parsed; the :class:`WholeResponse` that ends it then has an empty body.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import httptools

from pytest_netbench._proto.framing import OnError
from pytest_netbench._proto.http import (
    HEAD_TOO_LARGE,
    MAX_HEAD_BYTES,
    _is_length_delimited,
    feed_parser,
    head_keeps_alive,
    non_final_status_problem,
)


@dataclass(frozen=True, slots=True)
class WholeResponse:
    """One final response as it arrived (header names as sent, in order)."""

    status: int
    reason: bytes
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    keep_alive: bool


OnWholeResponse = Callable[[WholeResponse], None]
OnHead = Callable[[int, bytes, tuple[tuple[bytes, bytes], ...]], None]
OnPart = Callable[[bytes], None]


class ResponseReader:
    """Collects each response of one connection; call :meth:`expect` before each request
    is written, :meth:`feed` with what arrives, :meth:`feed_eof` when the peer closes."""

    __slots__ = (
        "_body",
        "_head_bytes",
        "_head_delivered",
        "_head_only",
        "_headers",
        "_on_error",
        "_on_response",
        "_parser",
        "_passed_boundary",
        "_reason",
        "_status",
        "failed",
        "on_head",
        "on_part",
    )

    def __init__(self, on_response: OnWholeResponse, on_error: OnError) -> None:
        self._on_response = on_response
        self._on_error = on_error
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._reason = b""
        self._status = 0  # of the message whose head is complete, else 0
        self._head_bytes = 0
        self._head_only = False
        self._head_delivered = False  # a HEAD response went with its head: its parser is done
        self._passed_boundary = False
        self.failed = False
        self.on_head: OnHead | None = None  # see the module: a response as it arrives
        self.on_part: OnPart | None = None
        self._parser = httptools.HttpResponseParser(self)

    def expect(self, method: str) -> None:
        """The next response answers a ``method`` request (HEAD: no body, whatever its
        headers say, which llhttp cannot be told: the head alone completes it)."""
        head_only = method.upper() == "HEAD"
        if head_only or self._head_only:
            self._parser = httptools.HttpResponseParser(self)  # a fresh one at a boundary
            self._head_delivered = False
        self._head_only = head_only

    # -- httptools callbacks --
    def on_status(self, reason: bytes) -> None:
        self._reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        self._passed_boundary = True
        self._head_bytes = 0
        self._status = self._parser.get_status_code()
        if self._head_only and self._status >= 200:
            http_10 = self._parser.get_http_version() == "1.0"
            connection = [v for n, v in self._headers if n.lower() == b"connection"]
            self._deliver(head_keeps_alive(http_10, connection))
            self._head_delivered = True
        elif self._status >= 200 and self.on_head is not None:
            self.on_head(self._status, self._reason, tuple(self._headers))

    def on_body(self, body: bytes) -> None:
        if self.on_part is not None and self._status >= 200:
            self.on_part(body)
        else:
            self._body.append(body)

    def on_message_complete(self) -> None:
        self._passed_boundary = True
        if self._head_delivered or self.failed:
            return  # a HEAD response, delivered with its head
        if self._status >= 200:
            self._deliver(bool(self._parser.should_keep_alive()))
            return
        problem = non_final_status_problem(self._status)
        self._start_over()
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
            return
        if self._status == 0 and not self._passed_boundary and not self.failed:
            # A server that never ends its head would otherwise grow it until the timeout
            # (counted from the feed after a boundary, as the framers count it).
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._fail(HEAD_TOO_LARGE)

    def feed_eof(self) -> bool:
        """The peer closed. True if that completed a close-delimited response."""
        headers = dict(self._headers)
        if self.failed or self._status < 200 or _is_length_delimited(headers):
            return False
        self._deliver(False)
        return True

    def _deliver(self, keep_alive: bool) -> None:
        response = WholeResponse(
            self._status, self._reason, tuple(self._headers), b"".join(self._body), keep_alive
        )
        self._start_over()
        self._on_response(response)

    def _start_over(self) -> None:
        self._status = 0
        self._reason = b""
        self._headers = []
        self._body = []

    def _fail(self, reason: str) -> None:
        if self.failed:
            return
        self.failed = True
        self._on_error(reason)
