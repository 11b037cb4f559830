"""The run rules of a streaming load (``stream=``), written once for every loop.

A stream is a request: ``sent == ok + errors_total + in_flight`` holds as for any load.
What the framer (``_proto.streaming``) saw of each measured stream is recorded here, from
the request's send (open loop: from when it was due, so a late send counts against the
server as in every open-loop figure):

- a stream whose status is below 400 and that passed its check (``stream_events``,
  ``stream_end``; for ``sse``, a ``text/event-stream`` answer with no malformed event) is
  ``ok``, its whole time the latency; one that did not is a ``verify`` error saying why;
- a status of 400 or more is a ``status`` error whose words carry the start of its body;
- a connection lost after a stream's head and before its end makes it ``truncated``; a
  stream that outlives the load's ``timeout`` is a ``timeout``;

and the first byte, first event, gaps and events of each of them (cut short ones too) go to
the stream samples (``LoadResult.stream``).
"""

from __future__ import annotations

from pytest_netbench._proto.streaming import StreamLedger, StreamTimes
from pytest_netbench._stats.recorder import Recorder
from pytest_netbench._stats.streams import StreamSamples


class StreamRules:
    """A streaming load's counting, on the run's recorder (see the module)."""

    __slots__ = ("ledger", "recorder", "samples")

    def __init__(self, ledger: StreamLedger, recorder: Recorder) -> None:
        self.ledger = ledger
        self.recorder = recorder
        self.samples = StreamSamples(ledger.mode)
        if ledger.goodput is not None:
            self.samples.good = 0

    def _sample(self, framer: StreamTimes, base: int) -> None:
        if not framer.first_byte_ns or framer.status >= 400:
            return
        first_event = framer.first_event_ns - base if framer.events else -1
        self.samples.add(
            max(framer.first_byte_ns - base, 0), first_event, framer.gaps, framer.events
        )
        if self.ledger.mode == "openai":
            # vLLM's TPOT: (latency - TTFT) / (output tokens - 1), latency at data: [DONE].
            tokens = framer.tokens()
            tpot = -1
            if tokens > 1 and framer.events:
                end = framer.done_ns or framer.last_event_ns
                tpot = (end - framer.first_event_ns) // (tokens - 1)
            self.samples.add_tokens(tokens, tpot)

    def finished(self, code: int, base: int, now: int = 0) -> str:
        """The stream that just completed (``ledger.last``) at ``now``, from ``base``: its
        samples recorded, and with a goodput SLO whether it met it; the words of its error
        ("" when it is whole). Called for a measured stream only."""
        framer = self.ledger.last
        if framer is None:
            return ""
        self._sample(framer, base)
        if code >= 400:
            body = framer.error_body.decode("utf-8", "replace").strip()
            return f"HTTP {code}: {' '.join(body.split())[:150]}" if body else f"HTTP {code}"
        problem = framer.problem or self.ledger.check.problem(framer.events, framer.end_seen)
        slo = self.ledger.goodput
        if slo is not None and not problem:
            self.samples.good += self._met(slo, framer, base, now)
        return problem

    def _met(self, slo: tuple[int, int, int], framer: StreamTimes, base: int, now: int) -> bool:
        """Whether an ok stream met every metric of the goodput SLO, as vLLM's benchmark
        counts it: TTFT, TPOT (0 for a stream of one token or none) and E2EL each at most
        its bound. A stream with no token has no TTFT, so it fails a TTFT bound."""
        ttft_max, tpot_max, e2el_max = slo
        if ttft_max >= 0 and (not framer.events or framer.first_event_ns - base > ttft_max):
            return False
        if tpot_max >= 0:
            tokens = framer.tokens()
            if tokens > 1 and framer.events:
                end = framer.done_ns or framer.last_event_ns
                if (end - framer.first_event_ns) / (tokens - 1) > tpot_max:
                    return False
        return e2el_max < 0 or now - base <= e2el_max

    def cut(self, framer: object, base: int, error: str) -> tuple[str, str]:
        """A stream in progress on a connection lost as ``error``: its samples recorded and
        ``(kind, words)`` of its error, or ``("", "")`` when none had begun."""
        if not isinstance(framer, StreamTimes) or not framer.in_stream():
            return "", ""
        if not 200 <= framer.status < 400:
            return "", ""  # no head yet, or an error answer cut short: the error as it is
        self._sample(framer, base)
        events = f"{framer.events} event{'s' if framer.events != 1 else ''}"
        if error == "timeout":
            return "timeout", f"the stream had not ended after {events} within the load's timeout"
        if error in ("reset", "truncated"):
            return "truncated", f"the connection closed mid-stream, after {events}"
        return "", ""
