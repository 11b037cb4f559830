"""End-to-end: checks on responses in every output of a session (issue 33): the terminal
summary's table under the test's matrix, the JSON, the Markdown and the HTML report. The
server in the test module answers one request in ten with a 200 carrying an error page,
so the body check fails exactly those and the status check none."""

from __future__ import annotations

import json

import pytest

CHECK_TEST = """
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

GOOD, PAGE = b'{"ok": true}', b"<html><h1>Error</h1></html>"
lock = threading.Lock()
answered = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this, Nagle holds the body back
    # until the client's delayed ACK, 40 ms an answer on a kept-alive connection.
    disable_nagle_algorithm = True

    def do_GET(self):
        with lock:
            answered[0] += 1
            body = PAGE if answered[0] % 10 == 0 else GOOD
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_pages(netbench, server):
    r = netbench.http(server, requests=300, connections=1,
                      checks={"no error page": "body !contains Error", "ok": "status 200"})
    assert r.checks["no error page"].failures == 30
"""


def test_every_output_shows_the_checks(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(CHECK_TEST)
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-json=out.json",
        "--netbench-markdown=out.md",
        "--netbench-html=out.html",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*::test_pages",
            "  checks: 1 of 2 failed",
            "          check * passes * failures * pass rate * expression",
            "  FAILED  no error page * 270 * 30 * 90.00 % * body !contains Error",
            "  ok      ok * 300 * 0 * 100 % * status 200",
        ]
    )
    session = json.loads((pytester.path / "out.json").read_text())
    (record,) = session["records"]
    assert record["result"]["checks"]["no error page"]["failures"] == 30
    assert record["result"]["errors"]["verify"] == 30
    markdown = (pytester.path / "out.md").read_text()
    assert "#### Checks" in markdown
    assert "| **no error page** (failed) | 270 | 30 | 90.00 % | body !contains Error |" in markdown
    assert "| ok | 300 | 0 | 100 % | status 200 |" in markdown
    html = (pytester.path / "out.html").read_text()
    assert '<tr class="failed"><td class=label>no error page</td>' in html
