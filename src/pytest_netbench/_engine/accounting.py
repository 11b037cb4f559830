"""The counting both engines share: who may start a request, and what was started.

One rule set for asyncio and trio, so ``sent == ok + errors_total + in_flight`` means the
same thing on every loop: a request counts as sent when it starts inside the window (its
write, or the connect it needed), and a ``requests=N`` run hands out exactly N permits.
"""

from __future__ import annotations

from pytest_netbench._engine.share import WorkerShare
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import Recorder


class RunAccounting:
    """Permits, completions and the window of one worker's run."""

    def __init__(self, spec: LoadSpec, share: WorkerShare, recorder: Recorder) -> None:
        self.spec = spec
        self.share = share
        self.recorder = recorder
        self.measure_start_ns = recorder.measure_start_ns
        self.open_loop = share.rate is not None
        self.budget: int | None = share.requests  # measured requests left; None = by time
        self.completed = 0  # measured requests finished, ok or not
        self.in_flight = 0  # set when the run stops
        self.stopping = False
        self.end_ns = 0
        self.opened = 0
        self.peak = 0
        # Close after this many responses on a connection (keep-alive off means 1).
        self.rpc = spec.requests_per_connection or (0 if spec.keepalive else 1)

    def take(self, now: int) -> bool:
        """May one more request start at ``now``? Counts it as sent if it is measured."""
        if self.stopping:
            return False
        if now >= self.measure_start_ns:
            if self.budget is not None:
                if self.budget <= 0:
                    return False
                self.budget -= 1
            self.recorder.sent += 1
        return True
