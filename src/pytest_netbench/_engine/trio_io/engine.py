"""The trio engine: one task per connection, same framers, same recorder, same rules.

For users whose code is trio. It is slower than the asyncio/uvloop engine (a task switch
and a ``receive_some`` per response instead of a bare protocol callback); the benchmark
states by how much. What counts and when a run ends is decided by the same run rules as
there (``accounting``, ``open_rules``), and the shared conformance suite checks both.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from time import monotonic_ns
from typing import Literal

import trio

from pytest_netbench._engine.rules.accounting import request_source
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.connecting import (
    RETRY_UNREACHED_S,
    FirstContact,
    make_ssl_context,
)
from pytest_netbench._engine.rules.exchange import Exchange, build_exchange
from pytest_netbench._engine.rules.failures import (
    broken,
    informative_cause,
    lost_connection,
    response_timeout,
    ws_handshake_invalid,
    ws_refused,
)
from pytest_netbench._engine.rules.open_rules import GROW_AFTER_NS, OpenAccounting
from pytest_netbench._engine.rules.phases import record_connect, watch_first_byte
from pytest_netbench._engine.rules.ramp import NEVER_NS, share_connection_ramp
from pytest_netbench._engine.rules.schedule import EARLY_SEND_NS
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.timerfd import TimerFd, open_timerfd
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.rules.ws_rules import (
    answer_to_front,
    close_counts,
    count_code,
    refusal_counts,
)
from pytest_netbench._engine.trio_io.connect import CONNECT_ERRORS, failure_of, open_stream
from pytest_netbench._engine.trio_io.timers import share_watcher, start_timers
from pytest_netbench._engine.trio_io.ws import (
    HandshakeEnded,
    WsTalk,
    close_websocket,
    open_websocket,
)
from pytest_netbench._engine.trio_io.ws_listen import run_listen_trio
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.framing import OnError, OnResponse
from pytest_netbench._proto.source import RequestSource
from pytest_netbench._proto.websocket import HandshakeInvalid, HandshakeRefused
from pytest_netbench._proto.ws_ids import IdMatcher
from pytest_netbench._stats.recorder import WorkerOutcome

_READ_SIZE = 256 * 1024
# A trio wake-up costs several times an asyncio one, so open-loop sends batch over a wider
# window (see schedule.EARLY_SEND_NS): at 3,000-5,000 req/s this keeps the CPU of the old
# millisecond loop timer while the corrected p50 falls from ~0.7 ms to ~0.23 ms.
_EARLY_SEND_NS = 3 * EARLY_SEND_NS

# How a connection failed what it had outstanding (see TrioRun.fail, which words each).
Failure = Literal["connect", "timeout", "closed", "protocol", "reset"]


class _Slot:
    """One connection's outstanding requests: start times, (open loop) intended times and
    (a mix) the kind of each one written."""

    __slots__ = (
        "broken",
        "connected",
        "first",
        "framer",
        "intended",
        "keep_alive",
        "kinds",
        "opened_ns",
        "pending",
        "served",
        "ws_idle",
        "ws_ids",
        "ws_leftover",
    )

    def __init__(self) -> None:
        self.pending: deque[int] = deque()
        self.intended: deque[int] = deque()
        self.kinds: deque[int] = deque()
        self.served = 0
        self.keep_alive = True
        self.broken = ""
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


class TrioRun(OpenAccounting):
    """One worker's run, closed or open loop (the open-loop rules stay idle in closed loop)."""

    def __init__(
        self,
        spec: LoadSpec,
        share: WorkerShare,
        exchange: Exchange,
        start_at_ns: int,
        source: RequestSource | None = None,
    ) -> None:
        super().__init__(spec, share, exchange, start_at_ns, source)
        self.slots: set[_Slot] = set()
        self.recorder.count_connections = self.slots.__len__  # per timeline row
        self.ssl_context = make_ssl_context(spec)
        self.cancel_scope = trio.CancelScope()
        # (intended time, already counted as sent, late): see _schedule_loop
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
        # Closed loop with stages: the connection tasks follow the ramp (see _follow_ramp).
        self.ramp = share_connection_ramp(spec, share)
        self.wanted = share.connections
        self.slot_tasks = 0  # connection tasks not shed
        # Open loop: the requests a connection takes at once when it opens (HTTP/2: streams).
        self.takers_per_connection = 1
        self.growing = False  # open loop: a task is growing the pool (see _grow)

    # The task of one connection, and its loop of reconnects (an HTTP/2 run has its own).
    def start_closed_connection(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(_closed_slot, self)

    def start_open_connection(self, nursery: trio.Nursery, precounted: bool = False) -> None:
        nursery.start_soon(_open_connection, self, precounted)

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
                _hand_out(self, due)
        if self.close_window():
            self.scheduler_scope.cancel()
        return self.draining and not self.stopping

    # -- open loop: the pool grows by the asyncio engine's rule (open_rules) --
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

    def fail(self, slot: _Slot, failure: Failure, exc: BaseException | None = None) -> None:
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

    def on_response(self, slot: _Slot, code: int, keep_alive: bool) -> None:
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
            kind = slot.kinds.popleft()
            self.record_kind(code, start, intended, now, kind, first, slot.opened_ns)
        else:
            self.record(code, start, intended, now, first, slot.opened_ns)

    # -- one connection --
    async def connect(self, slot: _Slot) -> trio.abc.Stream | None:
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
            if self.exchange.websocket is None:
                return stream
            return await self._upgrade(slot, stream, now if timed else 0)
        except CONNECT_ERRORS as exc:
            self.fail(slot, "connect", exc)
            if self.contact.failed(informative_cause(exc), monotonic_ns()):
                self.stop()  # nothing listens there: _run raises (see FirstContact)
        self.slots.discard(slot)
        if not self.contact.reached:
            # No connect has succeeded yet: trying again at once would only hammer a port
            # where nothing may listen (see FirstContact).
            await trio.sleep(RETRY_UNREACHED_S)
        return None

    async def converse(self, slot: _Slot, stream: trio.abc.Stream, next_request: _Next) -> None:
        """Send and read until the connection is done; ``next_request`` feeds more work."""
        exchange = self.exchange
        rec = self.recorder
        on_response = lambda code, ka: self.on_response(slot, code, ka)  # noqa: E731
        on_error = lambda reason: setattr(slot, "broken", reason)  # noqa: E731
        talk = self._ws_talk(slot, on_response, on_error)
        framer = talk.framer if talk is not None else exchange.make_framer(on_response, on_error)
        watch_first_byte(framer, lambda: setattr(slot, "first", monotonic_ns()))
        slot.framer = framer
        try:
            for start, intended in next_request.initial(slot):
                await self._send(slot, stream, start, intended)
            while slot.pending:
                oldest = slot.pending[0]
                deadline = (oldest - monotonic_ns()) / NS_PER_S + self.spec.timeout_s
                with trio.move_on_after(max(deadline, 0)) as scope:
                    data = await stream.receive_some(_READ_SIZE)
                if scope.cancelled_caught:
                    self.fail(slot, "timeout")
                    break
                if not data:
                    framer.feed_eof()  # may complete a close-delimited response
                    slot.ws_idle = False
                    if slot.pending:
                        self.fail(slot, "closed")
                    self.check_finished()
                    break
                rec.bytes_read += len(data)
                done_before = slot.served
                framer.feed(data)  # type: ignore[arg-type]  # bytearray from TLS works too
                if talk is not None and await self._ws_answered(slot, stream, talk):
                    break
                if slot.broken:
                    self.fail(slot, "protocol")
                    break
                if slot.served > done_before:
                    self.check_finished()
                    if not slot.keep_alive:
                        if slot.pending:
                            self.fail(slot, "closed")
                        break
                    for start, intended in next_request.more(slot, slot.served - done_before):
                        await self._send(slot, stream, start, intended)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self.fail(slot, "reset", exc)
        finally:
            if talk is not None and slot.ws_idle and talk.framer.open:
                await close_websocket(stream, talk.framer, self.spec.timeout_s)
            framer.release()  # see Framer.release
            slot.framer = None
            self.slots.discard(slot)
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)

    async def _send(self, slot: _Slot, stream: trio.abc.Stream, start: int, intended: int) -> None:
        slot.pending.append(start)
        if self.open_loop:
            slot.intended.append(intended)
        if self.source is not None:
            # Requests that vary: the next ready one (rendered here, in this thread, when
            # none is: take claimed it). The run counts their bytes from its batches.
            kind, data = self.next_request(intended)
            if self.mix:
                slot.kinds.append(kind)
            await stream.send_all(data)
            return
        websocket = self.exchange.websocket
        if websocket is not None:
            ids = slot.ws_ids
            # A fresh masking key for each message (and with answers by id, a fresh id).
            frame = websocket.frames.next_frame() if ids is None else ids.next_frame()
            slot.ws_idle = False  # a send cancelled half way leaves no clean close
            await stream.send_all(frame)
            slot.ws_idle = True
            self.recorder.bytes_written += len(frame)
            return
        for chunk in self.exchange.chunks:
            await stream.send_all(chunk)
        self.recorder.bytes_written += self.exchange.size

    # -- WebSocket (see trio_io.ws) --
    async def _upgrade(
        self, slot: _Slot, stream: trio.abc.Stream, timed_from: int = 0
    ) -> trio.abc.Stream | None:
        """A WebSocket load's opening handshake on a connected stream; None when it failed,
        counted against the message the connection was opened for (a refusal as
        ``status``, its status in ``status_codes``). ``timed_from``: when the connection
        opened for a measured message was open (its handshake is timed; 0: not)."""
        assert self.exchange.websocket is not None
        oldest = slot.pending[0] if slot.pending else monotonic_ns()
        left_s = (oldest - monotonic_ns()) / NS_PER_S + self.spec.timeout_s
        try:
            accepted = await open_websocket(
                stream, self.exchange.websocket, left_s, self.recorder, timed_from
            )
            slot.ws_leftover = accepted.leftover
            slot.ws_idle = True
            return stream
        except HandshakeRefused as refused:
            if refusal_counts(slot.pending, self.measure_start_ns, self.stopping):
                count_code(self.recorder.status_codes, refused.status)
            self.fail_outstanding(slot, *ws_refused(refused))
        except HandshakeInvalid as invalid:
            slot.broken = ws_handshake_invalid(invalid).detail
            self.fail(slot, "protocol")
        except trio.TooSlowError:
            self.fail(slot, "timeout")
        except HandshakeEnded:
            self.fail(slot, "closed")
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self.fail(slot, "reset", exc)
        self.slots.discard(slot)
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)
        return None

    def _ws_talk(self, slot: _Slot, on_response: OnResponse, on_error: OnError) -> WsTalk | None:
        """A WebSocket connection's frame reader, fed what came with the handshake."""
        if self.exchange.websocket is None:
            return None
        talk = WsTalk(
            self.exchange.websocket,
            on_response,
            on_error,
            lambda index: answer_to_front(index, slot.pending, slot.intended),
        )
        slot.ws_ids = talk.ids
        if slot.ws_leftover:
            talk.framer.feed(slot.ws_leftover)
            slot.ws_leftover = b""
        return talk

    async def _ws_answered(self, slot: _Slot, stream: trio.abc.Stream, talk: WsTalk) -> bool:
        """After a read: write the pongs (and close reply) owed; True when the server
        closed, its close failing what is outstanding as ``reset`` with the code."""
        if talk.replies:
            slot.ws_idle = False
            self.recorder.bytes_written += await talk.send_replies(stream)
            slot.ws_idle = True
        if not talk.closed:
            return False
        slot.ws_idle = False
        if close_counts(monotonic_ns(), self.measure_start_ns, self.stopping):
            count_code(self.recorder.status_codes, talk.close_code)
        self.fail_outstanding(slot, "reset", talk.closed)
        return True


