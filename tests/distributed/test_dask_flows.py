"""User flows whose shares run on a real Dask cluster (two worker processes), the flows
imported there by reference: counts exact, cookies and tokens carried (issue 21)."""

from __future__ import annotations

import asyncio
import importlib
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import distributed
import pytest
import shop_flows
from servers import ServerThread
from shop_app import ShopApp

from pytest_netbench import FlowError, LoadResult, flow, flow_async
from pytest_netbench._engine.shares.dask_transport import ClusterError
from pytest_netbench._errors import FlowTraceback

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


def test_a_worker_that_cannot_import_the_flow_is_refused_before_any_load(
    cluster: distributed.Client,
    shop: tuple[ServerThread, ShopApp],
    tmp_path: Path,
) -> None:
    # A flow module only this process can import: its directory goes on this process's
    # path after the cluster's worker processes were spawned, so theirs lacks it.
    (tmp_path / "only_here_flows.py").write_text(
        "async def visit(client):\n    await client.get('/items')\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        only_here = importlib.import_module("only_here_flows")
        server, app = shop
        with pytest.raises(ClusterError) as caught:
            flow(only_here.visit, server.url, users=2, sessions=4, workers=2, cluster=cluster)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("only_here_flows", None)
    message = str(caught.value)
    assert "cannot import the flow's module 'only_here_flows'" in message
    assert "refused before it started" in message and "upload_file" in message
    assert app.counts.connections == 0  # no share started a load


def test_a_flow_that_raises_in_every_session_on_dask_shows_its_traceback(
    cluster: distributed.Client, shop: tuple[ServerThread, ShopApp]
) -> None:
    server, app = shop
    with pytest.raises(FlowError, match="after step 'login': KeyError") as caught:
        flow(shop_flows.misreader, server.url, users=4, duration=60, workers=2, cluster=cluster)
    # Dask's pickling (tblib) may carry the flow's exception itself, traceback and all;
    # without it the FlowError brings the traceback as text (FlowTraceback).
    assert isinstance(caught.value.__cause__, KeyError | FlowTraceback)
    shown = "".join(traceback.format_exception(caught.value))
    assert "in misreader" in shown and "KeyError: 'tokn'" in shown
    assert app.counts.logins < 100  # both shares stopped after their first sessions


def test_flow_async_runs_its_shares_on_the_dask_workers(
    cluster: distributed.Client, shop: tuple[ServerThread, ShopApp], consistent: Check
) -> None:
    server, app = shop
    run = flow_async(
        shop_flows.shopper, server.url, users=4, sessions=20, workers=2, cluster=cluster
    )
    r = consistent(asyncio.run(run))
    assert [s.index for s in r.generator.shares] == [0, 1]
    assert r.sessions is not None
    assert (r.sessions.started, r.sessions.completed) == (20, 20)
    assert app.counts.logins == 20 and app.counts.without_credentials == 0
