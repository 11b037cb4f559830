"""Shares of a load on a Dask cluster (``distributed``): load from several machines.

The only module that imports ``distributed`` (the optional ``distributed`` extra). Each
share runs as one task pinned to its own Dask worker (one share per worker, never two on
one worker's thread pool), in that worker's process, on a fresh event loop of its own.

The shares start together: each task reports that it arrived and waits; once every share
has arrived, the caller sets one event and they all start (with ``connect_first``, once
more after every share's connections are open). Events cross the scheduler, so shares on
different hosts start a few milliseconds apart; each share records the wall-clock instant
its window opened, and the spread is in ``generator.start_spread_ms``.

A worker that disappears mid-run is noticed through the scheduler: at once when it left
the cluster (killed: its connections closed), or once the scheduler has not heard its
heartbeat for ``_SILENT_S`` (its link or its host went down: nothing closes, packets just
stop). Its share comes back as a *lost* outcome naming the worker and its host, the result
is invalid saying so, and the figures are those of the shares that came back; the load
does not wait for it. Workers the scheduler has stopped hearing from are not given shares.
A worker whose pytest-netbench or Python version differs from the caller's is refused
before any load.
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from time import monotonic_ns
from typing import Any

from distributed import Client, Event, Variable
from distributed.scheduler import heartbeat_interval

from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.shares.driver import run_share
from pytest_netbench._engine.shares.workers import (
    ShareRunner,
    WorkerFailed,
    connect_phase_bound_s,
    outcome_limit_s,
)
from pytest_netbench._errors import (
    FeederExhausted,
    FlowError,
    NetbenchError,
    TargetUnreachableError,
)
from pytest_netbench._model import LoadSpec
from pytest_netbench._model.live import ShareSnapshot
from pytest_netbench._stats.recorder import WorkerOutcome

# How long every share may take to reach its worker and report (imports, a busy scheduler).
_ARRIVAL_S = 60.0
# The common start lies this far after the last share is ready, so every share is waiting.
_START_MARGIN_NS = 50_000_000
_POLL_S = 0.25
# How long a share's link to the scheduler waits on the stop event per look: it returns at
# once when the event is set, so only progress reports need short looks; without them, a
# look every few seconds keeps the worker's event loop (and its hold on the GIL, which the
# share's thread then waits for) quiet.
_LINK_WAIT_S = 0.25
_LINK_QUIET_WAIT_S = 5.0
# A worker the scheduler has not heard from for this long (or for five of the heartbeat
# intervals it asks for, on a large cluster) has lost its link or its host: its share is
# lost. Dask itself waits for its worker-ttl (5 minutes) or a dead TCP connection (30 s).
_SILENT_S = 10.0


class ClusterError(NetbenchError):
    """The cluster cannot run this load (too few workers, mismatched versions)."""


@dataclass(frozen=True, slots=True)
class _ShareReport:
    """What a share task sends back besides its outcome."""

    outcome: WorkerOutcome
    host: str
    # time.time_ns() - monotonic_ns() on the share's host, to put its instants on the
    # caller's clock.
    clock_offset_ns: int


def versions() -> tuple[str, str]:
    """(pytest-netbench version, Python version) of this process."""
    from pytest_netbench._version import VERSION  # read at call time: this process's own

    return VERSION, ".".join(str(v) for v in sys.version_info[:3])


def _identity() -> tuple[str, str, str]:
    """:func:`versions` and the host name, as a worker answers before a load."""
    return (*versions(), socket.gethostname())


def cluster_workers(client: Client) -> dict[str, Any]:
    """Every worker the scheduler knows, address -> its info (``last_seen`` among them),
    asked of the scheduler itself. Not ``client.scheduler_info()``: that refreshes the
    client's cached copy and returns it, and the client's own periodic refresh (every 2 s,
    without per-worker entries) can replace the copy in between, which would make every
    worker look gone."""
    scheduler = client.scheduler
    if scheduler is None:  # a client that never connected, or closed
        raise ClusterError(f"the Dask client {client!r} is not connected to a scheduler")
    identity = client.sync(scheduler.identity, n_workers=-1)
    return dict(identity["workers"])


def silence_bound_s(workers: int) -> float:
    """How long the scheduler may not hear from a worker before its share is lost."""
    return max(_SILENT_S, 5 * heartbeat_interval(workers))


class _Heartbeats:
    """Which workers the scheduler still hears from: each worker's ``last_seen`` (the
    scheduler's clock) and when this process saw it change (this one's), so no two hosts'
    clocks are ever compared."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.workers: dict[str, Any] = {}
        self.bound_s = _SILENT_S
        self._changed: dict[str, tuple[float, float]] = {}
        self._next = 0.0

    def look(self) -> None:
        """Ask the scheduler (at most every ``_POLL_S``)."""
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + _POLL_S
        self.workers = cluster_workers(self.client)
        self.bound_s = silence_bound_s(len(self.workers))
        for address, info in self.workers.items():
            seen = float(info.get("last_seen", 0.0))
            if self._changed.get(address, (None, 0.0))[0] != seen:
                self._changed[address] = (seen, now)

    def why_lost(self, address: str) -> str | None:
        """Why ``address``'s share is lost, or None while the scheduler hears from it."""
        if address not in self.workers:
            return "it left the cluster mid-run"
        silent_s = time.monotonic() - self._changed[address][1]
        if silent_s > self.bound_s:
            return (
                f"the scheduler has not heard from it for {silent_s:.0f} s mid-run"
                " (its link or its host is down)"
            )
        return None

    def lags(self) -> dict[str, float]:
        """How long before the freshest worker the scheduler last heard from each (all on
        the scheduler's clock)."""
        seen = {a: float(info.get("last_seen", 0.0)) for a, info in self.workers.items()}
        newest = max(seen.values(), default=0.0)
        return {a: newest - t for a, t in seen.items()}


