"""``netbench http URL --check ...`` as a real subprocess against a server that answers one
request in ten with a 200 carrying an error page: the check counts exactly those as its
failures, in the text, the JSON and the HTML report, and a threshold on its pass rate sets
the exit status."""

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

SERVER = Path(__file__).with_name("error_page_server.py")


@pytest.fixture
def error_pages() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        match = re.search(rb"port=(\d+)", proc.stdout.readline() if ready else b"")
        assert match is not None, "the error page server did not start"
        yield f"http://127.0.0.1:{int(match.group(1))}/"
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_body_check_counts_each_error_page(error_pages: str, tmp_path: Path) -> None:
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    done = netbench(
        "http", error_pages, "-n", "500", "-c", "4",
        "--check", "no error page: body !contains Error",
        "--check", "status 200",
        "--check", "json id == 7",
        "--threshold", "checks.no error page.rate > 0.95",
        "--json", str(out), "--html", str(page),
    )  # fmt: skip
    assert done.returncode == ExitCode.THRESHOLD_FAILED, done.stderr
    text = done.stdout
    assert "Checks: 2 of 3 failed" in text
    assert re.search(r"FAILED\s+no error page\s+450\s+50\s+90\.00 %\s+body !contains Error", text)
    assert re.search(r"ok\s+status 200\s+500\s+0\s+100 %", text)
    assert "e.g. verify: check 'no error page' failed (body !contains Error)" in text
    assert re.search(
        r"FAILED\s+checks\.no error page\.rate > 0\.95\s+checks.no error page.rate = 0\.9", text
    )
    data = load_json(out)
    assert data["errors"]["verify"] == 50 and data["ok"] == 450
    assert data["checks"]["no error page"] == {
        "check": "body !contains Error", "passes": 450, "failures": 50, "rate": 0.9
    }  # fmt: skip
    assert data["checks"]["status 200"]["failures"] == 0
    assert data["checks"]["json id == 7"]["failures"] == 50
    html = page.read_text()
    assert 'table class="checks"' in html and "no error page" in html


def test_a_check_that_cannot_be_read_is_a_usage_error(error_pages: str) -> None:
    done = netbench("http", error_pages, "-n", "10", "--check", "body has Welcome")
    assert done.returncode == ExitCode.USAGE
    assert "unknown test 'has' of a body" in done.stderr
    assert "Traceback" not in done.stderr
