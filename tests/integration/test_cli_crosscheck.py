"""``netbench crosscheck``: a real subprocess running netbench and then real wrk or ab."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cli import netbench

from pytest_netbench import CrosscheckResult, Server, ToolchainMissing, catalog


@pytest.fixture(scope="module")
def hello_url() -> Iterator[str]:
    for name in ("c", "asyncio_streams"):
        try:
            spec = catalog.get(name)
        except ToolchainMissing:
            continue
        with Server.from_spec(spec) as server:
            yield server.url + "/"
        return
    pytest.skip("neither the C nor the asyncio catalog server runs here")


@pytest.mark.parametrize(
    ("tool", "length"), [("wrk", ["-d", "1s"]), ("ab", ["-n", "300"])], ids=["wrk", "ab"]
)
def test_side_by_side_table_and_json(
    hello_url: str, tool: str, length: list[str], tmp_path: Path
) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed (scripts/bootstrap.sh installs it)")
    out = tmp_path / "cross.json"
    done = netbench("crosscheck", hello_url, "--tool", tool, "-c", "3", *length, "--json", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"Crosscheck with {tool}: GET {hello_url}, 3 connections")
    header = next(line for line in lines if line.strip().startswith("netbench"))
    assert header.split() == ["netbench", tool, f"netbench/{tool}"]
    labels = {"req/s", "p50 ms", "p90 ms", "p99 ms", "errors"}
    rows = {line[:8].strip(): line[8:].split() for line in lines if line[:8].strip() in labels}
    assert set(rows) == labels
    assert rows["errors"] == ["0", "0"]
    assert any(line.startswith(f"{tool} ") and " requests in " in line for line in lines)
    assert f"  ran: {shutil.which(tool)} " in done.stdout  # whole, to copy and run again
    result = CrosscheckResult.from_dict(json.loads(out.read_text()))
    assert result.tool == tool and result.netbench.errors_total == 0
    shown_ratio = float(rows["req/s"][-1])
    assert shown_ratio == pytest.approx(result.ratio("rps"), abs=0.006)


def test_bad_loads_are_usage_errors(hello_url: str) -> None:
    done = netbench("crosscheck", hello_url, "--tool", "ab", "-d", "1s")
    assert done.returncode == 2
    assert "ab sends a number of requests: pass requests=" in done.stderr
    wrk = netbench("crosscheck", hello_url, "-d", "500ms")
    assert wrk.returncode == 2 and "wrk takes whole seconds" in wrk.stderr


def test_a_remote_target_is_refused() -> None:
    done = netbench("crosscheck", "http://192.0.2.1/", "-d", "1s")
    assert done.returncode == 4
    assert "only loopback targets" in done.stderr
