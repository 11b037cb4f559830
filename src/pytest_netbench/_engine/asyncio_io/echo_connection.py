"""The asyncio engine's connection for verified echo: the echo is received in place.

A plain ``asyncio.Protocol`` gets every read as a new ``bytes`` object, which the framer
then copies again. As a ``BufferedProtocol`` the loop reads straight into the framer's
preallocated buffer (``recv_into``), so a 512 KiB echo costs the kernel's copy and one
``memcmp``, as it does in a Go client. Everything else (sending, recording, the run
rules) is :class:`Connection`'s.

A flood of thousands of connections makes one turn of the loop long (libuv handles up to
48 x 1,024 ready sockets, each read, checked and written, before timers run), so a timer
can fire a second late. So an echo exchange completed past the end of a timeline second
closes that second, and in closed loop one past the deadline ends the window. Each
connection counts its exchanges, so the result can say how many completed none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from time import monotonic_ns

from pytest_netbench._engine.asyncio_io.connection import Connection
from pytest_netbench._proto.tcp import EchoFramer


class EchoConnection(Connection, asyncio.BufferedProtocol):
    """A :class:`Connection` whose echo framer owns the receive buffer."""

    _echo: EchoFramer
    exchanges = 0  # completed on this connection, measured or not

    def _attach_framer(self) -> Callable[[bytes], object]:
        framer = self.run.exchange.make_framer(self.on_response, self.on_protocol_error)
        if not isinstance(framer, EchoFramer):
            raise TypeError("EchoConnection needs the echo framing")
        self._echo = framer
        self.framer = framer
        return framer.feed

    def _release(self) -> None:
        super()._release()
        del self._echo  # the framer's callbacks are this connection's methods

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._echo.free_space()

    def buffer_updated(self, nbytes: int) -> None:
        self._rec.bytes_read += nbytes
        self._echo.received(nbytes)

    def on_response(self, code: int, keep_alive: bool) -> None:
        self.exchanges += 1
        super().on_response(code, keep_alive)
        run = self.run
        now = monotonic_ns()
        if now >= run.next_tick_ns and not run.stopping:
            run.tick_due()
        if not run.open_loop and now >= run.deadline_ns and not run.stopping:
            run.end_window()
