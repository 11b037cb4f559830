"""One share's run on trio, whatever its protocol: the connection tasks, written once.

:class:`TrioRun` holds what every trio load shares: the run rules (``OpenAccounting``:
what counts, when the run ends), the connect (TCP, TLS, within the connect timeout:
``trio_io.connect``), the words of a failure (``fail``), the open-loop work channel and
its pool, which grows by the asyncio engine's rule, and the two tasks of one connection:

- closed loop (:meth:`TrioRun.closed_connection`): a connection at a time, each opened for
  a permit taken first; when one ends (closed, broken, after a GOAWAY) the next opens;
- open loop (:meth:`TrioRun.open_connection`): one pooled connection taking due requests
  from the work channel; when it ends with requests waiting, another opens for them.

What a connection says on its stream is its protocol's: a subclass gives the slot
(``new_slot``), serves it (``serve_closed``, ``serve_open``) and lets it go (``release``,
``close_stream``): HTTP/1.1 and WebSocket in ``trio_io.h1``, HTTP/2 in ``trio_io.h2``.
"""

from __future__ import annotations

from collections import deque
from time import monotonic_ns
from typing import Literal

import trio

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.connecting import (
    RETRY_UNREACHED_S,
    FirstContact,
    make_ssl_context,
)
from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.failures import (
    broken,
    informative_cause,
    lost_connection,
    response_timeout,
)
from pytest_netbench._engine.rules.open_rules import GROW_AFTER_NS, OpenAccounting
from pytest_netbench._engine.rules.phases import record_connect
from pytest_netbench._engine.rules.ramp import share_connection_ramp
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.trio_io.connect import CONNECT_ERRORS, failure_of, open_stream
from pytest_netbench._engine.trio_io.connect import close_stream as close_now
from pytest_netbench._engine.trio_io.slot import Slot
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.source import RequestSource

# How a connection failed what it had outstanding (see TrioRun.fail, which words each).
Failure = Literal["connect", "timeout", "closed", "protocol", "reset"]


