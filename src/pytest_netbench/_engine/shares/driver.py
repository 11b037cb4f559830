"""Runs one worker's share of a load on an asyncio loop (uvloop when available).

Sets up the window (warm-up, per-second ticks, deadline, timeout sweeper), starts the run
policy, waits for it to end and returns the worker's :class:`WorkerOutcome`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from time import monotonic_ns
from typing import Any, TypeVar

from pytest_netbench._engine.asyncio_io.connect_phase import ConnectPhase, phase_limit_s
from pytest_netbench._engine.asyncio_io.connection import Connection
from pytest_netbench._engine.asyncio_io.engine import BaseRun, ClosedRun, OpenRun
from pytest_netbench._engine.asyncio_io.timers import RunTimers
from pytest_netbench._engine.rules.accounting import request_source
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.connecting import make_ssl_context
from pytest_netbench._engine.rules.exchange import Exchange, build_exchange
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.watch import ShareWatch, Watcher
from pytest_netbench._errors import EngineFault
from pytest_netbench._host.cpus import pinned_thread
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.source import RequestSource
from pytest_netbench._stats.histogram import count_microseconds
from pytest_netbench._stats.recorder import WorkerOutcome

T = TypeVar("T")
_NEVER_NS = 2**63 - 1


async def run_share_async(
    spec: LoadSpec,
    share: WorkerShare,
    loop_name: str,
    released_ns: int,
    watch: ShareWatch | None = None,
) -> WorkerOutcome:
    """Run one share on the running loop; ``released_ns`` is when the share was released,
    on this host's monotonic clock (see ``WorkerShare.start_at``); ``watch``: progress
    reports and stop requests (see ``watch``)."""
    exchange = build_exchange(spec)
    source = request_source(spec, share)  # before the start: a shuffled file is indexed
    try:
        return await _run_share(spec, share, loop_name, released_ns, watch, exchange, source)
    finally:
        if source is not None:
            source.close()


async def _run_share(
    spec: LoadSpec,
    share: WorkerShare,
    loop_name: str,
    released_ns: int,
    watch: ShareWatch | None,
    exchange: Exchange,
    source: RequestSource | None,
) -> WorkerOutcome:
    loop = asyncio.get_running_loop()
    start_at = share.start_at(released_ns)
    await _sleep_until(start_at)
    run_class: type[BaseRun] = ClosedRun if share.rate is None else OpenRun
    if spec.listen:
        from pytest_netbench._engine.asyncio_io.ws_listen import ListenRun

        run_class = ListenRun  # held WebSocket connections (see ws_listen)
    ssl_context = make_ssl_context(spec)
    run: BaseRun = run_class(loop, spec, exchange, share, start_at, ssl_context, source)
    timers = RunTimers(loop)
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
    sweep_every = min(max(min(spec.timeout_s, spec.connect_timeout_s) / 10, 0.01), 0.25)
    _arm_sweeper(run, sweep_every, timers)
    watcher = Watcher(watch, run) if watch is not None else None
    if watcher is not None:
        _arm_watcher(run, watcher, timers)
    phase = None
    if spec.connect_first and share.rate is None and not (watcher and watcher.check()):
        rate = _share_connect_rate(spec, share)
        phase = run.phase = ConnectPhase(run, share.connections, rate, phase_limit_s(spec))
        await phase.open_all()
        window_start = monotonic_ns()
        if watch is not None and watch.all_ready is not None:
            # Every share opens its window at one instant, once all of them are ready.
            window_start = await loop.run_in_executor(None, watch.all_ready, window_start)
            await _sleep_until(window_start)
        run.move_window(window_start)
    measure_start = run.measure_start_ns

    def at(slot: str, when_ns: int, callback: Callable[[], None]) -> None:
        def fire() -> None:
            if monotonic_ns() < when_ns:
                at(slot, when_ns, callback)  # woken early (see _sleep_until)
            else:
                callback()

        timers.after(slot, max(when_ns - monotonic_ns(), 0) / NS_PER_S, fire)

    def open_window() -> None:
        run.open_window()
        _arm_ticks(run, timers)

    if run.stopping:
        pass  # stopped while the share waited for its start or opened its connections
    elif watcher is not None and watcher.check():
        run.stop()  # asked to stop while the share waited for its start
    else:
        if spec.warmup_s > 0:
            at("window opens", measure_start, open_window)
        else:
            open_window()
        if spec.duration_s is not None:
            at("window ends", run.deadline_ns, run.end_window)
        run.begin()
    try:
        await run.done
    finally:
        timers.cancel_all()
        if not run.stopping:
            run.stop()
        loop.set_exception_handler(outer_handler)
    if run.ending:
        await asyncio.wait(run.ending)  # WebSocket closes, each within its bound
    if faults:
        raise EngineFault(
            f"the load engine failed inside a connection callback ({faults[0]!r}); this is a"
            " bug in pytest-netbench, not a fault of the server: please report it"
        ) from faults[0]
    if run.contact.gave_up:
        raise run.contact.error(spec)
    if run.source_failure is not None:
        raise run.source_failure  # on_end="error" ran out, or a row renders no request
    outcome = run.finish(loop_name)
    outcome.connections_without_exchange = run.without_exchange
    if phase is not None:
        _record_phase(outcome, phase)
    return outcome


async def _sleep_until(when_ns: int) -> None:
    """Sleep until ``when_ns`` has passed. uvloop's timers keep milliseconds and can wake
    up to one early: a request sent then would count as warm-up, unmeasured though the
    server answers it (a request-count run put one more request on the wire than asked)."""
    while (left := when_ns - monotonic_ns()) > 0:
        await asyncio.sleep(left / NS_PER_S)


def _share_connect_rate(spec: LoadSpec, share: WorkerShare) -> float | None:
    return spec.connect_rate / share.workers if spec.connect_rate is not None else None


def _record_phase(outcome: WorkerOutcome, phase: ConnectPhase) -> None:
    outcome.connect_first = True
    outcome.connections_ready = len(phase.ready)
    outcome.connect_failures = phase.failures
    outcome.connect_failure_sample = phase.failure_sample
    outcome.connect_phase_ns = phase.ended_ns - phase.begun_ns
    outcome.connect_counts = count_microseconds(phase.latencies)


def _arm_ticks(run: BaseRun, timers: RunTimers) -> None:
    """Close each second of the timeline when it ends (unless an echo exchange did)."""

    def tick() -> None:
        if run.stopping:
            return
        if monotonic_ns() >= run.next_tick_ns:
            run.tick_due()
        timers.after("tick", max(run.next_tick_ns - monotonic_ns(), 0) / NS_PER_S, tick)

    if run.next_tick_ns < _NEVER_NS:
        timers.after("tick", max(run.next_tick_ns - monotonic_ns(), 0) / NS_PER_S, tick)


def _arm_watcher(run: BaseRun, watcher: Watcher, timers: RunTimers) -> None:
    every_s = watcher.watch.every_s

    def check() -> None:
        if run.stopping:
            return
        if watcher.check():
            run.stop()  # at once: an interrupted run does not drain
            return
        timers.after("watch", every_s, check)

    timers.after("watch", every_s, check)


def _arm_sweeper(run: BaseRun, every_s: float, timers: RunTimers) -> None:
    def sweep() -> None:
        if run.stopping:
            return
        run.sweep()
        timers.after("sweep", every_s, sweep)

    timers.after("sweep", every_s, sweep)


def resolve_loop(name: str) -> str:
    """The loop to run on: ``auto`` is uvloop when installed, plain asyncio otherwise.

    Other names were checked (known, installed) when the spec was built, in ``_input.spec``.
    """
    if name != "auto":
        return name
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run_on_loop(loop_name: str, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion on a fresh loop of the named kind."""
    if loop_name == "uvloop":
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(factory())
    with asyncio.Runner() as runner:
        return runner.run(factory())


