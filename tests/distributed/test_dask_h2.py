"""HTTP/2 and gRPC loads whose shares run on a real Dask cluster (two worker processes):
streams counted exactly across the shares, the protocol the shares spoke in the result,
a load the server chose by ALPN (``protocol="auto"``) spoken alike by every share, and
gRPC unary calls with their grpc-status codes merged."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import distributed
import pytest

from pytest_netbench import (
    LoadProgress,
    LoadResult,
    Request,
    Server,
    ToolchainMissing,
    catalog,
    grpc_load,
    http_load,
)
from pytest_netbench._engine.shares.dask_transport import cluster_workers

Check = Callable[[LoadResult], LoadResult]


def started(kind: str, app: str) -> Iterator[Server]:
    try:
        spec = catalog.get(kind, app=app)
    except ToolchainMissing as exc:
        pytest.skip(f"{kind} cannot run here: {exc}")
    server = Server.from_spec(spec).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def go_h2c() -> Iterator[Server]:
    yield from started("go", "h2c")


@pytest.fixture(scope="module")
def go_h2() -> Iterator[Server]:
    yield from started("go", "h2")


@pytest.fixture(scope="module")
def grpcio() -> Iterator[Server]:
    yield from started("grpcio", "grpc")


def on_both_workers(r: LoadResult, cluster: distributed.Client) -> None:
    shares = r.generator.shares
    assert [s.index for s in shares] == [0, 1]
    assert {s.worker for s in shares} == set(cluster_workers(cluster))
    assert sum(s.sent for s in shares) == r.sent
    assert all(not s.lost for s in shares)


def test_streams_on_two_dask_workers_are_counted_exactly(
    cluster: distributed.Client, go_h2c: Server, consistent: Check
) -> None:
    r = consistent(
        http_load(
            f"{go_h2c.url}/",
            protocol="h2",
            streams=10,
            connections=4,
            requests=2000,
            workers=2,
            cluster=cluster,
        )
    )
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (2000, 2000, 0, 0)
    assert r.status_codes == {200: 2000}
    assert r.generator.protocol == "h2"
    assert r.generator.connections_opened == 4
    on_both_workers(r, cluster)


def test_a_timed_load_with_warmup_reports_progress_from_both_shares(
    cluster: distributed.Client, go_h2c: Server, consistent: Check
) -> None:
    seen: list[LoadProgress] = []
    r = consistent(
        http_load(
            f"{go_h2c.url}/",
            protocol="h2",
            streams=5,
            connections=2,
            duration=1.5,
            warmup=0.3,
            workers=2,
            cluster=cluster,
            progress=seen.append,
        )
    )
    assert r.errors_total == 0 and r.ok > 0 and r.generator.protocol == "h2"
    # Each share's streams open when the window closed are in flight, never more.
    assert 0 <= r.in_flight <= 2 * 5
    running = [p for p in seen if p.hosts]
    assert running, f"no report named a host in {len(seen)} report(s)"
    # Not every share's snapshot reaches a 1.8 s load's caller on a busy machine (HTTP/1.1's
    # alike): each share's counts, when reported, are within the result's.
    assert all(sum(h.shares for h in p.hosts) <= 2 for p in running)
    assert 0 < running[-1].completed <= r.sent
    on_both_workers(r, cluster)


def test_a_mix_over_streams_on_two_dask_workers(
    cluster: distributed.Client, go_h2c: Server, consistent: Check
) -> None:
    mix = [
        Request("GET", "/", name="hello"),
        Request("GET", "/status/503", name="failing"),
        Request("POST", "/", body=b"x" * 100, name="posted"),
    ]
    r = consistent(
        http_load(
            f"{go_h2c.url}/",
            protocol="h2",
            streams=4,
            connections=2,
            requests=600,
            workers=2,
            cluster=cluster,
            mix=mix,
        )
    )
    assert (r.sent, r.ok, dict(r.errors)["status"]) == (600, 400, 200)
    assert r.status_codes == {200: 400, 503: 200}
    for name, ok in (("hello", 200), ("failing", 0), ("posted", 200)):
        kind = r.by_request[name]
        assert (kind.sent, kind.ok, kind.ok + kind.errors_total + kind.in_flight) == (
            200,
            ok,
            200,
        )
    on_both_workers(r, cluster)


def test_an_open_loop_over_streams_on_two_dask_workers(
    cluster: distributed.Client, go_h2c: Server, consistent: Check
) -> None:
    r = consistent(
        http_load(
            f"{go_h2c.url}/",
            protocol="h2",
            streams=4,
            connections=2,
            rate=400,
            duration=1,
            workers=2,
            cluster=cluster,
        )
    )
    assert r.errors_total == 0 and r.generator.protocol == "h2"
    assert r.sent == r.ok + r.in_flight and 380 <= r.sent <= 420
    on_both_workers(r, cluster)


def test_the_servers_alpn_choice_is_spoken_by_every_dask_share(
    cluster: distributed.Client, go_h2: Server, consistent: Check
) -> None:
    r = consistent(
        http_load(
            f"{go_h2.url}/",
            protocol="auto",
            connections=4,
            requests=400,
            workers=2,
            cluster=cluster,
            verify_tls=False,
        )
    )
    assert (r.sent, r.ok, r.errors_total) == (400, 400, 0)
    assert r.generator.protocol == "h2"
    assert r.spec is not None and r.spec.protocol_negotiated
    on_both_workers(r, cluster)


def test_grpc_calls_on_two_dask_workers(
    cluster: distributed.Client, grpcio: Server, consistent: Check
) -> None:
    ok = consistent(
        grpc_load(
            grpcio.url,
            "/netbench.Echo/Say",
            b"hello",
            streams=5,
            connections=2,
            requests=400,
            workers=2,
            cluster=cluster,
        )
    )
    assert (ok.sent, ok.ok, ok.errors_total) == (400, 400, 0)
    assert ok.status_codes == {0: 400}
    assert ok.generator.protocol == "h2"
    on_both_workers(ok, cluster)
    failing = consistent(
        grpc_load(
            grpcio.url,
            "/netbench.Echo/Fail",
            b"x",
            streams=5,
            connections=2,
            requests=60,
            workers=2,
            cluster=cluster,
        )
    )
    assert (failing.sent, failing.ok, dict(failing.errors)["status"]) == (60, 0, 60)
    assert failing.status_codes == {5: 60}  # NOT_FOUND
    assert "grpc-status NOT_FOUND (5)" in failing.error_samples["status"]
