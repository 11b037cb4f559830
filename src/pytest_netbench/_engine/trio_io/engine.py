"""The trio engine: one task per connection, same framers, same recorder, same rules.

For users whose code is trio. It is slower than the asyncio/uvloop engine (a task switch
and a ``receive_some`` per response instead of a bare protocol callback); the benchmark
states by how much. What counts and when a run ends is decided by the same run rules as
there (``accounting``, ``open_rules``), and the shared conformance suite checks both.

This module runs one share: it starts the run's timers, its deadline, and its connection
tasks (``trio_io.run``), fixed, following a ramp, or fed by the open-loop clock
(``trio_io.open_schedule``); a protocol's run class says what the connections speak
(``trio_io.h1`` by default, ``trio_io.h2``).
"""

from __future__ import annotations

from time import monotonic_ns

import trio

from pytest_netbench._engine.rules.accounting import request_source
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.ramp import NEVER_NS
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.trio_io.h1 import H1TrioRun
from pytest_netbench._engine.trio_io.open_schedule import open_scheduler
from pytest_netbench._engine.trio_io.run import TrioRun
from pytest_netbench._engine.trio_io.timers import share_watcher, start_timers
from pytest_netbench._engine.trio_io.ws_listen import run_listen_trio
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import WorkerOutcome


async def _follow_ramp(run: TrioRun, nursery: trio.Nursery) -> None:
    """Closed loop with stages: start a connection task for each one the ramp adds; those
    it removes leave by themselves (``TrioRun.shed``) once their requests are answered."""
    ramp = run.ramp
    assert ramp is not None
    counted_at = run.start_at_ns
    run.wanted = ramp.start(counted_at)
    while not run.stopping:
        while run.slot_tasks < run.wanted:
            run.slot_tasks += 1
            run.start_closed_connection(nursery)
        # From the instant the count was read: a change since then is due at once.
        due = ramp.next_change(counted_at)
        if due == NEVER_NS:
            return
        await trio.sleep(max(due - monotonic_ns(), 0) / NS_PER_S)
        counted_at = monotonic_ns()
        run.wanted = ramp.count_at(counted_at)


async def _run(
    spec: LoadSpec,
    share: WorkerShare,
    released_ns: int,
    watch: ShareWatch | None,
    run_class: type[TrioRun],
) -> WorkerOutcome:
    if spec.listen:  # held WebSocket connections (see trio_io.ws_listen)
        return await run_listen_trio(spec, share, released_ns, watch)
    start_at = share.start_at(released_ns)
    exchange = build_exchange(spec)
    source = request_source(spec, share)  # before the start: a shuffled file is indexed
    try:
        await trio.sleep(max(start_at - monotonic_ns(), 0) / NS_PER_S)
        return await _run_from(run_class(spec, share, exchange, start_at, source), watch)
    finally:
        if source is not None:
            source.close()


async def _run_from(run: TrioRun, watch: ShareWatch | None) -> WorkerOutcome:
    spec = run.spec
    watcher = share_watcher(run, watch)
    with run.cancel_scope:
        async with trio.open_nursery() as nursery:
            start_timers(nursery, run, watcher)
            if spec.duration_s is not None:
                end_at = run.measure_start_ns + int(spec.duration_s * NS_PER_S)

                async def stopper() -> None:
                    await trio.sleep(max(end_at - monotonic_ns(), 0) / NS_PER_S)
                    if run.end_window():
                        # Request timeouts end the drain; this only guards against a stuck one.
                        await trio.sleep(spec.timeout_s + 1.0)
                        run.stop()

                nursery.start_soon(stopper)
            if run.open_loop:
                nursery.start_soon(open_scheduler, run, nursery)
            elif run.ramp is not None:
                nursery.start_soon(_follow_ramp, run, nursery)
            else:
                for _ in range(run.share.connections):
                    run.start_closed_connection(nursery)
    if not run.stopping:
        run.stop()
    if run.contact.gave_up:
        raise run.contact.error(spec)
    if run.source_failure is not None:
        raise run.source_failure  # on_end="error" ran out, or a row renders no request
    return run.finish("trio")


def run_share_trio(
    spec: LoadSpec,
    share: WorkerShare,
    released_ns: int,
    watch: ShareWatch | None = None,
    run_class: type[TrioRun] = H1TrioRun,
) -> WorkerOutcome:
    """Run one share on a fresh trio loop; ``run_class``: the run of its protocol
    (HTTP/1.1 and WebSocket: ``trio_io.h1.H1TrioRun``; HTTP/2: ``trio_io.h2.H2TrioRun``)."""
    outcome: WorkerOutcome = trio.run(_run, spec, share, released_ns, watch, run_class)
    return outcome
