"""The rules of a run, written once for every loop (sans-IO: no sockets, no event loop).

What counts as sent, ok, an error or in flight, how a response is recorded, when a run is
finished and what its :class:`WorkerOutcome` holds are decided here; the asyncio and trio
engines only move bytes and call these. So ``sent == ok + errors_total + in_flight`` means
the same on every loop: a request counts as sent when it starts inside the window (its
write, or the connect it needed), and a ``requests=N`` run hands out exactly N permits.
The open-loop additions (schedule, waiting requests, drain) are in ``open_rules``.

The asyncio hot paths (``Connection.on_response``, the steady states of ``fused_http``)
inline :meth:`RunAccounting.take`, :meth:`RunAccounting.record` and the mix's
:meth:`RunAccounting.record_kind` for speed and say so where they do;
``tests/engine/test_rule_copies.py`` runs real loads through each of them beside a copy of
these rules fed the same events, and requires the same counts.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from time import monotonic_ns
from typing import Protocol, cast

from pytest_netbench._engine.clocks import NS_PER_S, ThreadCost
from pytest_netbench._engine.exchange import Exchange
from pytest_netbench._engine.share import WorkerShare
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import Recorder, WorkerOutcome

_NEVER_NS = 2**63 - 1


class Outstanding(Protocol):
    """One connection's outstanding requests, oldest first: when each started, and in open
    loop when each was due (``intended``)."""

    pending: deque[int]
    intended: deque[int]


class MixOutstanding(Outstanding, Protocol):
    """A mix connection's outstanding requests, with the kind of each one written.

    ``kinds`` may be shorter than ``pending``: a request waiting for its connection to
    open has no kind yet (it is the oldest), and takes one if it fails or is cut off."""

    kinds: deque[int]


class RunAccounting:
    """Permits, completions, failures and the window of one worker's run."""

    def __init__(
        self, spec: LoadSpec, share: WorkerShare, exchange: Exchange, start_at_ns: int
    ) -> None:
        self.spec = spec
        self.share = share
        self.exchange = exchange
        self.is_http = exchange.is_http
        self.open_loop = share.rate is not None
        self.start_at_ns = start_at_ns
        self.measure_start_ns = start_at_ns + int(spec.warmup_s * NS_PER_S)
        self.deadline_ns = self.window_deadline()
        self.recorder = Recorder(
            self.measure_start_ns,
            open_loop=self.open_loop,
            bucket_ns=round(spec.timeline_resolution_s * NS_PER_S),
            request_kinds=len(exchange.mix_requests),
        )
        # A request mix: the order kinds go out in, where this worker is in it, and the
        # measured requests each kind had outstanding when the run stopped.
        self.mix = bool(exchange.mix_requests)
        self.mix_sequence = exchange.mix_sequence
        self.mix_position = 0
        self.in_flight_by_request = [0] * len(exchange.mix_requests)
        self.budget: int | None = share.requests  # measured requests left; None = by time
        self.completed = 0  # measured requests finished, ok or not
        self.in_flight = 0  # set when the run stops
        self.stopping = False
        self.draining = False  # only an open-loop run drains (see open_rules)
        self.end_ns = 0
        self.opened = 0
        self.peak = 0
        # Close after this many responses on a connection (keep-alive off means 1).
        self.rpc = spec.requests_per_connection or (0 if spec.keepalive else 1)
        self.cost = ThreadCost()

    def window_deadline(self) -> int:
        """When a duration run's window ends; for a request count, never."""
        if self.spec.duration_s is None:
            return _NEVER_NS
        return self.measure_start_ns + int(self.spec.duration_s * NS_PER_S)

    # -- the loop supplies --
    def stop(self) -> None:
        """End the run now: :meth:`stop_counting`, then the loop's own teardown."""
        raise NotImplementedError

    # -- the window --
    def open_window(self) -> None:
        """Warm-up is over: from now on bytes and the generator's CPU count."""
        self.recorder.reset_window()
        self.cost.restart()

    def close_window(self) -> bool:
        """The deadline passed: a closed-loop run stops (its stragglers are one request per
        connection, in flight). True would mean a drain began (open loop only)."""
        self.stop()
        return False

    # -- requests --
    def take(self, now: int) -> bool:
        """May one more request start at ``now``? Counts it as sent if it is measured."""
        if self.stopping:
            return False
        if now >= self.measure_start_ns:
            if self.budget is not None:
                if self.budget <= 0:
                    return False
                self.budget -= 1
            self.recorder.sent += 1
        return True

    def record(self, code: int, start: int, intended: int, now: int) -> None:
        """One complete response to a request that started at ``start`` (was due at
        ``intended``; closed loop: the same). ``code``: the HTTP status, or the TCP
        framer's 0 for a correct answer."""
        if intended < self.measure_start_ns or self.stopping:
            return  # started in warm-up, or stop() already counted it in flight
        rec = self.recorder
        if self.is_http:
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

    def next_request_kind(self, intended: int) -> int:
        """The mix's next kind of request (one due at ``intended``), counted as sent under
        that kind if it is measured (the totals counted it when it was taken)."""
        position = self.mix_position
        kind = self.mix_sequence[position]
        position += 1
        self.mix_position = 0 if position == len(self.mix_sequence) else position
        if intended >= self.measure_start_ns:
            self.recorder.by_request[kind].sent += 1
        return kind

    def record_kind(self, code: int, start: int, intended: int, now: int, kind: int) -> None:
        """:meth:`record` for a mix: the response to a request of the mix's ``kind``."""
        if intended < self.measure_start_ns or self.stopping:
            return
        rec = self.recorder
        counters = rec.by_request[kind]
        codes = counters.status_codes
        codes[code] = codes.get(code, 0) + 1
        if code >= 400:
            rec.error("status", f"HTTP {code}", request=kind)
        else:
            counters.latencies.append(now - (intended if intended < start else start))
            if self.open_loop:
                rec.uncorrected.append(now - start)
        self.completed += 1

    def _outstanding_kinds(self, requests: Outstanding) -> list[int]:
        """The kind of each outstanding request of a mix connection, oldest first; one
        still waiting for its connection takes the mix's next kind now."""
        # Only mix connections (asyncio's MixConnection) exist in a mix run: _spec keeps
        # mixes off the trio engine, whose connections keep no kinds.
        kinds = cast(MixOutstanding, requests).kinds
        times = requests.intended if self.open_loop else requests.pending
        unwritten = [self.next_request_kind(t) for t in list(times)[: len(times) - len(kinds)]]
        return unwritten + list(kinds)

    def fail_outstanding(
        self, requests: Outstanding, kind: str, detail: str, err_no: int | None = None
    ) -> None:
        """Every measured request outstanding on a connection fails as ``kind``."""
        if not self.stopping:  # after stop() they are in flight, never errors too
            rec = self.recorder
            measure = self.measure_start_ns
            times = requests.intended if self.open_loop else requests.pending
            if self.mix:
                for t, request in zip(times, self._outstanding_kinds(requests), strict=True):
                    if t >= measure:
                        rec.error(kind, detail, err_no, request)
                        self.completed += 1
            else:
                for t in times:
                    if t >= measure:
                        rec.error(kind, detail, err_no)
                        self.completed += 1
        requests.pending.clear()
        requests.intended.clear()
        if self.mix:
            cast(MixOutstanding, requests).kinds.clear()
        if not self.stopping:
            self.check_finished()

    def measured_outstanding(self, requests: Outstanding) -> int:
        measure = self.measure_start_ns
        return sum(
            1 for t in (requests.intended if self.open_loop else requests.pending) if t >= measure
        )

    def count_opened(self, live: int) -> None:
        """A connection is being opened; ``live`` connections exist with it."""
        self.opened += 1
        if live > self.peak:
            self.peak = live

    # -- the end --
    def check_finished(self) -> None:
        """A request-count run ends when every measured request has been answered."""
        if self.budget == 0 and self.completed >= self.recorder.sent:
            self.stop()

    def stop_counting(
        self, outstanding: Iterable[Outstanding], waiting: Iterable[int] = ()
    ) -> bool:
        """The run ends now: measured requests still outstanding are in flight (not errors).
        False if it had already stopped.

        Open loop: every measured request still unanswered, in flight or (``waiting``: the
        due times of requests no connection has taken yet) never sent, is recorded in the
        corrected latency at (now - its due time), a lower bound of what it would have
        taken: a stall cut short by the end stays in the percentiles instead of leaving
        them (``WorkerOutcome.lower_bound_counts``; never in ``ok`` or the timeline).
        """
        if self.stopping:
            return False
        self.stopping = True
        now = monotonic_ns()
        self.end_ns = self.end_ns or now
        outstanding = list(outstanding)
        self.in_flight += sum(self.measured_outstanding(r) for r in outstanding)
        if self.open_loop:
            measure = self.measure_start_ns
            bounds = self.recorder.lower_bounds
            for requests in outstanding:
                # From the due time, or from the send if it left early (as in record).
                for start, t in zip(requests.pending, requests.intended, strict=True):
                    if t >= measure:
                        bounds.append(now - (t if t < start else start))
            bounds.extend(max(now - t, 0) for t in waiting if t >= measure)
        if self.mix:
            measure = self.measure_start_ns
            for requests in outstanding:
                times = requests.intended if self.open_loop else requests.pending
                for t, request in zip(times, self._outstanding_kinds(requests), strict=True):
                    if t >= measure:
                        self.in_flight_by_request[request] += 1
        return True

    def finish(self, loop_name: str) -> WorkerOutcome:
        """The worker's outcome, once the run has stopped (call on the run's thread)."""
        outcome = self.recorder.finish(
            in_flight=self.in_flight,
            window_end_ns=max(self.end_ns, self.measure_start_ns),
            in_flight_by_request=self.in_flight_by_request,
        )
        outcome.cpu_s, outcome.busy_s = self.cost.spent()
        outcome.connections_opened = self.opened
        outcome.connections_peak = self.peak
        outcome.loop = loop_name
        return outcome
