"""The catalog's proxies (seed 004) in front of a real backend: reverse and forward
(absolute-form) requests reach the backend, both servers' figures land in the result,
and the host's TIME_WAIT sockets are counted."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from pytest_netbench import LoadResult, SpecError, ToolchainMissing, http_load
from pytest_netbench._plugin.servers import build_server
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server

PAGE = "/bytes/30000"  # seed 004's page was about 30 KiB


def started(name: str, **options: object) -> Server:
    try:
        server = build_server(name, **options)
    except ToolchainMissing as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"{name} cannot run here: {exc}")
    server.start()
    return server


@pytest.fixture(scope="module")
def backend() -> Iterator[Server]:
    server = started("go")
    yield server
    server.stop()


@pytest.fixture(params=catalog.proxy_names())
def proxy(request: pytest.FixtureRequest, backend: Server) -> Iterator[Server]:
    server = started(request.param, backend=backend)
    yield server
    server.stop()


def check(r: LoadResult) -> LoadResult:
    assert r.sent == r.ok + r.errors_total + r.in_flight
    assert r.errors_total == 0, dict(r.error_samples)
    assert r.ok > 0
    assert r.bytes_read > r.ok * 30000
    return r


def test_a_reverse_proxy_passes_requests_and_both_servers_are_measured(
    proxy: Server, backend: Server
) -> None:
    r = check(http_load(proxy.url + PAGE, connections=8, requests=400, server=proxy))
    assert r.server is not None and r.server.pid == proxy.pid
    assert r.backend is not None and r.backend.pid == backend.pid
    assert r.backend.cpu_s > 0  # the backend did the serving
    # The two listeners at least: the load's own connections count only when a sample
    # lands while they are open, and a 400-request load can fall between two samples.
    assert r.server.samples >= 2
    assert r.server.host_sockets_in_use_peak >= 2
    assert r.server.host_sockets_time_wait_peak >= 0
    back = LoadResult.from_dict(r.to_dict())
    assert back.backend == r.backend


def test_absolute_form_requests_through_the_proxy_reach_the_backend(
    proxy: Server, backend: Server
) -> None:
    """Forward-proxy mode, as seed 004's wrk Lua script sent it."""
    target = f"http://127.0.0.1:{backend.port}{PAGE}"
    check(http_load(target, proxy=f"127.0.0.1:{proxy.port}", connections=8, requests=200))


def test_a_proxy_per_request_backend_connection_leaves_time_wait_sockets(backend: Server) -> None:
    """The Twisted proxy opens a backend connection per request: each one it closes
    leaves a TIME_WAIT socket on the host, which the result counts."""
    proxy = started("twisted_proxy", backend=backend)
    try:
        r = check(http_load(proxy.url + PAGE, connections=4, requests=300, server=proxy))
    finally:
        proxy.stop()
    assert r.server is not None and r.backend is not None
    assert r.server.host_sockets_time_wait_peak >= 100


def test_a_proxy_needs_a_backend_and_others_refuse_one() -> None:
    with pytest.raises(SpecError, match="is a proxy: give it a backend"):
        catalog.get("go_proxy")
    with pytest.raises(SpecError, match="takes no backend"):
        catalog.get("go", backend="127.0.0.1:80")
    with pytest.raises(SpecError, match="HOST:PORT"):
        catalog.get("go_proxy", backend="nowhere")
    assert "go_proxy" not in catalog.names()
    assert "go_proxy" in catalog.names(proxies=True)