class TrioRun(OpenAccounting):
    """One worker's run, closed or open loop (the open-loop rules stay idle in closed loop);
    a protocol's run gives the hooks at the end of the class."""

    def __init__(
        self,
        spec: LoadSpec,
        share: WorkerShare,
        exchange: Exchange,
        start_at_ns: int,
        source: RequestSource | None = None,
    ) -> None:
        super().__init__(spec, share, exchange, start_at_ns, source)
        self.slots: set[Slot] = set()
        self.recorder.count_connections = self.slots.__len__  # per timeline row
        self.ssl_context = make_ssl_context(spec)
        self.cancel_scope = trio.CancelScope()
        # (intended time, already counted as sent, late): see hand_out
        self.work_send, self.work_recv = trio.open_memory_channel[tuple[int, bool, bool]](
            float("inf")
        )
        # Due times of the requests in the work channel that no connection has taken yet:
        # handed to one waiting for it (counted as sent), or queued (waiting).
        self.handed: deque[int] = deque()
        self.queued: deque[int] = deque()
        self.connecting = 0
        self.scheduler_scope = trio.CancelScope()
        self.pool_size = 0
        self.nursery: trio.Nursery | None = None
        # Whether a connect has succeeded yet; ends a load against nothing listening.
        self.contact = FirstContact()
        # Closed loop with stages: the connection tasks follow the ramp (trio_io.engine).
        self.ramp = share_connection_ramp(spec, share)
        self.wanted = share.connections
        self.slot_tasks = 0  # connection tasks not shed
        # Open loop: the requests a connection takes at once when it opens (HTTP/2: streams).
        self.takers_per_connection = 1
        self.growing = False  # open loop: a task is growing the pool (see _grow)

    # -- a protocol's hooks --
    def new_slot(self) -> Slot:
        """A new connection's slot."""
        raise NotImplementedError

    async def serve_closed(self, slot: Slot, stream: trio.abc.Stream, now: int) -> bool:
        """Closed loop: serve a connection opened for the permit taken at ``now`` (in
        ``slot.pending``) until it is done; True when a ramp shed it."""
        raise NotImplementedError

    async def serve_open(self, slot: Slot, stream: trio.abc.Stream) -> None:
        """Open loop: serve a pooled connection from the work channel until it is done."""
        raise NotImplementedError

    def release(self, slot: Slot) -> None:
        """A connection ended: drop what it holds (before its slot leaves the run)."""

    async def close_stream(self, slot: Slot, stream: trio.abc.Stream) -> None:
        """An open-loop connection ended: what its protocol says before the close."""

    # -- the task of one connection, and its loop of reconnects --
    def start_closed_connection(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(self.closed_connection)

    def start_open_connection(self, nursery: trio.Nursery, precounted: bool = False) -> None:
        nursery.start_soon(self.open_connection, precounted)

    async def closed_connection(self) -> None:
        """Closed loop: one connection at a time, opened for a permit taken first; when it
        ends, the next opens with a new permit."""
        while not self.stopping:
            if self.shed():
                return
            now = monotonic_ns()
            if not self.take(now):
                # Refused: the budget is spent, or the feeders ran out just now (which spent
                # it), after the last answer's check: this one ends the run if all are
                # answered.
                self.check_finished()
                return
            slot = self.new_slot()
            slot.pending.append(now)
            stream = await self.connect(slot)
            if stream is None:
                continue
            try:
                shed = await self.serve_closed(slot, stream, now)
            finally:
                self.release(slot)
                self.slots.discard(slot)
                await close_now(stream)
            if shed:
                return

    async def open_connection(self, precounted: bool = False) -> None:
        """Open loop: one pooled connection taking due requests from the work channel.

        Requests wait in the channel when every connection is busy, so their corrected
        latency (from the intended time) includes that wait, as it must. Until it takes its
        first request the connection counts in ``connecting`` (``slot.arriving``): a request
        queued for it has started (it is in flight at the deadline, as in the asyncio
        engine).
        """
        slot = self.new_slot()
        slot.arriving = True
        if not precounted:
            self.connecting += 1
        stream: trio.abc.Stream | None = None
        try:
            stream = await self.connect(slot)
            if stream is None:
                return
            await self.serve_open(slot, stream)
        finally:
            if slot.arriving:
                self.connecting -= 1
            self.pool_size -= 1
            self.release(slot)
            self.slots.discard(slot)
            if not self.stopping:
                self.replace_lost()
            if stream is not None:
                await self.close_stream(slot, stream)
                await close_now(stream)

    def take_handed(self, slot: Slot, item: tuple[int, bool, bool]) -> int | None:
        """A due request the work channel gave ``slot`` (see :meth:`hand_out`): its due
        time, now counted as sent; None when the window closed first (``stop()`` has
        accounted for it)."""
        intended, counted, late = item
        if slot.arriving:
            slot.arriving = False
            self.connecting -= 1
        if self.stopping:
            return None
        if counted:
            self.handed.remove(intended)
        else:
            self.queued.remove(intended)
            self.leave_waiting(intended, late=late)
        return intended

    async def connect(self, slot: Slot) -> trio.abc.Stream | None:
        """Connect ``slot`` (TCP, TLS, then ``upgrade``); None when that failed, counted
        against what it had outstanding."""
        self.slots.add(slot)
        self.count_opened(len(self.slots))
        started = monotonic_ns()
        tcp_done = [0]
        try:
            stream = await open_stream(
                self.exchange.connect_host,
                self.exchange.connect_port,
                self.ssl_context,
                self.spec.host,
                self.spec.connect_timeout_s,
                lambda: tcp_done.__setitem__(0, monotonic_ns()),
            )
            self.contact.reached = True
            slot.opened_ns = now = monotonic_ns()
            timed = bool(slot.pending) and started >= self.measure_start_ns and not self.stopping
            if timed:
                record_connect(self.recorder, started, tcp_done[0], now)
            elif not slot.pending:
                slot.connected = (started, tcp_done[0], now)
            try:
                return await self.upgrade(slot, stream, now if timed else 0)
            except BaseException:
                # Cancelled mid-handshake (the run stopped): no task holds the stream yet.
                await close_now(stream)
                raise
        except CONNECT_ERRORS as exc:
            self.fail(slot, "connect", exc)
            if self.contact.failed(informative_cause(exc), monotonic_ns()):
                self.stop()  # nothing listens there: the run raises (see FirstContact)
        self.slots.discard(slot)
        if not self.contact.reached:
            # No connect has succeeded yet: trying again at once would only hammer a port
            # where nothing may listen (see FirstContact).
            await trio.sleep(RETRY_UNREACHED_S)
        return None

    async def upgrade(
        self, slot: Slot, stream: trio.abc.Stream, timed_from: int = 0
    ) -> trio.abc.Stream | None:
        """What a protocol does on a connected stream before its first request (a
        WebSocket's handshake); None when that failed (the stream closed, counted).
        ``timed_from``: when a connection opened for a measured request was open (its
        handshake is timed: ``rules.phases.record_upgrade``; 0: not)."""
        return stream

    def shed(self) -> bool:
        """Does the ramp want fewer connections than this share holds? Then the connection
        task asking goes (it sends nothing more, and closes once answered)."""
        if self.ramp is None or self.slot_tasks <= self.wanted:
            return False
        self.slot_tasks -= 1
        return True

    def end_window(self) -> bool:
        """The deadline passed (``close_window``); True while draining. Requests due
        inside the window that the scheduler has not handed out yet go out first."""
        if self.open_loop and not self.stopping:
            for due in self.due_by_deadline(monotonic_ns()):
                self.hand_out(due)
        if self.close_window():
            self.scheduler_scope.cancel()
        return self.draining and not self.stopping

    # -- open loop: the work channel, and a pool that grows by the asyncio engine's rule --
    def hand_out(self, due: int) -> None:
        """One due request into the work channel, by the asyncio engine's rule.

        A connection already waiting gets it at once (trio hands it over inside
        send_nowait), which the asyncio engine would have written there and then: it
        counts as sent now; so does one for which a connection opens at once
        (``opens_for_due``). Otherwise it waits in the queue and counts when a connection
        takes it, as a *late* send: it waited for a busy connection, as a request in the
        asyncio engine's backlog does.
        """
        stats = self.work_send.statistics()
        handed = stats.tasks_waiting_receive > 0 or self.opens_for_due()
        if handed:
            self.count_sent(due)
            self.handed.append(due)
        else:
            self.queue_waiting(due)
            self.queued.append(due)
        self.work_send.send_nowait((due, handed, not handed))
        self.ensure_takers()

    def _takers_short(self) -> bool:
        """Are more requests waiting than the connections being opened will take?"""
        queued = self.work_send.statistics().current_buffer_used
        return queued > self.connecting * self.takers_per_connection

    def _may_open(self) -> bool:
        # Until a connect has succeeded, only the share's connections try (FirstContact).
        bound = self.pool_limit if self.contact.reached else max(self.share.connections, 1)
        return self.pool_size < min(bound, self.pool_limit)

    def open_one(self) -> None:
        """Open one more connection of the pool, counted now so the loop sees it at once."""
        assert self.nursery is not None
        self.pool_size += 1
        self.connecting += 1  # the connection's task takes this over
        self.start_open_connection(self.nursery, True)

    def opens_for_due(self) -> bool:
        """A due request finds no free connection: is one opened for it at once (so it
        counts as sent now)? Only where connections close on their own, below the pool's
        bound, as the asyncio engine's ``_dispatch`` does (``grows_at_once``), before the
        first connect too: a target that refuses them all is given up by ``FirstContact``."""
        if self.nursery is None or not self.grows_at_once() or self.pool_size >= self.pool_limit:
            return False
        self.open_one()
        return True

    def ensure_takers(self) -> None:
        """Requests waiting for a connection: the pool grows only for one that waited
        ``GROW_AFTER_NS``, below what the rate needs (``OpenAccounting.may_grow``), one
        connection per ``GROW_AFTER_NS`` at most, as on asyncio: a busy connection comes
        free sooner than a new one opens, and a pool grown on every burst costs both
        sides. In the drain too: what is queued fell due inside the window."""
        if self.nursery is None or self.growing or self.stopping or not self._takers_short():
            return
        self.growing = True
        self.nursery.start_soon(self._grow)

    def replace_lost(self) -> None:
        """A connection ended with requests waiting: another opens for them at once, as
        the asyncio engine's ``after_lost`` does."""
        if self.nursery is not None and self._takers_short() and self._may_open():
            self.open_one()
        self.ensure_takers()

    async def _grow(self) -> None:
        try:
            while self.queued and not self.stopping and self._takers_short():
                waited = monotonic_ns() - self.queued[0]
                if waited >= GROW_AFTER_NS:
                    if self._may_open() and self.may_grow(self.pool_size, waited):
                        self.open_one()
                    waited = 0  # one connection per GROW_AFTER_NS at most
                await trio.sleep(max(GROW_AFTER_NS - waited, 0) / NS_PER_S)
        finally:
            self.growing = False

    # -- the end, and what fails --
    def stop(self) -> None:
        """End the run; what is outstanding now is in flight (tasks unwind after this)."""
        self.recorder.freeze_connections()
        if self.stop_counting(self.slots, [*self.handed, *self.queued]):
            # As in the asyncio engine, a request a connection is being opened for has
            # started: it is in flight, not unsent.
            started = min(self.waiting_measured, self.connecting)
            self.recorder.sent += started
            if self.draining:
                self.sent_after_window += started
            handed = sum(1 for due in self.handed if due >= self.measure_start_ns)
            self.in_flight += started + handed
            self.waiting_measured -= started
            self.cancel_scope.cancel()

    def fail(self, slot: Slot, failure: Failure, exc: BaseException | None = None) -> None:
        """Every measured request outstanding on ``slot`` fails (``fail_outstanding``) for
        ``failure``; the one place this engine says under which error kind, and in which
        words. ``connect``: ``exc`` is what connecting raised (trio's ``TooSlowError``: the
        connect timeout); ``timeout``: no complete response in time; ``closed``: the server
        closed, or said it would, with requests outstanding; ``protocol``: ``slot.broken``
        says why; ``reset``: ``exc`` is what the stream raised."""
        slot.ws_idle = False
        if failure == "connect":
            found = failure_of(exc)
        elif failure == "timeout":
            found = response_timeout(self.spec.timeout_s)
        elif failure == "closed":
            found = lost_connection(None)
        elif failure == "protocol":
            found = broken(slot.broken)
        else:
            found = lost_connection(exc)
        self.fail_outstanding(slot, *found)

    def on_response(self, slot: Slot, code: int, keep_alive: bool) -> None:
        now = monotonic_ns()
        if not slot.pending:
            slot.broken = "response received with no request outstanding"
            return
        start = slot.pending.popleft()
        intended = slot.intended.popleft() if self.open_loop else start
        slot.served += 1
        slot.keep_alive = keep_alive
        first, slot.first = slot.first, 0
        if self.mix:
            request_kind = slot.request_kinds.popleft()
            self.record_kind(code, start, intended, now, request_kind, first, slot.opened_ns)
        else:
            self.record(code, start, intended, now, first, slot.opened_ns)
