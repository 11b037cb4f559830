"""Small real servers for the engine and fault-injection tests, on 127.0.0.1 port 0 only.

Each app is an asyncio streams handler with counters the tests read after a load. They run
either in a background thread of the test process (:class:`ServerThread`) or as a
subprocess (``python servers.py http --status-every 3``), which prints
``NETBENCH_LISTENING port=<n>`` once listening, so a test can SIGKILL it mid-run.

Faults are numbered, never random, so tests can assert exact counts: "every Nth request"
counts requests across all connections, "every Nth connection" counts accepted ones.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import ssl
import struct
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Self

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

HOST = "127.0.0.1"
BODY = b"hello, world"
REASONS = {200: "OK", 404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable"}
MAX_REMEMBERED_LINES = 10_000


@dataclass
class Seen:
    """What the server saw; written only by the server's loop thread."""

    connections: int = 0
    requests: int = 0
    request_lines: list[bytes] = field(default_factory=list)
    per_connection: list[int] = field(default_factory=list)  # requests on each connection
    peers: list[str] = field(default_factory=list)  # source address of each connection (echo)


@dataclass
class HttpOptions:
    # length: Content-Length; chunked: chunks with extensions and a trailer (bare-chunked:
    # one chunk, neither); close: body delimited by closing the connection;
    # connection-close: Content-Length, then close; http10: an HTTP/1.0 response with
    # Content-Length, then close.
    framing: str = "length"
    body_size: int = 0  # 0: the short BODY; else a body of this many bytes
    greet: bytes = b""  # sent unasked on accept, as an SMTP server would
    delay_ms: float = 0.0
    status: int = 503
    status_every: int = 0  # every Nth request is answered with `status`
    malformed_every: int = 0  # every Nth request is answered with a broken status line
    reset_every: int = 0  # every Nth connection: read the request, then send RST
    stall_every: int = 0  # every Nth connection: read the request, never answer
    close_every: int = 0  # every Nth connection: read the request, close (FIN) unanswered
    # write each response in two parts, split this many bytes in, 2 ms apart (so the client
    # reads a response that is not yet whole); 0: one write
    split_at: int = 0
    # Periodic stalls: during the first `stall_ms` of every `stall_period_ms` (counted on
    # CLOCK_MONOTONIC from `stall_origin_ns`, system-wide, so a test can put the stalls where
    # it wants them), every response is held until the stall ends; the rest are answered at
    # once. 0: never.
    stall_ms: float = 0.0
    stall_period_ms: float = 1000.0
    stall_origin_ns: int = 0
    # A server still warming up (a JIT compiling its hot path): the first `cold_requests`
    # requests are each held `cold_delay_ms`, the rest answered at once.
    cold_requests: int = 0
    cold_delay_ms: float = 0.0


class HttpApp:
    """A keep-alive HTTP/1.1 server that answers pipelined requests in order."""

    def __init__(self, options: HttpOptions | None = None) -> None:
        self.options = options or HttpOptions()
        self.seen = Seen()
        size = self.options.body_size
        self.body = bytes(i % 251 for i in range(size)) if size else BODY

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen, opts = self.seen, self.options
        seen.connections += 1
        number = seen.connections
        seen.per_connection.append(0)
        reset = opts.reset_every and number % opts.reset_every == 0
        stall = opts.stall_every and number % opts.stall_every == 0
        hang_up = opts.close_every and number % opts.close_every == 0
        if opts.greet:
            writer.write(opts.greet)
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return
            request_line, headers = _parse_request_head(head)
            length = int(headers.get(b"content-length", b"0"))
            if length:
                await reader.readexactly(length)
            seen.requests += 1
            seen.per_connection[number - 1] += 1
            if len(seen.request_lines) < MAX_REMEMBERED_LINES:
                seen.request_lines.append(request_line)
            if reset:
                send_reset(writer)
                return
            if hang_up:
                return  # the caller closes: FIN with the request unanswered
            if stall:
                await asyncio.Event().wait()  # until the client gives up or the server stops
            if opts.delay_ms:
                await asyncio.sleep(opts.delay_ms / 1000)
            if seen.requests <= opts.cold_requests:
                await asyncio.sleep(opts.cold_delay_ms / 1000)
            if opts.stall_ms:
                await _wait_out_stall(opts)
            close = headers.get(b"connection", b"").lower() == b"close"
            if opts.malformed_every and seen.requests % opts.malformed_every == 0:
                writer.write(b"HTTP/1.1 2x0 Broken\r\nContent-Length: 0\r\n\r\n")
            else:
                status = 200
                if opts.status_every and seen.requests % opts.status_every == 0:
                    status = opts.status
                head_only = request_line.startswith(b"HEAD ")
                response, close_after = render_response(
                    opts.framing, status, head_only, close, self.body
                )
                if 0 < opts.split_at < len(response):
                    writer.write(response[: opts.split_at])
                    await writer.drain()
                    await asyncio.sleep(0.002)
                    response = response[opts.split_at :]
                writer.write(response)
                close = close or close_after
            await writer.drain()
            if close:
                return


