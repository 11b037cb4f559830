"""The trio engine's open-loop clock: each request handed to the work channel when due.

One task per share wakes at the next due time (on a timerfd where there is one: trio's own
timers wait in whole milliseconds, a lag the corrected latency would carry) and hands out
every request due by then, by ``TrioRun.hand_out``'s rule; the pooled connections take
them from the channel (``TrioRun.open_connection``).
"""

from __future__ import annotations

from time import monotonic_ns

import trio

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.ramp import NEVER_NS
from pytest_netbench._engine.rules.schedule import EARLY_SEND_NS
from pytest_netbench._engine.rules.timerfd import TimerFd, open_timerfd
from pytest_netbench._engine.trio_io.run import TrioRun

# A trio wake-up costs several times an asyncio one, so open-loop sends batch over a wider
# window (see schedule.EARLY_SEND_NS): at 3,000-5,000 req/s this keeps the CPU of the old
# millisecond loop timer while the corrected p50 falls from ~0.7 ms to ~0.23 ms.
_EARLY_SEND_NS = 3 * EARLY_SEND_NS


async def open_scheduler(run: TrioRun, nursery: trio.Nursery) -> None:
    """The share's pool (with keep-alive), then the clock until the window closes."""
    run.nursery = nursery
    if run.spec.keepalive:
        for _ in range(run.share.connections):
            run.pool_size += 1
            run.start_open_connection(nursery)
    timer = open_timerfd()
    try:
        with run.scheduler_scope:
            await _schedule_loop(run, timer)
    finally:
        if timer is not None:
            timer.close()


async def _sleep_until(due: int, timer: TimerFd | None) -> None:
    """Wake at ``due``: on a timerfd where there is one, else on trio's clock."""
    if timer is None:
        await trio.sleep(max(due - monotonic_ns(), 0) / NS_PER_S)
        return
    timer.arm_at(due)
    while True:
        await trio.lowlevel.wait_readable(timer.fd)
        if timer.consume():
            return


async def _schedule_loop(run: TrioRun, timer: TimerFd | None) -> None:
    """Hand each due request to a connection until the window closes (a wake-up under way
    then finds nothing due: see ``collect_due``)."""
    while not (run.stopping or run.draining):
        if run.next_due == NEVER_NS:
            await trio.sleep_forever()  # a ramp that holds no more requests
        if run.next_due > monotonic_ns() + _EARLY_SEND_NS:
            await _sleep_until(run.next_due, timer)
        now = monotonic_ns()
        for due in run.collect_due(now, now + _EARLY_SEND_NS):
            run.hand_out(due)
        if run.schedule_done:
            run.check_finished()
            await trio.sleep_forever()
