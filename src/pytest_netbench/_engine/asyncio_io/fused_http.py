"""Closed-loop keep-alive HTTP with the least Python per response.

The general :class:`Connection` hands bytes to the sans-IO ``ResponseFramer``, which calls
back into the connection: five Python frames per response. At a hundred thousand responses
a second those frames are most of the generator's CPU (benchmarks/README.md), so in the
common case (closed loop, keep-alive, one write per request, any method but HEAD) the
connection itself is the httptools parser's callback object. httptools (llhttp, in C)
finds where each response ends, exactly as inside ``ResponseFramer``; the Python run per
response is ``data_received`` and ``on_message_complete`` (``on_message_begin`` is a
list's ``pop``, called in C), which records the response and writes the next request
(requests that vary, a mix, and open loop do that in one more call, ``_steady_response``,
behind the same guard; the first two pop the next ready request the run rendered, as
``RunAccounting.next_request`` does, and fall back to the general path when none is
spare, which renders the next batch).

Most servers answer a fixed request with the same bytes every time (a Date header changes
once a second). A read that is byte for byte one the parser already found to hold exactly
one steady 200, twice, is answered without the parser: one comparison instead of the
parse and three Python calls (``data_received``), about a tenth of the generator's CPU per
response against Go's net/http (issue 19).

Where the package was built with its C part (``compiled_steady.c``), the steady state of
one request (fixed or rendered from feeders, closed or open loop) runs without a Python
frame: a ``SteadyReader`` stands in ``data_received``, and once armed (where this path
finds a read of exactly one steady 200) answers every read that is whole steady 200s of a
strict subset llhttp parses the same, handing any other read to the Python
``data_received`` untouched. Real APIs rarely repeat their bytes, so this, not the
shortcut above, is what most loads run (issue 35).

It stays exact by one rule: this path only ever handles whole responses ending with a
read. The first read that ends inside a response (a large body, a slow or dribbling
server, a head split across packets, a body delimited by the close) hands the stream to a
``ResponseFramer`` for the rest of the connection (``ResponseFramer.take_over``), so the
head-size bound and the end-of-stream rules apply as on every other path. A connection
still on this path when the peer closes is between responses: what is pending fails as a
reset, as it does there.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from time import monotonic_ns
from typing import ClassVar, Protocol, cast

import httptools

from pytest_netbench._engine.asyncio_io.connection import (
    Connection,
    ConnectionOwner,
    MixConnection,
    VariedConnection,
)
from pytest_netbench._engine.rules.phases import watch_first_byte
from pytest_netbench._proto.checks import ResponseChecks, with_failures
from pytest_netbench._proto.http import (
    ResponseFramer,
    callback_failure,
    non_final_status_problem,
    parser_error_reason,
)

try:
    from pytest_netbench._engine.asyncio_io.compiled_steady import SteadyReader
except ImportError:  # built without a C compiler: the Python path does it all
    SteadyReader = None  # type: ignore[assignment,misc]


def fits_fused_path(parser_framed: bool, closes_after: int, chunks: int) -> bool:
    """HTTP framed by httptools alone, keep-alive without a per-connection request limit,
    one write per request (closed loop: FusedHttpConnection; open: FusedOpenConnection)."""
    return parser_framed and not closes_after and chunks == 1


def checked_status(
    status_of: Callable[[], int],
    checks: ResponseChecks,
    headers: dict[bytes, bytes],
    body: list[bytes],
) -> Callable[[], int]:
    """``_status`` of a fused connection of a load with checks: the parser's status with
    the bits of the checks the response failed (``_proto.checks.with_failures``), read once
    as each message completes; a steady 200 is one that passed every check. A read the
    parser found so twice (``_same``) holds the same bytes, so the same checks pass."""

    def status() -> int:
        code = status_of()
        if code >= 200:
            code = with_failures(code, checks.failed(code, headers, b"".join(body)))
        headers.clear()
        body.clear()
        return code

    return status


# No read: what _same and _candidate hold when they hold none (every read has a byte).
_NO_READ = b""
# Reads unlike the one before, in a row, after which a connection stops looking for a
# read that repeats (FusedHttpConnection._probes).
_PROBES = 64

# What a connection's first answer reads as status when it belongs to a request that
# waited for the connection (opened_for_request): no status, so not the steady state.
_FRESH = -1


def _last_response() -> bool:
    return False


class OpenConnectionOwner(ConnectionOwner, Protocol):
    """What the open-loop steady state needs of its run (``asyncio_io.engine.OpenRun``)."""

    idle: list[Connection]  # free connections, the last freed taken first
    backlog: deque[int]  # due times of requests waiting for a connection


class FusedHttpConnection(Connection):
    """A :class:`Connection` that is its own httptools callback object (see module doc)."""

    # Whether compiled_steady may answer this class's steady state (_compiled_reader).
    _compiled: ClassVar[bool] = True

    def _attach_framer(self) -> Callable[[bytes], object]:
        checks = self.run.exchange.checks
        if checks is not None:
            # httptools looks its callbacks up as the parser is made: C calls into a dict
            # and a list, read as each response completes (_proto.checks).
            headers: dict[bytes, bytes] = {}
            body: list[bytes] = []
            self.on_header = headers.__setitem__
            if checks.needs_body:  # a body no check reads is not kept
                self.on_body = body.append
        # Between two responses, one mark; a response that has begun took it, and its end
        # puts it back (on_message_complete). The parser calls on_message_begin in C: a
        # list's pop, where a method of this class was a Python call per response.
        between: list[None] = [None]
        self._between = between
        self.on_message_begin = between.pop
        parser = httptools.HttpResponseParser(self)
        status = parser.get_status_code
        if checks is not None:
            status = checked_status(parser.get_status_code, checks, headers, body)
        self._status = self._status_code = status
        self._fresh_code = 0  # see _fresh_status
        # Read inside on_message_complete, never after feed_data: llhttp clears a message's
        # flags as it completes, so a 200 that kept the connection open reads False there
        # (the status code stays). That is why on_message_complete is a Python method: C
        # callables that capture it per message (map and zip over iter(parser method) into
        # a list) cost more instructions than the method and its two calls (issue 35).
        self._keep_alive = parser.should_keep_alive
        self._streak = 0  # measured 200s each followed by a measured send (settle_counts)
        # When each outstanding request counts from, for the window: its start in closed
        # loop, its due time in open loop (FusedOpenConnection).
        self._due: deque[int] = self.pending
        # Closed loop, one request: the steady state's work is inline in on_message_complete,
        # and so is that of one request rendered from feeders (``_varied``); the other
        # fused connections do theirs in _steady_response.
        self._plain = True
        self._varied = False
        self._next_ready = self.run.ready.popleft  # the run's rendered requests, if they vary
        # Responses the general rules saw (_other_response): a read that moved none of them
        # and one steady 200 held exactly that response.
        self._others = 0
        # A read that held exactly one steady 200 (plain connections only), and one the
        # parser found so twice: the latter is answered without it (see data_received).
        # Empty when there is none: no read is empty, and bytes compare with bytes at once.
        self._candidate = self._same = _NO_READ
        # How many more reads unlike the one before may be kept as candidates: a server
        # whose every answer differs (an id, a length) stops the look-out for good, and
        # its reads cost the parser alone (issue 35). A repeat found refills it, so a
        # Date header that changes once a second never stops it.
        self._probes = _PROBES
        # The compiled steady state (compiled_steady.c): it stands in data_received, and
        # takes a read that is whole steady 200s once armed, which happens where a read is
        # found to hold exactly one (below), and is undone where _same is.
        self._reader: SteadyReader | None = None
        if SteadyReader is not None and checks is None and self._compiled:
            reader = self._compiled_reader()
            self._reader = reader
            # What asyncio and uvloop call. Set as an attribute, not through vars(): CPython
            # 3.11 keeps an object's attributes inline until its __dict__ is asked for, and
            # asking costs a dict a connection (0.75 KiB each at 10,000 idle ones).
            setattr(self, "data_received", reader)  # noqa: B010 (mypy: a method's name)
        return parser.feed_data

    def _compiled_reader(self) -> SteadyReader:
        """The ``SteadyReader`` of this connection's steady state: the fixed request
        written again (the subclasses that compile theirs say how)."""
        slots = self._rec.count_as_recorded()[0]
        return SteadyReader(
            self.data_received, self.pending, slots, self._record, self._request, self._measure
        )

    def data_received(self, data: bytes) -> None:
        self._rec.bytes_read += len(data)
        if data == self._same:
            # Byte for byte a read the parser found to be exactly one 200 that keeps the
            # connection open, from the state between two responses, which is where it is
            # now: parsing it again would call back the same, so the steady state runs
            # without it. Of what on_message_complete checks, the bytes settle the status
            # and keep-alive, and the cache settles the rest but what may change since:
            # it is only set by a measured response of a duration run (no budget), and the
            # window never moves once requests are sent. If a check fails, the parser has
            # the read after all. Inlined copies of RunAccounting.record and .take, held to
            # the rules by tests/engine/test_rule_copies.py.
            due = self._due
            if due and not self.run.stopping and not self.broken:
                now = monotonic_ns()
                record = self._record  # read, then called: see on_message_complete
                record(now - due.popleft())
                self._streak += 1
                write = self._write
                write(self._request)  # type: ignore[misc]
                due.append(now)
                return
        streak = self._streak
        others = self._others
        feed = self._feed  # a callable attribute read as one, then called (see below)
        try:
            feed(data)
        except httptools.HttpParserCallbackError as exc:
            raise callback_failure(exc) from None
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
            self.on_protocol_error(parser_error_reason(exc))
            return
        if not self._between:  # a response has begun and not ended
            self._hand_over(data)
        elif self._streak == streak + 1 and self._others == others and self._reader:
            # Exactly one response, the plain steady state's: the compiled one takes the
            # reads like it from now on.
            assert self._write is not None  # the connection is open: it just wrote
            self._reader.arm(self._write)
        elif self._probes and self._streak == streak + 1 and self._others == others:
            # Exactly one response, the plain steady state's. Kept for the shortcut once
            # the parser has found the same bytes so twice: the first response of a
            # connection is parsed from the parser's initial state, not from between two.
            if data == self._candidate:
                self._same = data
                self._probes = _PROBES
            else:
                self._candidate = data
                self._probes -= 1

    def _hand_over(self, data: bytes) -> None:
        """This read ended inside a response; every earlier one ended between two, so
        ``data`` begins at a boundary and the framer can take the stream from its start."""
        self._between.append(None)
        self._same = _NO_READ  # the framer has the stream from now on
        if self._reader is not None:
            self._reader.disarm()
        self._probes = 0
        framer = self.run.exchange.make_framer(self.on_response, self.on_protocol_error)
        assert isinstance(framer, ResponseFramer)  # parser-framed: see fits_fused_path
        watch_first_byte(framer, self._began)
        framer.take_over(data)
        self.framer = framer
        self._feed = framer.feed

    def window_moved(self, measure_start_ns: int) -> None:
        super().window_moved(measure_start_ns)
        if self._reader is not None:
            self._reader.measure = measure_start_ns

    def on_protocol_error(self, reason: str) -> None:
        if self._reader is not None:  # the steady state ends with the connection
            self._reader.disarm()
        super().on_protocol_error(reason)

    def _release(self) -> None:
        super()._release()
        if self._reader is not None:  # it and this connection refer to each other
            self._reader.disarm()
            self._reader = None
            delattr(self, "data_received")  # the method again, as above

    def opened_for_request(self) -> None:
        """The first answer on this connection belongs to a request that waited for it to
        open: its wait counts from the open, not from its latency's start, so it goes to
        the general path (which records its phases) by failing the steady state's first
        check, once and at no cost to the responses after it (see _fresh_status)."""
        self._status = self._fresh_status

    def _fresh_status(self) -> int:
        # The response is read (and, with checks, tested) once, here; the general path
        # takes its code from _fresh_code (see _other_response).
        self._status = self._status_code
        self._fresh_code = self._status_code()
        return _FRESH

    # -- httptools callbacks (and on_message_begin: see _attach_framer) --
    def on_message_complete(self) -> None:
        now = monotonic_ns()
        self._between.append(None)
        # The callables kept in attributes are read as attributes, then called: a call of
        # self.x() reads x as a method, which CPython 3.11 cannot specialize for one that
        # is the object's own, where it specializes the plain read (issue 35).
        status_of = self._status
        status = status_of()  # once: with checks, this tests the response (see above)
        due = self._due
        run = self.run
        keep_alive = self._keep_alive
        # The steady state of a duration run, for every fused connection (this guard is
        # written nowhere else): a measured 200 on a connection that stays open, the run
        # neither stopping nor (open loop) draining, and no request waiting for a
        # connection; draining and waiting requests need the general path's check_finished.
        if (
            status == 200
            and due
            and due[0] >= self._measure
            and run.budget is None
            and not run.stopping
            and not self.broken
            and keep_alive()
        ):
            if self._plain:
                # Closed loop: the next request sent at once (``due`` is ``pending`` here).
                # Inlined copies of RunAccounting.record and .take; one counter stands for
                # the four they move (see settle_counts). tests/engine/test_rule_copies.py
                # holds them to the rules.
                record = self._record
                record(now - due.popleft())
                self._streak += 1
                write = self._write
                write(self._request)  # type: ignore[misc]
                due.append(now)
                return
            if self._varied:
                # The same, with the next ready request: inlined copies of RunAccounting
                # .claim and .next_request too. None spare: the general path renders more.
                spare = run.spare
                if spare:
                    run.spare = spare - 1
                    record = self._record
                    record(now - due.popleft())
                    self._streak += 1
                    write = self._write
                    next_ready = self._next_ready
                    write(next_ready())  # type: ignore[misc]
                    due.append(now)
                    return
            elif not run.draining and not run.backlog:  # a closed run has neither
                self._steady_response(now)
                return
        self._other_response(status)

    def _steady_response(self, now: int) -> None:
        """The steady state's work on a fused connection that is not plain (see the
        subclasses); the plain one does its own inline, saving the call."""
        raise NotImplementedError

    def close_after_response(self) -> None:
        """Leave the steady state for good (its guard reads ``_keep_alive``): each response
        goes to the general rules as the last of the connection, so nothing more is written
        and the run closes it once what it has outstanding is answered."""
        super().close_after_response()
        self._keep_alive = _last_response
        self._same = self._candidate = _NO_READ
        if self._reader is not None:
            self._reader.disarm()

    def settle_counts(self) -> None:
        """Move the steady-state streak into the run's counters. Only a duration run has a
        streak, and nothing reads those counters before it stops or this connection ends,
        which is when the run calls this. It ends the compiled steady state for good (the
        reader is disarmed): a caller in mid-run would leave the rest to the Python path."""
        streak = self._streak + self._end_compiled()
        if streak:
            self._streak = 0
            rec = self._rec
            rec.status_200 += streak
            rec.sent += streak
            rec.bytes_written += streak * self._size
            self.run.completed += streak

    def _end_compiled(self) -> int:
        """End the compiled steady state (``settle_counts``): its bytes into the run's, and
        the 200s it answered, to count with the streak. The run settles as it stops, so a
        stopping run's reads all go to the Python path."""
        reader = self._reader
        if reader is None:
            return 0
        reader.disarm()
        answered, read = reader.take_counts()
        self._rec.bytes_read += read
        return answered

    def _other_response(self, code: int) -> None:
        """Anything but the steady state (warm-up, a request budget, a status other than
        200, the last response on the connection, the run stopping): the general rules."""
        self._others += 1
        if code == _FRESH:
            code = self._fresh_code
        if self.broken:
            return  # the connection is being dropped; nothing after the error counts
        if code < 200:
            problem = non_final_status_problem(code)
            if problem:
                self.on_protocol_error(problem)
            return  # an interim 1xx: the final response follows
        keep_alive = bool(self._keep_alive())
        if not keep_alive:
            # The parser now refuses whatever follows ("data after Connection: close"), a
            # pipelined response included: no read is known from here on.
            self._same = self._candidate = _NO_READ
            if self._reader is not None:
                self._reader.disarm()
        self.on_response(code, keep_alive)


