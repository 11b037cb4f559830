"""End-to-end: ``--netbench-html PATH`` from a real session on loopback, opened in a real
headless Chromium (Debian's ``chromium``): the page loads without a console message, the
rendered DOM holds the matrix with the invalid result marked, and a screenshot is taken.

The session measures the paced test server (at most R responses a second) at a rate it
can keep (valid) and at one it cannot with a small connection pool (rate not achieved:
invalid), and runs a two-step sweep, so the page has a matrix, an invalid row with its
reason, an experiment table and, with matplotlib, pictures.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

PACED_SERVER = Path(__file__).parents[1] / "experiment" / "paced_server.py"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# Chromium logs each console message (and each uncaught exception) to stderr with
# --enable-logging=stderr --v=0 as "...:INFO:CONSOLE:<line>] "<text>", source: <url> (<line>)".
CONSOLE_LINE = re.compile(r":CONSOLE[:(]\d*\)?\] (.*)$", re.MULTILINE)
SESSION_S = 180  # the pytester run: server start-ups, loads and pictures on a busy machine
BROWSER_S = 60
StartServer = Callable[..., Any]  # the fault_server fixture (tests/integration/conftest.py)

SESSION = """
import sys

import pytest


@pytest.fixture
def paced(netbench_server):
    def start(rate):
        command = [sys.executable, "paced_server.py", str(rate), "{port}"]
        return netbench_server(command, port_pattern=r"NETBENCH_LISTENING port=(\\d+)",
                               name="paced")
    return start


@pytest.mark.parametrize("served", [300, 3000])
def test_load(netbench, paced, served):
    # 600 req/s through at most 4 connections: the 300 req/s server holds all of them.
    netbench.http(paced(served), rate=600, duration=0.5, connections=2, max_connections=4,
                  allow_invalid=True)


def test_sweep(netbench, paced):
    netbench.sweep(paced(2000), rates="200,400", duration=0.3, connections=2,
                   allow_invalid=True)
"""


@pytest.fixture(autouse=True)
def _bounded() -> None:
    """In place of the directory's 60 s guard, which a session and two browser starts can
    outlast on a busy machine: every step here has its own timeout."""


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        message = "chromium is not installed (scripts/bootstrap.sh installs Debian's chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)  # CI must run what it claims to test
        pytest.skip(message)
    return path


def run_chromium(chromium: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A fresh profile each time, so nothing of an earlier run is reused."""
    with tempfile.TemporaryDirectory(prefix="netbench-chromium-") as profile:
        return subprocess.run(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=BROWSER_S,
            check=False,
        )


def console_messages(stderr: str) -> list[str]:
    return CONSOLE_LINE.findall(stderr)