async def _wait_out_stall(opts: HttpOptions) -> None:
    """Hold the response until the stall in progress (if any) ends."""
    now = time.monotonic_ns()
    phase = (now - opts.stall_origin_ns) % int(opts.stall_period_ms * 1_000_000)
    end = now - phase + int(opts.stall_ms * 1_000_000)
    while (left := end - time.monotonic_ns()) > 0:
        await asyncio.sleep(left / 1e9)


def _parse_request_head(head: bytes) -> tuple[bytes, dict[bytes, bytes]]:
    lines = head[:-4].split(b"\r\n")
    headers: dict[bytes, bytes] = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    return lines[0], headers


def render_response(
    framing: str, status: int, head_only: bool, client_close: bool, body: bytes = BODY
) -> tuple[bytes, bool]:
    """The response bytes and whether the server closes the connection after them."""
    status_line = f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\n".encode()
    connection = b"Connection: close\r\n" if client_close else b""
    length = b"Content-Length: %d\r\n\r\n" % len(body)
    content = b"" if head_only else body
    if framing == "length":
        return status_line + connection + length + content, client_close
    if framing == "connection-close":
        return status_line + b"Connection: close\r\n" + length + content, True
    if framing == "http10":
        return b"HTTP/1.0" + status_line[8:] + length + content, True
    if framing == "close":
        return status_line + b"Content-Type: text/plain\r\n\r\n" + content, True
    if framing == "chunked":
        head = status_line + connection + b"Transfer-Encoding: chunked\r\n\r\n"
        if head_only:
            return head, client_close
        return head + _chunks(body) + b"0\r\nX-Trailer: done\r\n\r\n", client_close
    if framing == "bare-chunked":  # one chunk, no extension, no trailer: as uvicorn sends
        head = status_line + connection + b"Transfer-Encoding: chunked\r\n\r\n"
        if head_only:
            return head, client_close
        return head + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body), client_close
    raise ValueError(f"unknown framing {framing!r}")


def _chunks(body: bytes, size: int = 7) -> bytes:
    """The body in chunks of at most `size` bytes (short bodies) or 16 KiB, each with an
    extension on the first."""
    size = size if len(body) < 1024 else 16 * 1024
    parts = []
    for offset in range(0, len(body), size):
        piece = body[offset : offset + size]
        extension = b";part=1" if offset == 0 else b""
        parts.append(b"%x%s\r\n%s\r\n" % (len(piece), extension, piece))
    return b"".join(parts)


def send_reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST instead of FIN: SO_LINGER on with a zero timeout, then abort."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


@dataclass
class EchoOptions:
    corrupt_every: int = 0  # every Nth exchange comes back with its first byte flipped
    payload_size: int = 0  # needed to find exchange boundaries when corrupting or counting
    mute_first: int = 0  # the first N connections are read from but never answered


class EchoApp:
    """Writes back what it reads; optionally corrupts numbered exchanges."""

    def __init__(self, options: EchoOptions | None = None) -> None:
        self.options = options or EchoOptions()
        self.seen = Seen()

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.seen.connections += 1
        self.seen.peers.append(writer.get_extra_info("peername")[0])
        if self.seen.connections <= self.options.mute_first:
            while await reader.read(65536):
                pass
            return
        position = 0  # offset inside the current exchange
        size = self.options.payload_size
        while data := await reader.read(65536):
            if size:
                out = bytearray(data)
                offset = 0
                while offset < len(out):
                    if position == 0:
                        self.seen.requests += 1
                        every = self.options.corrupt_every
                        if every and self.seen.requests % every == 0:
                            out[offset] ^= 0xFF
                    take = min(len(out) - offset, size - position)
                    position = (position + take) % size
                    offset += take
                data = bytes(out)
            writer.write(data)
            await writer.drain()


StartHttp = Callable[..., tuple["ServerThread", HttpApp]]
StartEcho = Callable[..., tuple["ServerThread", EchoApp]]


