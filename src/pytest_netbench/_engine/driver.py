"""Runs one worker's share of a load on an asyncio loop (uvloop when available).

Sets up the window (warm-up, per-second ticks, deadline, timeout sweeper), starts the run
policy, waits for it to end and returns the worker's :class:`WorkerOutcome`.
"""

from __future__ import annotations

import asyncio
import resource
import ssl
from collections.abc import Callable, Coroutine
from time import monotonic_ns
from typing import Any, TypeVar

from pytest_netbench._engine.asyncio_engine import BaseRun, ClosedRun, OpenRun
from pytest_netbench._engine.connection import Connection
from pytest_netbench._engine.exchange import build_exchange
from pytest_netbench._engine.schedule import Schedule
from pytest_netbench._engine.share import WorkerShare
from pytest_netbench._errors import EngineFault, SpecError
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import Recorder, WorkerOutcome

_NS = 1_000_000_000
T = TypeVar("T")


def thread_cpu_seconds() -> float:
    """CPU time of the calling thread only, so other threads in a test process don't count."""
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return usage.ru_utime + usage.ru_stime


def thread_busy_seconds() -> float:
    """Time the calling thread ran *or waited to run* (Linux schedstat), else its CPU time.

    A generator thread that was runnable nearly all the time was the bottleneck, even when
    a server on the same cores kept it from getting the CPU it wanted.
    """
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            ran, waited, _ = f.read().split()
        return (int(ran) + int(waited)) / _NS
    except (OSError, ValueError):
        return thread_cpu_seconds()


def make_ssl_context(spec: LoadSpec) -> ssl.SSLContext | None:
    if spec.scheme != "https":
        return None
    context = ssl.create_default_context()
    if not spec.verify_tls:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


async def run_share_async(spec: LoadSpec, share: WorkerShare, loop_name: str) -> WorkerOutcome:
    loop = asyncio.get_running_loop()
    exchange = build_exchange(spec)
    measure_start = share.start_at_ns + int(spec.warmup_s * _NS)
    recorder = Recorder(measure_start, open_loop=share.rate is not None)
    wait = (share.start_at_ns - monotonic_ns()) / _NS
    if wait > 0:
        await asyncio.sleep(wait)
    run: BaseRun
    args = (loop, spec, exchange, share, recorder, make_ssl_context(spec))
    if share.rate is not None:
        if spec.pipeline != 1:
            raise SpecError("pipelining is for closed-loop runs; drop pipeline or rate")
        schedule = Schedule(
            share.rate,
            spec.arrival,
            seed=share.index + 1,
            offset_fraction=share.index / share.workers,
        )
        run = OpenRun(*args, schedule=schedule)
    else:
        run = ClosedRun(*args)

    cpu_at_window = [thread_cpu_seconds(), thread_busy_seconds()]
    handles: list[asyncio.TimerHandle] = []

    def at(when_ns: int, callback: Callable[[], None]) -> None:
        handles.append(loop.call_later(max(when_ns - monotonic_ns(), 0) / _NS, callback))

    def open_window() -> None:
        recorder.reset_window()
        cpu_at_window[0] = thread_cpu_seconds()
        cpu_at_window[1] = thread_busy_seconds()
        _arm_ticks(loop, run, recorder, measure_start, handles)

    if spec.warmup_s > 0:
        at(measure_start, open_window)
    else:
        open_window()
    if spec.duration_s is not None:
        at(measure_start + int(spec.duration_s * _NS), run.end_window)
    sweep_every = min(max(min(spec.timeout_s, spec.connect_timeout_s) / 10, 0.01), 0.25)
    _arm_sweeper(loop, run, sweep_every, handles)

    faults: list[BaseException] = []
    outer_handler = loop.get_exception_handler()

    def on_loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        # An exception out of one of this run's protocol callbacks is the engine's own bug:
        # the loop would log it and drop the connection, and the run would count a reset
        # against the server. Stop the run and raise it instead.
        protocol = context.get("protocol")
        exc = context.get("exception")
        if isinstance(protocol, Connection) and protocol.run is run and exc is not None:
            faults.append(exc)
            run.stop()
        elif outer_handler is not None:
            outer_handler(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(on_loop_exception)
    run.begin()
    try:
        await run.done
    finally:
        for handle in handles:
            handle.cancel()
        if not run.stopping:
            run.stop()
        loop.set_exception_handler(outer_handler)
    if faults:
        raise EngineFault(
            f"the load engine failed inside a connection callback ({faults[0]!r}); this is a"
            " bug in pytest-netbench, not a fault of the server: please report it"
        ) from faults[0]
    end = run.end_ns
    outcome = recorder.finish(in_flight=run.in_flight, window_end_ns=max(end, measure_start))
    outcome.cpu_s = thread_cpu_seconds() - cpu_at_window[0]
    outcome.busy_s = thread_busy_seconds() - cpu_at_window[1]
    outcome.connections_opened = run.opened
    outcome.connections_peak = run.peak
    outcome.loop = loop_name
    if isinstance(run, OpenRun):
        outcome.scheduled = run.scheduled
        outcome.unsent = sum(1 for t in run.backlog if t >= measure_start)
        outcome.late_sends = run.late_sends
    return outcome


def _arm_ticks(
    loop: asyncio.AbstractEventLoop,
    run: BaseRun,
    recorder: Recorder,
    measure_start: int,
    handles: list[asyncio.TimerHandle],
) -> None:
    next_tick = [measure_start + _NS]

    def tick() -> None:
        if run.stopping:
            return
        recorder.tick()
        next_tick[0] += _NS
        handles.append(loop.call_later(max(next_tick[0] - monotonic_ns(), 0) / _NS, tick))

    handles.append(loop.call_later(max(next_tick[0] - monotonic_ns(), 0) / _NS, tick))


def _arm_sweeper(
    loop: asyncio.AbstractEventLoop,
    run: BaseRun,
    every_s: float,
    handles: list[asyncio.TimerHandle],
) -> None:
    def sweep() -> None:
        if run.stopping:
            return
        run.sweep()
        handles.append(loop.call_later(every_s, sweep))

    handles.append(loop.call_later(every_s, sweep))


def resolve_loop(name: str) -> str:
    """Pick the loop: uvloop when installed (auto), plain asyncio otherwise."""
    if name in ("auto", "uvloop"):
        try:
            import uvloop  # noqa: F401
        except ImportError:
            if name == "uvloop":
                raise SpecError(
                    "loop='uvloop' was asked for but uvloop is not installed:"
                    " pip install uvloop, or use loop='asyncio'"
                ) from None
            return "asyncio"
        return "uvloop"
    if name in ("asyncio", "trio"):
        return name
    raise SpecError(f"unknown loop {name!r}: use auto, uvloop, asyncio or trio")


def run_on_loop(loop_name: str, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion on a fresh loop of the named kind."""
    if loop_name == "uvloop":
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(factory())
    with asyncio.Runner() as runner:
        return runner.run(factory())


def run_share(spec: LoadSpec, share: WorkerShare) -> WorkerOutcome:
    loop_name = resolve_loop(spec.loop)
    if loop_name == "trio":
        from pytest_netbench._engine.trio_engine import run_share_trio

        return run_share_trio(spec, share)
    return run_on_loop(loop_name, lambda: run_share_async(spec, share, loop_name))