class _Next:
    """Closed loop: the next request starts as soon as one finishes."""

    def __init__(self, run: TrioRun, first: tuple[int, int] | None) -> None:
        self.run = run
        self.first = first
        self.shed = False  # a ramp shed this connection: it sends nothing more

    # Both hand out one request at a time, taken only when the one before it is written
    # (the caller sends each before asking for the next): a permit taken ahead of its write
    # would count as sent, yet be in no connection's outstanding requests if the run
    # stopped during that write, and in flight nowhere.
    def initial(self, slot: _Slot) -> Iterator[tuple[int, int]]:
        if self.first:
            yield self.first
        yield from self.more(slot, self.run.spec.pipeline - bool(self.first))

    def more(self, slot: _Slot, count: int) -> Iterator[tuple[int, int]]:
        run = self.run
        if self.shed or run.shed():
            self.shed = True
            return
        for _ in range(count):
            if run.closes_after and slot.served + len(slot.pending) >= run.closes_after:
                return
            now = monotonic_ns()
            if not run.take(now):
                return
            yield now, now


async def _closed_slot(run: TrioRun) -> None:
    while not run.stopping:
        if run.shed():
            return
        now = monotonic_ns()
        if not run.take(now):
            # Refused: the budget is spent, or the feeders ran out just now (which spent it),
            # after the last answer's check: this one ends the run if all are answered.
            run.check_finished()
            return
        slot = _Slot()
        slot.pending.append(now)
        stream = await run.connect(slot)
        if stream is None:
            continue
        slot.pending.clear()
        following = _Next(run, (now, now))
        await run.converse(slot, stream, following)
        if following.shed:
            return


