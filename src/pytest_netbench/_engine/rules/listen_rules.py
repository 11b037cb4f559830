"""The run rules of a listen load (a WebSocket load with ``listen=True``), written once for
every loop: what the server's pushes and a held connection's fate count as.

A listen load sends no messages: it holds its connections and reads what the server
pushes. Its units are *deliveries*, so that ``sent == ok + errors_total + in_flight`` holds
as for any load:

- a push the window saw arrive whole is ``sent`` and ``ok``, with one latency sample: from
  the server's stamp to its arrival (the stamp read by ``_proto.ws_push``, the arrival on
  this host's wall clock), or without a stamp the wait since the connection's last push
  (or since the window opened, for its first);
- a push whose stamp cannot be read is ``sent`` and a ``verify`` error, saying why;
- a held connection lost inside the window is ``sent`` and one error: ``reset`` when the
  server closed it (with a close frame: its code in ``status_codes`` and in the words) or
  TCP alone, ``protocol`` for a broken frame, ``timeout`` when a client ping got no pong
  within ``timeout``; it is not replaced (a listen load measures the connections it
  opened), and when none is left the load ends;
- a push that has begun to arrive when the load ends is ``in_flight``.

Pushes that arrive before the window (during warm-up) are neither counted nor timed.

Each held connection is also a stream in the vocabulary of server-sent events and gRPC
streams (``result.stream``, mode ``"ws"``): its first push (from when it began listening,
or the window's start if later), the gaps between its pushes inside the window, and its
count of pushes; a connection that heard nothing is a stream of no events.
"""

from __future__ import annotations

from time import monotonic_ns

from pytest_netbench._engine.rules.accounting import RunAccounting
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._proto.ws_push import StampReader, ping_frame, ping_sent_ns
from pytest_netbench._stats.streams import StreamSamples


class Held:
    """One held connection's part of the rules: when its last push came, the send time of
    its client ping awaiting a pong (0: none), whether its loss has been counted, and (as a
    stream) when it began listening and its pushes in the window."""

    __slots__ = ("events", "last_ns", "listening_ns", "lost", "ping_ns", "pongs")

    def __init__(self) -> None:
        self.last_ns = 0
        self.listening_ns = 0
        self.events = 0
        self.ping_ns = 0
        self.pongs = 0
        self.lost = False


class ListenRules:
    """A listen load's counting (see the module's docstring), on the run's recorder."""

    __slots__ = ("_held", "_timeout_ns", "ping_every_s", "pings", "pongs", "run", "stamps")

    def __init__(self, run: RunAccounting) -> None:
        spec = run.spec
        self.run = run
        self.stamps: StampReader | None = None
        if spec.stamp_field is not None or spec.stamp_binary:
            self.stamps = StampReader(spec.stamp_field, spec.stamp_binary)
        self.ping_every_s = spec.ping_every_s
        self._timeout_ns = int(spec.timeout_s * NS_PER_S)
        self.pings = 0  # client pings sent, and the pongs that answered them
        self.pongs = 0
        self._held: list[Held] = []  # every connection that listened: a stream each
        run.push_streams = StreamSamples("ws")

    def hold(self, held: Held, now: int) -> None:
        """The connection is open and listening from ``now``."""
        held.last_ns = held.listening_ns = now
        self._held.append(held)

    def push(self, held: Held, stamp_ns: int, problem: str, now: int, wall_ns: int) -> None:
        """A whole push arrived at ``now`` (``wall_ns`` on the wall clock)."""
        last = held.last_ns
        held.last_ns = now
        run = self.run
        measure = run.measure_start_ns
        if now < measure or run.stopping:
            return
        rec = run.recorder
        rec.sent += 1
        run.completed += 1
        streams = run.push_streams
        if streams is not None:
            if held.events == 0:
                streams.first_event.append(now - max(held.listening_ns, measure))
            elif last >= measure:
                streams.gaps.append(now - last)
            held.events += 1
        if problem:
            rec.error("verify", problem)
        elif stamp_ns:
            rec.latencies.append(max(wall_ns - stamp_ns, 0))  # a server clock ahead: 0
        else:
            rec.latencies.append(now - (last if last > measure else measure))
        if run.budget is not None:
            run.budget -= 1
            if run.budget <= 0:
                run.stop()  # a count of pushes reached

    def lose(self, held: Held, kind: str, detail: str, code: int = 0) -> None:
        """The connection is gone: counted once, if inside the window (see the module)."""
        if held.lost:
            return
        held.lost = True
        run = self.run
        if run.stopping or monotonic_ns() < run.measure_start_ns:
            return
        rec = run.recorder
        rec.sent += 1
        run.completed += 1
        rec.error(kind, detail)
        if code:
            rec.status_codes[code] = rec.status_codes.get(code, 0) + 1

    def end(self, partial: int) -> None:
        """The load ends with ``partial`` pushes begun and not whole: in flight (within
        what is left of a count of pushes: ``requests=N`` sends N). Call before the run's
        ``stop_counting``."""
        run = self.run
        if run.stopping:
            return
        if run.push_streams is not None:  # each connection that listened is a stream
            run.push_streams.events.extend(held.events for held in self._held)
        if run.budget is not None:
            partial = min(partial, max(run.budget, 0))
        run.recorder.sent += partial
        run.in_flight += partial

    def ping(self, held: Held, now: int) -> bytes | None:
        """The ping to write on the connection now, or None when the last one has waited
        longer than ``timeout`` for its pong (the caller loses the connection as
        ``timeout``: :meth:`ping_timeout_words`). A ping still within its time is
        followed by another all the same."""
        if held.ping_ns and now - held.ping_ns > self._timeout_ns:
            return None
        if not held.ping_ns:
            held.ping_ns = now
        self.pings += 1
        return ping_frame(now)

    def ping_timeout_words(self) -> str:
        return f"no pong to a client ping within {self.run.spec.timeout_s}s"

    def pong(self, held: Held, payload: bytes) -> None:
        """A pong came: the oldest ping awaiting one is answered (a pong answers every
        ping before it, RFC 6455 section 5.5.3)."""
        sent = ping_sent_ns(payload)
        if sent >= held.ping_ns > 0:
            held.ping_ns = 0
        held.pongs += 1
        self.pongs += 1
