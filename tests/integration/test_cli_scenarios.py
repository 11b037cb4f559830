"""``netbench scenarios FILE.toml URL`` as a real subprocess against a loopback server that
answers ``/slow`` late: each scenario's counts in the JSON, all of them together in the
report (each a row of its per-request table), a threshold on one scenario failing alone,
and a file that cannot be read refused before any load."""

from __future__ import annotations

import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import Watched, load_json, netbench

from pytest_netbench.cli import ExitCode

SERVER = Path(__file__).with_name("error_page_server.py")

SCENARIOS = """
[scenarios.browse]
path = "/items"
rate = 200
requests = 300

[scenarios.admin]
path = "/report"
start = "0.5s"
connections = 2
requests = 40
checks = ["no error page: body !contains Error"]
"""


@pytest.fixture
def server() -> Iterator[str]:
    # One error page in a thousand answers: never, in these few requests.
    proc = subprocess.Popen([sys.executable, str(SERVER), "1000"], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        match = re.search(rb"port=(\d+)", proc.stdout.readline() if ready else b"")
        assert match is not None, "the server did not start"
        yield f"http://127.0.0.1:{int(match.group(1))}"
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_two_scenarios_from_a_toml_file(server: str, tmp_path: Path) -> None:
    file, out = tmp_path / "day.toml", tmp_path / "r.json"
    file.write_text(SCENARIOS)
    done = netbench(
        "scenarios", str(file), server, "--json", str(out),
        "--threshold", "by_request.browse.ok >= 300",
        "--threshold", "by_request.admin.sent > 40",
    )  # fmt: skip
    assert done.returncode == ExitCode.THRESHOLD_FAILED, done.stderr
    text = done.stdout
    assert "  browse: open loop, 200/s, from 0 s" in text
    assert "  admin: closed loop, 2 connections, from 0.5 s" in text
    assert re.search(r"browse\s+300\s+300\s+0", text) and re.search(r"admin\s+40\s+40\s+0", text)
    assert re.search(r"ok\s+by_request\.browse\.ok >= 300", text)
    assert re.search(r"FAILED\s+by_request\.admin\.sent > 40", text)
    data = load_json(out)
    browse = data["scenarios"]["browse"]
    admin = data["scenarios"]["admin"]
    assert (browse["start_s"], admin["start_s"]) == (0.0, 0.5)
    assert (browse["result"]["sent"], admin["result"]["sent"]) == (300, 40)
    assert admin["result"]["checks"]["no error page"]["passes"] == 40
    assert data["total"]["sent"] == data["total"]["ok"] == 340
    # The server behind the port is sampled over all of them, as netbench http samples it.
    assert data["total"]["server"]["pid"] > 0 and data["total"]["server"]["rss_peak_mb"] > 0
    assert data["total"]["phases"]["wait"]["count"] == 340


def test_a_bad_file_is_a_usage_error(server: str, tmp_path: Path) -> None:
    file = tmp_path / "bad.toml"
    file.write_text('[scenarios.browse]\npath = "/"\nrat = 5\n')
    done = netbench("scenarios", str(file), server)
    assert done.returncode == ExitCode.USAGE
    assert "scenario 'browse': unknown option 'rat' for an HTTP load: did you mean 'rate'?" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr


def test_a_flow_scenario_from_the_file(tmp_path: Path) -> None:
    """``flow = "module:function"``: a flow's users as one scenario, beside a plain load."""
    engine = Path(__file__).parents[1] / "engine"
    file = tmp_path / "shop.toml"
    file.write_text(
        '[scenarios.shoppers]\nflow = "shop_flows:shopper"\nusers = 2\nsessions = 8\n'
        'client = "lean"\n\n[scenarios.page]\npath = "/login"\nconnections = 1\nrequests = 30\n'
    )
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from servers import ServerThread\nfrom shop_app import ShopApp\n"
        "from pytest_netbench.cli import main\n"
        "app = ShopApp()\n"
        "with ServerThread(app) as srv:\n"
        "    code = main(['scenarios', sys.argv[2], srv.url])\n"
        "print('ROUTES', app.counts.by_route['POST /login'], app.counts.by_route['GET /login'])\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(engine), str(file)],
        capture_output=True, text=True, timeout=120, check=False, cwd=engine,
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    assert "  shoppers: closed loop, 2 users, from 0 s" in done.stdout
    assert "ROUTES 8 30" in done.stdout


def test_ctrl_c_stops_every_scenario_and_reports_them_interrupted(
    server: str, tmp_path: Path
) -> None:
    file, out = tmp_path / "long.toml", tmp_path / "r.json"
    # Far longer than a test may take: only the SIGINT ends them in time; "late" would
    # start after the interrupt, and is not run at all.
    file.write_text(
        '[scenarios.browse]\npath = "/items"\nrate = 50\nduration = "60s"\n\n'
        '[scenarios.late]\npath = "/items"\nstart = "50s"\nconnections = 1\nduration = "5s"\n'
    )
    run = Watched("scenarios", str(file), server, "--json", str(out))
    time.sleep(2.0)
    run.interrupt()
    assert run.finish() == ExitCode.INTERRUPTED, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout.startswith("INTERRUPTED after")
    data = load_json(out)
    assert list(data["scenarios"]) == ["browse"]
    browse = data["scenarios"]["browse"]["result"]
    assert browse["interrupted"] and data["total"]["interrupted"]
    assert browse["sent"] == browse["ok"] + browse["errors_total"] + browse["in_flight"]