def prepare_share(spec: LoadSpec) -> None:
    """Import what running a share of ``spec`` needs (its loop and that loop's engine), so
    that a worker process that then says it is ready starts its share without delay."""
    loop_name = resolve_loop(spec.loop)
    if loop_name == "trio" and spec.protocol == "h2":
        import pytest_netbench._engine.trio_io.h2
    elif loop_name == "trio":
        import pytest_netbench._engine.trio_io.engine  # noqa: F401
    elif loop_name == "uvloop":
        import uvloop  # noqa: F401


def run_share(
    spec: LoadSpec, share: WorkerShare, released_ns: int, watch: ShareWatch | None = None
) -> WorkerOutcome:
    """Run one share to its end on a fresh loop of the spec's kind, in this thread (on the
    spec's ``cpus``, when it names some)."""
    loop_name = resolve_loop(spec.loop)
    with pinned_thread(spec.cpus):
        if loop_name == "trio" and spec.protocol == "h2":
            from pytest_netbench._engine.trio_io.h2 import run_share_h2_trio

            return run_share_h2_trio(spec, share, released_ns, watch)
        if loop_name == "trio":
            from pytest_netbench._engine.trio_io.engine import run_share_trio

            return run_share_trio(spec, share, released_ns, watch)
        return run_on_loop(
            loop_name, lambda: run_share_async(spec, share, loop_name, released_ns, watch)
        )
