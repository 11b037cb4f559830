"""Watching a running share: its counts sampled for progress, a stop request checked.

A :class:`ShareWatch` is what a share is given to report through and be stopped by; each
transport builds one where the share runs (in this thread the caller's own; in a worker
process one that writes to the pipe back to the parent). One timer on the share's loop
does both jobs, off the per-request path: it reads counters the run keeps anyway. A share
run without a watch arms no timer at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from time import monotonic_ns

from pytest_netbench._engine.rules.accounting import RunAccounting
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._model.live import ShareSnapshot

Report = Callable[[ShareSnapshot], None]


@dataclass(frozen=True, slots=True)
class ShareWatch:
    """``report`` receives a snapshot every ``report_every_s``; ``stop_requested`` is asked
    every ``stop_every_s`` and, once True, ends the run at once (no drain).

    ``all_ready`` (shares that open their connections first): called, off the loop, with
    the instant this share's connections were open; it returns once every share's are, with
    the instant at which they all open their windows.

    ``released`` (on the caller's side, not where a share runs): called by a transport that
    starts the shares when its workers are ready, with the instant they start.
    """

    report: Report | None = None
    stop_requested: Callable[[], bool] | None = None
    all_ready: Callable[[int], int] | None = None
    released: Callable[[int], None] | None = None
    report_every_s: float = 0.5
    stop_every_s: float = 0.1

    @property
    def every_s(self) -> float:
        """How often the timer runs."""
        if self.stop_requested is None:
            return self.report_every_s
        if self.report is None:
            return self.stop_every_s
        return min(self.stop_every_s, self.report_every_s)


def snapshot(run: RunAccounting) -> ShareSnapshot:
    """The run's measured counts now, read on the run's own thread.

    ``run.completed`` counts every finished request, except on the fused keep-alive
    paths, which settle their counts only when a connection ends: there the ok responses are
    counted from the latency samples (folded into the timeline, plus those since, a mix's
    under each kind: ``Recorder.ok_so_far``), which they record as they go. In closed loop
    what is not settled yet was also sent, one request per response.
    """
    rec = run.recorder
    errors = sum(rec.errors.values())
    completed = max(run.completed, rec.ok_so_far() + errors)
    # Open loop counts each request as it leaves; closed loop's fused path does not.
    unsettled = 0 if run.open_loop else completed - run.completed
    return ShareSnapshot(run.share.index, rec.sent + unsettled, completed, errors)


class Watcher:
    """One share's watch while it runs: call :meth:`check` from the timer."""

    def __init__(self, watch: ShareWatch, run: RunAccounting) -> None:
        self.watch = watch
        self.run = run
        self._next_report = monotonic_ns() + int(watch.report_every_s * NS_PER_S)

    def check(self) -> bool:
        """Report if due; True when the run was asked to stop (the caller stops it)."""
        watch = self.watch
        if watch.stop_requested is not None and watch.stop_requested():
            return True
        if watch.report is not None:
            now = monotonic_ns()
            if now >= self._next_report:
                self._next_report = now + int(watch.report_every_s * NS_PER_S)
                watch.report(snapshot(self.run))
        return False
