"""A running load reports progress and can be stopped, through any transport.

Progress snapshots carry their share's index from wherever the share runs (this thread,
worker processes, a transport of one's own); a stop ends the load early with what was
measured, marked interrupted, and the counting rules still hold.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from time import monotonic_ns

import pytest
from servers import StartHttp

from pytest_netbench import LoadProgress, LoadResult, StopSignal, http_load, http_spec
from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.shares.driver import run_share
from pytest_netbench._engine.shares.workers import LocalProcesses, run_workers
from pytest_netbench._model import LoadSpec
from pytest_netbench._model.live import ShareSnapshot
from pytest_netbench._stats.recorder import WorkerOutcome

Check = Callable[[LoadResult], LoadResult]
LONG_S = 60.0  # a load far longer than any test may take: only a stop ends it in time


def stop_after(seconds: float) -> StopSignal:
    stop = StopSignal()
    timer = threading.Timer(seconds, stop.request)
    timer.daemon = True
    timer.start()
    return stop


class ThreadsWithWatch:
    """Each share in a thread of its own, each with its own watch built from the caller's,
    as a transport to other hosts builds one where the share runs."""

    start_delay_s = 0.05

    def run_shares(
        self, spec: LoadSpec, shares: Sequence[WorkerShare], watch: ShareWatch | None = None
    ) -> list[WorkerOutcome]:
        outcomes: dict[int, WorkerOutcome] = {}

        def work(share: WorkerShare) -> None:
            outcomes[share.index] = run_share(spec, share, monotonic_ns(), watch)

        threads = [threading.Thread(target=work, args=(share,)) for share in shares]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [outcomes[share.index] for share in shares]


@pytest.mark.parametrize("rate", [None, 400.0], ids=["closed", "open"])
def test_progress_reports_grow_and_never_pass_the_result(
    loop: str, rate: float | None, http_server: StartHttp, consistent: Check
) -> None:
    # Both fused paths settle some counts only at the end: the reports must not show it.
    server, _ = http_server(delay_ms=2)
    reports: list[LoadProgress] = []
    result = consistent(
        http_load(
            server.url,
            loop=loop,
            connections=2,
            duration=1.8,
            rate=rate,
            progress=reports.append,
        )
    )
    assert len(reports) >= 2
    assert not result.interrupted
    completed = [p.completed for p in reports]
    assert completed == sorted(completed)
    assert [p.elapsed_s for p in reports] == sorted(p.elapsed_s for p in reports)
    for report in reports:
        assert report.duration_s == 1.8
        assert report.errors == 0
        assert report.ok == report.completed
        assert report.completed <= report.sent <= result.sent
        assert report.remaining_s is not None
    assert reports[-1].completed > 0
    assert reports[-1].completed <= result.ok


def test_every_worker_process_reports_under_its_share(http_server: StartHttp) -> None:
    server, _ = http_server(delay_ms=2)
    spec = http_spec(server.url, connections=2, duration=1.5, workers=2)
    snapshots: list[ShareSnapshot] = []
    watch = ShareWatch(report=snapshots.append, report_every_s=0.3)
    outcomes = run_workers(spec, LocalProcesses(), watch)
    assert {s.share for s in snapshots} == {0, 1}
    for share in (0, 1):
        own = [s for s in snapshots if s.share == share]
        assert [s.completed for s in own] == sorted(s.completed for s in own)
        assert own[-1].completed <= outcomes[share].sent


def test_a_transport_of_ones_own_carries_progress_and_stop(
    loop: str, http_server: StartHttp
) -> None:
    server, _ = http_server(delay_ms=2)
    spec = http_spec(server.url, loop=loop, connections=3, duration=LONG_S, workers=3)
    snapshots: list[ShareSnapshot] = []
    stop = stop_after(1.2)
    watch = ShareWatch(report=snapshots.append, stop_requested=lambda: stop.requested)
    outcomes = run_workers(spec, ThreadsWithWatch(), watch)
    assert {s.share for s in snapshots} == {0, 1, 2}
    assert all(o.window_end_ns - o.window_start_ns < LONG_S * 1e9 / 2 for o in outcomes)


@pytest.mark.parametrize("rate", [None, 300.0], ids=["closed", "open"])
def test_a_stop_ends_the_load_with_what_was_measured(
    loop: str, rate: float | None, http_server: StartHttp, consistent: Check
) -> None:
    server, _ = http_server(delay_ms=2)
    stop = stop_after(0.8)
    result = consistent(
        http_load(server.url, loop=loop, connections=4, duration=LONG_S, rate=rate, stop=stop)
    )
    assert result.interrupted
    assert result.to_dict()["interrupted"] is True
    assert 0 < result.duration_s < LONG_S / 2
    assert result.ok > 0
    assert result.errors_total == 0  # cut-off requests are in flight, never errors


def test_a_stop_reaches_worker_processes(http_server: StartHttp, consistent: Check) -> None:
    server, _ = http_server(delay_ms=2)
    stop = stop_after(2.5)  # after the workers' start delay
    result = consistent(http_load(server.url, connections=4, duration=LONG_S, workers=2, stop=stop))
    assert result.interrupted
    assert result.generator.workers == 2
    assert 0 < result.duration_s < LONG_S / 2
    assert result.ok > 0


def test_a_stop_before_the_start_sends_nothing(http_server: StartHttp, consistent: Check) -> None:
    server, app = http_server()
    stop = StopSignal()
    stop.request()
    result = consistent(http_load(server.url, duration=LONG_S, stop=stop))
    assert result.interrupted
    assert (result.sent, result.ok) == (0, 0)
    assert app.seen.requests == 0


def test_a_progress_callback_that_raises_stops_the_load_and_is_raised(
    loop: str, http_server: StartHttp
) -> None:
    server, _ = http_server(delay_ms=2)

    def broken(progress: LoadProgress) -> None:
        raise ZeroDivisionError("the callback's own bug")

    with pytest.raises(ZeroDivisionError, match="the callback's own bug"):
        http_load(server.url, loop=loop, duration=LONG_S, progress=broken)


def test_a_load_nobody_stops_is_not_marked(http_server: StartHttp, consistent: Check) -> None:
    server, _ = http_server()
    result = consistent(http_load(server.url, requests=20, stop=StopSignal()))
    assert not result.interrupted
    assert result.ok == 20