def test_the_console_check_sees_an_error(chromium: str, tmp_path: Path) -> None:
    """The check below would pass vacuously if Chromium logged console messages otherwise."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><script>console.error('probe'); missing();</script>")
    done = run_chromium(chromium, "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri())
    messages = console_messages(done.stderr)
    assert any("probe" in m for m in messages), done.stderr
    assert any("missing is not defined" in m for m in messages), done.stderr


def test_the_report_loads_cleanly_and_shows_the_matrix(
    chromium: str, pytester: pytest.Pytester
) -> None:
    shutil.copyfile(PACED_SERVER, pytester.path / PACED_SERVER.name)
    pytester.makepyfile(test_report=SESSION)
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-html=out/report.html", timeout=SESSION_S
    )
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["netbench: HTML report written to out/report.html"])
    report = pytester.path / "out" / "report.html"
    page = report.read_text(encoding="utf-8")

    # Self-contained: nothing for a browser to fetch, every picture a PNG inline.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert not re.search(r"@import|url\(\s*['\"]?https?:", page)
    images = re.findall(r'<img src="data:image/png;base64,([^"]+)"', page)
    if importlib.util.find_spec("matplotlib") is not None:
        assert len(images) >= 4  # combined spectrum, two matrix bars, the sweep
        assert all(base64.b64decode(data)[:8] == PNG_MAGIC for data in images)
    else:
        assert "pytest-netbench[plot]" in page

    done = run_chromium(chromium, "--enable-logging=stderr", "--v=0", "--dump-dom", report.as_uri())
    assert done.returncode == 0, done.stderr
    assert console_messages(done.stderr) == []
    dom = done.stdout
    matrix = re.search(r'<table class="matrix">.*?</table>', dom, re.DOTALL)
    assert matrix is not None, dom[:2000]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", matrix.group(0), re.DOTALL)
    labels = [re.sub(r"<[^>]+>", "", r.split("</td>", 1)[0]).strip() for r in rows[1:]]
    assert labels == ["300", "3000"]
    assert 'class="invalid-row"' in matrix.group(0)  # the 300 req/s server's row
    assert "rate not achieved" in dom  # and why, in words
    assert "rate sweep" in dom

    screenshot = pytester.path / "report.png"
    shot = run_chromium(
        chromium, f"--screenshot={screenshot}", "--window-size=1280,2000", report.as_uri()
    )
    assert shot.returncode == 0, shot.stderr
    assert screenshot.read_bytes()[:8] == PNG_MAGIC
    assert screenshot.stat().st_size > 20_000  # a blank page is a few kB


def _kill_once_loaded(server_pid: int, victim: int, cancelled: threading.Event) -> None:
    """SIGKILL ``victim`` 0.5 s after the server first holds a client connection."""
    server = psutil.Process(server_pid)
    while not cancelled.wait(0.02):
        if any(c.status == psutil.CONN_ESTABLISHED for c in server.net_connections("tcp")):
            if not cancelled.wait(0.5):
                os.kill(victim, signal.SIGKILL)
            return


def test_a_load_on_a_cluster_shows_each_host_and_names_the_lost_one(
    chromium: str, fault_server: StartServer, tmp_path: Path
) -> None:
    """``netbench http --cluster ... --html``: two shares on a real Dask cluster (a
    LocalCluster, two worker processes), one worker killed a second in; the rendered page
    has the per-host table, a row per share, the lost one's row and its note."""
    distributed = pytest.importorskip("distributed", reason="the distributed extra is missing")
    server = fault_server("http")
    local = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(local)
    try:
        pids = client.run(os.getpid)
        victim = sorted(pids)[1]
        # Killed half a second after the load reached the server, not at a fixed time: on a
        # busy machine the CLI's start-up took longer than a second now and then, and the
        # worker died before the load began (a refusal to start, not a lost share).
        cancelled = threading.Event()
        killer = threading.Thread(
            target=_kill_once_loaded, args=(server.process.pid, pids[victim], cancelled)
        )
        killer.start()
        report = tmp_path / "cluster.html"
        try:
            done = subprocess.run(
                [
                    sys.executable, "-m", "pytest_netbench.cli", "http", server.url,
                    "-c", "4", "-d", "2.5s", "--workers", "2", "--cluster", local.scheduler_address,
                    "--html", str(report), "--json", str(tmp_path / "cluster.json"),
                ],
                capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
        finally:
            cancelled.set()
            killer.join()
    finally:
        client.close()
        local.close()
    assert report.exists(), done.stdout + done.stderr
    shares = json.loads((tmp_path / "cluster.json").read_text())["generator"]["shares"]
    assert [bool(s["lost"]) for s in shares] == [s["worker"] == victim for s in shares]

    dom = _rendered(chromium, report)
    table = re.search(r'<table class="shares">.*?</table>', dom, re.DOTALL)
    assert table is not None, dom[:3000]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0), re.DOTALL)
    assert len(rows) == 1 + len(shares) + 1  # the header, a row per share, all shares
    for row, share in zip(rows[1:], shares, strict=False):
        assert share["worker"] in row
        assert ("LOST" in row) == bool(share["lost"])
        if not share["lost"]:
            assert f"{share['sent']:,}" in row
    assert "all shares" in rows[-1]
    lost = next(s for s in shares if s["lost"])
    assert f"<b>lost</b>: share {lost['index']}:" in dom and victim in dom
    shot = tmp_path / "cluster.png"
    done = run_chromium(
        chromium, f"--screenshot={shot}", "--window-size=1280,1800", report.as_uri()
    )
    assert done.returncode == 0, done.stderr
    assert shot.read_bytes()[:8] == PNG_MAGIC


