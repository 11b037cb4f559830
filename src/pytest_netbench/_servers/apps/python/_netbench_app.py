"""Shared parts of the Python reference servers.

Every server script imports this module (it sits next to them, so it is on
sys.path when the script runs).  It must stay importable on Python 3.9, the
version Debian's PyPy implements, so no ``match`` and no ``X | Y`` annotations.
"""

import argparse
import json
import signal
import socket
import sys
import time
from urllib.parse import parse_qs

HELLO = b"Hello World!"
# /bytes/N is for response-size tests; refuse silly sizes instead of eating memory.
MAX_BODY_BYTES = 64 * 1024 * 1024
READY_LINE = "NETBENCH_LISTENING port=%d\n"

_REASONS = {
    200: "OK",
    204: "No Content",
    304: "Not Modified",
    400: "Bad Request",
    404: "Not Found",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
_BODY_CACHE = {}
_RESPONSE_CACHE = {}


def parse_args(apps=("hello", "echo")):
    parser = argparse.ArgumentParser(description="pytest-netbench reference server")
    parser.add_argument("--app", choices=apps, default=apps[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--backlog", type=int, default=4096)
    return parser.parse_args()


def announce(port):
    """Print the one line the launcher waits for; only once the socket listens."""
    sys.stdout.write(READY_LINE % port)
    sys.stdout.flush()


def address_family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def on_stop(callback):
    """Call ``callback`` once on SIGTERM or SIGINT.

    Later signals are ignored: the launcher may repeat SIGTERM while the server
    shuts down, and a second one must not turn a clean exit into death by signal.
    The callback runs in a signal handler: it must only hand the stop to the loop
    (call_soon_threadsafe, callFromThread, a thread) and return.
    """

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        callback()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def reason(status):
    return _REASONS.get(status, "Status %d" % status)


def route(path):
    """Return (status, body) for a request target: /, /bytes/N, /status/N."""
    if path == "/" or path.startswith("/?"):
        return 200, HELLO
    if path.startswith("/bytes/"):
        digits = path[len("/bytes/") :].split("?", 1)[0]
        if digits.isdigit() and int(digits) <= MAX_BODY_BYTES:
            size = int(digits)
            body = _BODY_CACHE.get(size)
            if body is None:
                body = b"x" * size
                if len(_BODY_CACHE) < 64:
                    _BODY_CACHE[size] = body
            return 200, body
        return 400, b"bytes wants a size from 0 to %d\n" % MAX_BODY_BYTES
    if path.startswith("/status/"):
        digits = path[len("/status/") :].split("?", 1)[0]
        if digits.isdigit() and 200 <= int(digits) <= 599:
            status = int(digits)
            return status, b"" if status in (204, 304) else reason(status).encode()
        return 400, b"status wants a code from 200 to 599\n"
    return 404, b"Not Found\n"


def has_body(status):
    return status not in (204, 304) and not 100 <= status < 200


def render(path, keep_alive, http10=False):
    """The full response for the hand-written HTTP servers (cached: it is the hot path)."""
    key = (path, keep_alive, http10)
    cached = _RESPONSE_CACHE.get(key)
    if cached is not None:
        return cached
    status, body = route(path)
    head = ["HTTP/1.1 %d %s" % (status, reason(status)), "Content-Type: text/plain"]
    if has_body(status):
        head.append("Content-Length: %d" % len(body))
    else:
        body = b""
    if not keep_alive:
        head.append("Connection: close")
    elif http10:
        head.append("Connection: keep-alive")
    response = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
    if len(response) <= 256 * 1024 and len(_RESPONSE_CACHE) < 256:
        _RESPONSE_CACHE[key] = response
    return response


class BadRequest(Exception):
    pass


BAD_REQUEST = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 12\r\nConnection: close\r\n\r\nBad Request\n"
)
_MAX_HEAD = 64 * 1024


class RequestFramer(object):
    """Splits a byte stream into HTTP/1.x requests for the hand-written servers.

    feed() returns the (path, keep_alive, http10) of every request completed by
    the new bytes; a request body announced by Content-Length is skipped.
    """

    __slots__ = ("_buffer", "_body_left")

    def __init__(self):
        self._buffer = b""
        self._body_left = 0

    def feed(self, data):
        if self._body_left:
            if len(data) <= self._body_left:
                self._body_left -= len(data)
                return []
            data = data[self._body_left :]
            self._body_left = 0
        buffer = self._buffer + data if self._buffer else data
        requests = []
        start = 0
        while True:
            end = buffer.find(b"\r\n\r\n", start)
            if end < 0:
                break
            requests.append(self._parse_head(buffer[start:end]))
            start = end + 4
            if self._body_left:
                available = len(buffer) - start
                if available < self._body_left:
                    self._body_left -= available
                    start = len(buffer)
                    break
                start += self._body_left
                self._body_left = 0
        self._buffer = buffer[start:]
        if len(self._buffer) > _MAX_HEAD:
            raise BadRequest("request head too long")
        return requests

    def _parse_head(self, head):
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            raise BadRequest("bad request line")
        http10 = parts[2] == b"HTTP/1.0"
        keep_alive = not http10
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"connection":
                token = value.strip().lower()
                if token == b"close":
                    keep_alive = False
                elif token == b"keep-alive":
                    keep_alive = True
            elif name == b"content-length":
                try:
                    self._body_left = int(value.strip())
                except ValueError:
                    raise BadRequest("bad content-length")
            elif name == b"transfer-encoding":
                raise BadRequest("chunked request bodies are not supported")
        return parts[1].decode("latin-1"), keep_alive, http10


def wsgi_hello(environ, start_response):
    """The hello app for the WSGI servers (wsgiref, gevent, eventlet)."""
    status, body = route(environ.get("PATH_INFO", "/"))
    headers = [("Content-Type", "text/plain")]
    if has_body(status):
        headers.append(("Content-Length", str(len(body))))
    else:
        body = b""
    start_response("%d %s" % (status, reason(status)), headers)
    return [body]


def echo_until_closed(sock):
    """Echo a blocking (or green) socket until the peer closes or resets it."""
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return
            sock.sendall(data)
    except ConnectionError:
        pass


class PushPlan:
    """What a ws app pushes on /push (each=True: to each connection on its own timer) or
    /broadcast (each=False: one timer, every connection), from the query: every_ms
    (default 100), close_after (pushes before a close; 0 never), close_code (4000)."""

    def __init__(self, each, every_s, close_after, close_code):
        self.each = each
        self.every_s = every_s
        self.close_after = close_after
        self.close_code = close_code


def push_plan(path, query):
    """The PushPlan of a WebSocket request's path and query string; None: echo."""
    if path.startswith("/push"):
        each = True
    elif path.startswith("/broadcast"):
        each = False
    else:
        return None
    values = parse_qs(query)

    def number(name, default, kind):
        try:
            return kind(values[name][0]) if name in values else default
        except ValueError:
            return default

    every_ms = max(number("every_ms", 100.0, float), 0.1)
    return PushPlan(
        each, every_ms / 1000.0, number("close_after", 0, int), number("close_code", 4000, int)
    )


def stamped(seq):
    """A push: its sequence number and its send time, epoch microseconds, as JSON."""
    return json.dumps({"seq": seq, "ts": time.time_ns() // 1000})
