"""The rules of a run, written once for every loop (sans-IO: no sockets, no event loop).

What counts as sent, ok, an error or in flight, how a response is recorded, when a run is
finished and what its :class:`WorkerOutcome` holds are decided here; the asyncio and trio
engines only move bytes and call these. So ``sent == ok + errors_total + in_flight`` means
the same on every loop: a request counts as sent when it starts inside the window (its
write, or the connect it needed), and a ``requests=N`` run hands out exactly N permits.
The open-loop additions (schedule, waiting requests, drain) are in ``open_rules``.

A load whose requests vary (a mix, or templates filled from feeders) takes them from its
share's :class:`RequestSource`, a batch at a time, into ``ready``: every permit
(:meth:`RunAccounting.take`, and the open loop's due requests) first *claims* one rendered
request (:meth:`RunAccounting.claim`), and the write that follows, now or once its
connection is open, pops it (:meth:`RunAccounting.next_request`). A source that has run
out (feeders with ``on_end="stop"``) ends the load as a spent request budget does.

The asyncio hot paths (``Connection.on_response``, the steady states of ``fused_http``)
inline :meth:`RunAccounting.take`, :meth:`RunAccounting.record`, :meth:`RunAccounting.claim`
and the mix's :meth:`RunAccounting.record_kind` for speed and say so where they do, as
HTTP/2's steady state does :meth:`RunAccounting.record` (``H2Streams._on_response``);
``tests/engine/test_rule_copies.py`` runs real loads through each of them beside a copy of
these rules fed the same events, and requires the same counts.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from time import monotonic_ns
from typing import TYPE_CHECKING, Protocol, cast

from pytest_netbench._engine.rules.clocks import NS_PER_S, ThreadCost
from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.phases import record_phases
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._errors import NetbenchError
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.checks import CHECK_BASE, split_code
from pytest_netbench._proto.source import RequestSource
from pytest_netbench._stats.recorder import Recorder, WorkerOutcome
from pytest_netbench._stats.streams import StreamSamples

if TYPE_CHECKING:  # a streaming load's rules, imported by a streaming load only (issue 35)
    from pytest_netbench._engine.rules.streams import StreamRules

_NEVER_NS = 2**63 - 1
# Requests that vary are rendered this many at a time: few at first, so a short load
# renders little it never sends, then more, so a batch's fixed cost is spread thin; never
# more than a request budget has left (a file sized to the load must not run out early).
_FIRST_BATCH = 64
_MOST_BATCH = 1024


def request_source(spec: LoadSpec, share: WorkerShare) -> RequestSource | None:
    """The share's source of requests when they vary (a mix, or feeders); None when the
    load sends one fixed request (the exchange's ``chunks``). Built before the share's
    start: indexing a shuffled file takes a while."""
    if spec.kind != "http" or not (spec.mix or spec.feeders):
        return None
    return RequestSource(spec, share.index, share.workers)


class Outstanding(Protocol):
    """One connection's outstanding requests, oldest first: when each started, and in open
    loop when each was due (``intended``)."""

    pending: deque[int]
    intended: deque[int]


class MixOutstanding(Outstanding, Protocol):
    """A mix connection's outstanding requests, with the kind of each one written.

    ``request_kinds`` may be shorter than ``pending``: a request waiting for its connection to
    open has no kind yet (it is the oldest), and takes one if it fails or is cut off."""

    request_kinds: deque[int]


class RunAccounting:
    """Permits, completions, failures and the window of one worker's run."""

    # Its own attributes in slots, each loop's run's in its __dict__: CPython 3.11
    # specializes reading an object's dict attributes only up to 29 of them, and an asyncio
    # ClosedRun had 54, so each run.budget and run.stopping a connection read per response
    # was a dict lookup (issue 35). A slot's read is specialized (LOAD_ATTR_SLOT).
    __slots__ = (
        "__dict__",
        "_batch",
        "budget",
        "bytes_before_window",
        "closes_after",
        "completed",
        "cost",
        "deadline_ns",
        "draining",
        "end_ns",
        "exchange",
        "in_flight",
        "in_flight_by_request",
        "is_http",
        "measure_start_ns",
        "mix",
        "open_loop",
        "opened",
        "peak",
        "push_streams",
        "ready",
        "ready_request_kinds",
        "recorder",
        "rendered_bytes",
        "share",
        "source",
        "source_failure",
        "source_ran_out",
        "spare",
        "spec",
        "start_at_ns",
        "stopping",
        "streams",
        "unwritten_bytes",
        "verify_words",
    )

    def __init__(
        self,
        spec: LoadSpec,
        share: WorkerShare,
        exchange: Exchange,
        start_at_ns: int,
        source: RequestSource | None = None,
    ) -> None:
        self.spec = spec
        self.share = share
        self.exchange = exchange
        self.is_http = exchange.is_http
        self.open_loop = share.rate is not None
        self.verify_words = _verify_words(spec)
        self.start_at_ns = start_at_ns
        self.measure_start_ns = start_at_ns + int(spec.warmup_s * NS_PER_S)
        self.deadline_ns = self.window_deadline()
        self.recorder = Recorder(
            self.measure_start_ns,
            open_loop=self.open_loop,
            bucket_ns=round(spec.timeline_resolution_s * NS_PER_S),
            request_kinds=len(spec.mix),
            checks=len(exchange.checks.checks) if exchange.checks is not None else 0,
        )
        # A request mix: the measured requests each kind had outstanding when it stopped.
        self.mix = bool(spec.mix)
        self.in_flight_by_request = [0] * len(spec.mix)
        # Requests that vary (see the module doc): rendered ones not yet written (and their
        # kinds, in a mix), and how many of them no permit has claimed yet.
        self.source = source if source is not None else request_source(spec, share)
        self.ready: deque[bytes] = deque()
        self.ready_request_kinds: deque[int] = deque()
        self.spare = 0
        self._batch = _FIRST_BATCH
        # Bytes of requests that vary are counted from the batches, not per write (see
        # written_bytes): all rendered, those written before the window, those never written.
        self.rendered_bytes = 0
        self.bytes_before_window = 0
        self.unwritten_bytes = 0
        self.source_ran_out = False  # feeders with on_end="stop": the load ended there
        # What stopped the source with an error (on_end="error", a row that cannot be
        # sent): the load raises it once the run has stopped.
        self.source_failure: NetbenchError | None = None
        self.budget: int | None = share.requests  # measured requests left; None = by time
        self.completed = 0  # measured requests finished, ok or not
        self.in_flight = 0  # set when the run stops
        self.stopping = False
        self.draining = False  # only an open-loop run drains (see open_rules)
        self.end_ns = 0
        self.opened = 0
        self.peak = 0
        # Close after this many responses on a connection (keep-alive off means 1).
        self.closes_after = spec.requests_per_connection or (0 if spec.keepalive else 1)
        self.cost = ThreadCost()
        # A streaming load (``stream=``): each stream's events recorded (see rules/streams).
        self.streams: StreamRules | None = None
        if exchange.stream is not None:
            from pytest_netbench._engine.rules.streams import StreamRules

            self.streams = StreamRules(exchange.stream, self.recorder)
        # A listen load's held connections as streams of pushes (see rules/listen_rules).
        self.push_streams: StreamSamples | None = None

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
        self.bytes_before_window = self.handed_out_bytes()
        self.cost.restart()

    def close_window(self) -> bool:
        """The deadline passed: a closed-loop run stops (its stragglers are one request per
        connection, in flight). True would mean a drain began (open loop only)."""
        self.stop()
        return False

    # -- requests --
    def take(self, now: int) -> bool:
        """May one more request start at ``now``? Counts it as sent if it is measured;
        claims its request if they vary (none left: no)."""
        if self.stopping:
            return False
        if now >= self.measure_start_ns:
            if self.budget is not None and self.budget <= 0:
                return False
            if self.source is not None and not self.claim():
                return False
            if self.budget is not None:
                self.budget -= 1
            self.recorder.sent += 1
        elif self.source is not None:
            return self.claim()
        return True

    def take_many(self, now: int, count: int) -> int:
        """:meth:`take` up to ``count`` times at ``now`` (HTTP/2: the streams that ended in
        one read each free a request): how many it allowed, stopping at the first refusal."""
        if self.stopping or count <= 0:
            return 0
        if self.source is not None:  # each claims its own rendered request
            taken = 0
            while taken < count and self.take(now):
                taken += 1
            return taken
        if now >= self.measure_start_ns:
            budget = self.budget
            if budget is not None:
                count = min(count, max(budget, 0))
                self.budget = budget - count
            self.recorder.sent += count
        return count

    # -- requests that vary --
    def claim(self) -> bool:
        """Set one rendered request aside for a request that starts now (rendering the
        next batch if none is spare); False once the source has run out."""
        if not self.spare and not self._refill():
            return False
        self.spare -= 1
        return True

    def _refill(self) -> bool:
        """Render the next batch into ``ready``. A source that has run out ends the load
        as a spent budget does (``check_finished``); one that fails stops it at once."""
        source = self.source
        assert source is not None
        size = self._batch
        if self.budget is not None:
            size = min(size, max(self.budget, 1))
        self._batch = min(self._batch * 2, _MOST_BATCH)
        try:
            kinds, data = source.take(size)
        except NetbenchError as exc:  # FeederExhausted; a row that renders no request
            self.source_failure = exc
            self.budget = 0
            self.stop()
            return False
        if not data:
            self.source_ran_out = True
            self.budget = 0
            return False
        self.ready.extend(data)
        if self.mix:
            self.ready_request_kinds.extend(kinds)
        self.spare += len(data)
        self.rendered_bytes += sum(map(len, data))
        return True

    def next_request(self, intended: int) -> tuple[int, bytes]:
        """The next rendered request, one a permit has claimed: its kind (0 outside a
        mix) and bytes. A mix counts it as sent under its kind if it is measured (the
        totals counted it when it was taken)."""
        data = self.ready.popleft()
        if not self.mix:
            return 0, data
        kind = self.ready_request_kinds.popleft()
        if intended >= self.measure_start_ns:
            self.recorder.by_request[kind].sent += 1
        return kind, data

    def handed_out_bytes(self) -> int:
        """Bytes of the requests taken out of ``ready`` so far (0 for a fixed request)."""
        return self.rendered_bytes - sum(map(len, self.ready)) if self.source else 0

    def record(
        self, code: int, start: int, intended: int, now: int, first: int = -1, opened: int = 0
    ) -> None:
        """One complete response to a request that started at ``start`` (was due at
        ``intended``; closed loop: the same). ``code``: the HTTP status, or the TCP
        framer's 0 for a correct answer. ``first``, ``opened``: when its first byte was
        parsed (0: in the read that completed it) and its connection was open, for its
        phases (``phases.record_phases``); ``first`` -1: none recorded, it came whole in
        one read (``recorder.fold_phases``)."""
        if intended < self.measure_start_ns or self.stopping:
            return  # started in warm-up, or stop() already counted it in flight
        rec = self.recorder
        if self.is_http:
            if code >= CHECK_BASE:  # a response that failed checks (see _proto.checks)
                self._record_checked(code, start, intended, now, -1)
                return
            rec.status_codes[code] = rec.status_codes.get(code, 0) + 1
            problem = ""
            if self.streams is not None:
                base = intended if intended < start else start
                problem = self.streams.finished(code, base, now)
            if code >= 400:
                rec.error("status", problem or f"HTTP {code}")
                self.completed += 1
                return
            if problem:
                rec.error("verify", problem)
                self.completed += 1
                return
        elif code != 0:
            rec.error("verify", self.verify_words)
            self.completed += 1
            return
        # From the intended send, or from the actual one if it went out early (batched).
        rec.latencies.append(now - (intended if intended < start else start))
        if self.open_loop:
            rec.uncorrected.append(now - start)
        if first >= 0:
            record_phases(rec.phases, start, opened, first, now)
        self.completed += 1

    def record_kind(
        self,
        code: int,
        start: int,
        intended: int,
        now: int,
        request_kind: int,
        first: int = 0,
        opened: int = 0,
    ) -> None:
        """:meth:`record` for a mix: the response to a request of the mix's
        ``request_kind``. Its phases are always recorded (``first`` 0: in one read)."""
        if intended < self.measure_start_ns or self.stopping:
            return
        if code >= CHECK_BASE:
            self._record_checked(code, start, intended, now, request_kind)
            return
        rec = self.recorder
        counters = rec.by_request[request_kind]
        codes = counters.status_codes
        codes[code] = codes.get(code, 0) + 1
        if code >= 400:
            rec.error("status", f"HTTP {code}", request_kind=request_kind)
        else:
            counters.latencies.append(now - (intended if intended < start else start))
            if self.open_loop:
                rec.uncorrected.append(now - start)
            record_phases(counters.phases, start, opened, first, now)
        self.completed += 1

    def _record_checked(
        self, code: int, start: int, intended: int, now: int, request_kind: int
    ) -> None:
        """A measured response that failed checks: each check that applies to its kind
        counts a failure; then a ``verify`` error of the first (a status >= 400 stays a
        ``status`` error), or, if none of them applies, the response as it is."""
        status, failed = split_code(code)
        masks = self.exchange.check_masks
        failed &= masks[request_kind] if request_kind >= 0 else masks[0]
        if not failed:
            if request_kind >= 0:
                self.record_kind(status, start, intended, now, request_kind)
            else:
                self.record(status, start, intended, now)
            return
        rec = self.recorder
        counts = rec.check_failures
        index = 0
        bits = failed
        while bits:
            if bits & 1:
                counts[index] += 1
            bits >>= 1
            index += 1
        codes = rec.by_request[request_kind].status_codes if request_kind >= 0 else rec.status_codes
        codes[status] = codes.get(status, 0) + 1
        if status >= 400:
            rec.error("status", f"HTTP {status}", request_kind=request_kind)
        else:
            checks = self.exchange.checks
            assert checks is not None
            rec.error("verify", checks.describe_failure(failed), request_kind=request_kind)
        self.completed += 1

    def fail_request(
        self, intended: int, error: str, detail: str, request_kind: int = -1, code: int = -1
    ) -> None:
        """One request (of the mix's ``request_kind``, in a mix) failed as ``error`` while
        its connection goes on (an HTTP/2 stream reset, refused by a GOAWAY, malformed, or
        timed out): :meth:`fail_outstanding` for one request. ``code``: a status the answer
        carried (a gRPC call's grpc-status), counted in ``status_codes`` too. Not counted if
        it started in warm-up or after the stop."""
        if intended < self.measure_start_ns or self.stopping:
            return
        rec = self.recorder
        if code >= 0:
            if request_kind < 0:
                codes = rec.status_codes
            else:
                codes = rec.by_request[request_kind].status_codes
            codes[code] = codes.get(code, 0) + 1
        rec.error(error, detail, request_kind=request_kind)
        self.completed += 1

    def _outstanding_kinds(self, requests: Outstanding) -> list[int]:
        """The kind of each outstanding request of a mix connection, oldest first; one
        still waiting for its connection takes its request now, never to be written."""
        # A mix run's connections keep kinds (asyncio's MixConnection, trio's Slot).
        kinds = cast(MixOutstanding, requests).request_kinds
        times = requests.intended if self.open_loop else requests.pending
        unwritten = []
        for t in list(times)[: len(times) - len(kinds)]:
            kind, data = self.next_request(t)
            if t >= self.measure_start_ns:
                self.unwritten_bytes += len(data)
            unwritten.append(kind)
        return unwritten + list(kinds)

    def fail_outstanding(
        self, requests: Outstanding, error: str, detail: str, err_no: int | None = None
    ) -> None:
        """Every measured request outstanding on a connection fails as ``error``."""
        if not self.stopping:  # after stop() they are in flight, never errors too
            rec = self.recorder
            measure = self.measure_start_ns
            times = requests.intended if self.open_loop else requests.pending
            if self.mix:
                for t, request_kind in zip(times, self._outstanding_kinds(requests), strict=True):
                    if t >= measure:
                        rec.error(error, detail, err_no, request_kind)
                        self.completed += 1
            else:
                for index, t in enumerate(times):
                    if t >= measure:
                        kind, words = error, detail
                        if index == 0 and self.streams is not None:
                            kind, words = self._cut_stream(requests, t, error, detail)
                        rec.error(kind, words, err_no)
                        self.completed += 1
        requests.pending.clear()
        requests.intended.clear()
        if self.mix:
            cast(MixOutstanding, requests).request_kinds.clear()
        if not self.stopping:
            self.check_finished()

    def _cut_stream(
        self, requests: Outstanding, intended: int, error: str, detail: str
    ) -> tuple[str, str]:
        """The error of a connection's oldest request when it is a stream cut short (its
        events kept: ``rules/streams``), else ``error`` and ``detail`` as they are."""
        assert self.streams is not None
        start = requests.pending[0]
        framer = getattr(requests, "framer", None)  # each loop's connection keeps its framer
        kind, words = self.streams.cut(framer, intended if intended < start else start, error)
        return (kind, words) if kind else (error, detail)

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
        if self.source is not None and self.exchange.h2 is None:
            # (HTTP/2 counts what it writes: its source's HTTP/1.1 bytes only pick kinds.)
            written = self.handed_out_bytes() - self.bytes_before_window - self.unwritten_bytes
            self.recorder.bytes_written = written
        outcome = self.recorder.finish(
            in_flight=self.in_flight,
            window_end_ns=max(self.end_ns, self.measure_start_ns),
            in_flight_by_request=self.in_flight_by_request,
        )
        outcome.cpu_s, outcome.busy_s = self.cost.spent()
        outcome.connections_opened = self.opened
        outcome.connections_peak = self.peak
        outcome.loop = loop_name
        outcome.feeders_ran_out = self.source_ran_out
        if self.streams is not None:
            outcome.stream = self.streams.samples.fold()
        elif self.push_streams is not None:
            outcome.stream = self.push_streams.fold()
        return outcome


def _verify_words(spec: LoadSpec) -> str:
    """What a ``verify`` error of this load's answers says."""
    if spec.kind == "ws" and spec.answer == "id":
        return (
            f"an answer whose {spec.id_field!r} field holds no id of a message outstanding"
            " (or no JSON object with that field)"
        )
    return "echoed bytes differ from the bytes sent"
