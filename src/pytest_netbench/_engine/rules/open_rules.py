"""The open-loop rules, on top of :class:`RunAccounting` (sans-IO, like it).

Requests fall due on a :class:`Schedule`; each due one either leaves at once (a free
connection, or a new one opened for it) or waits for a connection to come free. A request
sent after waiting is a *late send* (``generator.late_sends``); one still waiting when the
run ends was never sent (``generator.unsent``). Latency is charged from the due time
either way. After the deadline the run drains: nothing new falls due, but every request
that fell due inside the window is carried through, those still waiting for a connection
sent when one comes free (late, ``generator.sent_after_window``), and every answer is
awaited (see :meth:`OpenAccounting.close_window`). Whatever is still unanswered when the
run stops (no drain, a drain cut short, a run interrupted) counts in the corrected latency
at least as (stop - due time), a lower bound (``RunAccounting.stop_counting``).

With keep-alive connections that stay open (no per-connection request limit), a waiting
request gets a connection of its own only once it has waited ``GROW_AFTER_NS`` (see
:meth:`OpenAccounting.grows_at_once`), and then only while the pool is smaller than the
rate needs by Little's law (:meth:`OpenAccounting.pool_wanted`), one connection a
millisecond at most: a busy connection usually
comes free sooner than a new one opens, and a pool grown on every stall of the server's
costs both sides for the rest of the run (against a Go server near its limit, a pool
grown to 1,024 connections tipped both into saturation where 30 held the rate). The
median is used because it moves only when most answers are slow: a server that stalls
now and then keeps its pool, and the requests that fall due in a stall wait in the
generator, their wait charged to the corrected latency (``connections=`` sets a larger
pool from the start, for a server that should see that concurrency).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from time import monotonic_ns

from pytest_netbench._engine.rules.accounting import RunAccounting
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.schedule import ArrivalSchedule, share_schedule
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.source import RequestSource
from pytest_netbench._stats.recorder import WorkerOutcome

# How long a request waits for a busy keep-alive connection before one is opened for it:
# about ten loopback connects, and no longer than a LAN round trip or two.
GROW_AFTER_NS = 1_000_000
# Before any answer says what the rate needs, only a wait this long grows the pool.
GROW_BLIND_AFTER_NS = 10_000_000
# Little's law with headroom: connections in use = rate x response time; the pool may grow
# to this many times that, with the median of the latest answers as the response time.
POOL_HEADROOM = 4.0
RECENT_ANSWERS = 255


class OpenAccounting(RunAccounting):
    """Schedule, waiting requests and drain; inert for a closed-loop share (no schedule,
    nothing ever waits), so one run class may serve both."""

    def __init__(
        self,
        spec: LoadSpec,
        share: WorkerShare,
        exchange: Exchange,
        start_at_ns: int,
        source: RequestSource | None = None,
    ) -> None:
        super().__init__(spec, share, exchange, start_at_ns, source)
        self.schedule: ArrivalSchedule | None = None
        self.next_due = 0  # intended time of the next request to fall due
        if share.rate is not None:
            self.schedule = share_schedule(share, spec.arrival, spec.ramp)
            self.next_due = self.schedule.first(start_at_ns)
        self.schedule_done = False  # the request budget is spent: nothing more falls due
        self.scheduled = 0  # measured requests that fell due
        self.waiting_measured = 0  # measured requests due but not sent yet
        self.late_sends = 0
        self.sent_after_window = 0  # measured requests that left the backlog in the drain
        # The most connections at once: the share of the pool bound, never below the
        # connections the run opens up front.
        self.pool_limit = max(share.max_connections, share.connections)
        self._pool_wanted: int | None = None  # see pool_wanted

    def grows_at_once(self) -> bool:
        """Does a request that finds every connection busy get a new one at once? Only
        when connections close on their own (keep-alive off, or a request limit per
        connection); otherwise it waits up to ``GROW_AFTER_NS`` for one to come free."""
        return self.closes_after != 0

    def pool_wanted(self) -> int | None:
        """The most connections the rate needs, by the latest answers (``POOL_HEADROOM``
        times rate x median response time); the last such figure while too few answers
        have come since the timeline took the samples; None before any measured answer
        (those of the warm-up, slow while both sides start, would overstate it)."""
        recent = self.recorder.uncorrected[-RECENT_ANSWERS:]
        if len(recent) >= 16 and self.schedule is not None:
            median_ns = sorted(recent)[len(recent) // 2]
            rate = self.schedule.rate_at(monotonic_ns())  # a ramp's rate now
            self._pool_wanted = math.ceil(POOL_HEADROOM * rate * median_ns / NS_PER_S)
        return self._pool_wanted

    def may_grow(self, pool: int, waited_ns: int) -> bool:
        """May a keep-alive pool of ``pool`` connections grow for a request that has
        waited ``waited_ns``? After ``GROW_AFTER_NS``, below what the rate needs; with
        nothing to judge the need by yet, only once the wait is a stall."""
        if pool >= self.pool_limit or waited_ns < GROW_AFTER_NS:
            return False
        wanted = self.pool_wanted()
        if wanted is None:
            return waited_ns >= GROW_BLIND_AFTER_NS
        return pool < max(wanted, self.share.connections)

    def due_by_deadline(self, now: int) -> list[int]:
        """At the deadline: the due times of requests that fell due inside the window but
        no wake-up collected (the deadline's timer ran first). The loop sends each or lets
        it wait, as any due request, before the window closes: it was scheduled inside the
        window, so it counts (:meth:`collect_due`)."""
        return self.collect_due(now, self.deadline_ns - 1)

    def collect_due(self, now: int, horizon: int) -> list[int]:
        """The due times of the requests falling due by ``horizon``, oldest first.

        Counts the measured ones (``scheduled``, their send lag) against the request budget,
        and claims each one's request if they vary; when the budget is spent (or the
        requests have run out), ``schedule_done`` is set and nothing more falls due. One call per
        wake-up, not per request: the loop then sends each or lets it wait. Nothing falls
        due once the window has closed (a wake-up that was under way then gets nothing).
        """
        schedule = self.schedule
        if schedule is None or self.schedule_done or self.draining or self.stopping:
            return []
        due_times: list[int] = []
        due = self.next_due
        measure = self.measure_start_ns
        lags = self.recorder.lags
        while due <= horizon:
            measured = due >= measure
            if measured and self.budget is not None and self.budget <= 0:
                self.schedule_done = True
                break
            if self.source is not None and not self.claim():
                self.schedule_done = True  # the feeders ran out: nothing more falls due
                break
            if measured:
                if self.budget is not None:
                    self.budget -= 1
                self.scheduled += 1
                lags.append(now - due if now > due else 0)
            due_times.append(due)
            due = schedule.next(due)
        self.next_due = due
        if self.stopping:
            return []  # the source failed while rendering (see claim): the load raises
        return due_times

    def count_sent(self, intended: int) -> None:
        """A due request leaves at once (or a connection is opened for it)."""
        if intended >= self.measure_start_ns:
            self.recorder.sent += 1

    def count_all_sent(self, due_times: list[int]) -> None:
        """:meth:`count_sent` for each of one wake-up's ``due_times`` (oldest first, as
        :meth:`collect_due` gives them), all of which left at once."""
        if due_times:
            self.recorder.sent += len(due_times) - bisect_left(due_times, self.measure_start_ns)

    def queue_waiting(self, intended: int) -> None:
        """A due request found no connection to take it: it waits, unsent."""
        if intended >= self.measure_start_ns:
            self.waiting_measured += 1

    def leave_waiting(self, intended: int, *, late: bool) -> None:
        """A waiting request leaves. ``late``: it waited for a busy connection to come free
        (or for a closed one to be replaced), rather than for one opened for it at once."""
        if intended >= self.measure_start_ns:
            self.waiting_measured -= 1
            self.recorder.sent += 1
            self.recorder.waited_for_connection += 1
            if self.draining:
                self.sent_after_window += 1
        if late:
            self.late_sends += 1

    def check_finished(self) -> None:
        done_sending = (self.draining or self.budget == 0) and not self.waiting_measured
        if done_sending and self.completed >= self.recorder.sent:
            self.stop()

    def close_window(self) -> bool:
        """The deadline passed. Open loop drains: the requests still out at the deadline,
        and those still waiting for a connection (due while a stalled server held every
        connection), are the slowest, and dropping them would bias the corrected
        percentiles low, as wrk2's are. So nothing new falls due, the waiting requests
        leave as connections come free (:meth:`leave_waiting`), and the run ends when every
        measured request has been answered or failed; the request timeout bounds the
        drain. Returns True when a drain begins; otherwise the run has stopped."""
        if self.stopping or self.draining:
            return False
        self.end_ns = monotonic_ns()
        settled = self.completed >= self.recorder.sent and not self.waiting_measured
        if not self.open_loop or not self.spec.drain or settled:
            self.stop()
            return False
        self.draining = True
        return True

    def finish(self, loop_name: str) -> WorkerOutcome:
        outcome = super().finish(loop_name)
        outcome.scheduled = self.scheduled
        outcome.unsent = self.waiting_measured
        outcome.late_sends = self.late_sends
        outcome.sent_after_window = self.sent_after_window
        return outcome