class FusedVariedConnection(FusedHttpConnection, VariedConnection):
    """The fused path for one request rendered from feeders: the plain steady state, but
    each write the next ready request (inline in ``on_message_complete``, as the plain
    one's). Its bytes are counted by the run, from its batches
    (``RunAccounting.finish``), so the streak settles as the plain one does."""

    def _compiled_reader(self) -> SteadyReader:
        # The next ready request written, as RunAccounting.claim and .next_request do.
        slots, run = self._rec.count_as_recorded()[0], self.run
        return SteadyReader(
            self.data_received, self.pending, slots, self._record, None, self._measure,
            run=run, next_ready=run.ready.popleft,
        )  # fmt: skip

    def __init__(self, run: ConnectionOwner) -> None:
        super().__init__(run)
        self._plain = False
        self._probes = 0
        self._varied = True


class FusedMixConnection(FusedHttpConnection, MixConnection):
    """The fused path for a request mix: the same steady state, with the kind of each
    request kept beside it (``MixConnection``'s ``request_kinds``), its latency recorded under that
    kind, and the next request the next ready one, of the kind it was rendered for.
    Everything else goes through ``MixConnection.on_response`` and ``send``, as on the
    general path."""

    _compiled = False

    def __init__(self, run: ConnectionOwner) -> None:
        super().__init__(run)
        counters = run.recorder.by_request
        self._kind_records = [kind.latencies.append for kind in counters]
        self._next_kind = run.ready_request_kinds.popleft
        # Per kind, not yet settled: measured 200s answered, and measured requests sent.
        self._answered = [0] * len(counters)
        self._written = [0] * len(counters)
        self._plain = False
        self._probes = 0

    def _steady_response(self, now: int) -> None:
        # Inlined copies of RunAccounting.record_kind, .take (with .claim) and
        # .next_request, settled in settle_counts; tests/engine/test_rule_copies.py holds
        # them to the rules.
        run = self.run
        spare = run.spare
        if not spare:
            self._other_response(200)  # the general path renders the next batch
            return
        run.spare = spare - 1
        pending = self.pending
        kind = self.request_kinds.popleft()
        self._kind_records[kind](now - pending.popleft())
        self._answered[kind] += 1
        following = self._next_kind()
        self._write(self._next_ready())  # type: ignore[misc]
        self._written[following] += 1
        pending.append(now)
        self.request_kinds.append(following)

    def settle_counts(self) -> None:
        """Move the per-kind streaks into the run's counters (see FusedHttpConnection)."""
        answered, written = self._answered, self._written
        if not any(answered) and not any(written):
            return
        rec = self._rec
        for kind, counters in enumerate(rec.by_request):
            if answered[kind]:
                codes = counters.status_codes
                codes[200] = codes.get(200, 0) + answered[kind]
                self.run.completed += answered[kind]
                answered[kind] = 0
            if written[kind]:  # their bytes: the run counts them from its batches
                counters.sent += written[kind]
                rec.sent += written[kind]
                written[kind] = 0


