"""The rules of a flow load: its requests by the engine's own rules, its sessions beside.

A flow's requests are the engine's: :class:`FlowAccounting` *is* a
:class:`~pytest_netbench._engine.rules.accounting.RunAccounting`, whose kinds of request are the
flow's steps, named as they first appear instead of listed up front by a mix. Taking a
request, recording its answer, failing it and counting it in flight at the end are the
inherited rules, so ``sent == ok + errors_total + in_flight`` holds per step and in total
as it does for a plain load. What is new here is the session: one run of the flow function
by one virtual user, counted when it starts inside the window, ended as completed or as
failed (at a named step, of a named kind), or still in progress when the load ends.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable

from pytest_netbench._engine.rules.accounting import RunAccounting
from pytest_netbench._engine.rules.exchange import Exchange
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._flow.outcome import SessionOutcome, StepName
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.http import ResponseFramer
from pytest_netbench._stats.histogram import count_microseconds
from pytest_netbench._stats.recorder import RequestCounters

# Beyond this many distinct step names a flow is naming each URL apart (ids in paths), and
# its per-step figures would be noise: the load stops and says how to name them.
MAX_STEPS = 100


class TooManySteps(Exception):
    """Raised into the flow by the transport; the run stops and reports it."""


class FlowAccounting(RunAccounting):
    """A share's requests (kinds = steps) and sessions; ``on_stop`` is the loop's stop."""

    def __init__(
        self,
        spec: LoadSpec,
        share: WorkerShare,
        start_at_ns: int,
        on_stop: Callable[[], None],
        sessions: int | None,
    ) -> None:
        # No pre-rendered request: the flow's client renders each one.
        exchange = Exchange((), 0, True, ResponseFramer, spec.host, spec.port)
        super().__init__(spec, share, exchange, start_at_ns)
        self.mix = True  # the per-kind rules apply: every request belongs to a step
        self._on_stop = on_stop
        self.steps: list[StepName] = []
        self._step_index: dict[str, int] = {}
        self.session_budget = sessions  # sessions left to start; None = by time
        self.sessions = SessionOutcome()
        self.session_durations: array[int] = array("q")
        self.running_sessions = 0  # started (measured or not) and not yet ended
        self.ended_sessions = 0  # every session that ended, warm-up included
        self.flow_failures = 0  # of those, ended by the flow's own exception
        self.fatal: BaseException | None = None
        self.live = 0  # connections open now, of every virtual user

    def stop(self) -> None:
        self._on_stop()

    # -- steps --
    def step(self, name: str, method: str, path: str) -> int:
        """The index of the step ``name`` (a kind of request), added when new."""
        index = self._step_index.get(name)
        if index is not None:
            return index
        if len(self.steps) >= MAX_STEPS:
            raise TooManySteps(
                f"the flow made requests under more than {MAX_STEPS} step names (the last:"
                f" {name!r}): give requests whose path varies one name, e.g."
                ' client.get(f"/items/{n}", extensions={"netbench_step": "item"})'
            )
        index = len(self.steps)
        self._step_index[name] = index
        self.steps.append(StepName(name, method, path))
        self.recorder.by_request.append(RequestCounters())
        self.in_flight_by_request.append(0)
        return index

    def take_step(self, now: int, step: int) -> bool:
        """:meth:`take` for a request of ``step``, counted under it when measured."""
        if not self.take(now):
            return False
        if now >= self.measure_start_ns:
            self.recorder.by_request[step].sent += 1
        return True

    # -- sessions --
    def begin_session(self, now: int, flow: str = "") -> bool:
        """May a virtual user start one more session (of ``flow``) at ``now``? Counts it if
        measured."""
        if self.stopping:
            return False
        if self.session_budget is not None:
            if self.session_budget <= 0:
                return False
            self.session_budget -= 1
        self.running_sessions += 1
        if now >= self.measure_start_ns:
            self.sessions.started += 1
            by_flow = self.sessions.by_flow
            by_flow[flow] = by_flow.get(flow, 0) + 1
        return True

    def end_session(self, start: int, now: int, failure: tuple[str, str, str] | None) -> None:
        """A session begun at ``start`` ended at ``now``: completed, or failed as
        ``(kind, step, description)``."""
        self.running_sessions -= 1
        self.ended_sessions += 1
        if failure is not None and failure[0] == "flow":
            self.flow_failures += 1
        if self.stopping or start < self.measure_start_ns:
            return  # in progress when the load stopped, or begun in warm-up
        s = self.sessions
        if failure is None:
            s.completed += 1
            self.session_durations.append(now - start)
        else:
            kind, step, description = failure
            s.failed += 1
            s.failed_at[step] = s.failed_at.get(step, 0) + 1
            s.failure_kinds[kind] = s.failure_kinds.get(kind, 0) + 1
            s.failure_samples.setdefault(kind, description[:2000])
        if self.session_budget == 0 and self.running_sessions == 0:
            self.stop()

    def count_sessions_in_progress(self, starts: list[int]) -> None:
        """The load stopped with sessions begun at ``starts`` still running."""
        self.sessions.in_progress += sum(1 for t in starts if t >= self.measure_start_ns)

    def count_sessions_not_started(self, due: Iterable[int]) -> None:
        """The load stopped with sessions due at ``due`` that no user had started (open
        model): their first requests are the outcome's ``unsent``."""
        count = sum(1 for t in due if t >= self.measure_start_ns)
        self.sessions.not_started += count
        self.recorder.outcome.unsent += count

    def finish_sessions(self, users: int) -> SessionOutcome:
        """The sessions' outcome; ``users``: how many virtual users the share had."""
        s = self.sessions
        s.steps = list(self.steps)
        s.users = users
        s.duration_counts = count_microseconds(self.session_durations)
        return s
