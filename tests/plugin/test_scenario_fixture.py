"""``netbench.scenarios(url, {...})``: several loads at once in a test, recorded as one
load whose per-request table (terminal, Markdown) has a row per scenario (issue 33)."""

from __future__ import annotations

import json

import pytest

SCENARIO_TEST = """
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pytest_netbench import Scenario


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this, Nagle holds the body back
    # until the client's delayed ACK, 40 ms an answer on a kept-alive connection.
    disable_nagle_algorithm = True

    def do_GET(self):
        self.wfile.write(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok")

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_day(netbench, server):
    r = netbench.scenarios(server, {
        "browse": Scenario("/items", connections=2, requests=40),
        "admin": Scenario("/report", start=0.2, connections=1, requests=10),
    })
    assert r.by_request["browse"].sent == 40 and r.by_request["admin"].sent == 10
    assert r.sent == r.ok == 50
"""


def test_scenarios_in_a_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SCENARIO_TEST)
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-json=out.json", "--netbench-markdown=out.md"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*::test_day",
            "*per request*",
            "  request * sent * ok *",
            "  browse * 40 * 40 * 0 *",
            "  admin * 10 * 10 * 0 *",
            "  all * 50 * 50 * 0 *",
        ]
    )
    (record,) = json.loads((pytester.path / "out.json").read_text())["records"]
    assert list(record["result"]["by_request"]) == ["browse", "admin"]
    assert "| **all** | 50 | 50 |" in (pytester.path / "out.md").read_text()
