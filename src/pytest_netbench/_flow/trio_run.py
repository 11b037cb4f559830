"""A flow share on trio: the same users, sessions, window and rules as on asyncio
(``run``, ``arrivals``), its tasks in one nursery and its timers as tasks of it.

Stopping the share (deadline, sessions run, a stop request, a flow's fault) counts what
is outstanding by the run's rules first, then cancels the nursery: every user's task ends
where it is, as on asyncio.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from time import monotonic_ns
from typing import Any

import trio

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.watch import Watcher
from pytest_netbench._flow.arrivals import OpenFlowRun
from pytest_netbench._flow.outcome import SessionOutcome
from pytest_netbench._flow.run import FlowRun, VirtualUser
from pytest_netbench._flow.think import user_random
from pytest_netbench._flow.trio_connection import TrioFlowConnection
from pytest_netbench._stats.recorder import WorkerOutcome


async def _sleep_until(when_ns: int) -> None:
    while (left := when_ns - monotonic_ns()) > 0:
        await trio.sleep(left / NS_PER_S)


class TrioFlowRun(FlowRun):
    """The closed model on trio."""

    connection_class = TrioFlowConnection
    nursery: trio.Nursery | None = None

    async def run(self, loop_name: str) -> tuple[WorkerOutcome, SessionOutcome]:
        acct = self.accounting
        await _sleep_until(acct.start_at_ns)
        try:
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                nursery.start_soon(self._window)
                if self.spec.duration_s is not None:
                    nursery.start_soon(self._at, acct.deadline_ns, self.stop)
                if self.watch is not None:
                    nursery.start_soon(self._watching)
                self.begin()
        finally:
            self.stop()
            for user in self.users:
                with trio.CancelScope(shield=True):
                    await user.client.aclose()
        if acct.fatal is not None:
            raise acct.fatal
        return acct.finish(loop_name), acct.finish_sessions(len(self.users))

    def start_task(self, work: Coroutine[Any, Any, None], user: VirtualUser | None = None) -> None:
        if user is not None:
            user_random.set(user.rng)  # trio copies the context into the task it starts
        assert self.nursery is not None
        self.nursery.start_soon(_awaiting, work)

    def end_tasks(self) -> None:
        if self.nursery is not None:
            self.nursery.cancel_scope.cancel()

    async def _at(self, when_ns: int, callback: Callable[[], None]) -> None:
        await _sleep_until(when_ns)
        callback()

    async def _window(self) -> None:
        """Open the window after the warm-up, then close a timeline row at each of its
        ends, as the asyncio run's timers do."""
        acct = self.accounting
        await _sleep_until(acct.measure_start_ns)
        acct.open_window()
        row_end = acct.measure_start_ns
        while not acct.stopping:
            row_end += acct.recorder.bucket_ns
            await _sleep_until(row_end)
            if not acct.stopping:
                acct.recorder.close_bucket()

    async def _watching(self) -> None:
        assert self.watch is not None
        watcher = Watcher(self.watch, self.accounting)
        while not self.accounting.stopping:
            await trio.sleep(self.watch.every_s)
            if watcher.check():
                self.stop()


class TrioOpenFlowRun(TrioFlowRun, OpenFlowRun):
    """The open model on trio: the arrivals of ``OpenFlowRun``, the tasks of trio."""


async def _awaiting(work: Coroutine[Any, Any, None]) -> None:
    await work
