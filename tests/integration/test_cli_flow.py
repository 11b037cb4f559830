"""``netbench flow MODULE:FUNCTION URL``, run as a real subprocess against the shop of the
flow tests (tests/engine/shop_app.py, served from this process on loopback)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cli import netbench

from pytest_netbench.cli import ExitCode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from servers import ServerThread
from shop_app import ShopApp

FLOWS = """
from pytest_netbench import think


async def shopper(client):
    r = await client.post("/login", json={"user": "u1", "pw": "x"},
                          extensions={"netbench_step": "login"})
    auth = {"Authorization": f"Bearer {r.json()['token']}"}
    (await client.get("/items", headers=auth)).raise_for_status()
    await think(0.001)


async def browse(client):
    await client.get("/items")


async def buggy(client):
    r = await client.post("/login", json={"user": "u1", "pw": "x"})
    r.json()["tokn"]


def not_a_flow(client):
    pass
"""


@pytest.fixture
def shop() -> Iterator[tuple[ServerThread, ShopApp]]:
    app = ShopApp()
    with ServerThread(app) as server:
        yield server, app


@pytest.fixture
def flows_file(tmp_path: Path) -> Path:
    path = tmp_path / "shop_flows.py"
    path.write_text(FLOWS)
    return path


def test_a_flow_runs_and_writes_its_steps_and_sessions(
    shop: tuple[ServerThread, ShopApp], flows_file: Path, tmp_path: Path
) -> None:
    server, app = shop
    out = tmp_path / "flow.json"
    done = netbench(
        "flow", f"{flows_file}:shopper", server.url, "-u", "3", "--sessions", "30",
        "--json", str(out),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    data = json.loads(out.read_text())
    assert data["sent"] == data["ok"] + data["errors_total"] + data["in_flight"] == 60
    assert data["by_request"]["login"]["ok"] == 30
    assert data["by_request"]["GET /items"]["ok"] == 30
    assert data["sessions"]["completed"] == 30
    assert app.counts.without_credentials == 0
    assert "Sessions (3 users)" in done.stdout
    assert "started 30  completed 30  failed 0  in progress 0" in done.stdout


def test_the_lean_client_on_the_command_line(
    shop: tuple[ServerThread, ShopApp], flows_file: Path, tmp_path: Path
) -> None:
    server, app = shop
    out = tmp_path / "lean.json"
    done = netbench(
        "flow", f"{flows_file}:shopper", server.url, "-u", "2", "--sessions", "10",
        "--client", "lean", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    data = json.loads(out.read_text())
    assert data["sessions"]["completed"] == 10 and data["ok"] == 20
    assert app.counts.without_credentials == 0


def test_sessions_at_a_rate_on_the_command_line(
    shop: tuple[ServerThread, ShopApp], flows_file: Path, tmp_path: Path
) -> None:
    server, _ = shop
    out = tmp_path / "open.json"
    done = netbench(
        "flow", f"{flows_file}:shopper", server.url, "--rate", "50", "--sessions", "10",
        "--client", "lean", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    data = json.loads(out.read_text())
    assert data["mode"] == "open" and data["uncorrected"] is not None
    assert data["sessions"]["completed"] == 10 and data["ok"] == 20


def test_the_progress_line_and_its_end(
    shop: tuple[ServerThread, ShopApp], flows_file: Path
) -> None:
    server, _ = shop
    done = netbench(
        "flow", f"{flows_file}:shopper", server.url, "-u", "2", "-d", "4s", "--progress",
        "--client", "lean",
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    assert "req/s" in done.stderr and "done" in done.stderr  # drawn after its first 2 s


def test_a_flow_file_split_over_two_worker_processes(
    shop: tuple[ServerThread, ShopApp], flows_file: Path, tmp_path: Path
) -> None:
    server, app = shop
    out = tmp_path / "workers.json"
    done = netbench(
        "flow", f"{flows_file}:shopper", server.url, "-u", "4", "--sessions", "10",
        "--workers", "2", "--client", "lean", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    data = json.loads(out.read_text())
    assert data["generator"]["workers"] == 2
    assert data["sessions"]["completed"] == 10 and data["ok"] == 20
    assert app.counts.without_credentials == 0


def test_several_flows_by_weight_on_the_command_line(
    shop: tuple[ServerThread, ShopApp], flows_file: Path, tmp_path: Path
) -> None:
    server, _ = shop
    out = tmp_path / "weights.json"
    flows = f"{flows_file}:shopper=3,{flows_file}:browse"
    done = netbench(
        "flow", flows, server.url, "-u", "2", "--sessions", "40", "--client", "lean",
        "--json", str(out),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    by_flow = json.loads(out.read_text())["sessions"]["by_flow"]
    assert sum(by_flow.values()) == 40 and set(by_flow) == {"shopper", "browse"}
    assert "by flow" in done.stdout


def test_a_module_from_the_current_directory(
    shop: tuple[ServerThread, ShopApp], flows_file: Path
) -> None:
    import subprocess

    server, _ = shop
    command = [sys.executable, "-m", "pytest_netbench.cli", "flow", "shop_flows:shopper"]
    done = subprocess.run(
        [*command, server.url, "-u", "1", "--sessions", "3", "--quiet"],
        cwd=flows_file.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == ExitCode.OK, done.stderr


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_such_module_here:shopper", "cannot import the flow's module"),
        ("{file}:missing", "has no 'missing': its async functions are browse, buggy, shopper"),
        ("{file}:shopper=x,{file}:browse=1", "must be a whole number"),
        ("{file}:not_a_flow", "is not an async function"),
        ("shopper", "give the flow as module:function"),
    ],
)
def test_a_flow_that_cannot_be_found_is_a_usage_error(
    flows_file: Path, reference: str, message: str
) -> None:
    done = netbench("flow", reference.format(file=flows_file), "http://127.0.0.1:9/")
    assert done.returncode == ExitCode.USAGE
    assert message in done.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_flow_that_raises_every_session_prints_its_traceback(
    shop: tuple[ServerThread, ShopApp], flows_file: Path, workers: str
) -> None:
    server, _ = shop
    done = netbench(
        "flow", f"{flows_file}:buggy", server.url, "-u", "2", "-d", "30", "--workers", workers
    )
    assert done.returncode == ExitCode.REFUSED
    assert "KeyError: 'tokn'" in done.stderr  # the flow's traceback, from a worker too
    assert 'r.json()["tokn"]' in done.stderr and "in buggy" in done.stderr
    assert "the flow raised in every session" in done.stderr
