"""``netbench http|sweep|capacity|cold-start ... --plot DIR`` as real subprocesses against the paced
and warming servers on loopback: the pictures of the one result, named by the command."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import netbench, paced_server, warming_server

pytest.importorskip("matplotlib")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _pictures(directory: Path) -> list[str]:
    names = sorted(p.name for p in directory.iterdir())
    assert all((directory / n).read_bytes()[:8] == PNG_MAGIC for n in names)
    return names


def test_http_sweep_and_cold_start_draw_their_pictures(tmp_path: Path) -> None:
    plots = tmp_path / "plots"
    with paced_server(1000) as url:
        done = netbench("http", url, "-c", "2", "--rate", "200", "-d", "0.5s", "--plot", str(plots))
        assert done.returncode == 0, done.stderr
        assert "2 plot(s) drawn in" in done.stderr
        done = netbench(
            "sweep", url, "--rates", "200,400", "-d", "0.3s", "-c", "2", "--plot", str(plots)
        )
        assert done.returncode == 0, done.stderr
        done = netbench(
            "capacity", url, "--slo", "p99_ms < 50", "--start-rate", "300",
            "--precision", "0.25", "-d", "0.25s", "--plot", str(plots),
        )  # fmt: skip
        assert done.returncode in (0, 6), done.stderr  # 6: the search found no answer
    with warming_server(200, 800, 0.3) as url:
        done = netbench("cold-start", url, "-d", "0.6s", "-c", "2", "--plot", str(plots))
        assert done.returncode == 0, done.stderr
    assert _pictures(plots) == [
        "capacity.png",
        "cold_start.png",
        "http-latency.png",
        "http-timeline.png",
        "sweep.png",
    ]
