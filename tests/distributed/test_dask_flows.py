"""User flows whose shares run on a real Dask cluster (two worker processes), the flows
imported there by reference: counts exact, cookies and tokens carried (issue 21)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import distributed
import pytest
import shop_flows
from servers import ServerThread
from shop_app import ShopApp

from pytest_netbench import LoadResult, flow

Check = Callable[[LoadResult], LoadResult]


@pytest.fixture
def shop() -> Iterator[tuple[ServerThread, ShopApp]]:
    app = ShopApp()
    with ServerThread(app) as server:
        yield server, app


@pytest.mark.parametrize("client", ["httpx", "lean"])
def test_a_flow_runs_a_share_on_each_dask_worker(
    cluster: distributed.Client,
    shop: tuple[ServerThread, ShopApp],
    client: str,
    consistent: Check,
) -> None:
    server, app = shop
    r = consistent(
        flow(
            shop_flows.shopper,
            server.url,
            users=4,
            sessions=20,
            workers=2,
            cluster=cluster,
            client=client,
        )
    )
    assert [s.index for s in r.generator.shares] == [0, 1]
    assert all(s.host and not s.lost for s in r.generator.shares)
    for step in r.by_request.values():
        assert (step.sent, step.ok) == (20, 20)
    assert r.sessions is not None
    assert (r.sessions.started, r.sessions.completed) == (20, 20)
    assert app.counts.without_credentials == 0 and app.counts.logins == 20
