"""The two timers every share on trio keeps beside its connections: the timeline's tick
once a second from the window's start, and the share's watch (progress, a stop request).

Written once for the trio loads (``trio_io.engine``, ``trio_io.ws_listen``); each run's own
:meth:`~pytest_netbench._engine.rules.accounting.RunAccounting.stop` does its teardown.
"""

from __future__ import annotations

from time import monotonic_ns

import trio

from pytest_netbench._engine.rules.accounting import RunAccounting
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.watch import ShareWatch, Watcher


async def tick_timeline(run: RunAccounting, window_open: bool = False) -> None:
    """Open the window when the warm-up ends (unless ``window_open``), then close a
    timeline row every second."""
    if not window_open:
        await trio.sleep(max(run.measure_start_ns - monotonic_ns(), 0) / NS_PER_S)
        run.open_window()
    next_tick = run.measure_start_ns + NS_PER_S
    while True:
        await trio.sleep(max(next_tick - monotonic_ns(), 0) / NS_PER_S)
        run.recorder.tick()
        next_tick += NS_PER_S


async def watch_share(run: RunAccounting, watcher: Watcher) -> None:
    """Check the share's watch at its interval; a stop request ends the run."""
    while not run.stopping:
        await trio.sleep(watcher.watch.every_s)
        if watcher.check():
            run.stop()  # at once: an interrupted run does not drain


def share_watcher(run: RunAccounting, watch: ShareWatch | None) -> Watcher | None:
    """The share's watcher when it is watched, checked once before the timers start: a
    stop asked while the share waited for its start stops the run at once."""
    if watch is None:
        return None
    watcher = Watcher(watch, run)
    if watcher.check():
        run.stop()
    return watcher


def start_timers(nursery: trio.Nursery, run: RunAccounting, watcher: Watcher | None) -> None:
    """The timeline's tick, and the watch when there is one, in the run's nursery (call
    before the connections start).

    Without a warm-up the window opens here and now, as the asyncio driver opens it: left
    to the tick's task, it would open only once that task first ran, and a connection
    task that ran before it (a connect to loopback can complete without a checkpoint)
    would have taken a measured request whose bytes the window's opening then forgot."""
    if watcher is not None:
        nursery.start_soon(watch_share, run, watcher)
    window_open = monotonic_ns() >= run.measure_start_ns
    if window_open:
        run.open_window()
    nursery.start_soon(tick_timeline, run, window_open)