class FusedOpenConnection(FusedHttpConnection):
    """The fused path in open loop. Its steady state (a measured 200 on a connection that
    stays open, nothing waiting for a connection, the run neither draining nor stopping)
    records the latency from the due time and from the actual send, and puts the
    connection back on the run's idle list; the run's timer writes the next request
    (``write_due``). Sends are counted when they leave, as on every open-loop path, so
    only the 200s and completions wait for ``settle_counts``."""

    def _compiled_reader(self) -> SteadyReader:
        # _steady_response's work: called from Connection.__init__, before this class's
        # own attributes are set.
        slots, run = self._rec.count_as_recorded()[0], cast(OpenConnectionOwner, self.run)
        return SteadyReader(
            self.data_received, self.pending, slots, self._record, None, self._measure,
            intended=self.intended, uncorrected=self._uncorrected,
            idle=run.idle, backlog=run.backlog, connection=self,
        )  # fmt: skip

    def __init__(self, run: OpenConnectionOwner) -> None:
        # Before the base's __init__: the compiled reader it makes shares it.
        self._uncorrected = run.recorder.uncorrected.append
        super().__init__(run)
        self._open_run = run
        self._due = self.intended
        self._plain = False
        self._probes = 0

    def _steady_response(self, now: int) -> None:
        # Inlined copies of RunAccounting.record (open loop) and of OpenRun._free;
        # tests/engine/test_rule_copies.py holds the first to the rule.
        start = self.pending.popleft()
        due = self.intended.popleft()
        self._record(now - (due if due < start else start))
        self._uncorrected(now - start)
        self._streak += 1
        self._open_run.idle.append(self)

    def write_due(self, now: int, due: int) -> None:
        """Write the request due at ``due`` now; the run counts it (``send`` without the
        counting, for the run's timer to do once per wake-up)."""
        self._write(self._request)  # type: ignore[misc]
        self.pending.append(now)
        self.intended.append(due)

    def settle_counts(self) -> None:
        """Move the streak of measured 200s into the run's counters (see the base class;
        the sends were counted as they left)."""
        streak = self._streak + self._end_compiled()
        if streak:
            self._streak = 0
            self._rec.status_200 += streak
            self.run.completed += streak
