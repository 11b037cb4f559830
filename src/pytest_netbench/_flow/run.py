"""One share of a flow load on an asyncio loop (uvloop or plain): its virtual users, each
running the flow in a loop on its own client and connection (the closed model), the window
(warm-up, timeline rows, deadline) and the end.

A session ends completed, or failed: at the step whose request failed (the request already
counted under its error kind, the session under the same kind), or with the flow's own
exception (kind ``flow``: a bug in the flow, never a server error). When every session that
ended, at least one per user, ended with the flow's exception, the load stops early and
:class:`FlowError` carries the first traceback.
"""

from __future__ import annotations

import asyncio
import random
import traceback
from collections import deque
from collections.abc import Callable, Coroutine
from time import monotonic_ns
from typing import Any

from pytest_netbench._engine.asyncio_io.timers import RunTimers
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.connecting import make_ssl_context
from pytest_netbench._engine.rules.ramp import ConnectionRamp, share_connection_ramp
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.watch import ShareWatch, Watcher
from pytest_netbench._errors import EngineFault, FlowError, SpecError
from pytest_netbench._flow.accounting import FlowAccounting, TooManySteps
from pytest_netbench._flow.choice import FlowChoice
from pytest_netbench._flow.connection import FlowConnection, LoadStopped, UserConnection
from pytest_netbench._flow.outcome import SessionOutcome
from pytest_netbench._flow.steps import NO_STEP, STEP_EXTENSION, SessionTrail
from pytest_netbench._flow.think import pause, user_random
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import WorkerOutcome

CLIENTS = ("httpx", "lean")
# (kind, step, description) of a failed session
Failure = tuple[str, str, str]


class VirtualUser:
    """One user: a client over its own connection, and its session."""

    def __init__(
        self,
        index: int,
        accounting: FlowAccounting,
        base_url: str,
        client: str,
        connection_class: type[UserConnection] = FlowConnection,
    ) -> None:
        self.connection = connection_class(accounting, make_ssl_context(accounting.spec))
        self.trail = SessionTrail()
        self.client: Any
        if client == "lean":
            from pytest_netbench._flow.lean import LeanClient

            self.client = LeanClient(accounting, self.connection, self.trail)
        else:
            import httpx

            from pytest_netbench._flow.transport import EngineTransport

            transport = EngineTransport(accounting, self.connection, self.trail)
            self.client = httpx.AsyncClient(
                base_url=base_url,
                transport=transport,
                timeout=None,
                # As httpx's own default, and as the lean client: a redirect is the
                # response the flow reads (a 302 after a form's POST), never followed
                # silently; client.get(url, follow_redirects=True) follows one.
                follow_redirects=False,
                # Nothing from the environment (.netrc credentials, proxy settings): a
                # flow sends what it says, as the lean client does.
                trust_env=False,
            )
        self.index = index
        self.retiring = False  # a falling ramp: end the session in progress, then rest
        self.rng = random.Random()
        self.session_start: int | None = None  # while a session runs


