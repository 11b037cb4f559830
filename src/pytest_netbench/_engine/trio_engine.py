"""The trio engine: one task per connection, same framers, same recorder, same rules.

For users whose code is trio. It is slower than the asyncio/uvloop engine (a task switch
and a ``receive_some`` per response instead of a bare protocol callback); the benchmark
states by how much. Semantics match the asyncio engine exactly, which the shared
conformance suite checks.
"""

from __future__ import annotations

import ssl
from collections import deque
from time import monotonic_ns

import trio

from pytest_netbench._engine.accounting import RunAccounting
from pytest_netbench._engine.asyncio_engine import describe_connect_error as _describe_connect_error
from pytest_netbench._engine.driver import (
    make_ssl_context,
    thread_busy_seconds,
    thread_cpu_seconds,
)
from pytest_netbench._engine.exchange import Exchange, build_exchange
from pytest_netbench._engine.precise_timer import TimerFd, open_timerfd
from pytest_netbench._engine.schedule import EARLY_SEND_NS, Schedule
from pytest_netbench._engine.share import WorkerShare
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import Recorder, WorkerOutcome

_NS = 1_000_000_000
_READ_SIZE = 256 * 1024
# A trio wake-up costs several times an asyncio one, so open-loop sends batch over a wider
# window (see schedule.EARLY_SEND_NS): at 3,000-5,000 req/s this keeps the CPU of the old
# millisecond loop timer while the corrected p50 falls from ~0.7 ms to ~0.23 ms.
_EARLY_SEND_NS = 3 * EARLY_SEND_NS


class _Slot:
    """One connection's outstanding requests: start times and (open loop) intended times."""

    __slots__ = ("broken", "intended", "keep_alive", "pending", "served")

    def __init__(self) -> None:
        self.pending: deque[int] = deque()
        self.intended: deque[int] = deque()
        self.served = 0
        self.keep_alive = True
        self.broken = ""


