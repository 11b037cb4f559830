"""Connections that open and close often (a load without keep-alive, or with a few
requests per connection), on raw non-blocking sockets instead of the loop's transports.

Opening a transport and its protocol costs about 20 us of Python and C per connection on
uvloop, twice what the request on it costs (issue 19: a new connection per request cost
2.2x ab's CPU). Here each connection is a bare socket in one ``select.epoll`` of the run
(:class:`RawSockets`), and that epoll's own descriptor is the only thing the loop watches
(``add_reader``): when any socket is ready the loop calls :meth:`RawSockets.ready`, which
asks the epoll which and serves them in one pass. A connection is then a socket, a
``connect_ex``, a ``send``, a ``recv`` and a ``close``: about 10 us.

:class:`RawHttpConnection` is a :class:`~pytest_netbench._engine.asyncio_io.connection.Connection`
(its framer, ``on_response`` and ``send`` unchanged) that is its own transport, so the run
drives it as any other: ``connected``, ``response_done``, ``lost``, the sweeper's timeouts,
the connect phase. A connection closed while the epoll's events are served reaches the
run (``connection_lost``) once they all are, as a transport's would on a later turn of the
loop; so no socket is opened while an event list naming closed descriptors is being read.
In a closed-loop run whose connections carry one request each, a connection closed that
way with nothing outstanding is renewed in place there as its slot's next connection
(:meth:`RawSockets.renew_spent`), its request written as its connect returns.

Used for HTTP/1.1 over plain TCP to an IP address (no TLS, no source addresses, one fixed
request), on Linux (``epoll``); ``asyncio_io.engine.BaseRun`` decides.
"""

from __future__ import annotations

import asyncio
import errno as errno_mod
import os
import select
import socket
from _socket import socket as bare_socket  # without socket.socket's Python __init__ and close
from collections.abc import Callable
from time import monotonic_ns
from typing import Any

from pytest_netbench._engine.asyncio_io.connection import (
    Connection,
    ConnectionOwner,
    _closed_feed,
)
from pytest_netbench._engine.rules.connecting import FirstContact
from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.phases import record_connect
from pytest_netbench._proto.http import only_final_response
from pytest_netbench._stats.recorder import SLOTS_US as _SLOTS_US

_IN = select.EPOLLIN
_OUT = select.EPOLLOUT
_BROKEN = select.EPOLLERR | select.EPOLLHUP
_READABLE = _IN | _BROKEN
# A read is a recv() of at most this: its bytes come from one allocation of this size,
# shrunk to what was read. Below malloc's mmap threshold (128 KiB), so no mmap, mremap
# and munmap per read (which a recv of 256 KiB cost: 3 of 10 syscalls a request), and
# about 150 ns cheaper than a recv_into one buffer of the run and a bytes of its slice
# (issue 35). A longer answer takes more reads.
_READ_SIZE = 64 * 1024
_MAX_EVENTS = 1024
_STREAM = socket.SOCK_STREAM | socket.SOCK_NONBLOCK
_IN_PROGRESS = errno_mod.EINPROGRESS


class RawOwner(ConnectionOwner):
    """What a raw connection needs of its run beyond a connection's."""

    loop: asyncio.AbstractEventLoop
    raw: RawSockets
    contact: FirstContact

    # What renewing a spent connection in place reads (see RawHttpConnection.connection_lost).
    connections: set[Connection]
    phase: object | None
    opened: int

    def connect_failed(self, conn: Connection, exc: OSError | None) -> None: ...

    def check_finished(self) -> None: ...

    def stop(self) -> None: ...


