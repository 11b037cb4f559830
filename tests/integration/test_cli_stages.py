"""``netbench http URL --stage 30s:1000 ...`` as a real subprocess against a real loopback
server that writes down every request (request_log_server.py): the ramp is sent as its
stages say, the JSON holds them, and a stage that cannot work is a usage error, nothing
sent."""

from __future__ import annotations

import re
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import load_json, netbench

from pytest_netbench.cli import ExitCode

RECORDING_SERVER = Path(__file__).with_name("request_log_server.py")


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(URL, the log of every request the server read)."""
    log = tmp_path / "received.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(RECORDING_SERVER), str(log)], stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        match = re.search(rb"port=(\d+)", proc.stdout.readline() if ready else b"")
        assert match is not None, "the recording server did not start"
        yield f"http://127.0.0.1:{int(match.group(1))}/", log
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def received(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_rate_ramp_from_the_command_line(recorded: tuple[str, Path], tmp_path: Path) -> None:
    url, log = recorded
    out = tmp_path / "ramp.json"
    done = netbench(
        "http", url, "--rate", "0", "--stage", "1s:300", "--stage", "500ms:300",
        "--stage", "1s:0", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    data = load_json(out)
    assert data["mode"] == "open"
    assert data["spec"]["stages"] == [
        {"duration_s": 1.0, "target": 300.0},
        {"duration_s": 0.5, "target": 300.0},
        {"duration_s": 1.0, "target": 0.0},
    ]
    assert data["duration_s"] == pytest.approx(2.5, abs=0.2)
    # 150 + 150 + 150 requests by the integral; the last falls due at the deadline.
    assert 448 <= data["sent"] <= 450
    assert data["sent"] == data["ok"] + data["errors_total"] + data["in_flight"]
    assert received(log) == data["sent"]
    assert "stages 1s:300, 500ms:300, 1s:0 from rate 0/s" in done.stdout


def test_a_connection_ramp_from_the_command_line(
    recorded: tuple[str, Path], tmp_path: Path
) -> None:
    url, _ = recorded
    out = tmp_path / "ramp.json"
    done = netbench("http", url, "--stage", "1s:4", "--stage", "1s:0", "--json", str(out))
    assert done.returncode == ExitCode.OK, done.stderr
    data = load_json(out)
    assert data["mode"] == "closed"
    assert data["spec"]["connections"] == 0  # the ramp starts from nothing
    assert data["generator"]["connections_opened"] == 4
    assert data["in_flight"] == 0 and data["errors_total"] == 0


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (("--stage", "30s"), "must look like DURATION:TARGET"),
        (("--stage", "soon:10"), "'soon' is not a duration"),
        (("--stage", "1s:10", "--duration", "5s"), "stages set the duration"),
        (("--stage", "1s:0"), "would send nothing"),
    ],
)
def test_a_stage_that_cannot_work_is_a_usage_error(
    recorded: tuple[str, Path], flags: tuple[str, ...], words: str
) -> None:
    url, log = recorded
    done = netbench("http", url, *flags)
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert words in done.stderr
    assert received(log) == 0
