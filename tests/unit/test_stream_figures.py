"""A streaming load's figures: two workers' samples merged losslessly, the JSON form read
back, and the figures named as metrics (thresholds, the gate, matrices)."""

from __future__ import annotations

import math
from array import array

from pytest_netbench import LoadResult, http_spec
from pytest_netbench._compare.metrics import check_metrics, higher_is_better, metric_value
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import WorkerOutcome
from pytest_netbench._stats.streams import StreamSamples

MS = 1_000_000


def _worker(first_events_ms: list[int], gap_ms: int, events: int) -> WorkerOutcome:
    samples = StreamSamples("sse")
    for first in first_events_ms:
        gaps = array("q", [gap_ms * MS] * (events - 1))
        samples.add(MS // 2, first * MS, gaps, events)
    out = WorkerOutcome(window_start_ns=0, window_end_ns=2_000_000_000)
    out.stream = samples.fold()
    return out


def test_two_workers_merge_into_one_stream_figure() -> None:
    spec = http_spec("http://127.0.0.1:9/sse", stream="sse")
    r = merge_outcomes(spec, [_worker([40, 41], 10, 5), _worker([42, 43, 44], 10, 3)])
    s = r.stream
    assert s is not None
    assert (s.streams, s.events, s.events_per_second) == (5, 19, 9.5)
    assert s.first_event.count == 5 and 41.9 <= s.first_event.p50_ms <= 42.1
    assert s.gap.count == 2 * 4 + 3 * 2 and 9.99 <= s.gap.p50_ms <= 10.01
    assert (s.events_per_stream.min, s.events_per_stream.p50, s.events_per_stream.max) == (3, 3, 5)
    assert s.percentile("first_event", 100) == s.first_event.max_ms
    again = LoadResult.from_dict(r.to_dict()).stream
    assert again == s and again.gap_histogram == s.gap_histogram


def test_stream_figures_are_metrics() -> None:
    spec = http_spec("http://127.0.0.1:9/sse", stream="sse")
    r = merge_outcomes(spec, [_worker([40], 10, 5)])
    assert 39.9 <= metric_value(r, "stream.first_event.p99_ms") <= 40.1
    assert metric_value(r, "stream.events") == 5
    assert check_metrics(["stream.gap.p50_ms", "stream.events_per_second"])
    assert higher_is_better("stream.events_per_second")
    assert not higher_is_better("stream.first_event.p99_ms")
    plain = merge_outcomes(http_spec("http://127.0.0.1:9/"), [WorkerOutcome()])
    assert plain.stream is None and math.isnan(metric_value(plain, "stream.gap.p50_ms"))
