"""A request's phases, written once for every loop (see ``_model.phases``).

The connection supplies the timestamps it already sees: when its connect began, when TCP
was up (``tcp_done``: 0 without TLS), when it was open, when a request was written (its
``start``), when the first byte of its answer was parsed (``first``: 0 when it came in
the read that completed it) and when the answer was complete (``now``). The arithmetic is
here, so asyncio, uvloop and trio give the same figures.

The fast paths (``fused_http``) record no phases: what they handle came whole in one
read, so its wait is its ``now - start`` and its receive nothing, which the recorder
derives from the latency it already keeps (``recorder.fold_phases``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from pytest_netbench._proto.framing import Framer
from pytest_netbench._proto.http import HeadResponseFramer, ResponseFramer
from pytest_netbench._stats.recorder import PhaseSamples, Recorder


def record_phases(samples: PhaseSamples, start: int, opened: int, first: int, now: int) -> None:
    """One ok response's wait and receive. ``start``: when its latency counts from (the
    actual send; for the request that opened its connection, the connect's start);
    ``opened``: when its connection was open, before which nothing was written."""
    written = opened if opened > start else start
    if not first or first > now:
        first = now
    elif first < written:
        first = written  # an answer begun before the request was all out (an early 4xx)
    samples.basis.append(now - start)
    samples.waits.append(first - written)
    samples.receives.append(now - first)


def record_connect(recorder: Recorder, started: int, tcp_done: int, now: int) -> None:
    """A connection opened for a measured request is open at ``now``: its TCP connect
    (``started`` to ``tcp_done``, or to ``now`` without TLS) and its TLS handshake."""
    if tcp_done:
        recorder.connects.append(tcp_done - started)
        recorder.handshakes.append(now - tcp_done)
    else:
        recorder.connects.append(now - started)


def record_upgrade(recorder: Recorder, opened: int, first: int, now: int) -> None:
    """A WebSocket connection opened for a measured message was accepted at ``now``: its
    opening handshake's wait (the upgrade request, written as the connection was open at
    ``opened``, to the answer's first byte at ``first``; 0: it came in the read that
    completed it) and receive (that byte to the answer's end)."""
    if not first or first > now:
        first = now
    elif first < opened:
        first = opened
    recorder.upgrade_waits.append(first - opened)
    recorder.upgrade_receives.append(now - first)


def watch_first_byte(framer: Framer, began: Callable[[], None]) -> None:
    """Have an HTTP/1.1 framer call ``began`` as each answer's first byte is parsed (other
    framers: each answer counts as come whole in the read that completed it)."""
    if isinstance(framer, ResponseFramer):
        framer.time_first_bytes(began)
    elif isinstance(framer, HeadResponseFramer):
        framer.on_begin = began
    elif _is_stream_framer(framer):  # a stream's wait ends at its first byte too
        framer.on_first_byte = began  # type: ignore[attr-defined]


def _is_stream_framer(framer: Framer) -> bool:
    """A stream's framer: none exists before ``_proto.streaming`` is imported, which only a
    streaming load does (an HTTP/1.1 command starts without it, issue 35)."""
    streaming = sys.modules.get("pytest_netbench._proto.streaming")
    return streaming is not None and isinstance(framer, streaming.StreamFramer)
