"""Every catalog server and app: started by the launcher, loaded briefly, stopped clean.

A server whose toolchain is missing here is skipped with the catalog's reason. Loads are
request-counted (never timed) so the assertions are exact counts, whatever the machine.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import sys
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest

from pytest_netbench import LoadResult, SpecError, ToolchainMissing, echo_load, http_load
from pytest_netbench._servers import catalog, interpreter_names
from pytest_netbench._servers.launcher import Server
from pytest_netbench._servers.spec import AppKind

# nginx serves /bytes/N from pre-made files: powers of two up to 4 MiB (see run_nginx.py).
MEDIUM = 65536
LARGE = 4 * 1024 * 1024

CASES = [
    pytest.param(name, app, id=f"{name}-{app}")
    for name in catalog.names(app=None)
    for app in ("hello", "echo")
    if name in catalog.names(app=app)
]
# Every Python server on PyPy: Debian's pypy3 runs the stdlib ones; the frameworks need
# installing for it (NETBENCH_PYPY may name a PyPy that has them, e.g. in a virtualenv).
# pyproject.toml's netbench_python names "pypy3" as the .venv-pypy scripts/bootstrap.sh
# makes, with the frameworks (run without that config, "pypy3" is Debian's on PATH).
PYPY = os.environ.get("NETBENCH_PYPY", "pypy3")


def _is_python_server(name: str) -> bool:
    """Whether ``name`` takes ``python=``, which the catalog refuses for every other kind."""
    try:
        catalog.get(name, python=sys.executable)  # no subprocess, no build: checked first
    except SpecError:
        return False
    except ToolchainMissing:
        pass  # a Python server whose framework is missing here
    return True


PYTHON_SERVERS = [n for n in catalog.names(app=None) if _is_python_server(n)]
PYPY_CASES = [
    pytest.param(name, app, id=f"pypy-{name}-{app}")
    for name in PYTHON_SERVERS
    for app in ("hello", "echo")
    if name in catalog.names(app=app)
]


def spec_or_skip(name: str, app: AppKind, python: str | None = None) -> catalog.ServerSpec:
    try:
        return catalog.get(name, app=app, python=python)
    except ToolchainMissing as exc:
        pytest.skip(f"{name} cannot run here: {exc}")


@pytest.fixture
def started() -> Iterator[Callable[..., Server]]:
    """Start servers; afterwards stop them and check that their whole tree is gone."""
    servers: list[tuple[Server, list[psutil.Process]]] = []

    def start(spec: catalog.ServerSpec, **overrides: Any) -> Server:
        server = Server.from_spec(spec, **overrides)
        server.start()
        assert server.pid is not None
        leader = psutil.Process(server.pid)
        servers.append((server, [leader, *leader.children(recursive=True)]))
        return server

    yield start
    for server, tree in servers:
        server.stop()
        assert not server.running
        _gone, alive = psutil.wait_procs(tree, timeout=3.0)
        assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], alive
        assert server.returncode == 0, (
            f"{server.name} did not exit cleanly on SIGTERM:\n{server.log_tail()}"
        )
        # Hundreds of requests were served: a log line per request would show here.
        assert len(server.log_tail(lines=1000).splitlines()) < 20, server.log_tail(lines=30)


def check_hello(server: Server, consistent: Callable[[LoadResult], LoadResult]) -> None:
    result = consistent(http_load(server.url, connections=4, requests=200))
    assert (result.sent, result.ok, result.errors_total) == (200, 200, 0), result.errors
    assert result.status_codes == {200: 200}
    sized = consistent(http_load(f"{server.url}/bytes/{MEDIUM}", connections=2, requests=20))
    assert (sized.ok, sized.errors_total) == (20, 0), sized.error_samples
    assert sized.bytes_read >= 20 * MEDIUM
    empty = consistent(http_load(f"{server.url}/status/204", connections=2, requests=20))
    assert (empty.ok, empty.status_codes) == (20, {204: 20}), empty.error_samples

    # One client, one (keep-alive where the framework does it) connection, exact bodies.
    assert server.port is not None
    client = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        for path, status, body in [
            ("/", 200, b"Hello World!"),
            (f"/bytes/{MEDIUM}", 200, b"x" * MEDIUM),
            ("/status/204", 204, b""),
            (f"/bytes/{LARGE}", 200, b"x" * LARGE),
            ("/", 200, b"Hello World!"),
        ]:
            client.request("GET", path)
            response = client.getresponse()
            got = response.read()
            assert (path, response.status) == (path, status)
            assert got == body, f"{path}: {len(got)} bytes, wanted {len(body)}"
            if status == 200:
                assert response.getheader("Content-Length") == str(len(body))
    finally:
        client.close()


def check_echo(server: Server, consistent: Callable[[LoadResult], LoadResult]) -> None:
    result = consistent(
        echo_load(server.host, server.port or 0, connections=4, requests=200, payload_bytes=512)
    )
    assert (result.sent, result.ok, result.errors_total) == (200, 200, 0), result.errors
    payload = bytes(range(256)) * 400  # 100 KiB, more than one read on every server
    with socket.create_connection((server.host, server.port or 0), timeout=10) as conn:
        conn.sendall(payload)
        got = b""
        while len(got) < len(payload):
            chunk = conn.recv(65536)
            assert chunk, f"connection closed after {len(got)} of {len(payload)} bytes"
            got += chunk
    assert got == payload


@pytest.mark.parametrize(("name", "app"), CASES)
def test_catalog_server_serves_and_stops(
    name: str,
    app: AppKind,
    started: Callable[..., Server],
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    spec = spec_or_skip(name, app)
    assert (spec.name, spec.app) == (name, app)
    server = started(spec)
    if app == "hello":
        check_hello(server, consistent)
    else:
        check_echo(server, consistent)
    server.check_alive()


@pytest.mark.skipif(
    interpreter_names.lookup(PYPY) is None and shutil.which(PYPY) is None,
    reason=f"{PYPY} is not installed",
)
@pytest.mark.parametrize(("name", "app"), PYPY_CASES)
def test_python_servers_run_on_pypy(
    name: str,
    app: AppKind,
    started: Callable[..., Server],
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    spec = spec_or_skip(name, app, python=PYPY)
    server = started(spec)
    assert server.pid is not None
    assert "pypy" in psutil.Process(server.pid).exe()
    if app == "hello":
        check_hello(server, consistent)
    else:
        check_echo(server, consistent)


@pytest.mark.parametrize(("name", "app"), CASES)
def test_catalog_server_on_ipv6_loopback(
    name: str, app: AppKind, started: Callable[..., Server]
) -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    server = started(spec_or_skip(name, app), host="::1")
    assert server.port is not None
    if app == "hello":
        assert server.url.startswith("http://[::1]:")
        result = http_load(server.url, connections=2, requests=50)
    else:
        result = echo_load("::1", server.port, connections=2, requests=50)
    assert (result.ok, result.errors_total) == (50, 0), result.error_samples