class DaskWorkers:
    """A :class:`~pytest_netbench._engine.shares.workers.WorkerTransport` on a Dask cluster:
    ``cluster`` is a scheduler address (``tcp://host:8786``) or a ``distributed.Client``."""

    start_delay_s = 0.0  # the shares are released by an event, not at a delay

    def __init__(self, cluster: str | Client) -> None:
        self.cluster = cluster

    def run_shares(
        self,
        spec: LoadSpec,
        shares: Sequence[WorkerShare],
        watch: ShareWatch | None = None,
        runner: ShareRunner = run_share,
    ) -> list[WorkerOutcome]:
        own = not isinstance(self.cluster, Client)
        client = Client(self.cluster) if isinstance(self.cluster, str) else self.cluster
        try:
            return _Run(client, spec, shares, watch, runner).run()
        finally:
            if own:
                client.close()


class _Run:
    """One load's shares on the cluster, from submission to the last outcome."""

    def __init__(
        self,
        client: Client,
        spec: LoadSpec,
        shares: Sequence[WorkerShare],
        watch: ShareWatch | None,
        runner: ShareRunner = run_share,
    ) -> None:
        self.client = client
        self.spec = spec
        self.shares = shares
        self.watch = watch
        self.runner = runner
        self.run_id = uuid.uuid4().hex
        self.caller_offset_ns = time.time_ns() - monotonic_ns()
        self.heartbeats = _Heartbeats(client)
        self.hosts: dict[str, str] = {}  # worker address -> its host name

    def event(self, name: str) -> Event:
        return Event(f"netbench-{self.run_id}-{name}", client=self.client)

    def run(self) -> list[WorkerOutcome]:
        workers = self._pick_workers()
        self._check_versions(workers)
        self._check_runner(workers)
        reports = self.watch is not None and self.watch.report is not None
        futures = [
            self.client.submit(
                _share_task,
                self.spec,
                share,
                self.run_id,
                reports,
                self.runner,
                key=f"netbench-share-{self.run_id}-{share.index}",
                workers=[address],
                allow_other_workers=False,
                pure=False,
            )
            for share, address in zip(self.shares, workers, strict=True)
        ]
        try:
            self._release("arrived", "go", workers, futures)
            if self.spec.connect_first and self.spec.rate is None:
                self._release("connected", "window", workers, futures)
            return self._collect(workers, futures)
        finally:
            with contextlib.suppress(Exception):
                # A lost share that still runs (its link came back) stops once it hears.
                self.event("stop").set()
            with contextlib.suppress(Exception):
                self.client.cancel(futures)

    # -- before the load --
    def _pick_workers(self) -> list[str]:
        """Workers the scheduler hears from, those it heard from last first: a worker a
        few heartbeats late (its link just went down?) is taken only when needed, one
        silent for the bound never."""
        self.heartbeats.look()
        lags = self.heartbeats.lags()
        silent = {a: lag for a, lag in lags.items() if lag > self.heartbeats.bound_s}
        late_s = 2 * heartbeat_interval(len(lags)) + 1.0
        available = sorted(
            (a for a in lags if a not in silent), key=lambda a: (lags[a] > late_s, a)
        )
        if len(available) < len(self.shares):
            also = "".join(
                f"; not counted: {address}, not heard from for {seconds:.0f} s"
                for address, seconds in sorted(silent.items())
            )
            raise ClusterError(
                f"the cluster has {len(available)} worker(s) and the load asks for"
                f" {len(self.shares)} (one share per worker){also}: start more `dask worker`"
                " processes or ask for fewer workers"
            )
        return available[: len(self.shares)]

    def _check_versions(self, workers: list[str]) -> None:
        mine = versions()
        try:
            theirs = self.client.run(_identity, workers=workers, on_error="return")
        except Exception as exc:  # a worker without pytest-netbench fails to unpickle it
            raise ClusterError(
                f"could not ask the Dask workers for their pytest-netbench version ({exc!r}):"
                " install pytest-netbench on every worker"
            ) from exc
        for address, found in sorted(theirs.items()):
            if isinstance(found, OSError | TimeoutError):  # CommClosedError is an OSError
                raise ClusterError(
                    f"could not reach Dask worker {address} ({found!r}): is its host up and"
                    " its link? (the scheduler still lists it)"
                ) from found
            if isinstance(found, BaseException):
                raise ClusterError(
                    f"could not ask Dask worker {address} for its pytest-netbench version"
                    f" ({found!r}): install pytest-netbench on every worker"
                ) from found
            self.hosts[address] = found[2]
            if tuple(found[:2]) != mine:
                raise ClusterError(
                    f"Dask worker {address} runs pytest-netbench {found[0]} on Python"
                    f" {found[1]}; this process runs pytest-netbench {mine[0]} on Python"
                    f" {mine[1]}: install the same versions on every worker"
                )

    def _check_runner(self, workers: list[str]) -> None:
        """What the runner needs where a share runs (a flow's module, imported), asked of
        every worker before any share is submitted: a worker that lacks it is refused
        with the runner's own words, so no share starts a load the others cannot join."""
        check = getattr(self.runner, "check_here", None)
        if check is None:  # the engine's own load needs nothing beyond pytest-netbench
            return
        found = self.client.run(_check_here, self.runner, workers=workers, on_error="return")
        for address, problem in sorted(found.items()):
            if problem is not None:
                raise ClusterError(
                    f"Dask worker {address} cannot run this load, refused before it started:"
                    f" {problem}"
                )

    # -- releasing the shares together --
    def _release(self, reached: str, then: str, workers: list[str], futures: list[Any]) -> None:
        """Wait until every share has set its ``reached`` event, then set ``then``."""
        deadline = time.monotonic() + _ARRIVAL_S + connect_phase_bound_s(self.spec)
        pending = set(range(len(self.shares)))
        while pending:
            self.heartbeats.look()
            for index in list(pending):
                if self.event(f"{reached}-{index}").is_set():
                    pending.discard(index)
                elif futures[index].done() or self.heartbeats.why_lost(workers[index]):
                    pending.discard(index)  # finished early (failed) or lost: collected later
            if pending and time.monotonic() > deadline:
                raise WorkerFailed(
                    f"shares {sorted(pending)} did not reach their Dask workers within"
                    f" {_ARRIVAL_S:.0f} s"
                )
            if pending:
                time.sleep(0.01)
        self.event(then).set()

    # -- while it runs --
    def _collect(self, workers: list[str], futures: list[Any]) -> list[WorkerOutcome]:
        """Every share's outcome, or why it is lost. A load with a duration is over by its
        end plus the timeout and a grace (:func:`outcome_limit_s`); one of a request count
        has no end known in advance, and its shares are lost only when their workers are."""
        limit_s = outcome_limit_s(self.spec, DaskWorkers.start_delay_s)
        deadline = None if limit_s is None else time.monotonic() + limit_s
        outcomes: dict[int, WorkerOutcome] = {}
        told_to_stop = False
        while len(outcomes) < len(futures):
            self.heartbeats.look()
            for index, future in enumerate(futures):
                if index in outcomes:
                    continue
                if future.done():
                    outcomes[index] = self._outcome_of(future, workers[index])
                elif why := self.heartbeats.why_lost(workers[index]):
                    outcomes[index] = self._lost(workers[index], why)
            self._pass_progress(outcomes)
            stop = self.watch.stop_requested if self.watch is not None else None
            if not told_to_stop and stop is not None and stop():
                told_to_stop = True
                self.event("stop").set()
            if deadline is not None and time.monotonic() > deadline:
                for index in range(len(futures)):
                    if index not in outcomes:
                        why = f"no outcome within {limit_s:.0f} s"
                        outcomes[index] = self._lost(workers[index], why)
            if len(outcomes) < len(futures):
                time.sleep(_POLL_S)
        return [outcomes[i] for i in range(len(futures))]

    def _outcome_of(self, future: Any, address: str) -> WorkerOutcome:
        if future.status == "error":
            exc = future.exception()
            if isinstance(exc, TargetUnreachableError | FeederExhausted | FlowError):
                # The share found nothing listening, its feeder ran out (on_end="error") or
                # the flow raised in every session (its traceback in the FlowError's
                # cause): the target's, the input's or the flow's fault, not Dask's.
                raise exc
            if isinstance(exc, NetbenchError):
                raise WorkerFailed(f"load share on Dask worker {address} failed: {exc}") from exc
            return self._lost(address, f"its task failed: {exc!r}")
        if future.status != "finished":
            return self._lost(address, f"its task ended as {future.status!r}")
        report: _ShareReport = future.result()
        outcome = report.outcome
        # Onto the caller's monotonic clock (identical on one host, shifted across hosts).
        shift = report.clock_offset_ns - self.caller_offset_ns
        outcome.window_start_ns += shift
        outcome.window_end_ns += shift
        outcome.host = report.host
        outcome.worker = address
        return outcome

    def _lost(self, address: str, why: str) -> WorkerOutcome:
        """The outcome of a share that never came back, naming its worker and host."""
        host = self.hosts.get(address, "")
        on = f" on {host}" if host else ""
        return WorkerOutcome(lost=f"Dask worker {address}{on}: {why}", worker=address, host=host)

    def _pass_progress(self, finished: dict[int, WorkerOutcome]) -> None:
        """Each running share's latest snapshot (a Dask ``Variable`` it keeps) to the watch."""
        report = self.watch.report if self.watch is not None else None
        if report is None:
            return
        for index in range(len(self.shares)):
            if index in finished:
                continue
            with contextlib.suppress(TimeoutError):
                snapshot = Variable(f"netbench-{self.run_id}-progress-{index}").get(timeout=0.05)
                if isinstance(snapshot, ShareSnapshot):
                    report(snapshot)


