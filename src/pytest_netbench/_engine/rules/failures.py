"""Every failure a load counts, in the engine's words: one place for both loops, so a load's
error samples (``LoadResult.error_samples``) read the same whichever loop it ran on.

A loop only says what happened (a connect raised this, the stream ended, the read broke
with this, the timer ran out); the kind and the words come from here. ``informative_cause``
digs the OS error out of what a loop wraps it in (trio's ``BrokenResourceError``, an
exception group of connect attempts), so a reset reads "connection reset by peer" on
asyncio, uvloop and trio alike.
"""

from __future__ import annotations

import errno as errno_mod
import ssl
from typing import TYPE_CHECKING, NamedTuple

from pytest_netbench._model import ErrorKind

if TYPE_CHECKING:
    from pytest_netbench._proto.websocket import HandshakeRefused


class Failure(NamedTuple):
    """What a request outstanding on a failed connection counts as, and the words of its
    error sample; ``errno`` when the OS gave one (a connect's, for the fd/port checks)."""

    kind: ErrorKind
    detail: str
    errno: int | None = None


# What OpenSSL says when the answer to its hello is not TLS at all: a plain-text server
# (an HTTP/1.1 answer, "HTTP/1.1 400 Bad Request", reads as a record of an unknown version).
_NOT_TLS_REASONS = frozenset(
    {"WRONG_VERSION_NUMBER", "UNKNOWN_PROTOCOL", "PACKET_LENGTH_TOO_LONG", "RECORD_LAYER_FAILURE"}
)
NOT_TLS = "the answer was not TLS"


def describe_connect_error(exc: BaseException) -> str:
    """A short reason for the ``connect`` error sample ("connection refused", an errno name)."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ssl.SSLError):
        reason = getattr(exc, "reason", None) or str(exc)
        if reason in _NOT_TLS_REASONS:
            return f"TLS handshake failed: {reason} ({NOT_TLS})"
        return f"TLS handshake failed: {reason}"
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{errno_mod.errorcode.get(exc.errno, exc.errno)}: {exc.strerror}"
    return repr(exc)


def informative_cause(exc: BaseException) -> BaseException:
    """The error worth reporting inside a wrapped one: in ``__cause__`` (trio's TLS errors)
    or in an exception group ("all attempts to connect ... failed"); the first that says
    what went wrong (an ``SSLError``, an ``OSError`` with an errno)."""
    seen = 0
    while seen < 8:
        seen += 1
        if isinstance(exc, ssl.SSLError) or (isinstance(exc, OSError) and exc.errno):
            return exc
        inner = getattr(exc, "exceptions", None)
        if inner:
            exc = inner[0]
        elif exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            break
    return exc


# A connect that failed, timed out, or found no one listening.
CONNECT_TIMEOUT = "connect failed: connect timeout"
# The server closed the connection cleanly with requests outstanding.
CLOSED_BEFORE_RESPONDING = "server closed the connection before responding"
CONNECTION_RESET = "connection reset by peer"
# A held WebSocket connection whose TCP connection ended without a close frame.
NO_CLOSE_FRAME = "the server closed the connection (no close frame)"


def connect_failure(exc: BaseException | None) -> Failure:
    """A connect that raised ``exc`` (whatever wraps the cause), or timed out (None)."""
    if exc is None:
        return Failure("connect", CONNECT_TIMEOUT)
    root = informative_cause(exc)
    err_no = root.errno if isinstance(root, OSError) else None
    return Failure("connect", f"connect failed: {describe_connect_error(root)}", err_no)


def lost_connection(exc: BaseException | None) -> Failure:
    """A connection lost with requests outstanding: ``exc`` is what ended it (whatever
    wraps the cause), None when the server closed it cleanly."""
    if exc is None:
        return Failure("reset", CLOSED_BEFORE_RESPONDING)
    root = informative_cause(exc)
    if isinstance(root, ConnectionResetError) or (
        isinstance(root, OSError) and root.errno == errno_mod.ECONNRESET
    ):
        return Failure("reset", CONNECTION_RESET)
    return Failure("reset", f"connection lost: {root!r}")


def lost_held_connection(exc: BaseException | None) -> Failure:
    """A held WebSocket connection (a listen load) lost without a close frame: ``exc`` is
    what ended it, None when the server closed the TCP connection cleanly."""
    if exc is None:
        return Failure("reset", NO_CLOSE_FRAME)
    return lost_connection(exc)


# The server hung up before it answered a WebSocket upgrade.
HANDSHAKE_ENDED = "server closed the connection during the WebSocket handshake"


def ws_refused(refusal: HandshakeRefused) -> Failure:
    """The server answered the WebSocket upgrade with an HTTP status other than 101."""
    return Failure("status", str(refusal))


def ws_handshake_invalid(problem: object) -> Failure:
    """The server's answer to the upgrade is not one a WebSocket client may accept."""
    return broken(f"WebSocket handshake: {problem}")


def ws_server_closed(code: int, reason: str) -> Failure:
    """The server closed the WebSocket (a close frame) with messages outstanding, or a
    held connection."""
    from pytest_netbench._proto.websocket import describe_close  # a WebSocket load's

    return Failure("reset", f"the server closed the WebSocket: {describe_close(code, reason)}")


def broken(reason: str) -> Failure:
    """The server sent what HTTP (or the protocol spoken) does not allow: ``reason``."""
    return Failure("protocol", reason)


def response_timeout(timeout_s: float) -> Failure:
    """No complete response within the load's ``timeout``: the connection is given up."""
    return Failure("timeout", f"no complete response within {timeout_s}s")


def stream_timeout(timeout_s: float) -> Failure:
    """One HTTP/2 stream unanswered within ``timeout``: the stream alone is given up."""
    return Failure("timeout", f"no response within {timeout_s}s")
