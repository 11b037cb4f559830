"""The trio engine's WebSocket parts: the opening handshake on a connected stream, the
frame-reading hooks one connection's loop calls (``trio_io.h1`` maps what they report
to the run rules' error kinds, as it does for every other failure), and the clean close
at the end of a load (``close_websocket``)."""

from __future__ import annotations

from collections.abc import Callable
from time import monotonic_ns

import trio

from pytest_netbench._engine.rules.failures import HANDSHAKE_ENDED, ws_server_closed
from pytest_netbench._engine.rules.phases import record_upgrade
from pytest_netbench._proto.framing import OnError, OnResponse
from pytest_netbench._proto.websocket import (
    CLOSE_WAIT_MAX_S,
    Accepted,
    WsFramer,
    WsSetup,
)
from pytest_netbench._proto.ws_ids import IdMatcher, id_framer
from pytest_netbench._stats.recorder import Recorder

_READ_SIZE = 64 * 1024


class HandshakeEnded(Exception):
    """The server closed the connection before answering the upgrade."""


async def open_websocket(
    stream: trio.abc.Stream,
    setup: WsSetup,
    timeout_s: float,
    recorder: Recorder,
    opened: int = 0,
) -> Accepted:
    """Write the upgrade request and read the answer, within ``timeout_s`` (its bytes
    counted in ``recorder``). Raises what ``ClientHandshake.receive`` raises,
    :class:`HandshakeEnded`, ``trio.TooSlowError``, or the stream's own errors.
    ``opened``: when the connection was open, for a connection opened for a measured
    message, whose handshake is timed (``rules.phases.record_upgrade``); 0: not timed."""
    handshake = setup.handshake()
    first = 0
    with trio.fail_after(max(timeout_s, 0)):
        await stream.send_all(handshake.request)
        recorder.bytes_written += len(handshake.request)
        while True:
            data = await stream.receive_some(_READ_SIZE)
            now = monotonic_ns()  # the arrival of these bytes
            first = first or now  # the upgrade answer's first byte
            if not data:
                raise HandshakeEnded(HANDSHAKE_ENDED)
            recorder.bytes_read += len(data)
            accepted = handshake.receive(data)
            if accepted is not None:
                if opened:
                    record_upgrade(recorder, opened, first, now)
                return accepted


class WsTalk:
    """One connection's frames in: the framer, the replies it owes the server (pongs, the
    close reply), and the server's close once it came (its code, and its words for the
    error). With answers matched by id, ``ids`` gives the messages their ids, and an
    answer to the ``index``-th message outstanding first calls ``to_front(index)``."""

    __slots__ = ("_on_response", "_to_front", "close_code", "closed", "framer", "ids", "replies")

    def __init__(
        self,
        setup: WsSetup,
        on_response: OnResponse,
        on_error: OnError,
        to_front: Callable[[int], None],
    ) -> None:
        self.replies: list[bytes] = []
        self.closed = ""
        self.close_code = 0
        self.ids: IdMatcher | None = None
        self._on_response = on_response
        self._to_front = to_front
        self.framer: WsFramer
        if setup.ids is not None:
            self.framer, self.ids = id_framer(
                setup, self._answered, on_error, self.replies.append, self._close
            )
        else:
            self.framer = setup.make_framer(on_response, on_error, self.replies.append, self._close)

    def _answered(self, code: int, index: int) -> None:
        if index:
            self._to_front(index)
        self._on_response(code, True)

    def _close(self, code: int, reason: str) -> None:
        self.close_code = code
        self.closed = ws_server_closed(code, reason).detail

    async def send_replies(self, stream: trio.abc.Stream) -> int:
        """Write what the server is owed; returns the bytes written."""
        data = b"".join(self.replies)
        self.replies.clear()
        await stream.send_all(data)
        return len(data)


async def close_websocket(stream: trio.abc.Stream, framer: WsFramer, timeout_s: float) -> None:
    """The client's clean close at the end of a load, on an open WebSocket nothing is half
    written to: its close frame (code 1000), then frames read until the server's close,
    its end of the stream, or ``timeout_s`` (at most ``CLOSE_WAIT_MAX_S``); the caller
    closes the stream after. Shielded from the run's cancellation; nothing is counted."""
    closed = False

    def on_closed() -> None:
        nonlocal closed
        closed = True

    with trio.CancelScope(shield=True) as scope:
        scope.deadline = trio.current_time() + min(max(timeout_s, 0), CLOSE_WAIT_MAX_S)
        try:
            await stream.send_all(framer.close_from_client(on_closed))
            while not closed:
                data = await stream.receive_some(_READ_SIZE)
                if not data:
                    return
                framer.feed(bytes(data))
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            return
