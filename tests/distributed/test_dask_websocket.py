"""WebSocket loads whose shares run on a real Dask cluster (two worker processes): round
trips (answers by id too) and held connections, counted exactly across the shares, and
every connection closed cleanly at the end."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import distributed
import pytest
from servers import ServerThread
from ws_push_servers import PushApp, PushOptions
from ws_servers import WsApp, WsOptions

from pytest_netbench import LoadResult, ws_load
from pytest_netbench._engine.shares.dask_transport import cluster_workers

Check = Callable[[LoadResult], LoadResult]


@pytest.fixture
def serve() -> Iterator[Callable[[object], ServerThread]]:
    started: list[ServerThread] = []

    def start(app: object) -> ServerThread:
        server = ServerThread(app).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def settled(read: Callable[[], object], expected: object, within_s: float = 5.0) -> object:
    deadline = time.monotonic() + within_s
    while (value := read()) != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return value


@pytest.mark.parametrize("answer", ["echo", "id"])
def test_round_trips_on_two_dask_workers(
    cluster: distributed.Client,
    serve: Callable[[object], ServerThread],
    consistent: Check,
    answer: str,
) -> None:
    app = WsApp(WsOptions(id_field="id" if answer == "id" else "", reverse=2))
    server = serve(app)
    url = f"ws://127.0.0.1:{server.port}/echo"
    pipeline = {"pipeline": 2} if answer == "id" else {}
    r = consistent(
        ws_load(
            url, connections=4, requests=400, workers=2, cluster=cluster, answer=answer, **pipeline
        )  # type: ignore[arg-type]
    )
    assert (r.sent, r.ok, r.errors_total) == (400, 400, 0)
    assert [s.index for s in r.generator.shares] == [0, 1]
    assert {s.worker for s in r.generator.shares} == set(cluster_workers(cluster))
    assert app.seen.messages == 400 and app.seen.handshakes == 4
    assert settled(lambda: sorted(app.seen.close_replies), [1000] * 4) == [1000] * 4


def test_held_connections_on_two_dask_workers(
    cluster: distributed.Client, serve: Callable[[object], ServerThread], consistent: Check
) -> None:
    app = PushApp(PushOptions(hold=4))
    server = serve(app)
    url = f"ws://127.0.0.1:{server.port}/feed"
    r = consistent(
        ws_load(
            url,
            listen=True,
            connections=4,
            requests=200,
            workers=2,
            cluster=cluster,
            stamp_field="ts",
        )
    )
    assert (r.sent, r.ok, r.errors_total) == (200, 200, 0)
    assert r.generator.connections_opened == 4 and len(r.generator.shares) == 2
    assert settled(lambda: sorted(app.seen.client_closes), [1000] * 4) == [1000] * 4
