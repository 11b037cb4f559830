"""When is a server ready: readiness checks the launcher polls until one says yes or time
runs out.

Every check is cheap and bounded and either says "ready" (``None``) or says why not yet,
so a start-up timeout can report the last reason instead of a bare "timed out". Checks
connect to the literal address the load will use: a server listening on 127.0.0.1 only is
*not* ready for a load aimed at ::1, and the check must not paper over that. Checks are
stateless (a log line seen once is remembered by the :class:`LogFollower`), so one check
object can serve many starts.
"""

from __future__ import annotations

import re
import socket
import ssl
from abc import ABC, abstractmethod
from collections.abc import Callable, Container
from dataclasses import dataclass

from pytest_netbench._errors import SpecError
from pytest_netbench._public import publish

_CONNECT_TIMEOUT_S = 1.0
_MAX_KEPT_LINES = 20_000
_MAX_PARTIAL_LINE = 64 * 1024
_READ_CHUNK = 1 << 20


def format_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class LogFollower:
    """Reads a growing log file incrementally and finds lines matching patterns."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""
        self._lines: list[str] = []
        self._first_index = 0  # absolute number of self._lines[0]
        self._cursors: dict[str, int] = {}
        self._found: dict[str, re.Match[str]] = {}

    def read_new(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read(_READ_CHUNK)
        except OSError:
            return
        if not data:
            return
        self._offset += len(data)
        chunks = (self._partial + data).split(b"\n")
        self._partial = chunks.pop()[-_MAX_PARTIAL_LINE:]
        self._lines.extend(c.rstrip(b"\r").decode("utf-8", "replace") for c in chunks)
        if len(self._lines) > _MAX_KEPT_LINES:
            drop = len(self._lines) - _MAX_KEPT_LINES // 2
            del self._lines[:drop]
            self._first_index += drop

    def search(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """The first line (or unterminated last line) matching ``pattern``, remembered."""
        key = pattern.pattern
        if key in self._found:
            return self._found[key]
        self.read_new()
        start = max(self._cursors.get(key, 0), self._first_index)
        for index in range(start - self._first_index, len(self._lines)):
            match = pattern.search(self._lines[index])
            if match is not None:
                self._found[key] = match
                return match
        self._cursors[key] = self._first_index + len(self._lines)
        if self._partial:
            # A banner printed without a newline but flushed still counts.
            return pattern.search(self._partial.decode("utf-8", "replace"))
        return None


@dataclass(frozen=True, slots=True)
class ReadinessContext:
    """Where the server should be answering, and how long the check may take at most."""

    host: str
    port: int
    log: LogFollower
    budget_s: float


class ReadinessCheck(ABC):
    """A check polled until it reports ready; combine with ``&``."""

    @abstractmethod
    def poll(self, ctx: ReadinessContext) -> str | None:
        """``None`` when ready, else a short reason why not yet."""

    @abstractmethod
    def describe(self) -> str:
        """What is being waited for, for error messages."""

    def __and__(self, other: ReadinessCheck) -> AllReady:
        return AllReady(self, other)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"


def _connect(ctx: ReadinessContext, timeout: float) -> socket.socket | str:
    """A connected socket, or why connecting failed."""
    bounded = max(0.01, min(timeout, ctx.budget_s))
    where = format_address(ctx.host, ctx.port)
    try:
        return socket.create_connection((ctx.host, ctx.port), timeout=bounded)
    except ConnectionRefusedError:
        return f"TCP connect to {where} refused (nothing listening on that address)"
    except TimeoutError:
        return f"TCP connect to {where} timed out after {bounded:.2f} s"
    except OSError as exc:
        return f"TCP connect to {where} failed: {exc.strerror or exc}"


class TcpReady(ReadinessCheck):
    """Ready once a TCP connection to host:port succeeds (the default check)."""

    def __init__(self, *, connect_timeout: float = _CONNECT_TIMEOUT_S) -> None:
        if connect_timeout <= 0:
            raise SpecError(f"connect_timeout must be positive, got {connect_timeout!r}")
        self.connect_timeout = connect_timeout

    def poll(self, ctx: ReadinessContext) -> str | None:
        conn = _connect(ctx, self.connect_timeout)
        if isinstance(conn, str):
            return conn
        conn.close()
        return None

    def describe(self) -> str:
        return "a TCP connection to the server's host and port"


class HttpReady(ReadinessCheck):
    """Ready once ``GET path`` answers with an expected status (200 by default)."""

    def __init__(
        self,
        path: str = "/",
        *,
        status: int | Container[int] = 200,
        method: str = "GET",
        timeout: float = 2.0,
    ) -> None:
        if not path.startswith("/"):
            raise SpecError(f"HttpReady path must start with '/', got {path!r}")
        if timeout <= 0:
            raise SpecError(f"timeout must be positive, got {timeout!r}")
        self.path = path
        self.status = status
        self.method = method.upper()
        self.timeout = timeout

    def _status_ok(self, status: int) -> bool:
        if isinstance(self.status, int):
            return status == self.status
        return status in self.status

    def poll(self, ctx: ReadinessContext) -> str | None:
        conn = _connect(ctx, self.timeout)
        if isinstance(conn, str):
            return conn
        where = format_address(ctx.host, ctx.port)
        request = (
            f"{self.method} {self.path} HTTP/1.1\r\nHost: {where}\r\n"
            "User-Agent: pytest-netbench-readiness\r\nConnection: close\r\n\r\n"
        ).encode("latin-1")
        head = b""
        try:
            conn.settimeout(max(0.01, min(self.timeout, ctx.budget_s)))
            conn.sendall(request)
            while b"\r\n" not in head and len(head) < 8192:
                data = conn.recv(4096)
                if not data:
                    break
                head += data
        except TimeoutError:
            return (
                f"{where} accepted the TCP connection but sent no HTTP response to "
                f"{self.method} {self.path} within {conn.gettimeout():.2f} s"
            )
        except OSError as exc:
            return f"HTTP readiness check of {where} failed: {exc.strerror or exc}"
        finally:
            conn.close()
        if not head:
            return f"{where} closed the connection without answering {self.method} {self.path}"
        match = re.match(rb"HTTP/\d(?:\.\d)? (\d{3})", head)
        if match is None:
            return f"{where} answered {self.method} {self.path} with non-HTTP bytes {head[:40]!r}"
        status = int(match.group(1))
        if not self._status_ok(status):
            return f"{self.method} {self.path} answered {status}, expecting {self._expected()}"
        return None

    def _expected(self) -> str:
        if isinstance(self.status, int):
            return str(self.status)
        if isinstance(self.status, range):
            return f"{self.status.start}-{self.status.stop - 1}"
        return repr(self.status)

    def describe(self) -> str:
        return f"HTTP {self.method} {self.path} answering {self._expected()}"


_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_H2_EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


class Http2Ready(ReadinessCheck):
    """Ready once the server answers HTTP/2's connection preface with a SETTINGS frame:
    over cleartext with prior knowledge (h2c), or with ``tls`` over TLS whose ALPN
    answer is ``h2`` (the certificate is not checked: test servers make their own)."""

    def __init__(self, *, tls: bool = False, timeout: float = 2.0) -> None:
        if timeout <= 0:
            raise SpecError(f"timeout must be positive, got {timeout!r}")
        self.tls = tls
        self.timeout = timeout

    def poll(self, ctx: ReadinessContext) -> str | None:
        conn = _connect(ctx, self.timeout)
        if isinstance(conn, str):
            return conn
        where = format_address(ctx.host, ctx.port)
        try:
            conn.settimeout(max(0.01, min(self.timeout, ctx.budget_s)))
            if self.tls:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
                context.set_alpn_protocols(["h2"])
                conn = context.wrap_socket(conn, server_hostname=ctx.host)
                chosen = conn.selected_alpn_protocol()
                if chosen != "h2":
                    return f"{where}'s TLS handshake (ALPN) chose {chosen!r}, not 'h2'"
            conn.sendall(_H2_PREFACE + _H2_EMPTY_SETTINGS)
            head = b""
            while len(head) < 9:
                data = conn.recv(9 - len(head))
                if not data:
                    break
                head += data
            if head.startswith(b"HTTP/") and b"\r\n" not in head:
                head += conn.recv(64)  # the rest of an HTTP/1 status line, to quote it
        except TimeoutError:
            return f"{where} sent no HTTP/2 SETTINGS frame within {conn.gettimeout():.2f} s"
        except ssl.SSLError as exc:
            return f"TLS handshake with {where} failed: {exc.reason or exc}"
        except OSError as exc:
            return f"HTTP/2 readiness check of {where} failed: {exc.strerror or exc}"
        finally:
            conn.close()
        if len(head) < 9:
            return f"{where} closed the connection without answering the HTTP/2 preface"
        if head.startswith(b"HTTP/"):
            line = head.split(b"\r\n", 1)[0]
            return f"{where} answered the HTTP/2 preface in HTTP/1 ({line!r}), not with SETTINGS"
        if head[3] != 0x4:
            return f"{where} answered the HTTP/2 preface with {head!r}, not a SETTINGS frame"
        return None

    def describe(self) -> str:
        over = "TLS with ALPN h2" if self.tls else "cleartext (h2c)"
        return f"an HTTP/2 SETTINGS frame answering the preface over {over}"


class LogReady(ReadinessCheck):
    """Ready once a line of the server's output matches ``pattern`` (a regex)."""

    def __init__(self, pattern: str | re.Pattern[str]) -> None:
        try:
            self.pattern = re.compile(pattern)
        except re.error as exc:
            raise SpecError(f"LogReady pattern {pattern!r} is not a valid regex: {exc}") from None

    def poll(self, ctx: ReadinessContext) -> str | None:
        if ctx.log.search(self.pattern) is not None:
            return None
        return f"no line of the server's output matches {self.pattern.pattern!r} yet"

    def describe(self) -> str:
        return f"an output line matching {self.pattern.pattern!r}"


