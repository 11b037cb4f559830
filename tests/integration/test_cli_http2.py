"""``netbench http --protocol h2|auto``, run as a real subprocess against the catalog's Go
HTTP/2 server: what was spoken in the report and the JSON, and ``auto``'s refusals and
unreachable targets in one line each."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import load_json, netbench

from pytest_netbench import Server, ToolchainMissing, catalog
from pytest_netbench.cli import ExitCode


@pytest.fixture(scope="module", params=["h2c", "h2"])
def go_h2(request: pytest.FixtureRequest) -> Iterator[Server]:
    try:
        spec = catalog.get("go", app=request.param)
    except ToolchainMissing as exc:
        pytest.skip(f"go cannot run here: {exc}")
    server = Server.from_spec(spec).start()
    try:
        yield server
    finally:
        server.stop()


def test_auto_says_what_the_server_chose(go_h2: Server, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    command = f"http {go_h2.url}/ --protocol auto -c 2 -n 200 --no-verify-tls --json {out}"
    done = netbench(*command.split())
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    data = load_json(out)
    assert (data["sent"], data["ok"]) == (200, 200)
    spoken = (data["generator"]["protocol"], data["spec"]["protocol_negotiated"])
    heading = " ".join(done.stdout.split())
    if go_h2.url.startswith("https://"):  # asked by ALPN: Go picks h2
        assert spoken == ("h2", True)
        assert "HTTP/2 (TLS, negotiated by ALPN), 1 stream/connection" in heading
    else:  # cleartext: HTTP/1.1, nothing asked (Go's h2c handler speaks both)
        assert spoken == ("http1", False)
        assert "HTTP/2" not in heading


def test_auto_with_streams_is_refused_in_one_line() -> None:
    done = netbench("http", "https://127.0.0.1:9/", "--protocol", "auto", "--streams", "4")
    assert done.returncode == ExitCode.USAGE
    (line,) = done.stderr.splitlines()
    assert "protocol='auto' may speak HTTP/1.1" in line and "pass protocol='h2'" in line


def test_auto_against_a_silent_tls_port_is_unreachable_in_one_line() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:  # accepts, never answers
        port = listener.getsockname()[1]
        done = netbench(
            "http",
            f"https://127.0.0.1:{port}/",
            "--protocol",
            "auto",
            "-n",
            "10",
            "--connect-timeout",
            "0.3",
        )
    assert done.returncode == ExitCode.UNREACHABLE
    (line,) = done.stderr.splitlines()
    assert "cannot choose the HTTP version (protocol='auto')" in line
    assert line.endswith("does the port speak TLS? (a plain-HTTP port wants http://)")
