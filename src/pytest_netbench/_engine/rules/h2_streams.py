"""One HTTP/2 connection's requests as streams, for either loop (sans-IO, like the rules).

A connection of the asyncio engine (``h2_connection``) or of the trio engine (``trio_io.h2``)
keeps its requests as every connection does, oldest first in ``pending`` (the start of
each), ``intended`` (open loop: when each was due) and ``request_kinds`` (a mix: the kind of each);
:class:`H2Streams` is what HTTP/2 adds to them, written once for both loops:

- each stream's id beside its request (``_ids``, in the order the streams opened, the same
  order as ``pending``); a request taken while the server allows no more streams (its
  SETTINGS_MAX_CONCURRENT_STREAMS) waits at the tail of ``pending`` (``unopened``) and opens
  as soon as a stream ends (:meth:`H2Streams.data_to_send`);
- a stream's response is recorded by the run rules' ``record`` (``record_kind`` in a mix),
  a stream that ended in error (the client's ``StreamError``: reset with its code, GOAWAY,
  protocol, gRPC status) by ``fail_request`` with its kind and reason; each stream that
  ended is counted in ``ended``, which the loop reads once the whole read is handled (a
  GOAWAY later in the same read must stop the requests they would free);
- a mix's kinds each send their own header block, encoded once; with feeders each stream's
  block is made from the request its source rendered (``encode_rendered_request``);
- a gRPC call ended ok is counted under grpc-status 0, a failed one under its code;
- a stream that outlived the timeout is cancelled alone (RST_STREAM CANCEL) and counted as
  ``timeout`` (:meth:`H2Streams.time_out`).
"""

from __future__ import annotations

from collections import deque
from itertools import repeat
from time import monotonic_ns

from pytest_netbench._engine.rules.accounting import MixOutstanding, RunAccounting
from pytest_netbench._proto.h2_client import H2ClientConnection, H2Request, StreamError
from pytest_netbench._proto.h2_headers import encode_rendered_request
from pytest_netbench._proto.streaming import StreamTimes


