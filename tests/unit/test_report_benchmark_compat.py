"""pytest-benchmark's storage format: the fields its loader needs, stats in seconds."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path

import pytest
from factories import make_result
from hdrh.histogram import HdrHistogram

from pytest_netbench._compare.records import Record
from pytest_netbench._host.environment import collect_environment
from pytest_netbench._model import LatencySummary, LoadResult, RequestStats
from pytest_netbench._report.benchmark_compat import benchmark_json, write_benchmark_json

# Values below 2048 µs are stored exactly by a 3-digit HdrHistogram, so exact statistics
# of the raw samples are the reference.
SAMPLES_US = [100 + (i * 37) % 1500 for i in range(2000)]


def _result(samples_us: list[int], ok: int) -> LoadResult:
    hist = HdrHistogram(1, 3_600_000_000, 3)
    for value in samples_us:
        hist.record_value(value)
    return make_result(
        ok,
        duration_s=2.0,
        count=len(samples_us),
        p50_ms=1.0,
        p99_ms=2.0,
        latency_histogram=hist.encode().decode("ascii"),
    )


def _records() -> list[Record]:
    half = len(SAMPLES_US) // 2
    return [
        Record(
            nodeid="tests/t.py::test_hello[tornado-50]",
            function="tests/t.py::test_hello",
            params={"server": "tornado", "connections": 50},
            trial=0,
            result=_result(SAMPLES_US[:half], ok=1000),
        ),
        Record(
            nodeid="tests/t.py::test_hello[tornado-50]",
            function="tests/t.py::test_hello",
            params={"server": "tornado", "connections": 50},
            trial=1,
            result=_result(SAMPLES_US[half:], ok=1200),
        ),
        Record(
            nodeid="tests/t.py::test_plain",
            function="tests/t.py::test_plain",
            params={},
            result=_result([500, 600, 700], ok=3),
            label="post",
        ),
    ]


def test_document_has_the_fields_pytest_benchmark_reads() -> None:
    doc = benchmark_json(_records(), collect_environment())
    assert set(doc) == {"machine_info", "commit_info", "benchmarks", "datetime", "version"}
    assert doc["machine_info"]["python_implementation"]
    assert doc["machine_info"]["cpu"]["count"] >= 1
    assert {"id", "time", "dirty", "project", "branch"} <= set(doc["commit_info"])
    hello, plain = doc["benchmarks"]
    assert hello["name"] == "test_hello[tornado-50]"
    assert hello["fullname"] == "tests/t.py::test_hello[tornado-50]"
    assert hello["group"] == "test_hello"
    assert hello["param"] == "tornado-50"
    assert hello["params"] == {"server": "tornado", "connections": 50}
    assert plain["name"] == "test_plain#post" and plain["param"] is None
    for field in (
        "min",
        "max",
        "mean",
        "stddev",
        "rounds",
        "median",
        "iqr",
        "q1",
        "q3",
        "iqr_outliers",
        "stddev_outliers",
        "outliers",
        "ld15iqr",
        "hd15iqr",
        "ops",
        "total",
        "iterations",
    ):
        assert field in hello["stats"], field
    json.dumps(doc, allow_nan=False)


def test_stats_are_the_latency_distribution_in_seconds_over_all_trials() -> None:
    stats = benchmark_json(_records())["benchmarks"][0]["stats"]
    seconds = sorted(v / 1e6 for v in SAMPLES_US)
    assert stats["rounds"] == len(SAMPLES_US)
    assert stats["min"] == pytest.approx(seconds[0])
    assert stats["max"] == pytest.approx(seconds[-1])
    assert stats["mean"] == pytest.approx(statistics.fmean(seconds))
    assert stats["stddev"] == pytest.approx(statistics.pstdev(seconds), rel=1e-3)
    assert stats["median"] == pytest.approx(statistics.median(seconds), abs=2e-6)
    q1, _, q3 = statistics.quantiles(seconds, n=4)
    assert stats["q1"] == pytest.approx(q1, abs=2e-6)
    assert stats["q3"] == pytest.approx(q3, abs=2e-6)
    assert stats["iqr"] == pytest.approx(stats["q3"] - stats["q1"])
    assert stats["total"] == pytest.approx(sum(seconds))
    mean, sd = statistics.fmean(seconds), statistics.pstdev(seconds)
    assert stats["stddev_outliers"] == sum(1 for v in seconds if abs(v - mean) > sd)
    assert stats["ops"] == 550.0  # median throughput of the two trials (500 and 600 req/s)


def test_results_without_histograms_fall_back_to_summaries(tmp_path: Path) -> None:
    record = _records()[2]
    bare = replace(
        record,
        result=replace(
            record.result,
            latency_histogram="",
            latency=LatencySummary(
                count=3, p50_ms=0.6, p75_ms=0.7, min_ms=0.5, max_ms=0.7, mean_ms=0.6, stdev_ms=0.1
            ),
        ),
    )
    path = write_benchmark_json(tmp_path / "b" / "0001_x.json", [bare])
    stats = json.loads(path.read_text())["benchmarks"][0]["stats"]
    assert stats["median"] == pytest.approx(0.0006)
    assert stats["rounds"] == 3


def _kind(name: str, ok: int, errors: int, p99_ms: float) -> RequestStats:
    return RequestStats(
        name=name,
        method="GET",
        path=f"/{name}",
        duration_s=2.0,
        sent=ok + errors,
        ok=ok,
        errors={"status": errors} if errors else {},
        in_flight=0,
        status_codes={200: ok, **({404: errors} if errors else {})},
        latency=LatencySummary(count=ok, p50_ms=p99_ms / 4, p99_ms=p99_ms, p999_ms=p99_ms * 2)
        if ok
        else LatencySummary(),
    )


def test_a_mix_s_kinds_are_in_extra_info_one_benchmark_per_test() -> None:
    hello, second, plain = _records()
    trials = [
        replace(hello, result=replace(hello.result, by_request={
            "search": _kind("search", 600, 0, 8.0), "gone": _kind("gone", 0, 400, 0.0),
        })),
        replace(second, result=replace(second.result, by_request={
            "search": _kind("search", 800, 0, 12.0), "gone": _kind("gone", 0, 400, 0.0),
        })),
    ]  # fmt: skip
    doc = benchmark_json([*trials, plain])
    json.dumps(doc, allow_nan=False)
    mix, alone = doc["benchmarks"]  # the kinds are no benchmarks of their own
    kinds = mix["extra_info"]["by_request"]
    assert list(kinds) == ["search", "gone"]  # the mix's order
    assert kinds["search"] == {
        "sent": 700,  # medians over the two trials, as the load's own figures
        "ok": 700,
        "errors_total": 0,
        "rps": 350.0,
        "p50_ms": 2.5,
        "p99_ms": 10.0,
        "p999_ms": 20.0,
    }
    assert kinds["gone"]["errors_total"] == 400 and kinds["gone"]["ok"] == 0
    assert kinds["gone"]["p99_ms"] is None  # no ok response: no latency
    assert "by_request" not in alone["extra_info"]  # no mix, no key
