"""Flows as httpx users expect them (issue 33): a redirect is the response the flow reads
(httpx's default, the lean client's too), never followed behind its back; a step is named
with ``with step("name"):`` as plainly as with the request's extension; a misspelt option
names the one meant. On every loop, with both clients, against the shop (shop_app.py),
whose ``POST /register`` answers 303 to ``/login``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from servers import ServerThread
from shop_app import ShopApp

from pytest_netbench import (
    FlowScenario,
    LoadResult,
    Scenario,
    SpecError,
    flow,
    run_scenarios,
    step,
)

CLIENTS = ("httpx", "lean")


@pytest.fixture
def shop() -> Iterator[tuple[ServerThread, ShopApp]]:
    app = ShopApp()
    with ServerThread(app) as server:
        yield server, app


async def newcomer(client: Any) -> None:
    """Register (a form's POST answered 303), log in, look at the items: every step named
    by the block it is in."""
    with step("register"):
        r = await client.post("/register", data={"user": "ann"})
    assert r.status_code == 303, r.status_code  # not followed: the flow sees the redirect
    assert r.headers["location"] == "/login"
    with step("log in"):
        r = await client.post("/login", json={"user": "ann", "pw": "x"})
        token = r.json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    with step("browse"):
        (await client.get("/items", headers=auth)).raise_for_status()
        # A request's own name wins over the block's.
        await client.get("/items", headers=auth, extensions={"netbench_step": "again"})


@pytest.mark.parametrize("client", CLIENTS)
def test_redirects_are_read_not_followed_and_steps_named_by_blocks(
    shop: tuple[ServerThread, ShopApp],
    loop: str,
    client: str,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    server, app = shop
    r = consistent(flow(newcomer, server.url, users=3, sessions=12, loop=loop, client=client))
    assert r.sessions is not None and r.sessions.completed == 12, r.sessions
    assert list(r.by_request) == ["register", "log in", "browse", "again"]
    assert r.by_request["register"].status_codes == {303: 12}
    assert r.by_request["browse"].ok == r.by_request["again"].ok == 12
    # Nobody followed the redirect to GET /login.
    assert app.counts.by_route["GET /login"] == 0
    assert app.counts.by_route["POST /register"] == 12


def test_a_misspelt_option_names_the_one_meant(shop: tuple[ServerThread, ShopApp]) -> None:
    server, _ = shop
    for given, meant in [("user", "users"), ("connections", "users"), ("cpu", "cpus")]:
        with pytest.raises(
            SpecError, match=f"unknown option '{given}' for a flow: did you mean '{meant}'"
        ):
            flow(newcomer, server.url, sessions=1, **{given: 1})  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="a step's name is a non-empty string"), step(""):
        pass


def test_cpus_pins_the_users_loop(shop: tuple[ServerThread, ShopApp]) -> None:
    server, _ = shop
    r = flow(newcomer, server.url, users=1, sessions=2, cpus="0")
    assert r.sessions is not None and r.sessions.completed == 2


def test_a_flow_as_one_scenario_beside_a_plain_load(
    shop: tuple[ServerThread, ShopApp],
    loop: str,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    """Newcomers registering and browsing (a flow's users) beside a closed loop on the
    login page, at once against the shop: each scenario's counts are what the shop saw."""
    server, app = shop
    r = run_scenarios(
        server.url,
        {
            "newcomers": FlowScenario(newcomer, users=2, sessions=6, loop=loop, client="lean"),
            "login page": Scenario("/login", start=0.1, connections=1, requests=30, loop=loop),
        },
    )
    flow_result = consistent(r.by_scenario["newcomers"])
    page = consistent(r.by_scenario["login page"])
    assert flow_result.sessions is not None and flow_result.sessions.completed == 6
    assert app.counts.by_route["POST /register"] == 6
    assert page.ok == 30 and app.counts.by_route["GET /login"] == 30
    assert r.total.sent == flow_result.sent + 30 == 24 + 30
    assert list(r.total.by_request) == ["newcomers", "login page"]
