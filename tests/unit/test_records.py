"""The stored-run format: round trip of records, NaN handling, clear read errors."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

from pytest_netbench._compare.records import (
    SCHEMA,
    ExperimentRecord,
    Record,
    ResultFileError,
    discard_counts,
    load_session_json,
    write_session_json,
)
from pytest_netbench._model import LatencySummary, LoadResult, ServerStats, TimelineRow


def _result() -> LoadResult:
    hist = HdrHistogram(1, 3_600_000_000, 3)
    for value in range(1000, 2000):
        hist.record_value(value)
    return LoadResult(
        mode="closed",
        url="http://127.0.0.1:1/",
        duration_s=2.0,
        sent=1002,
        ok=1000,
        errors={"reset": 1},
        in_flight=1,
        status_codes={200: 1000},
        bytes_read=100,
        bytes_written=50,
        latency=LatencySummary(count=1000, p50_ms=1.5, p99_ms=1.99, max_ms=2.0),
        timeline=(TimelineRow(0, 1000, 1, 1.9), TimelineRow(1, 0, 0, math.nan)),
        server=ServerStats(pid=7, cpu_user_s=0.5),
        latency_histogram=hist.encode().decode("ascii"),
    )


def test_records_round_trip_with_windows_params_and_histogram(tmp_path: Path) -> None:
    records = [
        Record(
            nodeid="t.py::f[x-1]",
            function="t.py::f",
            params={"s": "x", "n": 1, "cmd": ["./srv", "{port}"], "obj": object()},
            result=_result(),
            trial=2,
            started=100.5,
            ended=102.5,
            label="get",
        ),
    ]
    path = write_session_json(tmp_path / "deep" / "out.json", records, {"cpu_model": "c"})
    raw = json.loads(path.read_text())
    assert raw["schema"] == SCHEMA
    record = raw["records"][0]
    assert record["started"] == 100.5 and record["ended"] == 102.5
    assert record["params"]["cmd"] == ["./srv", "{port}"]
    assert record["params"]["obj"].startswith("<object object")
    assert record["result"]["timeline"][1]["p99_ms"] is None  # NaN written as null
    assert record["result"]["errors"]["reset"] == 1

    session = load_session_json(path)
    (back,) = session.records
    assert back.nodeid == "t.py::f[x-1]" and back.trial == 2 and back.label == "get"
    assert back.result.ok == 1000 and back.result.errors_total == 1
    assert math.isnan(back.result.timeline[1].p99_ms)
    assert back.result.server is not None and back.result.server.cpu_user_s == 0.5
    assert back.result.percentile(50) == pytest.approx(_result().percentile(50))
    assert session.environment["cpu_model"] == "c"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        ("{not json", "not valid JSON"),
        ('{"schema": "other"}', "not a pytest-netbench session"),
        (f'{{"schema": "{SCHEMA}", "records": [{{"nodeid": "x"}}]}}', "damaged record"),
    ],
)
def test_bad_files_give_clear_errors(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ResultFileError, match=message):
        load_session_json(path)


def _invalid(cause: str, reason: str) -> LoadResult:
    return dataclasses.replace(
        _result(), valid=False, invalid_reasons=(reason,), invalid_causes=(cause,)
    )


def test_loads_keep_their_discarded_runs_and_experiments_their_whole_dict(
    tmp_path: Path,
) -> None:
    lagging = _invalid("schedule_lag", "generator fell behind its schedule: send lag p99 41.9 ms")
    load = Record(
        nodeid="t.py::f",
        function="t.py::f",
        params={},
        result=_result(),
        discarded=(lagging, lagging),
    )
    sweep = ExperimentRecord(
        nodeid="t.py::g[a]",
        function="t.py::g",
        params={"s": "a"},
        kind="sweep",
        data={"kind": "sweep", "rates": [100.0], "steps": [{"rate": 100.0, "p99_ms": math.nan}]},
        started=1.0,
        ended=2.0,
    )
    path = write_session_json(tmp_path / "s.json", [load], {}, experiments=[sweep])
    raw = json.loads(path.read_text())["records"]
    assert [r["kind"] for r in raw] == ["load", "sweep"]
    assert raw[0]["attempts"] == 3
    assert raw[0]["discarded_causes"] == {"schedule_lag": 2}
    assert raw[1]["experiment"]["steps"][0]["p99_ms"] is None  # NaN written as null
    assert "result" not in raw[1]

    session = load_session_json(path)
    (back,) = session.records
    assert back.kind == "load" and back.attempts == 3
    assert [d.invalid_causes for d in back.discarded] == [("schedule_lag",)] * 2
    (experiment,) = session.experiments
    assert experiment.kind == "sweep" and experiment.params == {"s": "a"}
    assert experiment.data["rates"] == [100.0] and experiment.started == 1.0


def test_a_record_without_a_kind_is_a_load_and_an_unknown_kind_is_refused(
    tmp_path: Path,
) -> None:
    path = write_session_json(tmp_path / "old.json", [Record("n", "f", {}, _result())])
    data = json.loads(path.read_text())
    for field in ("kind", "attempts", "discarded", "discarded_causes"):
        del data["records"][0][field]  # as files written before kinds existed
    path.write_text(json.dumps(data))
    (back,) = load_session_json(path).records
    assert back.discarded == () and back.result.ok == 1000

    data["records"][0]["kind"] = "soak"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultFileError, match=r"damaged record.*soak"):
        load_session_json(path)


def test_discard_counts_count_a_run_once_per_cause() -> None:
    both = dataclasses.replace(
        _invalid("schedule_lag", "lag"),
        invalid_causes=("schedule_lag", "generator_saturated", "schedule_lag"),
    )
    assert discard_counts([both, _invalid("schedule_lag", "lag")]) == {
        "generator_saturated": 1,
        "schedule_lag": 2,
    }
