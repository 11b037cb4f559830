"""The trio engine's HTTP/2 loads: a ``TrioRun`` whose connections speak HTTP/2.

:class:`H2TrioRun` keeps the trio run's window, ramp, open-loop schedule and work channel;
what differs is a connection's task (``trio_io.h2_connection.H2Slot``: its reader, writer and,
in open loop, its takers); the open-loop pool grows by the trio run's rule, which is the
asyncio engine's (a request waits for a free stream; the pool grows for one that waited
``GROW_AFTER_NS``, below what the rate needs). When a connection ends (after a GOAWAY,
broken, lost), the run opens another (not an error).
"""

from __future__ import annotations

from time import monotonic_ns

import trio

from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.trio_io.engine import TrioRun, run_share_trio
from pytest_netbench._engine.trio_io.h2_connection import H2Slot, alpn_refusal_of
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

    def start_closed_connection(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(_closed_connection, self)

    def start_open_connection(self, nursery: trio.Nursery, precounted: bool = False) -> None:
        nursery.start_soon(_open_connection, self, precounted)


async def _closed_connection(run: H2TrioRun) -> None:
    """Closed loop: one connection at a time, its streams kept full; when it ends (after a
    GOAWAY, broken, lost), the next opens with a new permit."""
    while not run.stopping:
        if run.shed():
            return
        now = monotonic_ns()
        if not run.take(now):
            run.check_finished()
            return
        slot = H2Slot(run)
        slot.pending.append(now)
        stream = await run.connect(slot)
        if stream is None:
            continue
        try:
            refusal = alpn_refusal_of(stream)
            if refusal:
                slot.broken = refusal
                run.fail(slot, "protocol")
            else:
                slot.pending.clear()
                slot.send(now, now)
                slot.fill()
                await slot.serve(stream)
        finally:
            slot.streams.release()
            run.slots.discard(slot)
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
        if slot.shed:
            return


async def _open_connection(run: H2TrioRun, precounted: bool = False) -> None:
    """Open loop: one pooled connection whose free streams take due requests from the
    run's work channel (see trio_io.engine's ``_open_connection``)."""
    slot = H2Slot(run)
    slot.arriving = True
    if not precounted:
        run.connecting += 1
    stream: trio.abc.Stream | None = None
    try:
        stream = await run.connect(slot)
        if stream is None:
            return
        refusal = alpn_refusal_of(stream)
        if refusal:
            await slot.refuse(refusal)
        else:
            await slot.serve(stream)
    finally:
        if slot.arriving:
            run.connecting -= 1
        run.pool_size -= 1
        slot.streams.release()
        run.slots.discard(slot)
        if not run.stopping:
            run.replace_lost()
        if stream is not None:
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)


def run_share_h2_trio(
    spec: LoadSpec, share: WorkerShare, released_ns: int, watch: ShareWatch | None = None
) -> WorkerOutcome:
    """Run one share of an HTTP/2 load on a fresh trio loop."""
    return run_share_trio(spec, share, released_ns, watch, H2TrioRun)