class RawSockets:
    """One run's sockets in one epoll, watched by the loop through its descriptor."""

    def __init__(self, loop: asyncio.AbstractEventLoop, address: tuple[Any, ...]) -> None:
        self.loop = loop
        self.address = address
        self.family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.epoll = select.epoll()
        self.by_fd: dict[int, RawHttpConnection] = {}
        # Closed while events are served: told to the run once they all are.
        self.closed: list[tuple[RawHttpConnection, Exception | None]] = []
        # Connected as their connect returned (on loopback the handshake is over by then):
        # told to the run as the closed are, with no event of their own.
        self.established: list[RawHttpConnection] = []
        # Closed by ``RawHttpConnection._answered`` (their one request answered, nothing
        # outstanding): each renews itself once the events are served (``renew_spent``),
        # without the tuple of ``closed`` and the call of ``connection_lost``.
        self.spent: list[RawHttpConnection] = []
        self.serving = False
        # Set by a closed-loop run whose connections carry one request each: a connection
        # whose request was answered is renewed in place as its slot's next one (see
        # RawHttpConnection.connection_lost).
        self.renews = False
        # Set with ``renews`` where every connection's first read goes to ``_first_read``
        # (a response the parser frames alone): a read byte for byte the known response is
        # then answered, closed and renewed by the fused path (RawHttpConnection._answered).
        self.answers_known = False
        # A connection's first read, seen twice and found to be one whole final response
        # (only_final_response), and what a framer delivers for it: a connection that
        # carries one request and reads those bytes again needs no framer (see
        # RawHttpConnection._first_read). The first of two sightings waits in ``seen_once``;
        # one checked and found to be anything else (a head written apart from its body,
        # say) is kept in ``not_whole``, so that a server whose every first read is that
        # is not parsed again on every connection.
        self.known_read: bytes | None = None
        self.known_answer = (0, False)
        self.seen_once: bytes | None = None
        self.not_whole: bytes | None = None
        # Where the known answers' latencies and waits, and the renewals' connects, are
        # counted by whole microseconds as recorded (Recorder.count_as_recorded), set
        # with ``renews``.
        self.slots: tuple[list[int], list[int], list[int]] = ([], [], [])
        loop.add_reader(self.epoll.fileno(), self.ready)

    def ready(self) -> None:
        """Serve every socket the epoll says is ready, then tell the run of those closed
        and those connected meanwhile (whose connects the closed ones' successors made)."""
        by_fd = self.by_fd
        self.serving = True
        try:
            for fd, events in self.epoll.poll(0, _MAX_EVENTS):
                conn = by_fd.get(fd)
                if conn is not None:
                    # (the try inline, not a call per event: a connection is a few events)
                    try:
                        conn.on_events(events)
                    except Exception as exc:
                        self._failed(conn, exc)
            self._settle()
        finally:
            self.serving = False

    def _settle(self) -> None:
        closed, established, spent = self.closed, self.established, self.spent
        while closed or established or spent:
            if spent:
                self.spent = []
                self.renew_spent(spent)
            if closed:
                self.closed = []
                for conn, error in closed:
                    try:
                        conn.connection_lost(error)
                    except Exception as exc:
                        self._failed(conn, exc)
            if established:
                self.established = []
                for conn in established:
                    try:
                        conn._connected(0)
                    except Exception as exc:
                        self._failed(conn, exc)
            closed, established, spent = self.closed, self.established, self.spent

    def _failed(self, conn: RawHttpConnection, exc: Exception) -> None:
        """The engine's own bug, out of ``conn``'s handler: the driver stops the run."""
        context = {"message": "raw connection failed", "exception": exc, "protocol": conn}
        self.loop.call_exception_handler(context)

    def _later(self) -> None:
        """What was closed or connected outside :meth:`ready` (the run's timers, its
        start), told on the loop's next turn."""
        if self.serving:
            return
        self.serving = True
        try:
            self._settle()
        finally:
            self.serving = False

    def gone(self, conn: RawHttpConnection, exc: Exception | None) -> None:
        """``conn``'s socket is closed: the run hears of it after the events being served,
        or on the loop's next turn."""
        self._tell_later()
        self.closed.append((conn, exc))

    def connected_at_once(self, conn: RawHttpConnection) -> None:
        """``conn``'s connect returned connected: the run hears of it as of a socket that
        became writable."""
        self._tell_later()
        self.established.append(conn)

    def first_read_parsed(self, data: bytes, checked: Exchange | None = None) -> None:
        """A framer had a connection's first read: the second time the same bytes come,
        they are checked once and, if one whole final response, known from then on; if
        not, remembered as not whole, and not checked again while they keep coming."""
        if data == self.not_whole:
            return
        if data != self.seen_once:
            self.seen_once = data
            return
        answer = only_final_response(data)
        if answer is not None and checked is not None:
            # A load with checks: the answer is what a framer of its own delivers for these
            # bytes, the checks' verdict included (the same bytes, the same verdict).
            delivered: list[int] = []
            framer = checked.make_framer(lambda code, keep: delivered.append(code), _ignore)
            framer.feed(data)
            framer.release()
            answer = (delivered[0], answer[1]) if len(delivered) == 1 else None
        if answer is not None:
            self.known_read, self.known_answer = data, answer
        else:
            self.not_whole = data

    def renew_spent(self, spent: list[RawHttpConnection]) -> None:
        """``ClosedRun.lost``, ``after_lost``, ``_reopen`` and ``open_connection`` inlined
        for connections of this run whose one request was answered, closed and nothing
        outstanding: for each, in turn, the next request's permit taken, and the
        connection renewed as the one that carries it (``RawHttpConnection.renew``),
        without leaving the run's connections (the count of live ones unchanged, so is its
        peak: ``count_opened``). Called for the connections ``_answered`` closed
        (``spent``: no framer, their transports still set) without ``connection_lost``,
        and from ``connection_lost`` (``_renew_now``); a run stopping, or in its connect
        phase, hears of the close as of any other. One call for all of a turn's spent
        connections, what they share read once (a call and a dozen attribute reads a
        request fewer, issue 35); a failure is the engine's own bug, told as one of the
        connection's (``_failed``), and the others are renewed still."""
        run = spent[0].run
        family, address, by_fd = self.family, self.address, self.by_fd
        register = self.epoll.register
        answers_known = self.answers_known
        connect_slots = self.slots[2]
        for conn in spent:
            try:
                if run.stopping or run.phase is not None:
                    conn.transport = None
                    conn._write = None
                    conn._feed = _closed_feed
                    run.lost(conn, None)
                    continue
                now = monotonic_ns()
                # run.take(now), inlined for a run not stopping (checked above) whose one
                # fixed request is not rendered (no source: a raw connection's run has
                # none). tests/engine/test_rule_copies.py holds this copy to the rule.
                measure = run.measure_start_ns
                rec = conn._rec
                if now >= measure:
                    budget = run.budget
                    if budget is not None:
                        if budget <= 0:
                            conn.transport = None
                            conn._write = None
                            run.connections.discard(conn)
                            conn._feed = _closed_feed
                            run.check_finished()
                            continue
                        run.budget = budget - 1
                    rec.sent += 1
                run.opened += 1
                # renew(), inlined: of what it sets, a spent connection has the rest as it
                # is (``served``, ``_first``, ``broken``, ``_unsent``, ``_close_when_sent``,
                # its ``_feed`` the first-read shortcut; connection_lost sets them for the
                # others), its ``transport`` set to None where the connect fails below, its
                # ``opened_ns`` set below, and its ``_write`` unused (a raw run closes after
                # some requests).
                conn._measure = measure
                if not answers_known:
                    conn._feed = conn._attach_framer()
                # The connect counts from the take (a clock read a request fewer): the
                # request's latency is then its connect and its wait exactly.
                conn.connect_started = now
                conn.pending.append(now)
                # open(), its request written as its connect returns: a socket still
                # connecting refuses it (EAGAIN), one connected at once (loopback) takes it,
                # so the send tells which without a getpeername (a system call a request).
                # Its _start_connect inlined (a call a request fewer).
                sock = bare_socket(family, _STREAM)
                conn._sock = sock
                conn._fd = fd = sock.fileno()
                conn.connect_task = conn  # type: ignore[assignment]  # see done() and cancel()
                err = sock.connect_ex(address)
                if err != _IN_PROGRESS and err != 0:
                    conn.transport = None
                    conn.opened_ns = 0
                    conn._refused(err)
                    continue
                by_fd[fd] = conn
                opened = monotonic_ns()
                request = conn._request
                try:
                    sent = sock.send(request)
                except OSError as exc:
                    conn.transport = None
                    conn.opened_ns = 0
                    conn._not_sent_at_once(sock, fd, exc)
                    continue
                # Sent: _connected(0), ClosedRun.connected and send inlined for a run that
                # is not stopping (checked above), past its first contact, outside its
                # connect phase, one request a connection: the connect's phase recorded if
                # measured, the bytes counted; its ``_write`` stays None (only
                # Connection's keep-alive fast path uses it).
                conn.connect_task = None
                conn.transport = conn  # type: ignore[assignment]
                conn.opened_ns = opened  # open before the send that found it so
                if now >= measure:
                    # record_connect, without TLS: counted in its microsecond slot, or,
                    # past them, appended (Recorder.count_as_recorded)
                    connect = opened - now
                    value_us = connect // 1000
                    if value_us < _SLOTS_US:
                        connect_slots[value_us] += 1
                    else:
                        rec.connects.append(connect)
                size = conn._size  # the request's length (one fixed request, see send)
                rec.bytes_written += size  # the request's start stays in pending
                if sent < size:
                    conn._unsent = request[sent:]
                    register(fd, _IN | _OUT)
                else:
                    register(fd, _IN)
            except Exception as exc:
                self._failed(conn, exc)

    def _tell_later(self) -> None:
        """Outside :meth:`ready`, the first of a turn's news asks for :meth:`_later`."""
        if not self.serving and not (self.closed or self.established):
            self.loop.call_soon(self._later)

    def close(self) -> None:
        """Stop watching and close every socket still open (the run has stopped)."""
        if self.epoll.closed:
            return
        self.loop.remove_reader(self.epoll.fileno())
        for conn in list(self.by_fd.values()):
            conn.abort()
        self.epoll.close()