class TrioRun(RunAccounting):
    def __init__(self, spec: LoadSpec, share: WorkerShare, exchange: Exchange) -> None:
        measure_start_ns = share.start_at_ns + int(spec.warmup_s * _NS)
        recorder = Recorder(measure_start_ns, open_loop=share.rate is not None)
        super().__init__(spec, share, recorder)
        self.exchange = exchange
        self.slots: set[_Slot] = set()
        self.ssl_context = make_ssl_context(spec)
        self.cancel_scope = trio.CancelScope()
        self.scheduled = 0
        # (intended time, already counted as sent): see _open_scheduler
        self.work_send, self.work_recv = trio.open_memory_channel[tuple[int, bool]](float("inf"))
        self.handed_measured = 0
        self.connecting = 0
        self.draining = False
        self.scheduler_scope = trio.CancelScope()
        self.pool_size = 0
        self.pool_limit = max(share.max_connections, share.connections)
        self.nursery: trio.Nursery | None = None
        self.queued_measured = 0
        self.cpu_start = thread_cpu_seconds()
        self.busy_start = thread_busy_seconds()

    # -- completion --
    def check_finished(self) -> None:
        done_sending = self.draining or (self.budget == 0 and not self.queued_measured)
        if done_sending and self.completed >= self.recorder.sent:
            self.stop()

    def end_window(self) -> bool:
        """The deadline passed. Open loop drains (see the asyncio engine's ``end_window``):
        nothing new is sent, answers to what was sent are awaited. True while draining."""
        if self.stopping or self.draining:
            return self.draining
        self.end_ns = monotonic_ns()
        if not self.open_loop or not self.spec.drain or self.completed >= self.recorder.sent:
            self.stop()
            return False
        self.draining = True
        self.scheduler_scope.cancel()
        return True

    def ensure_takers(self) -> None:
        """Open loop: every queued request needs a connection on its way to take it.

        Connections already waiting took theirs straight from the channel (trio hands an
        item to a waiting receiver at once), so what is still buffered is matched against
        connections still connecting; the rest get new connections, up to the pool bound.
        """
        if self.nursery is None or self.draining:
            return
        queued = self.work_send.statistics().current_buffer_used
        while queued > self.connecting and self.pool_size < self.pool_limit:
            self.pool_size += 1
            self.connecting += 1  # counted now so the loop sees it; the task takes it over
            self.nursery.start_soon(_open_connection, self, True)

    def stop(self) -> None:
        """End the run; what is outstanding now is in flight (tasks unwind after this)."""
        if not self.stopping:
            self.stopping = True
            self.end_ns = self.end_ns or monotonic_ns()
            for slot in self.slots:
                times = slot.intended if self.open_loop else slot.pending
                self.in_flight += sum(1 for t in times if t >= self.measure_start_ns)
            # As in the asyncio engine, a request a connection is being opened for has
            # started: it is in flight, not unsent.
            started = min(self.queued_measured, self.connecting)
            self.recorder.sent += started
            self.in_flight += started + self.handed_measured
            self.queued_measured -= started
            self.cancel_scope.cancel()

    def fail(self, slot: _Slot, kind: str, detail: str, err_no: int | None = None) -> None:
        if self.stopping:
            # stop() already counted these as in flight; a task that wakes between stop()
            # and its cancellation (a refused connect, a reset) must not count them again.
            slot.pending.clear()
            slot.intended.clear()
            return
        times = slot.intended if self.open_loop else slot.pending
        for t in times:
            if t >= self.measure_start_ns:
                self.recorder.error(kind, detail, err_no)
                self.completed += 1
        slot.pending.clear()
        slot.intended.clear()
        self.check_finished()

    def record(self, slot: _Slot, code: int, keep_alive: bool) -> None:
        now = monotonic_ns()
        if not slot.pending:
            slot.broken = "response received with no request outstanding"
            return
        start = slot.pending.popleft()
        intended = slot.intended.popleft() if self.open_loop else start
        slot.served += 1
        slot.keep_alive = keep_alive
        if intended < self.measure_start_ns or self.stopping:
            return
        rec = self.recorder
        if self.exchange.is_http:
            rec.status_codes[code] = rec.status_codes.get(code, 0) + 1
            if code >= 400:
                rec.error("status", f"HTTP {code}")
                self.completed += 1
                return
        elif code != 0:
            rec.error("verify", "echoed bytes differ from the bytes sent")
            self.completed += 1
            return
        # From the intended send, or from the actual one if it went out early (batched).
        rec.latencies.append(now - (intended if intended < start else start))
        if self.open_loop:
            rec.uncorrected.append(now - start)
        self.completed += 1

    # -- one connection --
    async def connect(self, slot: _Slot) -> trio.abc.Stream | None:
        self.opened += 1
        self.slots.add(slot)
        self.peak = max(self.peak, len(self.slots))
        try:
            with trio.fail_after(self.spec.connect_timeout_s):
                stream: trio.abc.Stream = await trio.open_tcp_stream(
                    self.exchange.connect_host, self.exchange.connect_port
                )
                if self.ssl_context is not None:
                    tls = trio.SSLStream(stream, self.ssl_context, server_hostname=self.spec.host)
                    try:
                        await tls.do_handshake()
                    except BaseException:
                        with trio.CancelScope(shield=True):
                            await trio.aclose_forcefully(stream)
                        raise
                    stream = tls
            return stream
        except trio.TooSlowError:
            self.fail(slot, "connect", "connect failed: connect timeout")
        except (OSError, trio.BrokenResourceError) as exc:
            root = _root_cause(exc)
            err = root.errno if isinstance(root, OSError) else None
            self.fail(slot, "connect", f"connect failed: {_describe_connect_error(root)}", err)
        self.slots.discard(slot)
        return None

    async def converse(self, slot: _Slot, stream: trio.abc.Stream, next_request: _Next) -> None:
        """Send and read until the connection is done; ``next_request`` feeds more work."""
        exchange = self.exchange
        rec = self.recorder
        framer = exchange.make_framer(
            lambda code, ka: self.record(slot, code, ka),
            lambda reason: setattr(slot, "broken", reason),
        )
        try:
            for start, intended in next_request.initial(slot):
                await self._send(slot, stream, start, intended)
            while slot.pending:
                oldest = slot.pending[0]
                deadline = (oldest - monotonic_ns()) / _NS + self.spec.timeout_s
                with trio.move_on_after(max(deadline, 0)) as scope:
                    data = await stream.receive_some(_READ_SIZE)
                if scope.cancelled_caught:
                    self.fail(
                        slot, "timeout", f"no complete response within {self.spec.timeout_s}s"
                    )
                    break
                if not data:
                    framer.feed_eof()  # may complete a close-delimited response
                    if slot.pending:
                        self.fail(slot, "reset", "server closed the connection before responding")
                    self.check_finished()
                    break
                rec.bytes_read += len(data)
                done_before = slot.served
                framer.feed(data)
                if slot.broken:
                    self.fail(slot, "protocol", slot.broken)
                    break
                if slot.served > done_before:
                    self.check_finished()
                    if not slot.keep_alive:
                        if slot.pending:
                            self.fail(slot, "reset", "server closed the connection")
                        break
                    for start, intended in next_request.more(slot, slot.served - done_before):
                        await self._send(slot, stream, start, intended)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            text = str(exc.__cause__ or exc)
            self.fail(slot, "reset", f"connection reset: {text}" if text else "connection reset")
        finally:
            self.slots.discard(slot)
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)

    async def _send(self, slot: _Slot, stream: trio.abc.Stream, start: int, intended: int) -> None:
        slot.pending.append(start)
        if self.open_loop:
            slot.intended.append(intended)
        for chunk in self.exchange.chunks:
            await stream.send_all(chunk)
        self.recorder.bytes_written += self.exchange.size