class H2Streams:
    """The streams of one connection whose requests are kept by ``requests``."""

    __slots__ = (
        "_basis",
        "_codes",
        "_grpc",
        "_ids",
        "_latency",
        "_mix",
        "_open_loop",
        "_per_stream",
        "_receive",
        "_requests",
        "_rules",
        "_scheme",
        "_times",
        "_unsent_requests",
        "_varied",
        "_wait",
        "client",
        "ended",
        "firsts",
        "unopened",
    )

    def __init__(self, rules: RunAccounting, requests: MixOutstanding) -> None:
        request = rules.exchange.h2
        if request is None:
            raise TypeError("an HTTP/2 connection needs an HTTP/2 exchange")
        spec = rules.spec
        self._rules = rules
        self._requests = requests
        self._open_loop = rules.open_loop
        self._ids: deque[int] = deque()  # open streams, oldest first (as `pending`)
        # Requests taken for this connection whose stream has not opened yet (at the tail of
        # `pending`): not "waiting", which is a due request with no connection (open_rules).
        self.unopened = 0
        self.ended = 0  # streams ended since the loop last read it
        # A mix: each kind's request, its block encoded once. Feeders: each request's block
        # encoded as it is sent, from the bytes its source rendered.
        self._mix = rules.exchange.h2_mix
        self._varied = bool(spec.feeders)
        self._scheme = spec.scheme
        self._grpc = spec.grpc_method is not None
        # The requests waiting for a stream, when each stream may carry another.
        self._per_stream = bool(self._mix) or self._varied
        self._unsent_requests: deque[H2Request] = deque()
        # A streaming load (``stream=``): each open stream's events as its DATA frames come.
        self._times: dict[int, StreamTimes] | None = None
        on_data = None
        if rules.streams is not None:
            self._times = {}
            on_data = self._on_stream_data
        self.client: H2ClientConnection | None = H2ClientConnection(
            request,
            self._on_response,
            self._on_error,
            max_streams=spec.outstanding_per_connection,
            on_data=on_data,
        )
        # Phases: when each open stream's response HEADERS came (its first byte, near
        # enough: once the read that brought them is handled); a stream whose response
        # ended in the read that brought its HEADERS came whole in it, as HTTP/1.1 counts
        # one (its wait is its latency, its receive nothing: recorder.fold_phases).
        self.firsts: dict[int, int] = {}
        self.client.heads_at = self.firsts
        self.client.clock = monotonic_ns  # this module's (the rules' tests read its clock)
        # One fixed request, closed loop, nothing streamed, not gRPC: the responses a read
        # ends come in one call (_on_responses), which records those of the oldest streams
        # without calling the rule.
        plain = self._times is None and not (
            self._mix or self._open_loop or self._grpc or self._varied
        )
        if plain:
            self.client.on_responses = self._on_responses
        # Where the short path records (the recorder's samples are emptied in place when
        # folded, never replaced).
        rec = rules.recorder
        self._codes = rec.status_codes
        self._latency = rec.latencies.append
        self._basis = rec.phases.basis.append
        self._wait = rec.phases.waits.append
        self._receive = rec.phases.receives.append

    def release(self) -> None:
        """Forget the client: its callbacks are this object's bound methods (a cycle)."""
        self.client = None

    # -- the loop's side --
    def queue(self, start: int, intended: int) -> None:
        """A request taken (started at ``start``, due at ``intended``): its stream opens
        with the next :meth:`data_to_send`."""
        requests = self._requests
        requests.pending.append(start)
        if self._open_loop:
            requests.intended.append(intended)
        if self._per_stream:
            kind, data = self._rules.next_request(intended)
            if self._mix:
                requests.request_kinds.append(kind)
            if self._varied:
                self._unsent_requests.append(
                    H2Request(*encode_rendered_request(data, self._scheme))
                )
            else:  # a mix of fixed requests (the rendered bytes only said which kind)
                self._unsent_requests.append(self._mix[kind])
        self.unopened += 1

    def queue_many(self, start: int, intended: int, count: int) -> None:
        """:meth:`queue` ``count`` requests taken at once (the streams ended in one read)."""
        if self._per_stream:
            for _ in range(count):
                self.queue(start, intended)
            return
        requests = self._requests
        requests.pending.extend(repeat(start, count))
        if self._open_loop:
            requests.intended.extend(repeat(intended, count))
        self.unopened += count

    def send_taken(self, start: int, count: int) -> bytes:
        """The steady state of a plain closed-loop load (one fixed request, see
        ``_on_responses``): :meth:`queue_many` of ``count`` requests taken at ``start``,
        then :meth:`data_to_send`, in one call (issue 35: the read that ended streams opens
        theirs with no other call of the rules' side)."""
        client = self.client
        if client is None:
            return b""
        # One request alone (a read that ended one stream) is appended: no repeat or range.
        if count == 1:
            self._requests.pending.append(start)
        else:
            self._requests.pending.extend(repeat(start, count))
        unopened = self.unopened + count
        first, opened = client.open_streams(unopened)
        if opened == 1:
            self._ids.append(first)
        elif opened:
            self._ids.extend(range(first, first + 2 * opened, 2))
        self.unopened = unopened - opened
        # client.data_to_send, written out: its queue is emptied in place, never replaced.
        out = client.outbound
        if not out:
            return b""
        data = b"".join(out)
        out.clear()
        return data

    def data_to_send(self) -> bytes:
        """Open the streams of the requests waiting for one (as many as the server allows),
        then everything the client has queued (requests, acknowledgements, WINDOW_UPDATEs,
        resets) as one write."""
        client = self.client
        if client is None:
            return b""
        if self.unopened and self._per_stream:
            unsent = self._unsent_requests
            while unsent:
                stream_id = client.open_stream_for(unsent[0])
                if not stream_id:
                    break
                unsent.popleft()
                self.unopened -= 1
                self._ids.append(stream_id)
        elif self.unopened:
            first, count = client.open_streams(self.unopened)
            if count:
                self.unopened -= count
                self._ids.extend(range(first, first + 2 * count, 2))
        return client.data_to_send()

    @property
    def may_continue(self) -> bool:
        """May this connection carry more requests? Not after a GOAWAY or a failure. A
        server's SETTINGS_MAX_CONCURRENT_STREAMS below ``streams`` does not stop it: the
        requests over its limit wait for a stream (``unopened``)."""
        client = self.client
        return (
            client is not None and client.goaway is None and not client.failed and not client.closed
        )

    @property
    def done(self) -> bool:
        """No stream is open and none may open (after a GOAWAY): the connection closes; the
        requests still waiting for a stream fail as the connection's loss."""
        client = self.client
        return (
            client is not None and client.finished and len(self._requests.pending) == self.unopened
        )

    @property
    def failed_because(self) -> str:
        """Why the client failed the whole connection ("" while it has not): its requests
        still waiting for a stream fail as ``protocol`` with these words."""
        client = self.client
        if client is None or not client.failed:
            return ""
        error = client.connection_error
        return error.reason if error is not None else "HTTP/2 failure"

    def expire(self, started_before: int, detail: str) -> str:
        """The requests that started before ``started_before`` outlived the timeout: each
        stream is cancelled alone and counted as ``timeout`` (``detail``), and the
        connection goes on (""). Unless the server has not even acknowledged the client's
        SETTINGS: it does not speak HTTP/2 there, so the connection must be dropped, and
        this says why (its other requests fail as ``protocol``; the run opens another)."""
        client = self.client
        dead = client is not None and not client.settings_acked
        self.time_out(started_before, detail, count_ended=not dead)
        if not dead:
            return ""
        return (
            f"the server did not acknowledge the client's HTTP/2 SETTINGS ({detail}):"
            " it does not speak HTTP/2 on this connection"
        )

    def take_ended(self) -> int:
        """How many streams ended since the last call: each may let the run start the next
        request on this connection."""
        ended, self.ended = self.ended, 0
        return ended

    def time_out(self, started_before: int, detail: str, count_ended: bool = True) -> None:
        """Cancel every request that started before ``started_before`` (its stream reset
        with CANCEL, or, not yet opened, dropped) and count each as a ``timeout``; with
        ``count_ended`` each lets the run start another (not when the connection is being
        dropped)."""
        requests = self._requests
        pending = requests.pending
        client = self.client
        while pending and pending[0] < started_before:
            start = pending.popleft()
            intended = requests.intended.popleft() if self._open_loop else start
            kind = requests.request_kinds.popleft() if self._mix else -1
            words = detail
            if self._ids:
                stream_id = self._ids.popleft()
                if client is not None:
                    client.cancel(stream_id)
                words = self._cut(stream_id, start, intended, "timeout")[1] or detail
            else:
                self.unopened -= 1
                if self._per_stream:
                    self._unsent_requests.popleft()
            self._rules.fail_request(intended, "timeout", words, kind)
            if count_ended:
                self.ended += 1

    # -- the client's callbacks: one per stream that ended --
    def _pop_stream(self, stream_id: int) -> tuple[int, int, int]:
        """Forget a stream that ended: (its start, its intended start, its mix kind or -1)."""
        ids = self._ids
        requests = self._requests
        pending = requests.pending
        if ids[0] == stream_id:
            ids.popleft()
            start = pending.popleft()
            kind = requests.request_kinds.popleft() if self._mix else -1
            return start, requests.intended.popleft() if self._open_loop else start, kind
        index = ids.index(stream_id)
        del ids[index]
        start = pending[index]
        del pending[index]
        kind = -1
        if self._mix:
            kind = requests.request_kinds[index]
            del requests.request_kinds[index]
        if not self._open_loop:
            return start, start, kind
        intended = requests.intended[index]
        del requests.intended[index]
        return start, intended, kind

    def _on_stream_data(self, stream_id: int, status: int, body: bytes) -> None:
        """A streaming load: a stream's head (``body`` empty) or one of its DATA frames,
        each an event in ``chunks`` mode. (The Content-Type is not checked over HTTP/2:
        the client's HPACK decoder reads ``:status`` alone.)"""
        times_of = self._times
        assert times_of is not None and self._rules.streams is not None
        now = monotonic_ns()
        times = times_of.get(stream_id)
        if times is None:
            times = times_of[stream_id] = StreamTimes(self._rules.streams.ledger)
            times.each_piece = True
            times.begin(now)
            times.status = status
        times.take_body(body, now)

    def _cut(self, stream_id: int, start: int, intended: int, error: str) -> tuple[str, str]:
        """A measured stream that ends in ``error``: its events kept (``rules/streams``);
        the error's kind and words when it was cut short mid-stream, else ("", "")."""
        times = self._times.pop(stream_id, None) if self._times is not None else None
        rules = self._rules
        if times is None or rules.streams is None or rules.stopping:
            return "", ""
        if intended < rules.measure_start_ns:
            return "", ""
        return rules.streams.cut(times, intended if intended < start else start, error)

    def _on_responses(self, ended: list[tuple[int, int]]) -> None:
        """The plain load's responses that ended in one read ((stream id, status) each, in
        the order they ended; the client's ``on_responses``): what ``_on_response`` does
        for each, in one call (issue 35), with the clock read once (they came in the same
        read). One that is not the oldest stream's goes to ``_on_response``."""
        now = monotonic_ns()
        ids = self._ids
        requests = self._requests
        pending = requests.pending
        rules = self._rules
        firsts = self.firsts
        opened = getattr(requests, "opened_ns", 0)
        codes, latency = self._codes, self._latency
        basis, wait, receive = self._basis, self._wait, self._receive
        measure_start = rules.measure_start_ns
        stopping = rules.stopping  # read again after each call of the rule
        copied = 0
        aside = 0  # those _on_response counted in ``ended`` itself
        # The copy's statuses, counted in ``codes`` once a run of the same one ends.
        status_now, same = 0, 0
        for stream_id, status in ended:
            oldest = ids.popleft()
            if oldest != stream_id:  # not the oldest stream's: the general way
                ids.appendleft(oldest)
                self._on_response(stream_id, status)
                aside += 1
                stopping = rules.stopping
                continue
            start = pending.popleft()
            first = firsts.pop(stream_id, 0) if firsts else 0
            if status >= 400 or start < measure_start or stopping:
                rules.record(status, start, start, now, first, opened)
                stopping = rules.stopping
                continue
            # An inlined copy of RunAccounting.record for an ok response, closed loop, one
            # fixed request, nothing streamed (with phases.record_phases): no call per
            # response. tests/engine/test_rule_copies.py holds it to the rule. Its phases
            # are recorded even when it came whole in one read (``first`` 0: a wait of its
            # latency and no receive, what the rule's fold would make of it unrecorded): a
            # bucket whose every response has its phases is folded without counting their
            # basis (recorder.fold_phases). Locals, not attributes, for what a read's
            # responses share (issue 35).
            if status != status_now:
                if same:
                    codes[status_now] = codes.get(status_now, 0) + same
                    copied += same
                status_now, same = status, 0
            same += 1
            took = now - start
            latency(took)
            written = opened if opened > start else start
            if not first or first > now:
                first = now
            elif first < written:
                first = written
            basis(took)
            wait(first - written)
            receive(now - first)
        if same:
            codes[status_now] = codes.get(status_now, 0) + same
            copied += same
        self.ended += len(ended) - aside
        rules.completed += copied

    def _on_response(self, stream_id: int, status: int) -> None:
        now = monotonic_ns()
        start, intended, kind = self._pop_stream(stream_id)
        if self._times is not None:
            times = self._times.pop(stream_id, None)
            if times is not None:
                times.finish_problem()
            assert self._rules.streams is not None
            self._rules.streams.ledger.last = times
        if self._grpc and status == 200:
            status = 0  # grpc-status OK (h2_client ends a call ok only so)
        first = self.firsts.pop(stream_id, 0)
        opened = getattr(self._requests, "opened_ns", 0)
        if kind < 0:
            if not first and opened <= start:
                first = -1  # came whole in one read (a mix's kinds record phases one by one)
            self._rules.record(status, start, intended, now, first, opened)
        else:
            self._rules.record_kind(status, start, intended, now, kind, first, opened)
        self.ended += 1

    def _on_error(self, stream_id: int, error: StreamError) -> None:
        self.firsts.pop(stream_id, None)
        start, intended, kind = self._pop_stream(stream_id)
        code = error.code if error.cause == "grpc_status" else -1
        cut_kind, words = self._cut(stream_id, start, intended, error.kind)
        if cut_kind:
            self._rules.fail_request(intended, cut_kind, words, kind)
        else:
            self._rules.fail_request(intended, error.kind, error.reason, kind, code)
        self.ended += 1


def alpn_refusal(chosen: str | None) -> str:
    """Over TLS, why the server's ALPN choice ``chosen`` is not HTTP/2 ("" if it is h2)."""
    if chosen == "h2":
        return ""
    said = f"chose {chosen!r}" if chosen else "chose no protocol"
    return (
        f"the server's TLS handshake (ALPN) {said}, not 'h2': it does not speak HTTP/2 over"
        " TLS on this port; use protocol='http1' for it"
    )