class _SchedulerLink:
    """A share's traffic with the scheduler, in a thread of its own: it waits on the run's
    stop event and publishes the share's latest progress snapshot, so the share's loop only
    reads and writes local state. Asked from the loop, each look would stall the generator
    for a round trip through the worker's event loop and the scheduler (tens of ms on a
    busy host): sends late, and a starved share's thread asleep instead of runnable, which
    hides its saturation."""

    def __init__(self, stop: Event, progress: Variable | None, host: str) -> None:
        self._stop = stop
        self._progress = progress
        self._host = host
        self._stopped = threading.Event()
        self._latest: ShareSnapshot | None = None
        self._done = False
        self._wait_s = _LINK_WAIT_S if progress is not None else _LINK_QUIET_WAIT_S
        threading.Thread(target=self._run, name="netbench-share-link", daemon=True).start()

    def stop_requested(self) -> bool:
        return self._stopped.is_set()

    def report(self, snapshot: ShareSnapshot) -> None:
        self._latest = snapshot  # the link publishes the latest one

    def close(self) -> None:
        """The share is over: the thread ends after its current wait (at once when the
        caller sets the stop event, as it does once it has every outcome)."""
        self._done = True

    def _run(self) -> None:
        while not self._done and not self._stopped.is_set():
            try:
                if self._stop.wait(self._wait_s):
                    self._stopped.set()
                snapshot, self._latest = self._latest, None
                if snapshot is not None and self._progress is not None:
                    self._progress.set(dataclasses.replace(snapshot, host=self._host))
            except Exception:  # the scheduler out of reach (a cut link): try again
                time.sleep(_LINK_WAIT_S)