async def _follow_ramp(run: TrioRun, nursery: trio.Nursery) -> None:
    """Closed loop with stages: start a connection task for each one the ramp adds; those
    it removes leave by themselves (``TrioRun.shed``) once their requests are answered."""
    ramp = run.ramp
    assert ramp is not None
    counted_at = run.start_at_ns
    run.wanted = ramp.start(counted_at)
    while not run.stopping:
        while run.slot_tasks < run.wanted:
            run.slot_tasks += 1
            run.start_closed_connection(nursery)
        # From the instant the count was read: a change since then is due at once.
        due = ramp.next_change(counted_at)
        if due == NEVER_NS:
            return
        await trio.sleep(max(due - monotonic_ns(), 0) / NS_PER_S)
        counted_at = monotonic_ns()
        run.wanted = ramp.count_at(counted_at)


async def _open_connection(run: TrioRun, precounted: bool = False) -> None:
    """Open loop: one pooled connection taking due requests from the shared work channel.

    Requests wait in the channel when every connection is busy, so their corrected latency
    (from the intended time) includes that wait, as it must. Until it takes its first
    request the connection counts in ``run.connecting``: a request queued for it has
    started (it is in flight at the deadline, as in the asyncio engine).
    """
    slot = _Slot()
    arriving = True
    if not precounted:
        run.connecting += 1
    stream: trio.abc.Stream | None = None
    try:
        stream = await run.connect(slot)
        if stream is None:
            return
        run.slots.add(slot)
        while not run.stopping and not slot.broken and slot.keep_alive:
            if run.closes_after and slot.served >= run.closes_after:
                break
            intended, counted, late = await run.work_recv.receive()
            if arriving:
                arriving = False
                run.connecting -= 1
            if run.stopping:
                break  # the window closed first; stop() has accounted for this request
            if slot.connected is not None:  # its first request: the connect was for it
                started, tcp_up, opened = slot.connected
                slot.connected = None
                if started >= run.measure_start_ns:
                    record_connect(run.recorder, started, tcp_up, opened)
            if counted:
                run.handed.remove(intended)
            else:
                run.queued.remove(intended)
                run.leave_waiting(intended, late=late)
            await _one_open_exchange(run, slot, stream, (monotonic_ns(), intended))
    finally:
        if arriving:
            run.connecting -= 1
        run.pool_size -= 1
        run.slots.discard(slot)
        if not run.stopping:
            run.replace_lost()
        if stream is not None:
            websocket = run.exchange.websocket
            if websocket is not None and slot.ws_idle:
                await close_websocket(stream, websocket.silent_framer(), run.spec.timeout_s)
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)


