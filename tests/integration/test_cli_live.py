"""``netbench`` while it runs: live progress only where asked for, and a Ctrl-C (a real
SIGINT to the real command) that stops the run cleanly and reports what was measured."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import Watched, load_json, netbench, netbench_command, paced_server

LONG = "60s"  # far longer than a test may take: only the SIGINT ends these runs in time


@pytest.fixture
def paced_url() -> Iterator[str]:
    with paced_server(2000) as url:
        yield url


def assert_invariant(data: dict[str, object]) -> None:
    assert data["sent"] == data["ok"] + data["errors_total"] + data["in_flight"]  # type: ignore[operator]


def test_no_progress_in_a_pipe_unless_asked(paced_url: str) -> None:
    quiet = netbench("http", paced_url, "-d", "2.5s", "-c", "2")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""

    command = netbench_command("http", paced_url, "-d", "2.5s", "-c", "2", "--progress")
    asked = subprocess.run(command, capture_output=True, timeout=60, check=False)
    stderr = asked.stderr.decode()  # as bytes: a text pipe would turn each \r into \n
    assert asked.returncode == 0, stderr
    assert "\n" not in stderr  # one line, redrawn in place
    assert stderr.startswith("\r") and stderr.count("\r") >= 2  # drawn, then erased
    assert "req/s" in stderr and "done" in stderr and "left" in stderr
    # The line is erased before the report, so the report reads as without it.
    assert stderr.endswith("\r\x1b[K")
    assert b"Target:" in asked.stdout


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_stops_a_load_and_reports_it_interrupted(
    paced_url: str, tmp_path: Path, workers: str
) -> None:
    out = tmp_path / "result.json"
    run = Watched(
        "http", paced_url, "-d", LONG, "-c", "4", "--workers", workers, "--progress",
        "--json", str(out),
    )  # fmt: skip
    run.wait_for("stderr", "req/s")  # the progress line: the load is running
    run.interrupt()
    assert run.finish() == 130, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout.startswith("INTERRUPTED after")
    assert "figures for that time only" in run.stdout
    assert all(len(line) <= 80 for line in run.stdout.splitlines())
    assert "Target:" in run.stdout and "p99" in run.stdout
    data = load_json(out)
    assert data["interrupted"] is True
    assert_invariant(data)
    assert data["ok"] > 0
    assert data["errors_total"] == 0  # requests cut off are in flight, not errors
    assert 0 < data["duration_s"] < 30
    assert data["generator"]["workers"] == int(workers)


def test_ctrl_c_stops_a_sweep_with_the_rows_done(paced_url: str, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    run = Watched(
        "sweep", paced_url, "--rates", "200,400,600", "-d", "2s", "--progress",
        "--json", str(out),
    )  # fmt: skip
    run.wait_for("stderr", "step 2/3: 400 req/s")
    run.interrupt()
    assert run.finish() == 130, run.stderr
    assert "Traceback" not in run.stderr
    text = " ".join(run.stdout.split())
    assert "Interrupted during 400 req/s; 1 rate(s) not run." in text
    rows = [line for line in run.stdout.splitlines() if line.lstrip().startswith(("200", "400"))]
    assert len(rows) == 2
    assert rows[0].endswith("yes") and rows[1].endswith("cut")
    data = load_json(out)
    assert data["interrupted"] is True
    assert [s["rate"] for s in data["steps"]] == [200, 400]
    assert data["skipped_rates"] == [600]
    assert data["steps"][-1]["result"]["interrupted"] is True
    assert data["steps"][0]["result"]["interrupted"] is False


def test_ctrl_c_stops_a_capacity_search_as_unknown(paced_url: str, tmp_path: Path) -> None:
    out = tmp_path / "capacity.json"
    run = Watched(
        "capacity", paced_url, "--start-rate", "200", "-d", LONG, "--progress",
        "--json", str(out),
    )  # fmt: skip
    run.wait_for("stderr", "step 1: 200 req/s")
    run.interrupt()
    assert run.finish() == 130, run.stderr
    assert "Traceback" not in run.stderr
    assert "Capacity: unknown (interrupted)" in run.stdout
    data = load_json(out)
    assert data["interrupted"] is True and data["rate"] is None
    assert len(data["steps"]) == 1
    assert data["steps"][0]["result"]["interrupted"] is True


def test_a_run_started_with_sigint_ignored_ignores_it(paced_url: str, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    run = Watched(
        "http", paced_url, "-d", "3s", "-c", "2", "--progress", "--json", str(out),
        ignore_sigint=True,
    )  # fmt: skip
    run.wait_for("stderr", "req/s")
    run.interrupt()
    assert run.finish() == 0, run.stderr
    assert "INTERRUPTED" not in run.stdout
    data = load_json(out)
    assert data["interrupted"] is False
    assert data["spec"]["duration_s"] == 3.0


def test_ctrl_c_stops_a_cold_start_with_the_rows_so_far(paced_url: str, tmp_path: Path) -> None:
    out = tmp_path / "cold.json"
    run = Watched("cold-start", paced_url, "-d", LONG, "--progress", "--json", str(out))
    run.wait_for("stderr", "req/s")
    run.interrupt()
    assert run.finish() == 130, run.stderr
    assert "Traceback" not in run.stderr
    assert "INTERRUPTED after" in run.stdout
    assert "   0.0 s" in run.stdout  # the first timeline row
    data = load_json(out)
    assert data["result"]["interrupted"] is True
    assert_invariant(data["result"])
