"""The trio engine's HTTP/2 loads: a ``TrioRun`` whose connections speak HTTP/2.

:class:`H2TrioRun` keeps the trio run's window, ramp, open-loop schedule, work channel and
connection tasks (``trio_io.run``); what differs is what a connection does once connected
(``trio_io.h2_connection.H2Slot``: its reader, writer and, in open loop, its takers); the
open-loop pool grows by the trio run's rule, which is the asyncio engine's (a request
waits for a free stream; the pool grows for one that waited ``GROW_AFTER_NS``, below what
the rate needs). When a connection ends (after a GOAWAY, broken, lost), the run opens
another (not an error).
"""

from __future__ import annotations

import trio

from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.trio_io.engine import run_share_trio
from pytest_netbench._engine.trio_io.h2_connection import H2Slot, alpn_refusal_of
from pytest_netbench._engine.trio_io.run import TrioRun
from pytest_netbench._engine.trio_io.slot import Slot
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.source import RequestSource
from pytest_netbench._stats.recorder import WorkerOutcome


class H2TrioRun(TrioRun):
    """A trio run whose connections speak HTTP/2 (see the module's docstring)."""

    def __init__(
        self,
        spec: LoadSpec,
        share: WorkerShare,
        exchange: Exchange,
        start_at_ns: int,
        source: RequestSource | None = None,
    ) -> None:
        super().__init__(spec, share, exchange, start_at_ns, source)
        self.takers_per_connection = spec.outstanding_per_connection

    def new_slot(self) -> H2Slot:
        return H2Slot(self)

    async def serve_closed(self, slot: Slot, stream: trio.abc.Stream, now: int) -> bool:
        """Closed loop: the connection's streams kept full until it ends (after a GOAWAY,
        broken, lost); the next opens with a new permit."""
        assert isinstance(slot, H2Slot)
        refusal = alpn_refusal_of(stream)
        if refusal:
            slot.broken = refusal
            self.fail(slot, "protocol")
            return slot.shed
        slot.pending.clear()
        slot.send(now, now)
        slot.fill()
        await slot.serve(stream)
        return slot.shed

    async def serve_open(self, slot: Slot, stream: trio.abc.Stream) -> None:
        """Open loop: one pooled connection whose free streams take due requests from the
        run's work channel."""
        assert isinstance(slot, H2Slot)
        refusal = alpn_refusal_of(stream)
        if refusal:
            await slot.refuse(refusal)
        else:
            await slot.serve(stream)

    def release(self, slot: Slot) -> None:
        assert isinstance(slot, H2Slot)
        slot.streams.release()


def run_share_h2_trio(
    spec: LoadSpec, share: WorkerShare, released_ns: int, watch: ShareWatch | None = None
) -> WorkerOutcome:
    """Run one share of an HTTP/2 load on a fresh trio loop."""
    return run_share_trio(spec, share, released_ns, watch, H2TrioRun)