async def _one_open_exchange(
    run: TrioRun, slot: _Slot, stream: trio.abc.Stream, current: tuple[int, int]
) -> None:
    before = slot.served
    on_response = lambda code, ka: run.on_response(slot, code, ka)  # noqa: E731
    on_error = lambda reason: setattr(slot, "broken", reason)  # noqa: E731
    talk = run._ws_talk(slot, on_response, on_error)
    framer = talk.framer if talk is not None else run.exchange.make_framer(on_response, on_error)
    watch_first_byte(framer, lambda: setattr(slot, "first", monotonic_ns()))
    slot.framer = framer
    try:
        await run._send(slot, stream, *current)
        while slot.served == before and slot.pending:
            wait = (slot.pending[0] - monotonic_ns()) / NS_PER_S + run.spec.timeout_s
            with trio.move_on_after(max(wait, 0)) as scope:
                data = await stream.receive_some(_READ_SIZE)
            if scope.cancelled_caught:
                run.fail(slot, "timeout")
                slot.broken = "timeout"
                return
            if not data:
                framer.feed_eof()  # may complete a close-delimited response
                if slot.pending:
                    run.fail(slot, "closed")
                slot.broken = slot.broken or "closed"
                run.check_finished()
                return
            run.recorder.bytes_read += len(data)
            framer.feed(data)  # type: ignore[arg-type]  # bytearray from TLS works too
            if talk is not None and await run._ws_answered(slot, stream, talk):
                slot.broken = slot.broken or "closed"
                return
            if slot.broken:
                run.fail(slot, "protocol")
                return
        run.check_finished()
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
        run.fail(slot, "reset", exc)
        slot.broken = "reset"


async def _open_scheduler(run: TrioRun, nursery: trio.Nursery) -> None:
    run.nursery = nursery
    if run.spec.keepalive:
        for _ in range(run.share.connections):
            run.pool_size += 1
            run.start_open_connection(nursery)
    timer = open_timerfd()
    try:
        with run.scheduler_scope:
            await _schedule_loop(run, timer)
    finally:
        if timer is not None:
            timer.close()


