"""Live progress without a load: share snapshots merged into reports, the line drawn from
them, and when it is drawn at all."""

from __future__ import annotations

import io
import threading
from time import monotonic_ns

import pytest

from pytest_netbench._model.live import (
    HostProgress,
    LoadProgress,
    ProgressTracker,
    ShareSnapshot,
    StopSignal,
    labelled,
)
from pytest_netbench._report.progress import ProgressLine, format_progress


def progress(**changes: object) -> LoadProgress:
    values: dict[str, object] = {
        "elapsed_s": 3.0,
        "warmup_s": 1.0,
        "duration_s": 4.0,
        "requests": None,
        "sent": 2010,
        "completed": 2000,
        "errors": 3,
        "rate": 1000.4,
    }
    values.update(changes)
    return LoadProgress(**values)  # type: ignore[arg-type]


def test_the_tracker_sums_the_latest_snapshot_of_every_share() -> None:
    reports: list[LoadProgress] = []
    tracker = ProgressTracker(
        reports.append,
        start_ns=monotonic_ns(),
        warmup_s=0.0,
        duration_s=10.0,
        requests=None,
        every_s=0.0,
    )
    tracker.update(ShareSnapshot(0, sent=10, completed=8, errors=1))
    tracker.update(ShareSnapshot(1, sent=5, completed=5, errors=0))
    tracker.update(ShareSnapshot(0, sent=20, completed=18, errors=2))  # replaces share 0's
    last = reports[-1]
    assert (last.sent, last.completed, last.errors, last.ok) == (25, 23, 2, 21)
    assert last.duration_s == 10.0 and last.step is None


def test_on_a_cluster_the_tracker_also_counts_each_host_apart() -> None:
    reports: list[LoadProgress] = []
    tracker = ProgressTracker(
        reports.append, start_ns=0, warmup_s=0, duration_s=1, requests=None, every_s=0.0
    )
    tracker.update(ShareSnapshot(0, sent=10, completed=9, errors=1, host="10.0.0.6"))
    tracker.update(ShareSnapshot(1, sent=7, completed=7, errors=0, host="10.0.0.5"))
    tracker.update(ShareSnapshot(2, sent=4, completed=3, errors=2, host="10.0.0.6"))
    last = reports[-1]
    assert last.hosts == (
        HostProgress("10.0.0.5", shares=1, completed=7, errors=0),
        HostProgress("10.0.0.6", shares=2, completed=12, errors=3),
    )
    assert sum(h.completed for h in last.hosts) == last.completed


def test_local_shares_have_no_hosts() -> None:
    reports: list[LoadProgress] = []
    tracker = ProgressTracker(
        reports.append, start_ns=0, warmup_s=0, duration_s=1, requests=None, every_s=0.0
    )
    tracker.update(ShareSnapshot(0, sent=1, completed=1, errors=0))
    assert reports[-1].hosts == ()


def test_the_tracker_reports_at_most_once_per_interval() -> None:
    reports: list[LoadProgress] = []
    tracker = ProgressTracker(
        reports.append, start_ns=monotonic_ns(), warmup_s=0, duration_s=1, requests=None
    )
    for n in range(50):  # a burst of snapshots, far faster than the interval
        tracker.update(ShareSnapshot(n % 2, sent=n, completed=n, errors=0))
    assert len(reports) == 1


