"""A stall cut by the end of an open-loop window stays in the corrected percentiles.

Issue 20, item 9: at 1,000 requests a second against a server that holds every response
during the first 200 ms of each second, the requests due in a stall the window's end cuts
are the slowest of the run; a result that leaves them out (in flight, or still waiting for
a connection the server holds) reads better than the server behaved. Each test puts the
window where it wants it relative to the server's stalls (both count on the system-wide
``CLOCK_MONOTONIC``), then holds the corrected percentiles to the arithmetic for the
window actually measured: a request due at ``t`` inside a stall ending at ``e`` takes
``e - t``, any other about nothing. The server runs in a process of its own, as a server
under test would, so its work after each stall does not share the generator's GIL.

The arithmetic leaves out what the generator and the server take to work off a stall's
backlog once it ends (a few to tens of ms on a busy 2-core machine), so measured
figures may exceed it by that much; they may never fall below it by more than the
clock's and the histogram's grain. That is the property under test: a stall never makes
a latency look better.
"""

from __future__ import annotations

import math
import re
import select
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from time import monotonic_ns

import pytest

from pytest_netbench import LoadResult, http_spec
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._engine.shares.driver import run_share
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import WorkerOutcome

MS = 1_000_000
PERIOD_NS = 1000 * MS
STALL_NS = 200 * MS
RATE = 1000.0
# Below the arithmetic: an early send (batched wake-ups) timed from its send, the µs grain
# of the samples and HdrHistogram's 3 digits. Above it: the backlog worked off after a
# stall, in the generator and the server, generously (the trio engine, with 200
# connections answered at once, took 60 ms over on a 2-core machine with a load of 4).
BELOW_MS = 3.0
ABOVE_MS = 100.0
SERVERS_SCRIPT = Path(__file__).with_name("servers.py")
LISTENING = re.compile(rb"NETBENCH_LISTENING port=(\d+)")


@dataclass(frozen=True)
class StallingServer:
    url: str
    origin_ns: int  # a stall begins at origin + k * PERIOD_NS