class RawHttpConnection(Connection):
    """A connection on a bare socket, its own transport (see the module doc)."""

    # Its run, as a raw connection sees it (set by Connection.__init__).
    run: RawOwner

    # At most 29 attributes (Connection's and these): CPython 3.11 keeps an object's
    # attributes inline, and specializes reading them and its methods, only up to that;
    # past it every ``self.x`` was a dict lookup (issue 35). So no attribute repeats what
    # another says: a connect is under way while ``connect_task`` is set (to this).
    def __init__(self, run: ConnectionOwner) -> None:
        super().__init__(run)
        self._raw = self.run.raw
        self._sock: bare_socket | None = None
        self._fd = -1
        self._unsent = b""  # what the kernel did not take yet
        self._close_when_sent = False
        self._open_loop = run.open_loop
        # Its request in one write (writelines would join the chunks on every send).
        self._request = b"".join(run.exchange.chunks)

    def renew(self) -> None:
        """This connection, closed and told to the run (``connection_lost``), becomes its
        slot's next connection: every attribute back to what a new one starts with, in
        place. A closed-loop run without keep-alive reopens each slot this way
        (``ClosedRun._reopen``) instead of making a new connection per request, whose
        object, deques and attributes were a fifth of the Python a request cost (issue
        35); the object, made by ``__init__`` once, keeps its attributes inline."""
        self.served = 0
        self.opened_ns = 0
        self._first = 0
        self.broken = ""
        self._measure = self.run.measure_start_ns
        self._unsent = b""
        self._close_when_sent = False
        self._feed = self._attach_framer()

    def _attach_framer(self) -> Callable[[bytes], object]:
        run = self.run
        if run.closes_after == 1 and run.exchange.parser_framed:
            return self._first_read  # the framer, if one is needed, comes with the bytes
        return super()._attach_framer()

    def _first_read(self, data: bytes) -> None:
        """The first bytes of a connection that carries one request (never two in flight:
        the spec refuses pipelining past what a connection carries). Bytes the run has
        already found to be one whole final response are that response: a new framer fed
        them would deliver the same, so none is made (a framer per connection was a tenth
        of the Python a connection costs). Anything else goes to a framer, which keeps the
        connection's stream from here on. After the known response the run closes the
        connection (its one request is answered), so no second read comes."""
        raw = self._raw
        if data == raw.known_read:
            self._feed = self._framed
            self.on_response(*raw.known_answer)
            return
        self._framed(data)
        if not self.broken:
            exchange = self.run.exchange
            raw.first_read_parsed(data, exchange if exchange.checks is not None else None)

    def _answered(self, raw: RawSockets) -> None:
        """The known response (``raw.known_read``) read whole as this connection's first
        read, in a closed-loop run whose connections carry one request each and renew in
        place (``raw.answers_known``), not stopping, a request outstanding: what
        ``_first_read``, ``Connection.on_response``, ``ClosedRun.response_done``,
        ``_retire``, :meth:`retire` and ``check_finished`` do for it, in one call (a call
        each was a quarter of the Python a connection costs, issue 35). Recorded as
        ``on_response`` records (an inlined copy of ``RunAccounting.record`` for an ok
        response: tests/engine/test_rule_copies.py holds it to the rule), then closed; once
        the events are served it is renewed (``RawSockets.spent``,
        :meth:`RawSockets.renew_spent`)."""
        now = monotonic_ns()
        run = self.run
        start = self.pending.popleft()
        code = raw.known_answer[0]
        if start >= self._measure:
            if code < 400:
                codes = self._codes
                codes[code] = codes.get(code, 0) + 1
                # Its latency and (record_phases, inlined) its wait, counted in their
                # microsecond slots (Recorder.count_as_recorded) or, past them, appended:
                # no framer saw the first byte, so the answer came whole in this read, its
                # wait from when the connection was open; its receive, nothing, is left
                # out, and so is its basis (a wait without either: PhaseSamples).
                latency_slots, wait_slots, _ = raw.slots
                latency = now - start
                value_us = latency // 1000
                if value_us < _SLOTS_US:
                    latency_slots[value_us] += 1
                else:
                    self._record(latency)
                opened = self.opened_ns
                wait = now - (opened if opened > start else start)
                value_us = wait // 1000
                if value_us < _SLOTS_US:
                    wait_slots[value_us] += 1
                else:
                    self._phases.waits.append(wait)
                run.completed += 1
            else:
                run.record(code, start, start, now)
        # (its ``_first`` stays 0: no framer saw a first byte since it was renewed)
        if self._unsent or self.pending:  # not a connection of one request, all of it sent
            self.served += 1  # (a connection renewed counts from 0 again: not needed there)
            self._feed = self._framed  # as _first_read: what follows is framed
            run.response_done(self, now, raw.known_answer[1])
            return
        # retire(), inlined: a connection answered is open, its connect done. It renews
        # itself once the events are served (this runs inside RawSockets.ready only).
        sock = self._sock
        assert sock is not None
        self._sock = None
        raw.by_fd.pop(self._fd, None)
        sock.close()
        raw.spent.append(self)
        # run.check_finished(), inlined
        if run.budget == 0 and run.completed >= run.recorder.sent:
            run.stop()

    def _framed(self, data: bytes) -> None:
        """Hand the stream, from ``data`` on, to a framer of its own."""
        self._feed = super()._attach_framer()
        self._feed(data)

    def open(self) -> None:
        """Start connecting (a failure comes back through ``connect_failed``)."""
        sock, fd, err = self._start_connect()
        if err == errno_mod.EINPROGRESS or err == 0:
            self._raw.by_fd[fd] = self
            self._connecting(sock, fd)
            return
        self._refused(err)

    def _start_connect(self) -> tuple[bare_socket, int, int]:
        """A new socket, its connect begun: the socket, its descriptor and ``connect_ex``'s
        answer (0 or EINPROGRESS: under way; else the error)."""
        raw = self._raw
        sock = bare_socket(raw.family, _STREAM)
        self._sock = sock
        self._fd = fd = sock.fileno()
        self.connect_task = self  # type: ignore[assignment]  # see done() and cancel()
        return sock, fd, sock.connect_ex(raw.address)

    def _connecting(self, sock: bare_socket, fd: int) -> None:
        """The connect is under way: connected already (loopback), the run hears of it
        with the news of this turn; else the socket's becoming writable will say."""
        raw = self._raw
        try:
            sock.getpeername()  # connected already (loopback): no event to wait for
        except OSError:
            raw.epoll.register(fd, _OUT)
            return
        raw.epoll.register(fd, _IN)
        # raw.connected_at_once(self), inlined
        if not raw.serving and not (raw.closed or raw.established):
            raw.loop.call_soon(raw._later)
        raw.established.append(self)

    def _refused(self, err: int) -> None:
        """The connect failed at once: the run hears of it on the loop's next turn."""
        self._close_socket()
        self._raw.loop.call_soon(self._connect_failed, OSError(err, os.strerror(err)))

    def _not_sent_at_once(self, sock: bare_socket, fd: int, exc: OSError) -> None:
        """A renewed connection's request, written as its connect returned, was refused
        (see :meth:`RawSockets.renew_spent`): still connecting (EAGAIN), the connect failed
        (named by the error the send took: it took SO_ERROR), or connected and broken at
        once (the write finds and names it once the run is told it connected)."""
        if not isinstance(exc, BlockingIOError):
            try:
                sock.getpeername()
            except OSError:
                self._close_socket()
                self._raw.loop.call_soon(self._connect_failed, exc)
                return
        self._connecting(sock, fd)

    # -- the connect, as the run's connect task --
    def done(self) -> bool:
        return self.connect_task is None

    def cancel(self) -> None:
        """Give up the connect (a timeout, the run stopping): a timed-out connect.

        As a task's cancel, only the first call counts: its failure reaches the run on the
        loop's next turn, and a second call before then (the sweeper and the connect
        phase, or the stop, in one turn) finds the socket already closed and does nothing,
        so the run hears of one failed connect and reopens its slot once. The same holds
        for a connect that failed at once and waits to be told (see :meth:`open`)."""
        if self.connect_task is not None and self._sock is not None:
            self._close_socket()
            self._raw.loop.call_soon(self._connect_failed, None)

    def _connect_failed(self, exc: OSError | None) -> None:
        self.connect_task = None
        self.run.connect_failed(self, exc)

    def _connected(self, events: int) -> None:
        sock = self._sock
        if sock is None:
            return  # given up (cancel) before the run heard it had connected
        if events & _BROKEN:
            err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) or errno_mod.ECONNREFUSED
            self._close_socket()
            self._connect_failed(OSError(err, os.strerror(err)))
            return
        self.connect_task = None
        if events:  # 0: connected at once, and registered for reading then
            self._raw.epoll.modify(self._fd, _IN)
        run = self.run
        run.contact.reached = True
        # Connection.connection_made, this connection its own transport, inlined (a call
        # fewer on a path taken once a request here).
        self.transport = self  # type: ignore[assignment]
        self._write = self.write
        if run.stopping:
            self.close()
            return
        self.opened_ns = now = monotonic_ns()
        if self.pending and self.connect_started >= self._measure:
            record_connect(self._rec, self.connect_started, self.tcp_done, now)
        run.connected(self)

    # -- events --
    def on_events(self, events: int) -> None:
        if self.connect_task is not None:
            self._connected(events)
            return
        if events & _OUT and self._unsent:
            self._send_more()
            if self._sock is None:
                return
        if not events & _READABLE:
            return
        # The read, here rather than in a method of its own (a call a request fewer).
        sock = self._sock
        assert sock is not None
        raw = self._raw
        try:
            data = sock.recv(_READ_SIZE)
        except BlockingIOError:
            return
        except OSError as exc:
            self._close_socket()
            raw.gone(self, exc)
            return
        if data:
            self._rec.bytes_read += len(data)  # data_received, inlined
            # A connection's first read (no framer yet) that is the known response, in a
            # run whose connections carry one request each and renew in place.
            if (
                data == raw.known_read
                and raw.answers_known
                and self.framer is None
                and self.pending
                and not self.run.stopping
            ):
                self._answered(raw)
                return
            self._feed(data)
            return
        self.eof_received()
        if self._sock is not None:
            self._close_socket()
            raw.gone(self, None)

    # -- the transport's part --
    def write(self, data: bytes) -> None:
        if self._sock is None:
            return
        if self._unsent:
            self._unsent += data
            return
        try:
            sent = self._sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError as exc:
            self._close_socket()
            self._raw.gone(self, exc)
            return
        if sent < len(data):
            self._unsent = data[sent:]
            self._raw.epoll.modify(self._fd, _IN | _OUT)

    def writelines(self, chunks: Any) -> None:
        self.write(b"".join(chunks))

    def _send_more(self) -> None:
        sock = self._sock
        assert sock is not None
        try:
            sent = sock.send(self._unsent)
        except BlockingIOError:
            return
        except OSError as exc:
            self._close_socket()
            self._raw.gone(self, exc)
            return
        self._unsent = self._unsent[sent:]
        if not self._unsent:
            if self._close_when_sent:
                self.abort()
                return
            self._raw.epoll.modify(self._fd, _IN)

    def retire(self) -> None:
        """Done with (the run's ``_retire``): :meth:`close` with its calls inlined, the way
        every connection of a load without keep-alive ends."""
        sock = self._sock
        if self.transport is None or sock is None:
            return
        if self._unsent:
            self._close_when_sent = True
            return
        if self.connect_task is not None:
            self.cancel()
            return
        self._sock = None
        raw = self._raw
        raw.by_fd.pop(self._fd, None)
        sock.close()
        # raw.gone(self, None), inlined
        if not raw.serving and not (raw.closed or raw.established):
            raw.loop.call_soon(raw._later)
        raw.closed.append((self, None))

    def connection_lost(self, exc: Exception | None) -> None:
        """As Connection's, its ``_release`` inlined and done first: the run, told next,
        may renew this connection as its slot's next one (:meth:`renew`). No framer to
        let go of unless the first read needed one."""
        self.transport = None
        self._write = None
        if self.framer is not None:
            self.framer.release()
            self.framer = None
        if self._raw.renews and exc is None and not self.pending:
            # What a spent connection (``_answered``) has as it is, renew() sets (its
            # framer, if its run has no first-read shortcut, comes in renew_spent).
            self.served = 0
            self._first = 0
            self.broken = ""
            self._unsent = b""
            self._close_when_sent = False
            if self._raw.answers_known:
                self._feed = self._first_read
            self._renew_now()  # (it tells the run of the close if it is stopping)
            return
        self._feed = _closed_feed
        self.run.lost(self, exc)

    def _renew_now(self) -> None:
        """:meth:`RawSockets.renew_spent` for this connection alone (one ``connection_lost``
        closed with nothing outstanding)."""
        self._raw.renew_spent([self])

    def send(self, start: int, intended: int) -> None:
        """As Connection's, the one request's bytes taken from the connection."""
        self.write(self._request)
        self._rec.bytes_written += self._size
        self.pending.append(start)
        if self._open_loop:
            self.intended.append(intended)

    def close(self) -> None:
        """Close once what was written has gone out (as ``transport.close``)."""
        if self._unsent:
            self._close_when_sent = True
        else:
            self.abort()

    def abort(self) -> None:
        """Close now (as ``transport.abort``); the run hears of it as a lost connection."""
        if self._sock is None:
            return
        if self.connect_task is not None:
            self.cancel()
            return
        self._close_socket()
        self._raw.gone(self, None)

    def is_closing(self) -> bool:
        return self._sock is None or self._close_when_sent

    def _close_socket(self) -> None:
        sock = self._sock
        if sock is None:
            return
        self._sock = None
        self._raw.by_fd.pop(self._fd, None)
        sock.close()  # closing the descriptor takes it out of the epoll too

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


def can_use_raw_sockets() -> bool:
    """This platform has what the raw path needs (Linux's epoll)."""
    return hasattr(select, "epoll")


def _ignore(reason: str) -> None:
    """A framer's ``on_error`` where only a whole response is looked at."""