class CallableReady(ReadinessCheck):
    """Ready once ``check(host, port)`` returns true; it must return promptly.

    An exception counts as "not ready yet" (servers starting up fail in many ways) and
    its text becomes the reason shown if start-up times out.
    """

    def __init__(self, check: Callable[[str, int], object], description: str = "") -> None:
        if not callable(check):
            raise SpecError(f"CallableReady needs a callable check(host, port), got {check!r}")
        self.check = check
        self.description = description or getattr(check, "__name__", repr(check))

    def poll(self, ctx: ReadinessContext) -> str | None:
        try:
            result = self.check(ctx.host, ctx.port)
        except Exception as exc:
            return f"{self.description} raised {type(exc).__name__}: {exc}"
        return None if result else f"{self.description} returned {result!r}"

    def describe(self) -> str:
        return f"{self.description}(host, port) returning true"


class AllReady(ReadinessCheck):
    """Ready once every check is (polled in order; the first "not yet" is reported)."""

    checks: tuple[ReadinessCheck, ...]

    def __init__(self, *checks: ReadinessCheck) -> None:
        flat: list[ReadinessCheck] = []
        for check in checks:
            if not isinstance(check, ReadinessCheck):
                raise SpecError(f"AllReady takes readiness checks, got {check!r}")
            flat.extend(check.checks if isinstance(check, AllReady) else (check,))
        if not flat:
            raise SpecError("AllReady needs at least one check")
        self.checks = tuple(flat)

    def poll(self, ctx: ReadinessContext) -> str | None:
        for check in self.checks:
            reason = check.poll(ctx)
            if reason is not None:
                return reason
        return None

    def describe(self) -> str:
        return " and ".join(c.describe() for c in self.checks)


ReadySpec = ReadinessCheck | Callable[[str, int], object] | None


def as_check(ready: ReadySpec) -> ReadinessCheck:
    """The check for a ``ready=`` argument: a check, a callable, or None (TCP connect)."""
    if ready is None:
        return TcpReady()
    if isinstance(ready, ReadinessCheck):
        return ready
    if callable(ready):
        return CallableReady(ready)
    raise SpecError(
        f"ready must be a readiness check (TcpReady(), HttpReady('/'), LogReady('regex'), "
        f"CallableReady(fn), AllReady(...)) or a callable(host, port), got {ready!r}"
    )


publish(globals())
