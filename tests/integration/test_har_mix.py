"""A browser's recording replayed as a mix (issue 33): headless Chromium (the system's,
driven by Playwright) browses a small local app and saves a HAR; ``netbench http URL --mix
app.har`` replays it, one kind per request the browser made, and the app sees each request
as the browser sent it."""

from __future__ import annotations

import http.server
import json
import shutil
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_netbench import load_mix

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

PAGE = b"""<!doctype html><html><head><link rel="stylesheet" href="/style.css">
<script src="/app.js"></script></head><body><img src="/logo.png">
<script>
fetch('/api/items?page=2').then(r => r.text());
fetch('/api/cart', {method: 'POST', body: JSON.stringify({id: 3}),
                    headers: {'content-type': 'application/json'}});
</script></body></html>"""


class App(http.server.ThreadingHTTPServer):
    """Serves the page and answers every other path with ``{}``; writes down each request."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bytes]] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this, Nagle holds the body back
    # until the client's delayed ACK, 40 ms an answer on a kept-alive connection.
    disable_nagle_algorithm = True
    server: App

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.server.lock:
            self.server.seen.append((self.command, self.path, body))
        page = PAGE if self.path == "/" else b"{}"
        self.send_response(200)
        self.send_header("content-type", "text/html" if self.path == "/" else "text/plain")
        self.send_header("content-length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def app() -> Iterator[App]:
    server = App()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def record_har(url: str, har: Path) -> None:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(record_har_path=str(har))
        page = context.new_page()
        page.goto(url)
        page.wait_for_load_state("networkidle")
        context.close()
        browser.close()


def test_a_browsers_recording_replays_one_kind_per_request(app: App, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{app.server_port}/"
    har = tmp_path / "app.har"
    record_har(url, har)
    browsed = set(app.seen)
    kinds = load_mix(har, url=url)["mix"]
    recorded = Counter((k.method, k.path, k.body) for k in kinds)
    # The HAR holds the page's requests (the browser's own, as /favicon.ico, are not the
    # page's), the page's script calls among them.
    assert set(recorded) <= browsed and ("POST", "/api/cart", b'{"id":3}') in recorded
    assert {"/", "/style.css", "/app.js", "/logo.png", "/api/items?page=2"} <= {
        path for _method, path, _body in recorded
    }
    assert all(dict(k.headers).get("User-Agent", "").startswith("Mozilla") for k in kinds)
    app.seen.clear()

    out = tmp_path / "replay.json"
    command = [sys.executable, "-m", "pytest_netbench.cli", "http", url, "--mix", str(har)]
    done = subprocess.run(
        [*command, "-c", "1", "-n", str(3 * len(kinds)), "--json", str(out)],
        capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert set(result["by_request"]) == {kind.label for kind in kinds}
    assert all(stats["ok"] == 3 for stats in result["by_request"].values())
    # The app saw each request of the recording three times over, as the browser sent it.
    assert Counter(app.seen) == Counter({request: 3 * n for request, n in recorded.items()})
