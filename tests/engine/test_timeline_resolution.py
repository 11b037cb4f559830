"""Timeline rows finer (or coarser) than a second: one row per step of the window, on
every worker alike, adding up to the totals; the default stays one row a second."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from servers import StartHttp

from pytest_netbench import LoadResult, http_load
from pytest_netbench._errors import SpecError

ASYNCIO_LOOPS = ("uvloop", "asyncio")


@pytest.mark.parametrize("loop", ASYNCIO_LOOPS)
@pytest.mark.parametrize("workers", [1, 2])
def test_one_row_per_step_of_the_window(
    http_server: StartHttp, loop: str, workers: int, consistent: Callable[..., LoadResult]
) -> None:
    server, _ = http_server()
    result = consistent(
        http_load(
            server.url,
            duration=1.0,
            connections=4,
            workers=workers,
            timeline_resolution=0.1,
            loop=loop,
        )
    )
    rows = result.timeline
    assert len(rows) == 10
    assert [row.second for row in rows] == list(range(10))
    assert all(row.span_s == 0.1 for row in rows)
    assert rows[3].start_s == pytest.approx(0.3)
    assert sum(row.ok for row in rows) == result.ok > 0
    assert sum(row.errors for row in rows) == result.errors_total
    # The answers are spread over the steps, not lumped into one (a worker process on a
    # busy machine may miss a step of 0.1 s now and then, so not every step is asked of).
    assert sum(row.ok > 0 for row in rows) >= len(rows) // 2
    assert all(row.p50_ms <= row.p99_ms for row in rows)
    assert result.spec is not None and result.spec.timeline_resolution_s == 0.1


def test_rows_coarser_than_a_second(
    http_server: StartHttp, consistent: Callable[..., LoadResult]
) -> None:
    server, _ = http_server()
    result = consistent(http_load(server.url, duration=1.0, connections=2, timeline_resolution=0.5))
    assert [(row.second, row.span_s) for row in result.timeline] == [(0, 0.5), (1, 0.5)]
    assert result.rps_stdev >= 0.0


def test_a_request_count_run_folds_its_last_partial_row(
    http_server: StartHttp, consistent: Callable[..., LoadResult]
) -> None:
    server, _ = http_server(delay_ms=1.0)
    result = consistent(
        http_load(server.url, requests=200, connections=1, timeline_resolution=0.05)
    )
    assert len(result.timeline) >= 2
    assert sum(row.ok for row in result.timeline) == result.ok == 200


def test_open_loop_rows_hold_the_drain_in_the_last_one(
    http_server: StartHttp, consistent: Callable[..., LoadResult]
) -> None:
    server, _ = http_server(delay_ms=30.0)
    result = consistent(http_load(server.url, rate=200, duration=0.5, timeline_resolution=0.1))
    # Answers drained after the deadline belong to the window's last row: no extra rows.
    assert len(result.timeline) == 5
    assert result.in_flight == 0
    assert sum(row.ok for row in result.timeline) == result.ok


def test_the_default_is_a_row_a_second(
    http_server: StartHttp, consistent: Callable[..., LoadResult]
) -> None:
    server, _ = http_server()
    result = consistent(http_load(server.url, duration=1.0, connections=2))
    assert all(row.span_s == 1.0 for row in result.timeline)
    assert result.spec is not None and result.spec.timeline_resolution_s == 1.0


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"timeline_resolution": 0.001}, "at least 0.01 s"),
        ({"timeline_resolution": 0}, "at least 0.01 s"),
        ({"timeline_resolution": "1s"}, "must be a number of seconds"),
        ({"timeline_resolution": 0.1, "loop": "trio"}, "needs the asyncio/uvloop engine"),
    ],
)
def test_bad_resolutions_are_refused(options: dict[str, object], named: str) -> None:
    with pytest.raises(SpecError, match=named):
        http_load("http://127.0.0.1:9/", duration=1.0, **options)
