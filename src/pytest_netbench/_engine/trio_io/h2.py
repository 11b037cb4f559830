"""The trio engine's HTTP/2 loads: a ``TrioRun`` whose connections speak HTTP/2.

:class:`H2TrioRun` keeps the trio run's window, ramp, open-loop schedule and work channel;
what differs is a connection's task (``trio_io.h2_connection.H2Slot``: its reader, writer and,
in open loop, its takers) and, in open loop, how the pool grows: a request waits for a
free stream, and the pool grows only for one that waited ``GROW_AFTER_NS``, below what
the rate needs (``OpenAccounting.may_grow``), as on asyncio. When a connection ends
(after a GOAWAY, broken, lost), the run opens another (not an error).
"""

from __future__ import annotations

from time import monotonic_ns

import trio

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.open_rules import GROW_AFTER_NS
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
        self.takers_per_connection = spec.per_connection
        self.growing = False  # open loop: a task is growing the pool (see _grow)

    def start_closed_connection(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(_closed_connection, self)

    def start_open_connection(self, nursery: trio.Nursery, precounted: bool = False) -> None:
        nursery.start_soon(_open_connection, self, precounted)

    # -- open loop: the pool grows as the asyncio engine's does (open_rules) --
    def waits_late(self) -> bool:
        return True  # it waits for a busy stream, as in the asyncio engine's backlog

    def _takers_short(self) -> bool:
        """Are more requests waiting than the connections being opened will take?"""
        queued = self.work_send.statistics().current_buffer_used
        return queued > self.connecting * self.takers_per_connection

    def _may_open(self) -> bool:
        # Until a connect has succeeded, only the share's connections try (FirstContact).
        bound = self.pool_limit if self.contact.reached else max(self.share.connections, 1)
        return self.pool_size < min(bound, self.pool_limit)

    def _open_one(self) -> None:
        assert self.nursery is not None
        self.pool_size += 1
        self.connecting += 1  # counted now so the loop sees it; the task takes it over
        self.start_open_connection(self.nursery, True)

    def ensure_takers(self) -> None:
        """Requests wait for a free stream; the pool grows only for one that waited
        ``GROW_AFTER_NS``, below what the rate needs (``OpenAccounting.may_grow``): a
        stream comes free sooner than a connection opens, and a pool grown on every burst
        costs the generator its CPU."""
        if self.nursery is None or self.growing or self.stopping or not self._takers_short():
            return
        self.growing = True
        self.nursery.start_soon(self._grow)

    def replace_lost(self) -> None:
        """A connection ended with requests waiting: another opens for them at once, as
        the asyncio engine's ``after_lost`` does."""
        if self.nursery is not None and self._takers_short() and self._may_open():
            self._open_one()
        self.ensure_takers()

    async def _grow(self) -> None:
        try:
            while self.queued and not self.stopping and self._takers_short():
                waited = monotonic_ns() - self.queued[0]
                if waited >= GROW_AFTER_NS:
                    if self._may_open() and self.may_grow(self.pool_size, waited):
                        self._open_one()
                    waited = 0  # one connection per GROW_AFTER_NS at most
                await trio.sleep(max(GROW_AFTER_NS - waited, 0) / NS_PER_S)
        finally:
            self.growing = False


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
