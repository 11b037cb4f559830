"""The worker seam: shares carry a start relative to their release, and any transport that
runs them and brings their outcomes back can carry a load (local processes are covered by
the two-worker conformance tests)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from time import monotonic_ns

from servers import StartHttp

from pytest_netbench import LoadResult, http_spec
from pytest_netbench._engine.driver import run_share
from pytest_netbench._engine.share import WorkerShare, split_load
from pytest_netbench._engine.workers import (
    InThisThread,
    LocalProcesses,
    WorkerTransport,
    default_transport,
    run_workers,
)
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import WorkerOutcome

Check = Callable[[LoadResult], LoadResult]


class OwnClockThreads:
    """Each share in a thread of its own that counts the start delay from when the share
    reached it, as a worker on another host would."""

    start_delay_s = 0.05

    def run_shares(self, spec: LoadSpec, shares: Sequence[WorkerShare]) -> list[WorkerOutcome]:
        outcomes: dict[int, WorkerOutcome] = {}

        def work(share: WorkerShare) -> None:
            outcomes[share.index] = run_share(spec, share, monotonic_ns())

        threads = [threading.Thread(target=work, args=(share,)) for share in shares]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [outcomes[share.index] for share in shares]


def test_a_share_starts_its_delay_after_its_release() -> None:
    spec = http_spec("http://127.0.0.1:9/", requests=10, workers=3, rate=30.0)
    shares = split_load(spec, start_delay_ns=7)
    assert [s.start_at(1_000) for s in shares] == [1_007] * 3
    assert sum(s.requests or 0 for s in shares) == 10
    assert {s.max_connections for s in shares} == {spec.pool_limit // 3}


def test_one_worker_runs_in_this_thread_and_more_in_processes() -> None:
    one = http_spec("http://127.0.0.1:9/", requests=1)
    two = http_spec("http://127.0.0.1:9/", requests=2, workers=2)
    assert isinstance(default_transport(one), InThisThread)
    assert isinstance(default_transport(two), LocalProcesses)


def test_any_transport_can_run_the_shares(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    spec = http_spec(server.url, loop=loop, connections=3, requests=31, workers=3)
    transport: WorkerTransport = OwnClockThreads()
    outcomes = run_workers(spec, transport)
    r = consistent(merge_outcomes(spec, outcomes, None))
    assert (r.sent, r.ok, r.errors_total) == (31, 31, 0)
    assert app.seen.requests == 31
    assert [o.loop for o in outcomes] == [loop] * 3
