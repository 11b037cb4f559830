"""The ``netbench`` command, run as a real subprocess against real test servers."""

from __future__ import annotations

import json
import re
import shutil
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_netbench.cli import ExitCode

StartServer = Callable[..., Any]  # the fault_server fixture (tests/integration/conftest.py)


def netbench(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the installed console script (or the module when the script is not on PATH)."""
    script = shutil.which("netbench")
    command = [script] if script else [sys.executable, "-m", "pytest_netbench.cli"]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=60, check=False
    )


def load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def assert_invariant(data: dict[str, Any]) -> None:
    assert data["sent"] == data["ok"] + data["errors_total"] + data["in_flight"]
    assert data["errors_total"] == sum(data["errors"].values())


def test_help_lists_the_subcommands() -> None:
    done = netbench("--help")
    assert done.returncode == 0
    for word in ("http", "echo", "servers"):
        assert word in done.stdout
    http_help = netbench("http", "--help")
    assert http_help.returncode == 0
    for option in ("--connections", "--duration", "--requests", "--rate", "--json"):
        assert option in http_help.stdout


def test_http_run_writes_the_result_json(fault_server: StartServer, tmp_path: Path) -> None:
    server = fault_server("http")
    out = tmp_path / "result.json"
    done = netbench("http", server.url + "/x", "-c", "2", "-n", "50", "--json", str(out))
    assert done.returncode == 0, done.stderr
    data = load_json(out)
    assert_invariant(data)
    assert (data["sent"], data["ok"], data["errors_total"]) == (50, 50, 0)
    assert data["status_codes"] == {"200": 50}
    assert data["mode"] == "closed"
    assert data["url"] == server.url + "/x"
    assert data["latency"]["count"] == 50
    assert data["spec"]["requests"] == 50
    assert data["spec"]["connections"] == 2
    assert data["latency_histogram"]
    assert len(data["timeline"]) >= 1
    # The text report names the target and the figures a wrk user looks for.
    assert server.url in done.stdout
    assert "p99" in done.stdout


def test_http_options_reach_the_server(fault_server: StartServer, tmp_path: Path) -> None:
    server = fault_server("http")
    out = tmp_path / "result.json"
    done = netbench(
        "http",
        server.url,
        "-n",
        "12",
        "-c",
        "3",
        "--no-keepalive",
        "-m",
        "POST",
        "-H",
        "X-Test: yes",
        "--body",
        "hello",
        "--json",
        str(out),
        "--quiet",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    data = load_json(out)
    assert data["ok"] == 12
    assert data["generator"]["connections_opened"] == 12
    assert data["spec"]["method"] == "POST"
    assert data["spec"]["keepalive"] is False
    assert data["spec"]["headers"] == [["X-Test", "yes"]]


def test_http_errors_still_exit_zero_with_errors_in_the_json(
    fault_server: StartServer, tmp_path: Path
) -> None:
    server = fault_server("http", "--status-every", "2", "--status", "500")
    out = tmp_path / "result.json"
    done = netbench("http", server.url, "-n", "20", "-c", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    data = load_json(out)
    assert_invariant(data)
    assert data["errors"]["status"] == 10
    assert data["status_codes"] == {"200": 10, "500": 10}
    assert "500" in done.stdout


def test_echo_run_writes_the_result_json(fault_server: StartServer, tmp_path: Path) -> None:
    server = fault_server("echo")
    out = tmp_path / "echo.json"
    done = netbench(
        "echo",
        f"127.0.0.1:{server.port}",
        "-n",
        "20",
        "-c",
        "2",
        "--payload-bytes",
        "1k",
        "--chunk",
        "100",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    data = load_json(out)
    assert_invariant(data)
    assert (data["ok"], data["errors_total"]) == (20, 0)
    assert data["bytes_written"] == data["bytes_read"] == 20 * 1024
    assert data["spec"]["chunk"] == 100
    assert data["url"] == f"tcp://127.0.0.1:{server.port}"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["http", "http://127.0.0.1:1/", "-c", "0"], "connections"),
        (["http", "http://127.0.0.1:1/", "-d", "banana"], "duration"),
        (["http", "127.0.0.1:8080"], "scheme"),
        (["http", "ftp://127.0.0.1/"], "scheme"),
        (["http", "http://127.0.0.1:1/", "-H", "no-colon"], "header"),
        (["http", "http://127.0.0.1:1/", "-n", "5", "-d", "1s"], "not allowed"),
        (["http", "http://127.0.0.1:1/", "--loop", "tokio"], "loop"),
        (["echo", "127.0.0.1"], "HOST:PORT"),
        (["echo", "127.0.0.1:9", "--payload-bytes", "lots"], "size"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(args: list[str], fragment: str) -> None:
    done = netbench(*args)
    assert done.returncode == 2
    assert fragment in done.stderr
    assert "Traceback" not in done.stderr


def test_unreachable_target_exits_3() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = netbench("http", f"http://127.0.0.1:{port}/", "-n", "3")
    assert done.returncode == 3
    assert "refused" in done.stderr
    assert "Traceback" not in done.stderr


def test_nothing_listening_ends_a_timed_load_at_once_in_one_line() -> None:
    """``-d 2s`` against a closed port made 110,450 connection attempts before asking."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    began = time.monotonic()
    done = netbench("http", f"http://127.0.0.1:{port}/", "-d", "5s")
    assert time.monotonic() - began < 5.0  # the window asked for was never waited out
    assert done.returncode == ExitCode.UNREACHABLE
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "connection refused" in line and "is the server running" in line
    match = re.search(r"\(([\d,]+) attempts", line)
    assert match is not None and int(match.group(1).replace(",", "")) < 1000


class _PlainHttp(socketserver.BaseRequestHandler):
    """A plain-HTTP server's answer to bytes that are no request (a TLS hello): 400."""

    def handle(self) -> None:
        self.request.recv(1)
        self.request.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


@pytest.mark.parametrize("flags", [[], ["--no-verify-tls"]], ids=["verify", "no-verify"])
def test_https_against_a_plain_http_port_prints_one_line(flags: list[str]) -> None:
    """It printed ten "Future exception was never retrieved ... SSLError
    WRONG_VERSION_NUMBER" tracebacks, then advised --insecure even when it was given."""
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _PlainHttp) as server:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            port = server.server_address[1]
            done = netbench("http", f"https://127.0.0.1:{port}/", "-d", "5s", "-c", "100", *flags)
        finally:
            server.shutdown()
    assert done.returncode == ExitCode.UNREACHABLE
    (line,) = done.stderr.splitlines()
    assert "WRONG_VERSION_NUMBER" in line
    assert line.endswith("the port speaks plain HTTP, not TLS: use http:// for it, not https://")
    assert "verify" not in line


def test_remote_target_is_refused_without_allow_remote() -> None:
    done = netbench("http", "http://192.0.2.10/", "-n", "1")  # TEST-NET-1: never routed
    assert done.returncode == 4
    assert "--allow-remote" in done.stderr
    assert "Traceback" not in done.stderr


def test_html_writes_one_self_contained_report(fault_server: StartServer, tmp_path: Path) -> None:
    server = fault_server("http")
    page = tmp_path / "report" / "load.html"
    done = netbench("http", server.url + "/", "-c", "2", "-n", "40", "--html", str(page))
    assert done.returncode == 0, done.stderr
    assert f"HTML report written to {page}" in done.stderr
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert f"netbench http {server.url}/" in text
    # Self-contained: nothing is fetched from elsewhere.
    assert 'src="http' not in text and 'href="http' not in text
