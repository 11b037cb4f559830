"""A flow that raises in every session fails its test with the flow's own traceback in
pytest's output (issue 33): the plugin fails a test without pytest's traceback (its frames
say nothing), so the first failing session's is printed under the FlowError's message,
the flow's frames only."""

from __future__ import annotations

import pytest

FLOW_TEST = """
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this, Nagle holds the body back
    # until the client's delayed ACK, 40 ms an answer on a kept-alive connection.
    disable_nagle_algorithm = True

    def do_GET(self):
        body = b'{"tokn": "x"}'
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


async def misreader(client):
    r = await client.get("/", extensions={"netbench_step": "home"})
    return r.json()["token"]  # the server says "tokn"


def test_misreader(netbench, server):
    netbench.flow(misreader, server, users=2, duration=5, client="lean")
"""


def test_the_flows_traceback_is_in_pytests_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(FLOW_TEST)
    result = pytester.runpytest_subprocess("--netbench")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "netbench: FlowError: the flow raised in every session (2 of 2), the first after"
            " step 'home': KeyError('token'); * see its traceback",
            "",
            "The first failing session's traceback:",
            "Traceback (most recent call last):",
            '  File "*.py", line *, in misreader',
            "    return r.json()*token*",
            "KeyError: 'token'",
        ]
    )
    assert "_flow/run.py" not in result.stdout.str()  # the flow's frames only
