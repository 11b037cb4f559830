"""The open model of a flow load: sessions start at a rate, whoever is free runs them.

Sessions fall due on the same schedule as an open-loop load's requests (``schedule``:
uniform or Poisson, per share). A due session goes to an idle virtual user, or to a new
one while the pool is below its bound (``max_connections``); else it waits, oldest first,
for the next user to finish. A session that starts late carries its delay: each of its
requests is due that much before it starts (``FlowConnection.lag_ns``), so a stalled
server cannot hide behind the sessions it delayed (coordinated omission, Gil Tene's
dependent requests), and the uncorrected figures are kept beside as plain loads keep
theirs. A session still waiting when the window closes never started: its first request
counts at a lower bound of its latency, as a plain open loop's unsent request does.
"""

from __future__ import annotations

from time import monotonic_ns

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.schedule import EARLY_SEND_NS, share_schedule
from pytest_netbench._flow.run import FlowRun, VirtualUser
from pytest_netbench._flow.think import pause


class OpenFlowRun(FlowRun):
    """A share of an open-model flow load."""

    def begin(self) -> None:
        self.idle: list[VirtualUser] = [self.new_user() for _ in range(self._initial_users())]
        self.start_task(self._arrivals())

    def _initial_users(self) -> int:
        return min(self.accounting.share.connections, self.accounting.share.max_connections)

    async def _arrivals(self) -> None:
        acct = self.accounting
        schedule = share_schedule(acct.share, self.spec.arrival, self.spec.ramp)
        due = schedule.first(acct.start_at_ns)
        to_come = acct.session_budget  # sessions still to fall due; None: by time
        while not acct.stopping:
            if to_come is not None and to_come <= 0:
                return  # every session is due already
            if due >= acct.deadline_ns:
                return  # the window's last session is due; the deadline stops the load
            if (left := due - EARLY_SEND_NS - monotonic_ns()) > 0:
                await pause(left / NS_PER_S)
                continue
            now = monotonic_ns()
            if due >= acct.measure_start_ns:
                acct.recorder.outcome.scheduled += 1
                acct.recorder.lags.append(max(now - due, 0))
            self._dispatch(due)
            if to_come is not None:
                to_come -= 1
            due = schedule.next(due)

    def _dispatch(self, due: int) -> None:
        if self.idle:
            user = self.idle.pop()
        elif len(self.users) < self.accounting.share.max_connections:
            user = self.new_user()
        else:
            self.waiting.append(due)
            return
        self.start_task(self._user_sessions(user, due), user)

    async def _user_sessions(self, user: VirtualUser, due: int) -> None:
        """Run the session due at ``due``, then the oldest waiting ones, then rest idle."""
        while await self.session(user, due):
            if not self.waiting:
                self.idle.append(user)
                return
            due = self.waiting.popleft()
