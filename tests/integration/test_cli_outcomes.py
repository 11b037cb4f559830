"""How a ``netbench`` load ends when it measured nothing, and ``--threshold``: real servers
on loopback, the command as a subprocess (issue 20, item 4)."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_process import load_json, netbench

from pytest_netbench.cli import ExitCode

StartServer = Callable[..., Any]  # the fault_server fixture (tests/integration/conftest.py)
NOTHING_OK = "NO REQUEST SUCCEEDED: 50 of 50 requests were status errors, e.g. HTTP 404"


@pytest.fixture
def url_404(fault_server: StartServer) -> str:
    """A server answering 404 to every request."""
    server = fault_server("http", "--status-every", "1", "--status", "404")
    return f"{server.url}/"


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port of this host where nothing listens (held, so no one else takes it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def _last_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


def test_http_where_every_answer_is_404_exits_no_success_and_says_so_last(
    url_404: str, tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    done = netbench("http", url_404, "-n", "50", "-c", "2", "--json", str(out))
    assert done.returncode == ExitCode.NO_SUCCESS == 8, done.stderr
    assert _last_line(done.stdout) == NOTHING_OK
    data = load_json(out)  # written all the same
    assert (data["sent"], data["ok"], data["errors"]["status"]) == (50, 0, 50)
    assert data["p99_ms"] is None


def test_echo_where_every_exchange_fails_its_check_exits_no_success(
    fault_server: StartServer,
) -> None:
    server = fault_server("echo", "--corrupt-every", "1", "--payload-size", "64")
    done = netbench(
        "echo", f"127.0.0.1:{server.port}", "-n", "20", "-c", "2", "--payload-bytes", "64"
    )
    assert done.returncode == ExitCode.NO_SUCCESS, done.stderr
    assert _last_line(done.stdout).startswith(
        "NO EXCHANGE SUCCEEDED: 20 of 20 exchanges were verify errors, e.g. "
    )


def test_thresholds_print_each_term_with_its_value_and_set_the_status(
    fault_server: StartServer,
) -> None:
    url = f"{fault_server('http').url}/"
    held = netbench(
        "http", url, "-n", "200", "-c", "2", "--threshold", "p99_ms<5000,error_rate<0.01"
    )
    assert held.returncode == ExitCode.OK, held.stderr
    lines = held.stdout.splitlines()
    block = lines[lines.index("Thresholds") :]
    assert block[1].split()[:5] == ["ok", "p99_ms", "<", "5000", "p99_ms"]
    assert block[2].split() == ["ok", "error_rate", "<", "0.01", "error_rate", "=", "0"]
    assert block[-1] == "Thresholds passed: 2 of 2"

    failed = netbench(
        "http",
        url,
        "-n",
        "200",
        "-c",
        "2",
        "--threshold",
        "p99_ms < 5000",
        "--threshold",
        "rps > 1e12 and errors_total == 0",
    )
    assert failed.returncode == ExitCode.THRESHOLD_FAILED == 9, failed.stderr
    lines = failed.stdout.splitlines()
    block = lines[lines.index("Thresholds") :]
    assert [line.split()[0] for line in block[1:4]] == ["ok", "FAILED", "ok"]
    assert block[2].split()[:5] == ["FAILED", "rps", ">", "1,000,000,000,000", "rps"]
    assert _last_line(failed.stdout) == "THRESHOLDS FAILED: 1 of 3 (rps > 1,000,000,000,000)"


def test_an_echo_threshold_fails_on_its_own_figures(fault_server: StartServer) -> None:
    server = fault_server("echo")
    done = netbench(
        "echo", f"127.0.0.1:{server.port}", "-n", "50", "-c", "2", "--threshold", "ok >= 51"
    )
    assert done.returncode == ExitCode.THRESHOLD_FAILED, done.stderr
    assert "  FAILED  ok >= 51  ok = 50" in done.stdout.splitlines()


def test_with_nothing_ok_a_latency_threshold_reads_no_ok_response_and_no_success_wins(
    url_404: str,
) -> None:
    done = netbench("http", url_404, "-n", "50", "-c", "2", "--threshold", "p99_ms < 50")
    assert done.returncode == ExitCode.NO_SUCCESS, done.stderr
    assert "  FAILED  p99_ms < 50  p99_ms = n/a (no ok response)" in done.stdout.splitlines()
    assert _last_line(done.stdout) == NOTHING_OK


@pytest.mark.parametrize("command", ["http", "echo", "cold-start"])
def test_a_misspelt_threshold_is_refused_before_any_connection(
    command: str, closed_port: int
) -> None:
    # Nothing listens there: read after the load, the command would exit 3 (unreachable).
    target = f"127.0.0.1:{closed_port}" if command == "echo" else f"http://127.0.0.1:{closed_port}/"
    done = netbench(command, target, "-d", "1s", "--threshold", "p99 < 50, error_rate < 0.01")
    assert done.returncode == ExitCode.USAGE, (done.stdout, done.stderr)
    assert "threshold term 'p99 < 50': unknown metric 'p99' (did you mean 'p99_ms'?)" in done.stderr
    assert "errors_total" in done.stderr and "error_rate" in done.stderr  # the valid names
    assert done.stdout == ""


def test_cold_start_with_nothing_ok_exits_no_success_after_its_thresholds(url_404: str) -> None:
    done = netbench("cold-start", url_404, "-d", "0.5s", "-c", "2", "--threshold", "rps > 1")
    assert done.returncode == ExitCode.NO_SUCCESS, done.stderr
    assert "  FAILED  rps > 1  rps = 0" in done.stdout.splitlines()
    assert _last_line(done.stdout).startswith("NO REQUEST SUCCEEDED: ")
    assert "were status errors" in _last_line(done.stdout)


def test_cold_start_threshold_failed(fault_server: StartServer) -> None:
    url = f"{fault_server('http').url}/"
    done = netbench("cold-start", url, "-d", "0.5s", "-c", "2", "--threshold", "rps > 1e12")
    assert done.returncode == ExitCode.THRESHOLD_FAILED, done.stderr
    assert _last_line(done.stdout) == "THRESHOLDS FAILED: 1 of 1 (rps > 1,000,000,000,000)"


def test_a_sweep_where_no_step_succeeded_exits_no_success(url_404: str) -> None:
    done = netbench("sweep", url_404, "--rates", "50,100", "-d", "0.3s", "--retries", "0")
    assert done.returncode == ExitCode.NO_SUCCESS, done.stderr
    last = _last_line(done.stdout)
    assert last.startswith("NO REQUEST SUCCEEDED at any of the 2 rate(s); at the last: ")
    assert "were status errors" in last and "e.g. HTTP 404" in last


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed")
def test_a_crosscheck_whose_netbench_run_had_no_success_exits_no_success(url_404: str) -> None:
    done = netbench("crosscheck", url_404, "--tool", "wrk", "-d", "1s", "-c", "2")
    assert done.returncode == ExitCode.NO_SUCCESS, (done.stdout, done.stderr)
    last = _last_line(done.stdout)
    assert last.startswith("NO REQUEST SUCCEEDED: ") and last.endswith("(netbench's run)")
    assert "were status errors" in last and "e.g. HTTP 404" in last