class FlowRun:
    """A share's users and window; :meth:`run` returns its two outcomes."""

    connection_class: type[UserConnection] = FlowConnection

    def __init__(
        self,
        choice: FlowChoice,
        spec: LoadSpec,
        share: WorkerShare,
        start_at_ns: int,
        sessions: int | None,
        watch: ShareWatch | None = None,
        client: str = "httpx",
    ) -> None:
        self.choice = choice
        self.watch = watch
        self.spec = spec
        self.accounting = FlowAccounting(spec, share, start_at_ns, self.stop, sessions)
        self.base_url = f"{spec.scheme}://{_host_for_url(spec.host)}:{spec.port}"
        self.client = client
        self.users: list[VirtualUser] = []
        # A ramp of users (stages): those running sessions, and those resting.
        self.running: list[VirtualUser] = []
        self.retired: list[VirtualUser] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.first_flow_error: BaseException | None = None
        self.first_flow_step = NO_STEP
        self.done: asyncio.Future[None] | None = None
        # Sessions due that no user could start yet (open model): their due times.
        self.waiting: deque[int] = deque()

    async def run(self, loop_name: str) -> tuple[WorkerOutcome, SessionOutcome]:
        acct = self.accounting
        loop = asyncio.get_running_loop()
        while (left := acct.start_at_ns - monotonic_ns()) > 0:
            await asyncio.sleep(left / NS_PER_S)
        self.done = done = loop.create_future()
        timers = self._arm_window(loop)
        try:
            self.begin()
            await done  # stop() sets it: deadline, sessions run, a stop request, a fault
            await asyncio.gather(*self.tasks, return_exceptions=True)
        finally:
            timers.cancel_all()
            self.stop()
            for user in self.users:
                await user.client.aclose()
        if acct.fatal is not None:
            raise acct.fatal
        return acct.finish(loop_name), acct.finish_sessions(len(self.users))

    def begin(self) -> None:
        """The closed model: every user starts its first session now; with ``stages``,
        as many as the ramp says now, and the ramp's task adds or retires users."""
        ramp = share_connection_ramp(self.spec, self.accounting.share)
        if ramp is None:
            for _ in range(self.accounting.share.connections):
                self.start_task(self._user_loop(self.new_user()))
            return
        for _ in range(ramp.start(self.accounting.start_at_ns)):
            self.start_user()
        self.start_task(self._follow(ramp))

    def start_user(self) -> None:
        """One more user running sessions: a retired one back, else a new one."""
        user = self.retired.pop() if self.retired else self.new_user()
        user.retiring = False
        self.running.append(user)
        self.start_task(self._user_loop(user), user)

    async def _follow(self, ramp: ConnectionRamp) -> None:
        """Add users as the ramp climbs; as it falls, retire the latest: each ends the
        session it is in, then rests (its connection kept for a climb back)."""
        acct = self.accounting
        while not acct.stopping:
            change = ramp.next_change(monotonic_ns())
            if change >= acct.deadline_ns:
                return
            while (left := change - monotonic_ns()) > 0:
                await pause(left / NS_PER_S)
            target = ramp.count_at(change)
            while len(self.running) < target:
                self.start_user()
            while len(self.running) > target:
                self.running.pop().retiring = True

    def new_user(self) -> VirtualUser:
        """One more virtual user, with its own generator for think times (see think.py)
        and for drawing its sessions' flows."""
        user = VirtualUser(
            len(self.users), self.accounting, self.base_url, self.client, self.connection_class
        )
        user.rng = random.Random(f"{self.spec.seed}:{self.accounting.share.index}:{user.index}")
        self.users.append(user)
        return user

    def start_task(self, work: Coroutine[Any, Any, None], user: VirtualUser | None = None) -> None:
        """Run ``work`` as a task whose context holds its user's generator."""
        if user is not None:
            user_random.set(user.rng)
        task = asyncio.get_running_loop().create_task(work)
        task.add_done_callback(self._task_ended)
        self.tasks.append(task)

    def _task_ended(self, task: asyncio.Task[None]) -> None:
        """A task that raised is a fault of this program (a flow's own exceptions end its
        session, never its task): stop the load and raise it, rather than lose it."""
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        if self.accounting.fatal is None:
            fault = EngineFault(
                f"the flow engine failed ({exc!r}); this is a bug in pytest-netbench, not a"
                " fault of the server or of the flow: please report it"
            )
            fault.__cause__ = exc
            self.accounting.fatal = fault
        self.stop()

    def _arm_window(self, loop: asyncio.AbstractEventLoop) -> RunTimers:
        acct = self.accounting
        timers = RunTimers(loop)

        def at(slot: str, when_ns: int, callback: Callable[[], None]) -> None:
            timers.after(slot, max(when_ns - monotonic_ns(), 0) / NS_PER_S, callback)

        def close_bucket(row_end_ns: int) -> None:
            if acct.stopping:
                return
            acct.recorder.close_bucket()
            at("bucket", row_end_ns + bucket, lambda: close_bucket(row_end_ns + bucket))

        bucket = acct.recorder.bucket_ns

        def open_window() -> None:
            acct.open_window()
            first_end = acct.measure_start_ns + bucket
            at("bucket", first_end, lambda: close_bucket(first_end))

        at("window opens", acct.measure_start_ns, open_window)
        if self.spec.duration_s is not None:
            at("window ends", acct.deadline_ns, self.stop)
        if self.watch is not None:
            # Progress reports and stop requests, as a load's share has them (watch.py).
            watcher = Watcher(self.watch, acct)
            every_s = self.watch.every_s

            def check() -> None:
                if acct.stopping:
                    return
                if watcher.check():
                    self.stop()
                else:
                    timers.after("watch", every_s, check)

            check()
        return timers

    async def _user_loop(self, user: VirtualUser) -> None:
        user_random.set(user.rng)
        while not user.retiring and await self.session(user, monotonic_ns()):
            await pause(0)  # a flow that never awaits still lets the loop run
        if user.retiring and not self.accounting.stopping:
            self.retired.append(user)

    async def session(self, user: VirtualUser, intended: int) -> bool:
        """Run one session of ``user`` that was due at ``intended``; False when the user
        is to run no more (the load stopped, or no session was left to start)."""
        acct = self.accounting
        which = self.choice.draw(user.rng)
        if not acct.begin_session(intended, self.choice.names[which]):
            return False
        # Late by this much (open model): each of its requests is due that much earlier.
        user.connection.lag_ns = max(monotonic_ns() - intended, 0)
        user.session_start = intended
        user.trail.new_session()
        failure: Failure | None
        try:
            await self.choice.flows[which](user.client)
        except LoadStopped:
            return False  # counted in progress by stop()
        except Exception as exc:
            failure = self._failure(user, exc)
        else:
            failure = None
        user.session_start = None
        acct.end_session(intended, monotonic_ns(), failure)
        if acct.stopping:
            return False
        if acct.flow_failures == acct.ended_sessions >= max(acct.share.connections, 1):
            acct.fatal = self._every_session_raised()
            self.stop()
            return False
        return True

    def _failure(self, user: VirtualUser, exc: Exception) -> Failure:
        """Why the session failed: at its failed request's step, or by the flow's bug."""
        failure = user.trail.failure
        if failure is not None and _caused_by(exc, failure.error):
            return failure.kind, failure.step, f"{failure.step}: {failure.error}"
        # raise_for_status() (httpx's HTTPStatusError, the lean client's own): the response
        # it carries names its step.
        response = getattr(exc, "response", None)
        step = getattr(response, "extensions", {}).get(STEP_EXTENSION)
        status = getattr(response, "status_code", None)
        if step is not None and isinstance(status, int) and status >= 400:
            return "status", str(step), f"{step}: HTTP {status}"
        if isinstance(exc, TooManySteps):
            self.accounting.fatal = SpecError(str(exc))
            self.stop()
        step = user.trail.step
        if self.first_flow_error is None:
            self.first_flow_error = exc
            self.first_flow_step = step
        text = "".join(traceback.format_exception(exc))
        return "flow", step, f"the flow raised after step {step!r}: {text}"

    def _every_session_raised(self) -> FlowError:
        exc = self.first_flow_error
        error = FlowError(
            f"the flow raised in every session ({self.accounting.ended_sessions} of"
            f" {self.accounting.ended_sessions}), the first after step"
            f" {self.first_flow_step!r}: {exc!r}; the load stopped early. This is a bug in"
            " the flow, not a fault of the server: see its traceback"
        )
        error.__cause__ = exc
        return error

    def stop(self) -> None:
        """End the share now: requests outstanding are in flight, sessions running are in
        progress, every user's task is cancelled."""
        acct = self.accounting
        if not acct.stop_counting([user.connection for user in self.users], self.waiting):
            return
        acct.count_sessions_in_progress(
            [u.session_start for u in self.users if u.session_start is not None]
        )
        acct.count_sessions_not_started(self.waiting)
        for user in self.users:
            user.connection.close()
        self.end_tasks()

    def end_tasks(self) -> None:
        """Cancel every user's task but the one stopping the run, and wake :meth:`run`."""
        current = asyncio.current_task()
        for task in self.tasks:
            if task is not current:
                task.cancel()
        if self.done is not None and not self.done.done():
            self.done.set_result(None)


def _caused_by(exc: BaseException, error: BaseException) -> bool:
    """Is ``error`` ``exc`` or in its chain (a flow may wrap it in its own exception)?"""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if link is error:
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host else host
