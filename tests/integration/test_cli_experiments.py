"""``netbench sweep`` and ``netbench capacity`` as real subprocesses, against a server that
serves at most R requests a second (so what they should find is known)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import load_json, netbench, paced_server, warming_server

SERVED = 1000.0
STEP_ROW = re.compile(r"^ *\d+  (estimate|bracket|bisect|repeat|confirm) ")


@pytest.fixture
def paced_url() -> Iterator[str]:
    with paced_server(SERVED) as url:
        yield url


def test_sweep_prints_a_row_per_step_and_writes_the_steps(paced_url: str, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    done = netbench(
        "sweep", paced_url, "--rates", "300:900:300", "-d", "1s", "-c", "4",
        "--json", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"Sweep GET {paced_url}: 3 rates from 300 to 900 req/s"
    assert "1 s per step, 4 connections" in lines[1]
    assert any("demanded" in line and "answered" in line and "errors" in line for line in lines)
    rows = [line.split() for line in lines if line.lstrip()[:3] in ("300", "600", "900")]
    assert [row[0] for row in rows] == ["300", "600", "900"]
    assert all(row[-1] == "yes" for row in rows)
    assert all(len(line) <= 80 for line in lines)
    assert "Stopped" not in done.stdout
    data = load_json(out)
    assert data["kind"] == "sweep"
    assert [s["rate"] for s in data["steps"]] == [300, 600, 900]
    for step in data["steps"]:
        # Below the server's capacity it keeps up: achieved = demanded.
        assert step["achieved_rate"] == pytest.approx(step["rate"], rel=0.03)
        assert step["uncorrected"]["p99_ms"] is not None
        result = step["result"]
        assert result["sent"] == result["ok"] + result["errors_total"] + result["in_flight"]


def test_sweep_says_why_it_stopped_past_saturation(paced_url: str, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    done = netbench(
        "sweep", paced_url, "--rates", "500,2000,3000", "-d", "1s", "--stop-p99-ms", "100",
        "--json", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # the closing line wraps at 80 columns
    assert "Stopped past saturation: stopped after 2,000 req/s: p99" in text
    assert "1 higher rate(s) not run" in text
    data = load_json(out)
    assert data["stopped_early"] is True and data["skipped_rates"] == [3000]
    assert data["steps"][1]["p99_ms"] > data["steps"][0]["p99_ms"]


def test_capacity_prints_each_step_and_the_answer(paced_url: str, tmp_path: Path) -> None:
    out = tmp_path / "capacity.json"
    done = netbench(
        "capacity", paced_url, "--slo", "p99_ms<50", "--precision", "20%", "-d", "0.6s",
        "--json", str(out), "--retries", "4",  # a busy machine can spoil a 0.6 s step
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"Capacity of GET {paced_url}"
    assert "'p99_ms < 50 and error_rate <= 0.001', to within 20%" in lines[1]
    data = load_json(out)
    assert data["kind"] == "capacity" and data["known"] is True
    assert 0.7 * SERVED <= data["rate"] <= 1.1 * SERVED
    step_rows = [line for line in lines if STEP_ROW.match(line)]
    assert len(step_rows) == len(data["steps"]) + 1  # and the closed-loop estimate
    assert "estimate" in step_rows[0]
    assert any(" pass " in row for row in step_rows) and any(" fail " in row for row in step_rows)
    assert f"Capacity: {data['rate']:,.6g} req/s" in lines


def test_capacity_that_cannot_be_told_exits_6_with_the_reason(paced_url: str) -> None:
    done = netbench(
        "capacity", paced_url, "--start-rate", "150", "--max-rate", "300", "-d", "0.5s",
    )  # fmt: skip
    assert done.returncode == 6, done.stderr
    assert "Capacity: unknown (at least 300 req/s)" in done.stdout
    assert "every rate up to max_rate (300 req/s) met the SLO" in done.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["sweep", "http://127.0.0.1:9/", "--rates", "100:50:10"], "below the start"),
        (["sweep", "http://127.0.0.1:9/", "--rates", "fast"], "not a number"),
        (["sweep", "http://127.0.0.1:9/"], "--rates"),
        (["sweep", "http://127.0.0.1:9/", "--rates", "9", "--stop-error-rate", "x"], "fraction"),
        (["capacity", "http://127.0.0.1:9/", "--slo", "p99_ms << 50"], "SLO term"),
        (["capacity", "http://127.0.0.1:9/", "--slo", "latency < 5"], "latency"),
        (["capacity", "http://127.0.0.1:9/", "--precision", "0"], "precision"),
        (["capacity", "ftp://127.0.0.1/"], "scheme"),
    ],
)
def test_bad_experiment_arguments_exit_2_with_a_message(args: list[str], fragment: str) -> None:
    done = netbench(*args)
    assert done.returncode == 2
    assert fragment in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unreachable_target_exits_3(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = netbench("sweep", f"http://127.0.0.1:{port}/", "--rates", "50", "-n", "5")
    assert done.returncode == 3
    assert "refused" in done.stderr
    assert "Traceback" not in done.stderr


def test_cold_start_prints_its_timeline_and_when_it_settled(tmp_path: Path) -> None:
    out = tmp_path / "cold.json"
    # 200 req/s for the first second of requests, then 1,000 req/s (a JIT warming up).
    with warming_server(200, 1000, 1.0) as url:
        done = netbench("cold-start", url, "-d", "3s", "-c", "4", "--json", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"Cold start GET {url}"
    assert "3 s from the very first request (no warm-up), 4 connections" in lines[1]
    assert "a timeline row every 100 ms" in " ".join(done.stdout.split())
    rows = [line for line in lines if re.match(r"^ +\d+\.\d s ", line)]
    assert len(rows) == 30
    assert rows[0].split()[0] == "0.0" and rows[-1].split()[0] == "2.9"
    assert all(len(line) <= 80 for line in lines)
    data = load_json(out)
    assert data["kind"] == "cold_start"
    assert data["first_second_ratio"] < 0.5
    assert data["settled"] is True and 0.8 <= data["settle_s"] <= 1.6
    settled = f"Settled: req/s within 10% of steady from {data['settle_s']:.1f} s on"
    assert any(line.startswith(settled) for line in lines)
    assert any(line.startswith("First second: ") for line in lines)


def test_cold_start_refuses_a_resolution_finer_than_it_keeps() -> None:
    done = netbench("cold-start", "http://127.0.0.1:9/", "-d", "1s", "--resolution", "30ms")
    assert done.returncode == 2
    assert "resolution" in done.stderr