def _root_cause(exc: BaseException) -> BaseException:
    """trio wraps the real connect error: in ``__cause__`` (TLS) or in an exception group
    behind "all attempts to connect ... failed"; dig out the first informative one."""
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


class _Next:
    """Closed loop: the next request starts as soon as one finishes."""

    def __init__(self, run: TrioRun, first: tuple[int, int] | None) -> None:
        self.run = run
        self.first = first

    def initial(self, slot: _Slot) -> list[tuple[int, int]]:
        out = [self.first] if self.first else []
        return out + self.more(slot, self.run.spec.pipeline - len(out))

    def more(self, slot: _Slot, count: int) -> list[tuple[int, int]]:
        run = self.run
        out: list[tuple[int, int]] = []
        for _ in range(count):
            in_use = slot.served + len(slot.pending) + len(out)
            if run.rpc and in_use >= run.rpc:
                break
            now = monotonic_ns()
            if not run.take(now):
                break
            out.append((now, now))
        return out


async def _closed_slot(run: TrioRun) -> None:
    while not run.stopping:
        now = monotonic_ns()
        if not run.take(now):
            return
        slot = _Slot()
        slot.pending.append(now)
        stream = await run.connect(slot)
        if stream is None:
            continue
        slot.pending.clear()
        await run.converse(slot, stream, _Next(run, (now, now)))


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
            if run.rpc and slot.served >= run.rpc:
                break
            intended, counted = await run.work_recv.receive()
            opened_for_it = arriving
            if arriving:
                arriving = False
                run.connecting -= 1
            if run.stopping:
                break  # the window closed first; stop() has accounted for this request
            if run.draining and not counted and not opened_for_it:
                break  # queued when the window closed: it stays unsent
            if intended >= run.measure_start_ns:
                if counted:
                    run.handed_measured -= 1
                else:
                    run.queued_measured -= 1
                    run.recorder.sent += 1
            await _one_open_exchange(run, slot, stream, (monotonic_ns(), intended))
    finally:
        if arriving:
            run.connecting -= 1
        run.pool_size -= 1
        run.slots.discard(slot)
        if not run.stopping:
            run.ensure_takers()
        if stream is not None:
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)


async def _one_open_exchange(
    run: TrioRun, slot: _Slot, stream: trio.abc.Stream, current: tuple[int, int]
) -> None:
    before = slot.served
    framer = run.exchange.make_framer(
        lambda code, ka: run.record(slot, code, ka),
        lambda reason: setattr(slot, "broken", reason),
    )
    try:
        await run._send(slot, stream, *current)
        while slot.served == before and slot.pending:
            wait = (slot.pending[0] - monotonic_ns()) / _NS + run.spec.timeout_s
            with trio.move_on_after(max(wait, 0)) as scope:
                data = await stream.receive_some(_READ_SIZE)
            if scope.cancelled_caught:
                run.fail(slot, "timeout", f"no complete response within {run.spec.timeout_s}s")
                slot.broken = "timeout"
                return
            if not data:
                framer.feed_eof()  # may complete a close-delimited response
                if slot.pending:
                    run.fail(slot, "reset", "server closed the connection before responding")
                slot.broken = slot.broken or "closed"
                run.check_finished()
                return
            run.recorder.bytes_read += len(data)
            framer.feed(data)
            if slot.broken:
                run.fail(slot, "protocol", slot.broken)
                return
        run.check_finished()
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
        run.fail(slot, "reset", f"connection reset: {exc}")
        slot.broken = "reset"


