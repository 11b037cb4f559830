"""One connection's outstanding requests on trio, as the run's rules read them.

A :class:`Slot` is what ``rules.accounting`` fails, counts and records against: the start
times of the requests written and not yet answered, their intended times (open loop) and
their request kinds in a mix (``request_kinds``); an HTTP/2 connection's
(``trio_io.h2_connection.H2Slot``) adds its streams.
"""

from __future__ import annotations

from collections import deque

from pytest_netbench._proto.ws_ids import IdMatcher


class Slot:
    """One connection's outstanding requests: start times, (open loop) intended times and
    (a mix) the request kind of each one written (``request_kinds``: indexes into the mix)."""

    __slots__ = (
        "arriving",
        "broken",
        "connected",
        "first",
        "framer",
        "intended",
        "keep_alive",
        "opened_ns",
        "pending",
        "request_kinds",
        "served",
        "ws_idle",
        "ws_ids",
        "ws_leftover",
    )

    def __init__(self) -> None:
        self.pending: deque[int] = deque()
        self.intended: deque[int] = deque()
        self.request_kinds: deque[int] = deque()
        self.served = 0
        self.keep_alive = True
        self.broken = ""
        # Open loop: counted in the run's ``connecting`` until it takes its first request.
        self.arriving = False
        # Phases (rules.phases): when the connection was open, when the answer being
        # parsed began (0: none begun).
        self.opened_ns = 0
        self.first = 0
        # An open-loop connection opened ahead of its first request: its connect's times
        # (started, TCP up, open), recorded as that request's (as asyncio attaches the
        # request waiting for a connection to the connect itself).
        self.connected: tuple[int, int, int] | None = None
        self.framer: object = None  # a streaming load's: the rules read a stream cut short
        self.ws_leftover = b""  # frames that came with a WebSocket handshake's answer
        # A WebSocket open, unbroken and with no frame half written: it may close cleanly.
        self.ws_idle = False
        self.ws_ids: IdMatcher | None = None  # answers matched by id: the ids of its sends
