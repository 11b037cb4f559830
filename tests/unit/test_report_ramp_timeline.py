"""A ramp's timeline (``stages=``): each row carries what it was asked for, the result keeps
it through JSON, and the picture draws the target beside what was achieved (and, in closed
loop, the connections open)."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from factories import make_result

from pytest_netbench import LoadResult, TimelineRow, http_spec
from pytest_netbench._report.plots.load import ramp_line, timeline_figure
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import TimelineBucket, WorkerOutcome

pytest.importorskip("matplotlib")

URL = "http://127.0.0.1:8080/"


def ramp_result(**options: object) -> LoadResult:
    spec = http_spec(URL, **options)  # type: ignore[arg-type]
    rows = [
        TimelineRow(i, ok=10 * i, errors=0, p99_ms=1.0, connections=i, target=float(i))
        for i in range(4)
    ]
    base = make_result(sum(r.ok for r in rows), duration_s=4.0)
    mode = "open" if spec.rate is not None else "closed"
    return dataclasses.replace(base, mode=mode, spec=spec, timeline=tuple(rows))


def test_each_row_gets_the_ramps_mean_over_it() -> None:
    spec = http_spec(URL, rate=0, stages=[("2s", 400), ("1.5s", 400)])
    buckets = [TimelineBucket(1, 0, Counter({1000: 1}), connections=c) for c in (3, 5, 5, 4)]
    outcome = WorkerOutcome(sent=4, seconds=buckets, window_end_ns=3_500_000_000)
    result = merge_outcomes(spec, [outcome])
    assert [row.target for row in result.timeline] == pytest.approx([100, 300, 400, 400])
    assert [row.connections for row in result.timeline] == [3, 5, 5, 4]
    again = LoadResult.from_dict(result.to_dict())
    assert [(r.target, r.connections) for r in again.timeline] == [
        (r.target, r.connections) for r in result.timeline
    ]


def test_the_target_line_is_the_ramps_corners_or_the_rows() -> None:
    result = ramp_result(rate=50, stages=[("2s", 250), ("2s", 0)])
    assert ramp_line(result) == ((0.0, 2.0, 4.0), (50.0, 250.0, 0.0))
    stored = dataclasses.replace(result, spec=None)  # from JSON: the rows' targets
    assert ramp_line(stored) == ((0.5, 1.5, 2.5, 3.5), (0.0, 1.0, 2.0, 3.0))
    assert ramp_line(make_result(10)) is None


def test_the_picture_of_a_ramp() -> None:
    open_loop = timeline_figure(ramp_result(rate=0, stages=[("4s", 100)]), title="open")
    rate_axes = open_loop.axes[0]
    assert len(open_loop.axes) == 3
    assert "target rate (stages)" in [line.get_label() for line in rate_axes.get_lines()]
    closed = timeline_figure(ramp_result(stages=[("2s", 6), ("2s", 0)]), title="closed")
    assert len(closed.axes) == 4
    connections = closed.axes[2]
    assert connections.get_ylabel() == "connections"
    labels = [line.get_label() for line in connections.get_lines()]
    assert labels == ["target (stages)", "open at the row's end"]
