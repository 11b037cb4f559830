"""All scenarios together (``_load.scenarios.combine``), from results alone: counts and
latencies add up, each scenario is a request kind of the total, rows are placed by when
they ran, and scenarios that shared one interpreter are judged as one generator."""

from __future__ import annotations

import dataclasses

from pytest_netbench import GeneratorStats, LoadResult
from pytest_netbench._load.scenarios import combine
from pytest_netbench._model import TimelineRow
from pytest_netbench._stats.histogram import encode_histogram, histogram_from_counts
from pytest_netbench._stats.merge import summarize


def _result(ok: int, latency_us: int, rows: int, cpu_s: float) -> LoadResult:
    whole = histogram_from_counts({latency_us: ok})
    per_row = ok // rows
    row_hist = encode_histogram(histogram_from_counts({latency_us: per_row}))
    return LoadResult(
        mode="closed",
        url="http://127.0.0.1:1/",
        duration_s=float(rows),
        sent=ok,
        ok=ok,
        errors={},
        in_flight=0,
        status_codes={200: ok},
        bytes_read=0,
        bytes_written=0,
        latency=summarize(whole),
        latency_histogram=encode_histogram(whole),
        timeline=tuple(
            TimelineRow(
                i, per_row, 0, latency_us / 1000, latency_us / 1000, 1.0, latency_histogram=row_hist
            )
            for i in range(rows)
        ),
        generator=GeneratorStats(cpu_s=cpu_s),
    )


def test_the_total_of_two_scenarios() -> None:
    fast, slow = _result(400, 1_000, 4, 0.1), _result(20, 200_000, 2, 0.1)
    total = combine("http://127.0.0.1:1", {"fast": fast, "slow": slow}, {"fast": 0, "slow": 1})
    assert (total.sent, total.ok, total.status_codes) == (420, 420, {200: 420})
    assert total.latency.count == 420 and total.max_ms >= 199
    assert total.by_request["slow"].ok == 20 and total.by_request["slow"].p99_ms >= 199
    # slow's rows are the total's second and third (it began a second later).
    assert [row.ok for row in total.timeline] == [100, 110, 110, 100]
    # Only the rows slow ran in hold its latencies: the worst 1 s window is one of them.
    assert total.window(1).worst("p99_ms").start_s == 1.0
    assert [round(w.value) for w in total.window(1).each("p99_ms")] == [1, 200, 200, 1]
    assert total.valid and total.duration_s == 4.0


def test_scenarios_sharing_one_interpreter_are_judged_as_one_generator() -> None:
    busy = _result(100, 1_000, 2, 0.95)  # each alone is below 90 % of a CPU...
    total = combine("http://127.0.0.1:1", {"a": busy, "b": busy}, {"a": 0, "b": 0})
    assert not total.valid  # ...but together they used 95 %
    assert total.invalid_causes == ("generator_saturated",)
    assert "the scenarios a, b ran in one interpreter" in total.invalid_reasons[0]
    apart = dataclasses.replace(busy, generator=GeneratorStats(workers=2, cpu_s=0.95))
    assert combine("http://127.0.0.1:1", {"a": busy, "b": apart}, {"a": 0, "b": 0}).valid
