"""The client-delay probe: one more client, beside the load, that connects, makes one
exchange and disconnects every ``probe_every`` seconds ("how long does one more client
wait while the server is saturated", seed 002's last column).

It runs in a process of its own with blocking sockets: on the load's event loop it would
wait behind the load's own long loop turns and measure the generator, not the server.
Each probe is timed from its connect to the last byte of the answer (framed and checked by
the same sans-IO framers as the load's), and kept with its start instant so the caller
keeps only the probes that started inside the measured window.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import socket
import threading
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from time import monotonic_ns

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.connecting import make_ssl_context
from pytest_netbench._engine.rules.exchange import Exchange, build_exchange
from pytest_netbench._engine.shares.ws_probe import ws_probe_once
from pytest_netbench._errors import EngineFault
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.checks import STATUS_BITS
from pytest_netbench._proto.source import preview
from pytest_netbench._proto.tcp import OK
from pytest_netbench._stats.probe import ProbeSample

_RECEIVE_BYTES = 65536
_READY_WITHIN_S = 60.0


class ProbeProcess:
    """Runs the probe in a spawned process from :meth:`start` until :meth:`stop`."""

    def __init__(self, spec: LoadSpec, every_s: float) -> None:
        self.spec = spec
        self.every_s = every_s
        self._proc: BaseProcess | None = None
        self._pipe: Connection | None = None

    def start(self) -> None:
        context = multiprocessing.get_context("spawn")
        parent_end, child_end = context.Pipe(duplex=True)
        self._proc = context.Process(
            target=_probe_main,
            args=(self.spec, self.every_s, child_end),
            name="netbench-probe",
            daemon=True,
        )
        self._proc.start()
        child_end.close()
        self._pipe = parent_end
        # Probes start before the load does, so the first second of the window has them.
        try:
            ready = parent_end.poll(_READY_WITHIN_S) and parent_end.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            self._proc.kill()
            self._proc.join()
            parent_end.close()
            raise EngineFault(f"the client-delay probe did not start within {_READY_WITHIN_S} s")

    def stop(self) -> list[ProbeSample]:
        """End the probe; the samples it took (none if it failed to report)."""
        proc, pipe = self._proc, self._pipe
        if proc is None or pipe is None:
            return []
        samples: list[ProbeSample] = []
        try:
            with contextlib.suppress(OSError):
                pipe.send("stop")
            # A probe under way finishes first: up to its timeouts, then a margin.
            if pipe.poll(self.spec.connect_timeout_s + self.spec.timeout_s + 5.0):
                with contextlib.suppress(EOFError, OSError):
                    samples = pipe.recv()
        finally:
            proc.join(timeout=2)
            if proc.is_alive():
                proc.kill()
                proc.join()
            pipe.close()
        return samples


def _probe_main(spec: LoadSpec, every_s: float, pipe: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when it ends
    exchange = build_exchange(spec)
    websocket = exchange.websocket
    request = probe_request(spec, exchange) if websocket is None else b""
    pipe.send("ready")
    samples: list[ProbeSample] = []  # list.append is atomic: each probe's thread adds one

    def one_probe() -> None:
        start = monotonic_ns()
        if websocket is not None:
            samples.append(ws_probe_once(spec, websocket, start))
        else:
            samples.append(probe_once(spec, exchange, start, request))

    # One more client every interval, on schedule, each on a thread of its own: a probe the
    # server keeps waiting does not hold back the next (one that waited for it would leave
    # a window of a stalled server without a probe, the delay it exists to show).
    running: list[threading.Thread] = []
    every_ns = int(every_s * NS_PER_S)
    due = monotonic_ns()
    while True:
        wait_s = max(due - monotonic_ns(), 0) / NS_PER_S
        if pipe.poll(wait_s):
            break  # asked to stop
        running = [thread for thread in running if thread.is_alive()]
        thread = threading.Thread(target=one_probe, name="netbench-probe-client", daemon=True)
        thread.start()
        running.append(thread)
        due = max(due + every_ns, monotonic_ns())
    for thread in running:  # the probes under way end by their own timeouts
        thread.join()
    pipe.send(sorted(samples, key=lambda sample: sample.start_ns))
    pipe.close()


def probe_request(spec: LoadSpec, exchange: Exchange) -> bytes:
    """What the probe sends: the load's request; a fixed mix's first kind; for requests
    rendered from feeders, the first request of the load's first share."""
    if exchange.chunks:
        return b"".join(exchange.chunks)
    if exchange.mix_requests:
        return exchange.mix_requests[0]
    return preview(spec, 1)[0][1]


def probe_once(spec: LoadSpec, exchange: Exchange, start: int, request: bytes) -> ProbeSample:
    """Connect, send ``request``, read its answer, close; timed from ``start``."""
    codes: list[int] = []
    problems: list[str] = []
    framer = exchange.make_framer(lambda code, _keep: codes.append(code), problems.append)
    address = (exchange.connect_host, exchange.connect_port)
    try:
        sock = socket.create_connection(address, timeout=spec.connect_timeout_s)
    except TimeoutError:
        return ProbeSample(start, monotonic_ns() - start, "connect", "connect timeout")
    except OSError as exc:
        return ProbeSample(start, monotonic_ns() - start, "connect", str(exc))
    try:
        context = make_ssl_context(spec)
        if context is not None:
            sock = context.wrap_socket(sock, server_hostname=spec.host)
        sock.settimeout(spec.timeout_s)
        sock.sendall(request)
        while not codes and not problems:
            data = sock.recv(_RECEIVE_BYTES)
            if not data:
                if not framer.feed_eof():
                    problems.append("the server closed the connection before answering")
                break
            framer.feed(data)
    except TimeoutError:
        return ProbeSample(start, monotonic_ns() - start, "timeout", "no answer in time")
    except OSError as exc:
        return ProbeSample(start, monotonic_ns() - start, "reset", str(exc))
    finally:
        sock.close()
    took = monotonic_ns() - start
    if problems or not codes:
        return ProbeSample(start, took, "protocol", problems[0] if problems else "no answer")
    code = codes[0]
    if exchange.is_http:
        code &= STATUS_BITS  # the probe times an answer; the load counts the checks
        return ProbeSample(start, took, "status" if code >= 400 else "", f"HTTP {code}")
    return ProbeSample(start, took, "" if code == OK else "verify", "echo differs")