@pytest.fixture(scope="module")
def stalling_server() -> Iterator[StallingServer]:
    origin = monotonic_ns()
    command = [sys.executable, str(SERVERS_SCRIPT), "http", "--stall-ms", "200"]
    command += ["--stall-origin-ns", str(origin)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        match = LISTENING.search(proc.stdout.readline() if ready else b"")
        assert match is not None, "the stalling server did not start"
        yield StallingServer(f"http://127.0.0.1:{int(match.group(1))}", origin)
    finally:
        proc.kill()
        proc.wait(10)
        proc.stdout.close()


def run_window(
    server: StallingServer, loop: str, phase_ms: int, duration: float, **options: object
) -> tuple[LoadResult, WorkerOutcome]:
    """One worker's open-loop window starting ``phase_ms`` into the server's stall cycle
    (0: as a stall begins), at least 0.2 s from now."""
    spec = http_spec(server.url, rate=RATE, duration=duration, loop=loop, **options)  # type: ignore[arg-type]
    share = split_load(spec)[0]
    earliest = monotonic_ns() + 200 * MS
    cycles = math.ceil((earliest - server.origin_ns - phase_ms * MS) / PERIOD_NS)
    start = server.origin_ns + cycles * PERIOD_NS + phase_ms * MS
    outcome = run_share(spec, share, start - share.start_delay_ns)
    assert outcome.window_start_ns == start
    return merge_outcomes(spec, [outcome]), outcome


def due_times(outcome: WorkerOutcome) -> list[int]:
    """When each request of the window was due (one worker, uniform spacing)."""
    interval = 1e9 / RATE
    return [outcome.window_start_ns + int(i * interval) for i in range(outcome.scheduled)]


def arithmetic(
    server: StallingServer, outcome: WorkerOutcome, until_ns: int | None = None
) -> Callable[[float], float]:
    """The corrected percentile (ms) the window should show: each request due in a stall
    waits for its end (or only ``until_ns``, when nothing after that is known)."""
    waits = []
    for due in due_times(outcome):
        into = (due - server.origin_ns) % PERIOD_NS
        end = due - into + STALL_NS if into < STALL_NS else due
        if until_ns is not None:
            end = min(end, max(until_ns, due))
        waits.append((end - due) / MS)
    waits.sort()

    def percentile(q: float) -> float:
        return waits[max(1, math.ceil(q / 100 * len(waits))) - 1]

    return percentile


def ends_in_a_stall(server: StallingServer, outcome: WorkerOutcome) -> bool:
    last_due = due_times(outcome)[-1]
    return (last_due - server.origin_ns) % PERIOD_NS < STALL_NS


# (phase in the stall cycle at the window's start in ms, window in s): the first two start
# with a stall (no answer yet, so the pool grows through it) and end inside the next; the
# third starts between stalls with the pool at its 10 connections, and ends 150 ms into a
# stall, most of whose requests are waiting for a connection the server holds; the last
# ends after a whole stall.
WINDOWS = [(0, 1.1), (0, 1.15), (500, 0.65), (500, 0.8)]


@pytest.mark.parametrize(("phase_ms", "duration"), WINDOWS)
def test_the_corrected_percentiles_keep_a_stall_wherever_the_window_ends(
    stalling_server: StallingServer,
    loop: str,
    phase_ms: int,
    duration: float,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    # A window is timing: on a busy 2-core machine (a CI runner doing other work) one run
    # can start or end a little off the stall it aimed at. Up to three windows are run;
    # the first that lands where it aimed must meet every figure below.
    for attempt in range(3):
        try:
            check_drained_window(stalling_server, loop, phase_ms, duration, consistent)
            return
        except AssertionError:
            if attempt == 2:
                raise


def check_drained_window(
    stalling_server: StallingServer,
    loop: str,
    phase_ms: int,
    duration: float,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    result, outcome = run_window(stalling_server, loop, phase_ms, duration)
    consistent(result)
    if loop != "trio":
        # The trio engine's deadline is a task's sleep, and the scheduler sends until it
        # runs: on a busy machine its window has run 90 ms long (``duration_s`` says so,
        # and the arithmetic follows the requests actually scheduled).
        assert ends_in_a_stall(stalling_server, outcome) == (duration != 0.8)
    expected = arithmetic(stalling_server, outcome)
    for q in (90.0, 99.0):
        measured = result.percentile(q)
        assert expected(q) - BELOW_MS <= measured <= expected(q) + ABOVE_MS, (q, result)
    # The drain carried every request of the window through: each was sent (those still
    # waiting for a connection at the close, after it) and answered.
    gen = result.generator
    assert result.sent == result.ok == result.latency.count == outcome.scheduled
    assert (result.in_flight, gen.unsent, gen.lower_bounds, result.errors_total) == (0, 0, 0, 0)
    assert gen.achieved_rate is not None
    sent_in_window = result.sent - gen.sent_after_window
    assert gen.achieved_rate == pytest.approx(sent_in_window / result.duration_s)
    if phase_ms == 500 and duration == 0.65 and loop != "trio":
        # The case the drain used to drop: the pool kept its 10 connections through the
        # stall (the trio engine opens one for every queued request: its are in flight).
        assert gen.sent_after_window > 0


def test_without_a_drain_what_is_unanswered_counts_up_to_the_end(
    stalling_server: StallingServer, loop: str, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    for attempt in range(3):  # a window is timing: see the test above
        try:
            check_undrained_window(stalling_server, loop, consistent)
            return
        except AssertionError:
            if attempt == 2:
                raise


def check_undrained_window(
    stalling_server: StallingServer, loop: str, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    # drain=False stops at the deadline, 150 ms into a stall: its requests are in flight or
    # waiting, and each counts at least from its due time to the stop, a lower bound.
    result, outcome = run_window(stalling_server, loop, 500, 0.65, drain=False)
    consistent(result)
    gen = result.generator
    assert gen.lower_bounds == result.in_flight + gen.unsent > 0
    assert result.latency.count == result.ok + gen.lower_bounds == outcome.scheduled
    assert gen.sent_after_window == 0
    # What is known at the end: a stall's request has waited at least until then.
    expected = arithmetic(stalling_server, outcome, until_ns=outcome.window_end_ns)
    for q in (90.0, 99.0):
        measured = result.percentile(q)
        assert expected(q) - BELOW_MS <= measured <= expected(q) + ABOVE_MS, (q, result)
