"""Figures over sliding windows of the timeline, on every loop: a server that stalls 3 s
once in an 8 s load. The whole-run p99 passes a threshold that the worst 2 s window fails,
and the worst window is the one the stalled responses came back in; a stored result
(``to_dict`` / ``from_dict``) gives the same windows."""

from __future__ import annotations

import time
from collections.abc import Callable

from servers import StartHttp

from pytest_netbench import LoadResult, SpecError, http_load
from pytest_netbench._experiment.slo import parse_slo

DELAY_MS = 20.0
STALL_S = 3.0


def test_the_worst_window_shows_a_stall_the_whole_run_hides(
    http_server: StartHttp, loop: str, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    # Every response waits 20 ms, so each of the 10 connections answers about 50 a second;
    # from 2 s on, for 3 s, every response is held until the stall ends. The one stalled
    # request of each connection is under 1 % of the run's ok responses (one in ~250) but
    # over 1 % of those of the window it came back in (the stall's last second held none).
    origin = time.monotonic_ns() + 2_000_000_000
    server, _ = http_server(
        delay_ms=DELAY_MS,
        stall_ms=STALL_S * 1000,
        stall_period_ms=1_000_000,
        stall_origin_ns=origin,
    )
    r = consistent(http_load(server.url + "/", duration=8, connections=10, loop=loop))
    assert r.errors_total == 0
    whole = parse_slo("p99_ms < 500").evaluate(r)
    windowed = parse_slo("window(2s).p99_ms < 500").evaluate(r)
    assert whole.passed, whole.describe()
    assert not windowed.passed, windowed.describe()
    worst = r.window(2).worst("p99_ms")
    assert worst.value >= STALL_S * 1000 * 0.8
    # The stalled responses came back about 5 s in (the stall began about 2 s in).
    assert 3 <= worst.start_s <= 5 and worst.end_s == worst.start_s + 2
    # Throughput's worst window is inside the stall: no ok response at all there.
    assert r.window(2).worst("ok").value == 0
    assert r.window(2).rps == 0
    # A stored result keeps each row's latencies: the same windows.
    stored = LoadResult.from_dict(r.to_dict())
    assert stored.window(2).worst("p99_ms") == worst
    assert stored.window(1).p99_ms == r.window(1).p99_ms >= worst.value


def test_a_window_is_whole_timeline_rows(http_server: StartHttp) -> None:
    server, _ = http_server()
    r = http_load(server.url + "/", duration=1, connections=2, timeline_resolution=0.5)
    assert len(r.window(0.5).each("ok")) >= 2
    for bad, words in [(0.7, "no whole number of timeline rows"), (0, "> 0")]:
        try:
            r.window(bad)
        except SpecError as exc:
            assert words in str(exc)
        else:
            raise AssertionError(f"window({bad}) was taken")
