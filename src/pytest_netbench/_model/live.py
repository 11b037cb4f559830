"""The live side of a running load: progress reports going out, a stop request coming in.

Each share of a load, wherever it runs, reports a :class:`ShareSnapshot` (its counts so
far, under its share index) a couple of times a second from a timer on its own loop, never
from the per-request path. The caller's :class:`ProgressTracker` keeps the latest snapshot
of every share and hands a :class:`LoadProgress` (the whole load so far) to the callback.
A :class:`StopSignal` asks a running load to end now; the load then returns what it
measured up to that point, marked ``interrupted``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from time import monotonic_ns

from pytest_netbench._public import publish

_NS_PER_S = 1_000_000_000
# The req/s shown is over this much of the recent past: steadier than the last report alone.
_RATE_WINDOW_NS = 2 * _NS_PER_S


@dataclass(frozen=True, slots=True)
class ShareSnapshot:
    """One share's measured counts so far (warm-up excluded), under its share index;
    ``host`` names the machine of the Dask worker that runs it (set for every share on a
    cluster, a LocalCluster's too; empty for local worker processes)."""

    share: int
    sent: int
    completed: int
    errors: int
    host: str = ""


@dataclass(frozen=True, slots=True)
class HostProgress:
    """What the shares on one host of a cluster have done so far."""

    host: str
    shares: int
    completed: int
    errors: int


@dataclass(frozen=True, slots=True)
class LoadProgress:
    """A running load so far, as a ``progress=`` callback receives it.

    Counts are of measured requests (warm-up excluded), summed over every share that has
    reported. ``elapsed_s`` counts from the planned start (warm-up included) and is below 0
    while worker processes are still starting. Experiments fill ``step`` (from 1),
    ``steps`` (None when the number is not known in advance) and ``label``, e.g.
    ``"600 req/s"``. On a cluster, ``hosts`` splits the counts by the host each share runs
    on (empty for local workers).
    """

    elapsed_s: float
    warmup_s: float
    duration_s: float | None
    requests: int | None
    sent: int
    completed: int
    errors: int
    rate: float
    step: int | None = None
    steps: int | None = None
    label: str = ""
    hosts: tuple[HostProgress, ...] = ()

    @property
    def ok(self) -> int:
        return self.completed - self.errors

    @property
    def starting(self) -> bool:
        """Workers are still getting ready: no request has been sent yet."""
        return self.elapsed_s < 0

    @property
    def warming_up(self) -> bool:
        return 0 <= self.elapsed_s < self.warmup_s

    @property
    def remaining_s(self) -> float | None:
        """Time left: exact for a timed load, estimated from the recent rate for a request
        count; None when there is no telling yet."""
        if self.duration_s is not None:
            return max(self.warmup_s + self.duration_s - max(self.elapsed_s, 0.0), 0.0)
        if self.requests is not None and self.rate > 0:
            return max(self.requests - self.completed, 0) / self.rate
        return None


ProgressCallback = Callable[[LoadProgress], None]


class ProgressTracker:
    """Merges share snapshots into :class:`LoadProgress` reports for one load.

    Snapshots may arrive from several threads (a transport's own); reports go out at most
    once per ``every_s``. An exception from the callback is kept (``failure``) and stops
    the reports; the caller stops the load and raises it, so a broken callback is seen at
    once rather than after a long run.
    """

    def __init__(
        self,
        callback: ProgressCallback,
        *,
        start_ns: int,
        warmup_s: float,
        duration_s: float | None,
        requests: int | None,
        every_s: float = 0.5,
    ) -> None:
        self._callback = callback
        self._start_ns = start_ns
        self._warmup_s = warmup_s
        self._duration_s = duration_s
        self._requests = requests
        # A little under the share's interval, so one report per round of snapshots.
        self._every_ns = int(every_s * 0.8 * _NS_PER_S)
        self._latest: dict[int, ShareSnapshot] = {}
        self._history: deque[tuple[int, int]] = deque()
        self._last_report_ns = 0
        self._lock = threading.Lock()
        self.failure: BaseException | None = None

    def starts_at(self, start_ns: int) -> None:
        """The shares start at ``start_ns`` (known once their workers were ready)."""
        self._start_ns = start_ns

    def update(self, snapshot: ShareSnapshot) -> None:
        with self._lock:
            if self.failure is not None:
                return
            self._latest[snapshot.share] = snapshot
            now = monotonic_ns()
            if now - self._last_report_ns < self._every_ns:
                return
            self._last_report_ns = now
            report = self._progress(now)
            try:
                self._callback(report)
            except Exception as exc:
                self.failure = exc

    def _progress(self, now: int) -> LoadProgress:
        shares = self._latest.values()
        completed = sum(s.completed for s in shares)
        history = self._history
        history.append((now, completed))
        while len(history) > 2 and now - history[1][0] >= _RATE_WINDOW_NS:
            history.popleft()
        then, before = history[0]
        rate = (completed - before) * _NS_PER_S / (now - then) if now > then else 0.0
        return LoadProgress(
            elapsed_s=(now - self._start_ns) / _NS_PER_S,
            warmup_s=self._warmup_s,
            duration_s=self._duration_s,
            requests=self._requests,
            sent=sum(s.sent for s in shares),
            completed=completed,
            errors=sum(s.errors for s in shares),
            rate=rate,
            hosts=_by_host(shares),
        )


def _by_host(shares: Iterable[ShareSnapshot]) -> tuple[HostProgress, ...]:
    totals: dict[str, HostProgress] = {}
    for s in shares:
        if s.host:
            seen = totals.get(s.host, HostProgress(s.host, 0, 0, 0))
            totals[s.host] = HostProgress(
                s.host, seen.shares + 1, seen.completed + s.completed, seen.errors + s.errors
            )
    return tuple(totals[host] for host in sorted(totals))


def labelled(
    callback: ProgressCallback, step: int, steps: int | None, label: str
) -> ProgressCallback:
    """``callback`` with every report marked as the experiment's ``step`` of ``steps``."""

    def report(progress: LoadProgress) -> None:
        callback(dataclasses.replace(progress, step=step, steps=steps, label=label))

    return report


class StopSignal:
    """Asks a running load, or an experiment, to stop early.

    Safe to request from a signal handler or any thread. A load watching it ends within
    about 0.1 s and returns what it measured so far with ``interrupted=True``; an
    experiment runs no further loads and returns the steps done.
    """

    __slots__ = ("_requested",)

    def __init__(self) -> None:
        # A plain flag, not a threading.Event: setting an Event takes a lock, which a
        # signal handler must not.
        self._requested = False

    def request(self) -> None:
        self._requested = True

    @property
    def requested(self) -> bool:
        return self._requested


publish(globals())