def test_snapshots_from_several_threads_are_all_counted() -> None:
    reports: list[LoadProgress] = []
    tracker = ProgressTracker(
        reports.append, start_ns=0, warmup_s=0, duration_s=1, requests=None, every_s=0.0
    )

    def share(index: int) -> None:
        for n in range(1, 201):
            tracker.update(ShareSnapshot(index, sent=n, completed=n, errors=0))

    threads = [threading.Thread(target=share, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    tracker.update(ShareSnapshot(0, sent=200, completed=200, errors=0))
    assert reports[-1].completed == 800


def test_a_callback_that_raises_is_kept_and_called_no_more() -> None:
    calls: list[LoadProgress] = []

    def broken(report: LoadProgress) -> None:
        calls.append(report)
        raise RuntimeError("bug in the callback")

    tracker = ProgressTracker(
        broken, start_ns=0, warmup_s=0, duration_s=1, requests=None, every_s=0.0
    )
    tracker.update(ShareSnapshot(0, 1, 1, 0))
    tracker.update(ShareSnapshot(0, 2, 2, 0))
    assert len(calls) == 1
    assert isinstance(tracker.failure, RuntimeError)


def test_labels_mark_each_report_with_the_step() -> None:
    got: list[LoadProgress] = []
    labelled(got.append, 3, 20, "600 req/s")(progress())
    assert (got[0].step, got[0].steps, got[0].label) == (3, 20, "600 req/s")


@pytest.mark.parametrize(
    ("changes", "left"),
    [
        ({}, 2.0),  # 1 s warm-up + 4 s, 3 s in
        ({"elapsed_s": 9.0}, 0.0),
        ({"elapsed_s": -1.0}, 5.0),  # workers still starting
        ({"duration_s": None, "requests": 5000}, 3.0),  # 3,000 to go at ~1,000/s
        ({"duration_s": None, "requests": 5000, "rate": 0.0}, None),
    ],
)
def test_time_left(changes: dict[str, object], left: float | None) -> None:
    remaining = progress(**changes).remaining_s
    if left is None:
        assert remaining is None
    else:
        assert remaining == pytest.approx(left, rel=1e-3)


def test_the_line_says_step_time_rate_counts_and_time_left() -> None:
    line = format_progress(progress(step=3, steps=20, label="600 req/s"))
    assert line.startswith("step 3/20: 600 req/s  2.0s/4.0s  [==========>         ]")
    assert "1,000 req/s" in line
    assert "2,000 done" in line
    assert "3 errors" in line
    assert line.endswith("2.0s left")


def test_the_line_ends_with_each_hosts_counts_on_a_cluster() -> None:
    hosts = (HostProgress("10.0.0.5", 1, 1200, 0), HostProgress("10.0.0.6", 1, 800, 1))
    line = format_progress(progress(hosts=hosts))
    assert line.endswith("|  10.0.0.5: 1,200 done, 0 errors  10.0.0.6: 800 done, 1 error")
    assert "|" not in format_progress(progress())


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"elapsed_s": -0.5}, "starting workers"),
        ({"elapsed_s": 0.5}, "warm-up 0.5s/1.0s"),
        ({"duration_s": None, "requests": 8000}, "2,000/8,000 done"),
        ({"step": 2, "steps": None, "label": "closed-loop estimate"}, "step 2: closed-loop"),
        ({"elapsed_s": 5.5}, "[====================]"),
        ({"elapsed_s": 5.3}, "4.0s/4.0s"),  # a report just after the deadline
        ({"errors": 1}, "1 error "),
    ],
)
def test_the_line_in_each_phase(changes: dict[str, object], fragment: str) -> None:
    assert fragment in format_progress(progress(**changes))


def test_the_line_waits_then_draws_in_place_and_clears() -> None:
    now = [0.0]
    stream = io.StringIO()
    line = ProgressLine(stream, after_s=2.0, clock=lambda: now[0])
    line.update(progress())
    line.clear()
    assert stream.getvalue() == ""  # a short run shows nothing, and leaves nothing
    now[0] = 2.5
    line.update(progress())
    line.update(progress(completed=2500))
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.count("\x1b[K") == 2
    assert "\n" not in text
    line.clear()
    assert stream.getvalue().endswith("\r\x1b[K")


def test_a_stop_signal_is_a_flag() -> None:
    stop = StopSignal()
    assert not stop.requested
    stop.request()
    stop.request()
    assert stop.requested
