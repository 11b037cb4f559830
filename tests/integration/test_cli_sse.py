"""``netbench sse URL``, run as a real subprocess against the catalog's Go server: the
Streams section, the JSON's ``stream`` and a threshold on a stream figure; bad options in
one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import load_json, netbench

from pytest_netbench import LoadResult, Server, ToolchainMissing, catalog
from pytest_netbench.cli import ExitCode


@pytest.fixture(scope="module")
def go() -> Iterator[Server]:
    try:
        spec = catalog.get("go")
    except ToolchainMissing as exc:
        pytest.skip(f"go cannot run here: {exc}")
    server = Server.from_spec(spec).start()
    try:
        yield server
    finally:
        server.stop()


def test_sse_reports_the_streams_and_checks_a_threshold(go: Server, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    url = f"{go.url.rstrip('/')}/sse?first_ms=20&every_ms=5&events=8&end=%5BDONE%5D"
    done = netbench(
        "sse", url, "-c", "4", "-n", "12", "--stream-events", "8", "--stream-end", "[DONE]",
        "--threshold", "stream.first_event.p50_ms<10000", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "Streams (server-sent events): 12 streams, 96 events," in done.stdout
    for row in ("first byte", "first event", "gap", "whole"):
        assert f"\n  {row} " in done.stdout
    assert "events a stream: min 8, p50 8, mean 8.0, max 8" in done.stdout
    assert "ok      stream.first_event.p50_ms < 10000" in done.stdout
    data = load_json(out)
    assert data["stream"]["events"] == 96 and data["stream"]["mode"] == "sse"
    again = LoadResult.from_dict(data).stream
    assert again is not None and again.gap.count == 12 * 7
    assert again.percentile("first_event", 50) == again.first_event.p50_ms


def test_a_stream_check_without_a_stream_is_refused_in_one_line() -> None:
    done = netbench("http", "http://127.0.0.1:9/", "--stream-end", "[DONE]")
    assert done.returncode == ExitCode.USAGE
    (line,) = done.stderr.splitlines()
    assert "stream_events and stream_end check a stream: pass stream='sse'" in line