def _rendered(chromium: str, page: Path) -> str:
    """The page's DOM after Chromium loaded it, which logged no console message."""
    done = run_chromium(chromium, "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr
    assert console_messages(done.stderr) == []
    return done.stdout


HELLO_APP = Path(__file__).parents[1] / "plugin" / "hello_app.py"
MIX_SESSION = """
import sys

from pytest_netbench import Request

MIX = [
    Request("GET", "/items", name="list", weight=2),
    Request("GET", "/missing", name="gone"),
    Request("POST", "/orders", body=b'{"qty": 2}', name="order"),
]


def test_shop(netbench, netbench_server):
    command = [sys.executable, "hello_app.py", "--port", "{port}", "--status-for", "/missing=404"]
    srv = netbench_server(command, port_pattern=r"NETBENCH_LISTENING port=(\\d+)")
    netbench.http(srv.url, mix=MIX, mix_order="weighted", requests=400, connections=2)
"""


def test_a_mix_shows_a_row_per_request_kind_and_its_spectrum(
    chromium: str, pytester: pytest.Pytester
) -> None:
    """The rendered page holds, under the test, the per-request table (a row per kind and
    the load's own, the figures of the session JSON) and the mix's spectrum beside it."""
    shutil.copyfile(HELLO_APP, pytester.path / HELLO_APP.name)
    pytester.makepyfile(test_mix=MIX_SESSION)
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-html=report.html", "--netbench-json=out.json", timeout=SESSION_S
    )
    result.assert_outcomes(passed=1)
    data = json.loads((pytester.path / "out.json").read_text())["records"][0]["result"]

    dom = _rendered(chromium, pytester.path / "report.html")
    table = re.search(r'<table class="requests">.*?</table>', dom, re.DOTALL)
    assert table is not None, dom[:3000]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0), re.DOTALL)
    cells = [
        [
            re.sub(r"<[^>]+>", "", c.replace("<br>", " ")).strip()
            for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.DOTALL)
        ]
        for r in rows
    ]
    head, *body = cells
    # No request was in flight at the end (a count of requests): no column of zeros.
    assert head[:6] == ["request", "method, path", "sent", "ok", "errors", "req/s"]
    assert "p99.9 ms" in head and head[-1] == "status codes"
    assert [row[0] for row in body] == ["list", "gone", "order", "all"]
    for row, name in zip(body, ["list", "gone", "order"], strict=False):
        kind = data["by_request"][name]
        assert row[2:4] == [f"{kind['sent']:,}", f"{kind['ok']:,}"]
    assert body[1][1] == "GET /missing" and body[1][4] == "100 status 100"
    assert body[1][-1] == "404: 100"
    assert body[3][2:4] == [f"{data['sent']:,}", f"{data['ok']:,}"]
    after = dom[table.end() :]
    if importlib.util.find_spec("matplotlib") is not None:
        # The mix's spectrum right under its table, not among the test's other pictures.
        assert re.match(r'\s*</div>\s*<div class="figures"><figure>', after), after[:300]
        picture = "test_mix.test_shop-latency.png"
        assert picture in after.split("</figure>", 1)[0]
        assert dom.count(picture) == 2  # its alt text and caption, once: not shown twice

    shot = pytester.path / "mix.png"
    done = run_chromium(
        chromium,
        f"--screenshot={shot}",
        "--window-size=1280,1600",
        (pytester.path / "report.html").as_uri(),
    )
    assert done.returncode == 0, done.stderr
    assert shot.read_bytes()[:8] == PNG_MAGIC