async def _open_scheduler(run: TrioRun, nursery: trio.Nursery, schedule: Schedule) -> None:
    run.nursery = nursery
    if run.spec.keepalive:
        for _ in range(run.share.connections):
            run.pool_size += 1
            nursery.start_soon(_open_connection, run)
    due = schedule.first(run.share.start_at_ns)
    timer = open_timerfd()
    try:
        with run.scheduler_scope:
            await _schedule_loop(run, schedule, due, timer)
    finally:
        if timer is not None:
            timer.close()


async def _sleep_until(due: int, timer: TimerFd | None) -> None:
    """Wake at ``due``: on a timerfd where there is one (trio's own timers wait in whole
    milliseconds, a lag the corrected latency would carry), else on trio's clock."""
    if timer is None:
        await trio.sleep(max(due - monotonic_ns(), 0) / _NS)
        return
    timer.arm_at(due)
    while True:
        await trio.lowlevel.wait_readable(timer.fd)
        if timer.consume():
            return


async def _schedule_loop(run: TrioRun, schedule: Schedule, due: int, timer: TimerFd | None) -> None:
    """Hand each due request to a connection (see ``_open_connection``) until stopped."""
    while not run.stopping:
        if due > monotonic_ns() + _EARLY_SEND_NS:
            await _sleep_until(due, timer)
        now = monotonic_ns()
        # A connection already waiting gets the request at once (trio hands it over inside
        # send_nowait), which the asyncio engine would have written there and then: count it
        # as sent now. Otherwise it waits in the queue and counts when a connection takes it.
        handed = run.work_send.statistics().tasks_waiting_receive > 0
        if due >= run.measure_start_ns:
            if run.budget is not None:
                if run.budget <= 0:
                    run.check_finished()
                    await trio.sleep_forever()
                run.budget -= 1
            run.scheduled += 1
            run.recorder.lags.append(now - due if now > due else 0)
            if handed:
                run.recorder.sent += 1
                run.handed_measured += 1
            else:
                run.queued_measured += 1
        run.work_send.send_nowait((due, handed))
        run.ensure_takers()
        due = schedule.next(due)


async def _ticker(run: TrioRun) -> None:
    await trio.sleep(max(run.measure_start_ns - monotonic_ns(), 0) / _NS)
    run.recorder.reset_window()
    run.cpu_start = thread_cpu_seconds()
    run.busy_start = thread_busy_seconds()
    next_tick = run.measure_start_ns + _NS
    while True:
        await trio.sleep(max(next_tick - monotonic_ns(), 0) / _NS)
        run.recorder.tick()
        next_tick += _NS


async def _run(spec: LoadSpec, share: WorkerShare) -> WorkerOutcome:
    run = TrioRun(spec, share, build_exchange(spec))
    await trio.sleep(max(share.start_at_ns - monotonic_ns(), 0) / _NS)
    with run.cancel_scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_ticker, run)
            if spec.duration_s is not None:
                end_at = run.measure_start_ns + int(spec.duration_s * _NS)

                async def stopper() -> None:
                    await trio.sleep(max(end_at - monotonic_ns(), 0) / _NS)
                    if run.end_window():
                        # Request timeouts end the drain; this only guards against a stuck one.
                        await trio.sleep(spec.timeout_s + 1.0)
                        run.stop()

                nursery.start_soon(stopper)
            if run.open_loop:
                assert share.rate is not None
                schedule = Schedule(
                    share.rate,
                    spec.arrival,
                    seed=share.index + 1,
                    offset_fraction=share.index / share.workers,
                )
                nursery.start_soon(_open_scheduler, run, nursery, schedule)
            else:
                for _ in range(share.connections):
                    nursery.start_soon(_closed_slot, run)
    if not run.stopping:
        run.stop()
    outcome = run.recorder.finish(
        in_flight=run.in_flight, window_end_ns=max(run.end_ns, run.measure_start_ns)
    )
    outcome.cpu_s = thread_cpu_seconds() - run.cpu_start
    outcome.busy_s = thread_busy_seconds() - run.busy_start
    outcome.connections_opened = run.opened
    outcome.connections_peak = run.peak
    outcome.loop = "trio"
    outcome.scheduled = run.scheduled
    outcome.unsent = run.queued_measured
    return outcome


def run_share_trio(spec: LoadSpec, share: WorkerShare) -> WorkerOutcome:
    outcome: WorkerOutcome = trio.run(_run, spec, share)
    return outcome