# -- on the worker --
def _check_here(runner: ShareRunner) -> str | None:
    """On a worker before any share: what the runner's ``check_here`` finds missing (see
    ``_check_runner``), as words, so the worker logs no traceback for a refusal."""
    check = getattr(runner, "check_here", None)
    try:
        if check is not None:
            check()
    except NetbenchError as exc:
        return str(exc)
    return None


def _share_task(
    spec: LoadSpec,
    share: WorkerShare,
    run_id: str,
    reports: bool,
    runner: ShareRunner = run_share,
) -> _ShareReport:
    def event(name: str) -> Event:
        return Event(f"netbench-{run_id}-{name}")

    progress = Variable(f"netbench-{run_id}-progress-{share.index}") if reports else None
    if progress is not None:
        progress.set(None)  # before arriving, so the caller never waits on an unset one
    event(f"arrived-{share.index}").set()
    if not event("go").wait(_ARRIVAL_S):
        raise ClusterError("the load's start was never given (the caller went away?)")
    released = monotonic_ns()

    def all_ready(ready_ns: int) -> int:
        event(f"connected-{share.index}").set()
        event("window").wait(connect_phase_bound_s(spec) + _ARRIVAL_S)
        return monotonic_ns() + _START_MARGIN_NS

    host = socket.gethostname()  # as the result's generator.shares will name it
    link = _SchedulerLink(event("stop"), progress, host)
    watch = ShareWatch(
        report=link.report if progress is not None else None,
        stop_requested=link.stop_requested,
        all_ready=all_ready,
        report_every_s=1.0,
    )
    try:
        outcome = runner(spec, share, released, watch)
    finally:
        link.close()
    return _ShareReport(outcome, host, time.time_ns() - monotonic_ns())
