"""The worker seam: shares carry a start relative to their release, and any transport that
runs them and brings their outcomes back can carry a load (local processes are covered by
the two-worker conformance tests)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from time import monotonic_ns

from servers import StartHttp

from pytest_netbench import LoadResult, http_spec
from pytest_netbench._engine.rules.share import WorkerShare, split_load
from pytest_netbench._engine.shares.driver import run_share
from pytest_netbench._engine.shares.workers import (
    InThisThread,
    LocalProcesses,
    WorkerTransport,
    default_transport,
    outcome_limit_s,
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


def test_a_request_count_is_not_cut_off_at_the_bound_a_duration_gets(
    http_server: StartHttp, consistent: Check
) -> None:
    """A load of a request count ends when its last request does, which no bound known in
    advance covers: local worker processes are not declared failed at the bound a load with
    a duration gets (start delay + warm-up + duration + timeout + grace). With a grace of
    0.5 s that bound is 0.1 + 1.0 + 0.5 = 1.6 s here, and the load takes at least 2 s (each
    share's one connection asks 10 times, each answer 0.2 s late). Before the fix it failed
    with "worker netbench-worker-0 did not finish within 3s" (at the default 30 s grace, a
    count taking over 33 s did)."""
    server, app = http_server(delay_ms=200)
    spec = http_spec(server.url, connections=2, requests=20, workers=2, timeout=1.0)
    transport = LocalProcesses(grace_s=0.5)
    duration_bound_s = transport.start_delay_s + spec.timeout_s + transport.grace_s
    assert outcome_limit_s(spec, transport.start_delay_s, transport.grace_s) is None
    started = monotonic_ns()
    r = consistent(merge_outcomes(spec, run_workers(spec, transport), None))
    assert (monotonic_ns() - started) / 1e9 > duration_bound_s  # the load outlived it
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (20, 20, 0, 0)
    assert app.seen.requests == 20


def test_a_load_with_a_duration_keeps_its_bound() -> None:
    spec = http_spec("http://127.0.0.1:9/", duration=2.0, warmup=0.5, workers=2, timeout=1.0)
    assert outcome_limit_s(spec, 1.5, 0.5) == 1.5 + 0.5 + 2.0 + 1.0 + 0.5


SLOW_SECOND_WORKER = """
import multiprocessing
import sys
import time

from pytest_netbench import http_spec
from pytest_netbench._engine.shares.workers import run_workers

# Each spawned worker re-runs this script as it starts: the second one takes 2 s to.
if multiprocessing.current_process().name.endswith("-1"):
    time.sleep(2.0)

if __name__ == "__main__":
    spec = http_spec(sys.argv[1], duration=1.0, connections=2, workers=2)
    print(*(sum(o.status_codes.values()) for o in run_workers(spec)))
"""


def test_workers_start_together_however_long_each_takes_to_start(
    http_server: StartHttp, tmp_path: Path
) -> None:
    """Local worker processes say when they are ready and are released together: one that
    takes 2 s longer to start (a slow import, a busy machine) still runs its whole share of
    a 1 s load. With a fixed 1.5 s start delay it began after its window had closed and
    answered nothing."""
    server, _ = http_server()
    script = tmp_path / "slow_worker.py"
    script.write_text(SLOW_SECOND_WORKER)
    done = subprocess.run(
        [sys.executable, str(script), server.url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    first, second = map(int, done.stdout.split())
    assert first > 0 and second > 0.3 * first, (first, second)