async def _sleep_until(due: int, timer: TimerFd | None) -> None:
    """Wake at ``due``: on a timerfd where there is one (trio's own timers wait in whole
    milliseconds, a lag the corrected latency would carry), else on trio's clock."""
    if timer is None:
        await trio.sleep(max(due - monotonic_ns(), 0) / NS_PER_S)
        return
    timer.arm_at(due)
    while True:
        await trio.lowlevel.wait_readable(timer.fd)
        if timer.consume():
            return


async def _schedule_loop(run: TrioRun, timer: TimerFd | None) -> None:
    """Hand each due request to a connection (see ``_open_connection``) until the window
    closes (a wake-up under way then finds nothing due: see ``collect_due``)."""
    while not (run.stopping or run.draining):
        if run.next_due == NEVER_NS:
            await trio.sleep_forever()  # a ramp that holds no more requests
        if run.next_due > monotonic_ns() + _EARLY_SEND_NS:
            await _sleep_until(run.next_due, timer)
        now = monotonic_ns()
        for due in run.collect_due(now, now + _EARLY_SEND_NS):
            _hand_out(run, due)
        if run.schedule_done:
            run.check_finished()
            await trio.sleep_forever()


def _hand_out(run: TrioRun, due: int) -> None:
    """One due request into the work channel, by the asyncio engine's rule.

    A connection already waiting gets it at once (trio hands it over inside send_nowait),
    which the asyncio engine would have written there and then: it counts as sent now; so
    does one for which a connection opens at once (``opens_for_due``). Otherwise it waits
    in the queue and counts when a connection takes it, as a *late* send: it waited for a
    busy connection, as a request in the asyncio engine's backlog does.
    """
    stats = run.work_send.statistics()
    handed = stats.tasks_waiting_receive > 0 or run.opens_for_due()
    if handed:
        run.count_sent(due)
        run.handed.append(due)
    else:
        run.queue_waiting(due)
        run.queued.append(due)
    run.work_send.send_nowait((due, handed, not handed))
    run.ensure_takers()


async def _run(
    spec: LoadSpec,
    share: WorkerShare,
    released_ns: int,
    watch: ShareWatch | None,
    run_class: type[TrioRun],
) -> WorkerOutcome:
    if spec.listen:  # held WebSocket connections (see trio_io.ws_listen)
        return await run_listen_trio(spec, share, released_ns, watch)
    start_at = share.start_at(released_ns)
    exchange = build_exchange(spec)
    source = request_source(spec, share)  # before the start: a shuffled file is indexed
    try:
        await trio.sleep(max(start_at - monotonic_ns(), 0) / NS_PER_S)
        return await _run_from(run_class(spec, share, exchange, start_at, source), watch)
    finally:
        if source is not None:
            source.close()


async def _run_from(run: TrioRun, watch: ShareWatch | None) -> WorkerOutcome:
    spec = run.spec
    watcher = share_watcher(run, watch)
    with run.cancel_scope:
        async with trio.open_nursery() as nursery:
            start_timers(nursery, run, watcher)
            if spec.duration_s is not None:
                end_at = run.measure_start_ns + int(spec.duration_s * NS_PER_S)

                async def stopper() -> None:
                    await trio.sleep(max(end_at - monotonic_ns(), 0) / NS_PER_S)
                    if run.end_window():
                        # Request timeouts end the drain; this only guards against a stuck one.
                        await trio.sleep(spec.timeout_s + 1.0)
                        run.stop()

                nursery.start_soon(stopper)
            if run.open_loop:
                nursery.start_soon(_open_scheduler, run, nursery)
            elif run.ramp is not None:
                nursery.start_soon(_follow_ramp, run, nursery)
            else:
                for _ in range(run.share.connections):
                    run.start_closed_connection(nursery)
    if not run.stopping:
        run.stop()
    if run.contact.gave_up:
        raise run.contact.error(spec)
    if run.source_failure is not None:
        raise run.source_failure  # on_end="error" ran out, or a row renders no request
    return run.finish("trio")


def run_share_trio(
    spec: LoadSpec,
    share: WorkerShare,
    released_ns: int,
    watch: ShareWatch | None = None,
    run_class: type[TrioRun] = TrioRun,
) -> WorkerOutcome:
    """Run one share on a fresh trio loop; ``run_class``: the run of its protocol (an
    HTTP/2 load's is ``trio_io.h2.H2TrioRun``)."""
    outcome: WorkerOutcome = trio.run(_run, spec, share, released_ns, watch, run_class)
    return outcome
