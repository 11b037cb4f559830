"""The client-delay probe of a WebSocket load: one more client that connects, opens the
WebSocket, exchanges one message and closes, on blocking sockets (see ``probe``).

Timed from the connect to the whole echo, as an HTTP probe is timed to the whole answer;
the handshake is part of what one more client waits for. Beside a listen load the probe
sends nothing: it waits, from the connect, for the server's first push. Failures take the
load's kinds: a refused handshake is ``status``, a broken 101 or frame ``protocol``, a
close from the server ``reset``, a differing echo ``verify``.
"""

from __future__ import annotations

import contextlib
import socket
from time import monotonic_ns

from pytest_netbench._engine.rules.connecting import make_ssl_context
from pytest_netbench._engine.rules.failures import HANDSHAKE_ENDED
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.tcp import OK
from pytest_netbench._proto.websocket import (
    CLOSE,
    HandshakeInvalid,
    HandshakeRefused,
    WsFramer,
    WsSetup,
    client_frame,
    close_payload,
    describe_close,
)
from pytest_netbench._stats.probe import ProbeSample

_RECEIVE_BYTES = 65536
_NORMAL_CLOSURE = 1000


def ws_probe_once(spec: LoadSpec, setup: WsSetup, start: int) -> ProbeSample:
    """Connect, open the WebSocket, send one message, read its echo, close."""
    try:
        sock = socket.create_connection((spec.host, spec.port), timeout=spec.connect_timeout_s)
    except TimeoutError:
        return ProbeSample(start, monotonic_ns() - start, "connect", "connect timeout")
    except OSError as exc:
        return ProbeSample(start, monotonic_ns() - start, "connect", str(exc))
    try:
        context = make_ssl_context(spec)  # wss://
        if context is not None:
            sock = context.wrap_socket(sock, server_hostname=spec.host)
        sock.settimeout(spec.timeout_s)
        kind, detail = _exchange(sock, setup, listen=spec.listen)
    except HandshakeRefused as refused:
        kind, detail = "status", str(refused)
    except HandshakeInvalid as invalid:
        kind, detail = "protocol", f"WebSocket handshake: {invalid}"
    except TimeoutError:
        kind, detail = "timeout", "no answer in time"
    except OSError as exc:
        kind, detail = "reset", str(exc)
    finally:
        with contextlib.suppress(OSError):
            sock.close()
    return ProbeSample(start, monotonic_ns() - start, kind, detail)


def _exchange(sock: socket.socket, setup: WsSetup, *, listen: bool) -> tuple[str, str]:
    """The handshake and one round trip (``listen``: the first push); (error kind,
    detail), kind "" when the echo came back equal (any push, when listening)."""
    handshake = setup.handshake()
    sock.sendall(handshake.request)
    accepted = None
    while accepted is None:
        data = sock.recv(_RECEIVE_BYTES)
        if not data:
            return "reset", HANDSHAKE_ENDED
        accepted = handshake.receive(data)
    codes: list[int] = []
    problems: list[str] = []
    closes: list[str] = []
    framer = WsFramer(
        setup.frames,
        None if listen else setup.expected,
        lambda code, _keep: codes.append(code),
        problems.append,
        sock.sendall,  # a pong, or the close reply
        lambda code, reason: closes.append(describe_close(code, reason)),
    )
    if not listen:
        sock.sendall(setup.frames.next_frame())
    data = accepted.leftover
    while not (codes or problems or closes):
        if data:
            framer.feed(data)
            data = b""
            continue
        data = sock.recv(_RECEIVE_BYTES)
        if not data:
            return "reset", "server closed the connection before answering"
    if problems:
        return "protocol", problems[0]
    if closes:
        return "reset", f"the server closed the WebSocket: {closes[0]}"
    with contextlib.suppress(OSError):
        sock.sendall(client_frame(CLOSE, close_payload(_NORMAL_CLOSURE)))
    return ("", "") if codes[0] == OK else ("verify", "echo differs")