class ServerThread:
    """Serves one app on 127.0.0.1, port 0, from a daemon thread with its own asyncio loop."""

    def __init__(
        self, app: Handler, *, ssl_context: ssl.SSLContext | None = None, host: str = HOST
    ) -> None:
        self.app = app
        self.host = host
        self.port = 0
        self._ssl = ssl_context
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="test-server", daemon=True)

    @property
    def url(self) -> str:
        scheme = "https" if self._ssl else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("test server did not start within 10 s")
        if self._failure is not None:
            raise RuntimeError(f"test server failed to start: {self._failure!r}")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
        assert not self._thread.is_alive(), "test server thread did not stop"

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported by start(); the thread must not die loudly
            self._failure = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server, clients = await start_app(self.app, 0, self._ssl, self.host)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stop.wait()
        await close_app(server, clients)


class PreparedSocketServer:
    """Serves ``app`` on a socket prepared before the thread starts (bound, perhaps not yet
    listening), from a daemon thread with its own loop: for servers that misbehave at the
    socket level (late ``listen``, a tiny accept queue). Subclasses write :meth:`_serve`,
    which returns once :attr:`_stop` is set."""

    def __init__(self, app: Handler) -> None:
        self.app = app
        self.sock = socket.socket()
        self.sock.bind((HOST, 0))
        self.port: int = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self.sock.close()

    async def _serve(self) -> None:
        raise NotImplementedError

    async def _until_stopped(self) -> None:
        while not self._stop.is_set():
            await asyncio.sleep(0.01)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self.app(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def start_app(
    app: Handler, port: int, ssl_context: ssl.SSLContext | None = None, host: str = HOST
) -> tuple[asyncio.Server, set[asyncio.Task[None]]]:
    clients: set[asyncio.Task[None]] = set()

    async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        clients.add(task)
        try:
            await app(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass  # the client went away or failed the handshake: normal in these tests
        except asyncio.CancelledError:
            # The server is stopping: drop the connection now (a graceful close would
            # wait for unsent bytes a stalled client never reads, past the loop's end).
            writer.transport.abort()
            raise
        finally:
            clients.discard(task)
            writer.close()

    server = await asyncio.start_server(on_client, host, port, ssl=ssl_context, backlog=1024)
    return server, clients


async def close_app(server: asyncio.Server, clients: set[asyncio.Task[None]]) -> None:
    # Stop accepting first, and close the server only once the connections accepted just
    # before are set up: asyncio 3.11 builds each one's transport in a task of its own, and
    # one that runs after server.close() fails an assertion half way through, leaving its
    # socket to be found unclosed at collection (a ResourceWarning, most often after a load
    # that opens a connection per request).
    loop = asyncio.get_running_loop()
    for sock in server.sockets:
        loop.remove_reader(sock.fileno())
    await asyncio.sleep(0.02)
    server.close()
    for task in list(clients):
        task.cancel()
    await asyncio.gather(*clients, return_exceptions=True)
    await server.wait_closed()
    # Each client's writer.close() closes its socket on a later turn of the loop: let
    # those turns come before asyncio.run closes the loop.
    for _ in range(3):
        await asyncio.sleep(0)


def _main() -> None:
    parser = argparse.ArgumentParser(description="test server (loopback only)")
    parser.add_argument("kind", choices=("http", "echo"))
    parser.add_argument("--port", type=int, default=0)
    numbers = ("status-every", "malformed-every", "reset-every", "stall-every", "close-every")
    for name in (*numbers, "status", "body-size"):
        parser.add_argument(f"--{name}", type=int, default=0)
    parser.add_argument("--greet", default="")
    parser.add_argument("--framing", default="length")
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--stall-ms", type=float, default=0.0)
    parser.add_argument("--stall-period-ms", type=float, default=1000.0)
    parser.add_argument("--stall-origin-ns", type=int, default=0)
    parser.add_argument("--corrupt-every", type=int, default=0)
    parser.add_argument("--payload-size", type=int, default=0)
    args = parser.parse_args()
    app: Handler
    if args.kind == "http":
        app = HttpApp(
            HttpOptions(
                framing=args.framing,
                delay_ms=args.delay_ms,
                status=args.status or 503,
                status_every=args.status_every,
                malformed_every=args.malformed_every,
                reset_every=args.reset_every,
                stall_every=args.stall_every,
                close_every=args.close_every,
                body_size=args.body_size,
                greet=args.greet.encode(),
                stall_ms=args.stall_ms,
                stall_period_ms=args.stall_period_ms,
                stall_origin_ns=args.stall_origin_ns,
            )
        )
    else:
        app = EchoApp(EchoOptions(args.corrupt_every, args.payload_size))

    async def serve() -> None:
        server, _ = await start_app(app, args.port)
        print(f"NETBENCH_LISTENING port={server.sockets[0].getsockname()[1]}", flush=True)
        await server.serve_forever()

    asyncio.run(serve())


if __name__ == "__main__":
    sys.exit(_main())
