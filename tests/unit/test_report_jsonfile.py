"""The session JSON: round trip of records, NaN handling, environment, clear read errors."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

from pytest_netbench._model import LatencySummary, LoadResult, ServerStats, TimelineRow
from pytest_netbench._report.environment import collect_environment, git_info, machine_key
from pytest_netbench._report.jsonfile import (
    SCHEMA,
    ResultFileError,
    load_session_json,
    write_session_json,
)
from pytest_netbench._report.matrix import Record


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


def test_environment_is_written_with_its_machine_key(tmp_path: Path) -> None:
    env = collect_environment()
    path = write_session_json(tmp_path / "e.json", [], env)
    data = json.loads(path.read_text())["environment"]
    assert data["machine_key"] == env.machine_key == machine_key(env)
    assert data["cores_logical"] >= 1
    assert data["packages"]["pytest_netbench"]
    assert data["python_version"].count(".") == 2


def test_machine_key_is_stable_and_ignores_hostname() -> None:
    env = collect_environment()
    from dataclasses import replace

    assert machine_key(env) == machine_key(replace(env, hostname="elsewhere"))
    assert machine_key(env) != machine_key(replace(env, cores_logical=env.cores_logical + 1))
    assert machine_key(env) != machine_key(replace(env, cpu_model="another cpu"))
    assert "/" not in machine_key(env)


def test_git_info_inside_and_outside_a_repository(tmp_path: Path) -> None:
    assert git_info(tmp_path) is None
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f").write_text("x")
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "-C", str(tmp_path), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), *ident, "commit", "-q", "-m", "m"], check=True)
    info = git_info(tmp_path)
    assert info is not None
    assert len(info.commit) == 40 and not info.dirty
    (tmp_path / "f").write_text("changed")
    dirty = git_info(tmp_path)
    assert dirty is not None and dirty.dirty


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
