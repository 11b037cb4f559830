"""User flows against a real shop on loopback (shop_app.py): per-step counts exact, the
cookie and token really carried, sessions failing at a named step, a flow's own bug told
apart from the server's failures, and the counting rules per step and in total."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from servers import ServerThread
from shop_app import ShopApp

from pytest_netbench import (
    FlowError,
    LoadResult,
    SpecError,
    ThinkTime,
    flow,
    flow_async,
    think,
)
from pytest_netbench._errors import FlowTraceback

FLOW_LOOPS = ("uvloop", "asyncio", "trio")
CLIENTS = ("httpx", "lean")
Consistent = Callable[[LoadResult], LoadResult]


@pytest.fixture
def shop() -> Iterator[tuple[ServerThread, ShopApp]]:
    app = ShopApp()
    with ServerThread(app) as server:
        yield server, app


def login_step(user: str = "u1") -> dict[str, Any]:
    return {"json": {"user": user, "pw": "x"}, "extensions": {"netbench_step": "login"}}


async def shopper(client: httpx.AsyncClient) -> None:
    r = await client.post("/login", **login_step())
    auth = {"Authorization": f"Bearer {r.json()['token']}"}
    (await client.get("/items", headers=auth)).raise_for_status()
    (await client.post("/orders", headers=auth, json={"item": 1})).raise_for_status()


def assert_steps_consistent(result: LoadResult) -> None:
    for name, step in result.by_request.items():
        assert step.sent == step.ok + step.errors_total + step.in_flight, name
    assert sum(s.sent for s in result.by_request.values()) == result.sent
    assert sum(s.ok for s in result.by_request.values()) == result.ok
    sessions = result.sessions
    assert sessions is not None
    assert sessions.started == sessions.completed + sessions.failed + sessions.in_progress
    assert sessions.failed == sum(sessions.failed_at.values())
    assert sessions.failed == sum(sessions.failure_kinds.values())


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("loop", FLOW_LOOPS)
def test_each_step_counted_exactly_and_credentials_carried(
    shop: tuple[ServerThread, ShopApp], loop: str, client: str, consistent: Consistent
) -> None:
    server, app = shop
    r = consistent(flow(shopper, server.url, users=4, sessions=24, loop=loop, client=client))
    assert_steps_consistent(r)
    assert list(r.by_request) == ["login", "GET /items", "POST /orders"]
    for step in r.by_request.values():
        assert (step.sent, step.ok, step.errors_total, step.in_flight) == (24, 24, 0, 0)
    assert r.by_request["POST /orders"].status_codes == {201: 24}
    assert (r.sent, r.ok, r.errors_total) == (72, 72, 0)
    assert r.sessions is not None
    assert (r.sessions.started, r.sessions.completed, r.sessions.failed) == (24, 24, 0)
    assert r.sessions.duration.count == 24
    # The cookie and the token of each login went with every protected request.
    assert app.counts.without_credentials == 0 and app.counts.rejected == 0
    assert (app.counts.logins, app.counts.orders) == (24, 24)
    # One keep-alive connection per virtual user.
    assert app.counts.connections == 4


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("loop", FLOW_LOOPS)
def test_a_rejected_token_fails_each_session_at_its_step(
    shop: tuple[ServerThread, ShopApp], loop: str, client: str, consistent: Consistent
) -> None:
    server, app = shop

    async def mallory(client: httpx.AsyncClient) -> None:
        r = await client.post("/login", **login_step("mallory"))
        auth = {"Authorization": f"Bearer {r.json()['token']}"}
        r = await client.get("/items", headers=auth, extensions={"netbench_step": "items"})
        r.raise_for_status()
        await client.post("/orders", headers=auth)

    r = consistent(flow(mallory, server.url, users=3, sessions=9, loop=loop, client=client))
    assert_steps_consistent(r)
    assert r.by_request["login"].ok == 9
    assert r.by_request["items"].errors == {**r.by_request["items"].errors, "status": 9}
    assert "POST /orders" not in r.by_request  # never reached
    assert r.sessions is not None
    assert (r.sessions.completed, r.sessions.failed) == (0, 9)
    assert r.sessions.failed_at == {"items": 9}
    assert r.sessions.failure_kinds == {"status": 9}
    assert "HTTP 401" in r.sessions.failure_samples["status"]
    assert app.counts.rejected == 9 and app.counts.without_credentials == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_a_flow_that_raises_every_session_stops_early_with_its_traceback(
    shop: tuple[ServerThread, ShopApp], client: str
) -> None:
    server, app = shop

    async def buggy(client: httpx.AsyncClient) -> None:
        r = await client.post("/login", **login_step())
        r.json()["no such field"]

    with pytest.raises(FlowError, match="after step 'login'") as caught:
        flow(buggy, server.url, users=2, duration=60, client=client)
    assert isinstance(caught.value.__cause__, KeyError)
    assert "bug in the flow" in str(caught.value)
    assert app.counts.logins < 50  # stopped after the first sessions, not after 60 s


def test_a_flow_bug_in_some_sessions_is_no_server_error(
    shop: tuple[ServerThread, ShopApp], consistent: Consistent
) -> None:
    server, _ = shop
    calls = 0

    async def sometimes(client: httpx.AsyncClient) -> None:
        nonlocal calls
        calls += 1
        await client.post("/login", **login_step())
        if calls % 2 == 0:
            raise RuntimeError("flow bug")

    r = consistent(flow(sometimes, server.url, users=1, sessions=10, loop="asyncio"))
    assert_steps_consistent(r)
    assert (r.ok, r.errors_total) == (10, 0)
    assert r.sessions is not None
    assert r.sessions.failure_kinds == {"flow": 5}
    assert r.sessions.flow_errors == 5
    assert r.sessions.failed_at == {"login": 5}
    assert "RuntimeError: flow bug" in r.sessions.failure_samples["flow"]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("loop", FLOW_LOOPS)
def test_a_connection_closed_unanswered_is_a_reset_at_its_step(
    shop: tuple[ServerThread, ShopApp], loop: str, client: str, consistent: Consistent
) -> None:
    server, _ = shop

    async def dropped(client: httpx.AsyncClient) -> None:
        await client.post("/login", **login_step())
        await client.get("/drop")

    r = consistent(flow(dropped, server.url, users=2, sessions=6, loop=loop, client=client))
    assert_steps_consistent(r)
    assert r.by_request["GET /drop"].errors["reset"] == 6
    assert r.by_request["login"].ok == 6
    assert r.sessions is not None
    assert r.sessions.failed_at == {"GET /drop": 6}
    assert r.sessions.failure_kinds == {"reset": 6}


def test_a_timed_load_ends_with_sessions_in_progress_counted(
    shop: tuple[ServerThread, ShopApp], consistent: Consistent
) -> None:
    server, _ = shop

    async def browsing(client: httpx.AsyncClient) -> None:
        await client.post("/login", **login_step())
        await think(ThinkTime.uniform(0.01, 0.03))
        await client.get("/items")  # no token: 401, counted, the flow goes on

    r = consistent(flow(browsing, server.url, users=3, duration=0.8, warmup=0.2))
    assert_steps_consistent(r)
    assert r.sessions is not None and r.sessions.started > 0
    items = r.by_request["GET /items"]
    assert items.ok == 0 and items.errors["status"] == items.status_codes.get(401, 0)
    assert r.sessions.failed == 0  # a 401 the flow does not raise on fails no session
    assert r.to_dict()["sessions"]["started"] == r.sessions.started
    assert LoadResult.from_dict(r.to_dict()).sessions == r.sessions


def test_unreachable_target_is_refused_like_a_load(consistent: Consistent) -> None:
    from pytest_netbench import TargetUnreachableError

    with ServerThread(ShopApp()) as server:
        url = server.url  # a port nothing listens on once the server is gone
    with pytest.raises(TargetUnreachableError):
        flow(shopper, url, users=2, sessions=4)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"users": 0}, "users must be a whole number"),
        ({"sessions": 0}, "sessions must be a whole number"),
        ({"duration": -1}, "duration"),
        ({"client": "requests"}, "client must be one of httpx, lean"),
    ],
)
def test_bad_arguments_are_refused_before_any_socket(
    arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        flow(shopper, "http://127.0.0.1:9/", **arguments)


def test_a_plain_function_is_refused_with_how_to_write_a_flow() -> None:
    def not_async(client: httpx.AsyncClient) -> None: ...

    with pytest.raises(SpecError, match="async def shopper"):
        flow(not_async, "http://127.0.0.1:9/")  # type: ignore[arg-type]


def test_think_times_draw_within_their_bounds() -> None:
    import random

    rng = random.Random(1)
    assert ThinkTime.constant(0.5).draw(rng) == 0.5
    draws = [ThinkTime.uniform(1, 2).draw(rng) for _ in range(200)]
    assert all(1 <= d <= 2 for d in draws)
    mean = sum(ThinkTime.exponential(1.0).draw(rng) for _ in range(2000)) / 2000
    assert 0.8 < mean < 1.2
    with pytest.raises(SpecError, match="at least low"):
        ThinkTime.uniform(2, 1)
    with pytest.raises(SpecError, match="0 or more"):
        ThinkTime.constant(-1)


@pytest.mark.parametrize("loop", ["auto", "trio"])
def test_a_stop_request_ends_the_flow_with_what_it_measured(
    shop: tuple[ServerThread, ShopApp], loop: str, consistent: Consistent
) -> None:
    from pytest_netbench import StopSignal

    server, _ = shop
    stop = StopSignal()
    done = 0

    async def until_asked(client: httpx.AsyncClient) -> None:
        nonlocal done
        await client.post("/login", **login_step())
        done += 1
        if done == 20:
            stop.request()
        await think(0.01)

    r = consistent(flow(until_asked, server.url, users=2, duration=120, stop=stop, loop=loop))
    assert r.interrupted
    assert_steps_consistent(r)
    assert r.sessions is not None and r.sessions.started >= 20


def test_a_managed_server_is_sampled_during_the_flow(consistent: Consistent) -> None:
    import sys

    from pytest_netbench import Server

    async def index(client: httpx.AsyncClient) -> None:
        (await client.get("/")).raise_for_status()

    command = [sys.executable, "-m", "http.server", "{port}", "--bind", "127.0.0.1"]
    with Server(command) as managed:
        r = consistent(flow(index, managed.url, users=2, sessions=20, server=managed))
    assert r.by_request["GET /"].ok == 20
    assert r.server is not None and r.server.cpu_s >= 0


def test_the_lean_client_sends_what_httpx_would(
    shop: tuple[ServerThread, ShopApp], consistent: Consistent
) -> None:
    """Query parameters, form and raw bodies, default headers, a cookie the flow sets and
    the answer's headers and text, on the lean client."""
    server, app = shop
    seen: list[Any] = []

    async def lean_details(client: Any) -> None:
        client.headers["X-Flow"] = "lean"
        r = await client.post("/login", json={"user": "u2", "pw": "x"})
        assert r.is_success and r.headers["content-type"] == "application/json"
        assert "sid" in client.cookies
        auth = {"Authorization": f"Bearer {r.json()['token']}"}
        r = await client.get("/items", params={"page": 2}, headers=auth)
        seen.append((r.status_code, r.text[:1]))
        r = await client.get(server.url + "/items", headers=auth)
        seen.append(r.status_code)
        r = await client.post("/orders", data={"item": 1}, headers=auth)
        seen.append(r.raise_for_status().status_code)

    r = consistent(flow(lean_details, server.url, users=1, sessions=3, client="lean"))
    assert_steps_consistent(r)
    assert r.sessions is not None and r.sessions.completed == 3, r.sessions
    assert seen == [(200, "["), 200, 201] * 3
    assert app.counts.without_credentials == 0
    assert app.counts.by_route["GET /items"] == 6


def test_the_lean_client_refuses_another_origin(shop: tuple[ServerThread, ShopApp]) -> None:
    server, _ = shop

    async def elsewhere(client: Any) -> None:
        await client.get("http://127.0.0.2:1/")

    with pytest.raises(FlowError) as caught:
        flow(elsewhere, server.url, users=1, sessions=2, client="lean")
    assert "sends only to the URL it was given" in str(caught.value.__cause__)


@pytest.mark.parametrize("client", CLIENTS)
def test_several_flows_by_weight_share_the_sessions(
    shop: tuple[ServerThread, ShopApp], client: str, consistent: Consistent
) -> None:
    server, _ = shop

    async def browse(client: Any) -> None:
        r = await client.post("/login", **login_step())
        await client.get("/items", headers={"Authorization": f"Bearer {r.json()['token']}"})

    async def buy(client: Any) -> None:
        r = await client.post("/login", **login_step())
        await client.post("/orders", headers={"Authorization": f"Bearer {r.json()['token']}"})

    flows = {browse: 3, buy: 1}
    r = consistent(flow(flows, server.url, users=2, sessions=400, client=client))
    assert_steps_consistent(r)
    assert r.sessions is not None
    by_flow = r.sessions.by_flow
    browsed, bought = by_flow[browse.__qualname__], by_flow[buy.__qualname__]
    assert browsed + bought == 400 == r.by_request["login"].ok
    assert r.by_request["GET /items"].ok == browsed
    assert r.by_request["POST /orders"].ok == bought
    assert 0.6 < browsed / 400 < 0.9  # three in four, drawn


@pytest.mark.parametrize(
    ("flows", "message"),
    [
        ({}, "need at least one"),
        ({shopper: 0}, "must be a whole number of at least 1"),
        ({shopper: 1, print: 1}, "a flow is an async function"),
    ],
)
def test_bad_weights_are_refused_before_any_socket(flows: Any, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        flow(flows, "http://127.0.0.1:9/")


@pytest.mark.parametrize("loop", FLOW_LOOPS)
def test_the_open_model_starts_each_session_due(
    shop: tuple[ServerThread, ShopApp], loop: str, consistent: Consistent
) -> None:
    server, app = shop
    r = consistent(
        flow(shopper, server.url, rate=100, sessions=30, users=3, loop=loop, client="lean")
    )
    assert_steps_consistent(r)
    assert r.mode == "open" and r.uncorrected is not None
    assert r.sessions is not None
    assert (r.sessions.started, r.sessions.completed, r.sessions.not_started) == (30, 30, 0)
    for step in r.by_request.values():
        assert (step.sent, step.ok) == (30, 30)
    assert app.counts.without_credentials == 0


def test_sessions_a_full_pool_could_not_start_count_against_the_server(
    shop: tuple[ServerThread, ShopApp], consistent: Consistent
) -> None:
    """One user, sessions due ten times faster than it can run them: the sessions that
    waited carry their delay into every request's corrected latency, those never started
    are lower bounds, and the result says the rate was not achieved."""
    server, _ = shop

    async def slow(client: Any) -> None:
        await client.post("/login", **login_step())
        await think(0.1)

    r = consistent(flow(slow, server.url, rate=100, duration=1.0, users=1, max_users=1))
    assert_steps_consistent(r)
    assert r.sessions is not None and r.sessions.not_started > 0
    assert r.generator.unsent == r.sessions.not_started
    assert r.uncorrected is not None and r.p99_ms > r.uncorrected.p99_ms
    assert "rate_not_achieved" in r.invalid_causes
    said = r.invalid_reasons[r.invalid_causes.index("rate_not_achieved")]
    assert "scheduled sessions" in said and "raise max_users" in said, said


async def two_gets(client: Any) -> None:
    await client.get("/a", extensions={"netbench_step": "first"})
    await client.get("/b", extensions={"netbench_step": "second"})


@pytest.mark.parametrize("loop", ["auto", "trio"])
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ({"malformed_every": 3}, "protocol"),
        ({"reset_every": 2}, "reset"),
        ({"close_every": 2}, "reset"),
    ],
)
def test_a_server_that_answers_garbage_or_resets_is_measured_at_its_step(
    http_server: Any,
    client: str,
    fault: dict[str, int],
    kind: str,
    loop: str,
    consistent: Consistent,
) -> None:
    server, _ = http_server(**fault)
    r = consistent(flow(two_gets, server.url, users=2, sessions=12, client=client, loop=loop))
    assert_steps_consistent(r)
    assert r.errors[kind] > 0 and r.errors_total == r.errors[kind]
    assert r.sessions is not None
    assert r.sessions.failure_kinds == {kind: r.sessions.failed}
    assert r.sessions.failed == r.errors[kind]  # each failed request ended its session
    assert r.sessions.flow_errors == 0  # never the flow's fault


@pytest.mark.parametrize("loop", ["auto", "trio"])
@pytest.mark.parametrize("client", CLIENTS)
def test_a_server_that_stalls_is_a_timeout_at_its_step(
    http_server: Any, client: str, loop: str, consistent: Consistent
) -> None:
    server, _ = http_server(stall_every=2)
    r = consistent(
        flow(two_gets, server.url, users=2, sessions=4, timeout=0.5, client=client, loop=loop)
    )
    assert_steps_consistent(r)
    assert r.errors["timeout"] > 0 and r.errors_total == r.errors["timeout"]
    assert r.sessions is not None and r.sessions.failure_kinds == {"timeout": r.sessions.failed}


def test_progress_reports_come_while_the_flow_runs(
    shop: tuple[ServerThread, ShopApp], consistent: Consistent
) -> None:
    from pytest_netbench import LoadProgress

    server, _ = shop
    reports: list[LoadProgress] = []
    r = consistent(flow(shopper, server.url, users=2, duration=2.0, progress=reports.append))
    assert reports, "no progress report in 2 s"
    completed = [report.completed for report in reports]
    assert completed == sorted(completed) and completed[-1] <= r.sent


@pytest.mark.parametrize("client", CLIENTS)
def test_requests_a_session_makes_at_once_go_one_after_another(
    shop: tuple[ServerThread, ShopApp], client: str, consistent: Consistent
) -> None:
    import asyncio

    server, app = shop

    async def at_once(client: Any) -> None:
        r = await client.post("/login", **login_step())
        auth = {"Authorization": f"Bearer {r.json()['token']}"}
        pages = await asyncio.gather(*(client.get("/items", headers=auth) for _ in range(3)))
        assert [page.status_code for page in pages] == [200, 200, 200]

    r = consistent(flow(at_once, server.url, users=2, sessions=6, client=client))
    assert_steps_consistent(r)
    assert r.by_request["GET /items"].ok == 18
    assert r.sessions is not None and r.sessions.completed == 6
    assert app.counts.connections == 2  # one connection per user, never more


@pytest.mark.parametrize("client", CLIENTS)
def test_flows_split_over_two_worker_processes(
    shop: tuple[ServerThread, ShopApp], client: str, consistent: Consistent
) -> None:
    import shop_flows

    server, app = shop
    flows = {shop_flows.shopper: 1, shop_flows.browser: 1}
    r = consistent(flow(flows, server.url, users=4, sessions=21, workers=2, client=client))
    assert_steps_consistent(r)
    assert r.generator.workers == 2
    assert r.sessions is not None
    assert (r.sessions.started, r.sessions.completed, r.sessions.users) == (21, 21, 4)
    shoppers = r.sessions.by_flow.get("shopper", 0)
    assert shoppers + r.sessions.by_flow.get("browser", 0) == 21
    assert r.by_request["login"].ok == r.by_request["POST /orders"].ok == shoppers
    items = r.by_request["GET /items"]  # both list the items; the browser has no token
    assert (items.sent, items.ok, items.errors["status"]) == (21, shoppers, 21 - shoppers)
    assert app.counts.without_credentials == 21 - shoppers


def test_flow_async_runs_two_worker_processes_while_the_loop_stays_free(
    shop: tuple[ServerThread, ShopApp], consistent: Consistent
) -> None:
    import shop_flows

    server, app = shop

    async def main() -> tuple[LoadResult, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        try:
            run = flow_async(
                shop_flows.shopper, server.url, users=4, sessions=20, workers=2, client="lean"
            )
            return await run, ticks
        finally:
            ticker.cancel()

    r, ticks = asyncio.run(main())
    consistent(r)
    assert r.generator.workers == 2 and ticks > 0  # the loop ran its other task meanwhile
    assert r.sessions is not None
    assert (r.sessions.started, r.sessions.completed) == (20, 20)
    assert r.by_request["login"].ok == r.by_request["POST /orders"].ok == 20
    assert app.counts.logins == 20 and app.counts.without_credentials == 0


def test_a_flow_that_raises_in_every_session_of_two_workers_shows_its_traceback(
    shop: tuple[ServerThread, ShopApp],
) -> None:
    import shop_flows

    server, app = shop
    with pytest.raises(FlowError, match="after step 'login': KeyError") as caught:
        flow(shop_flows.misreader, server.url, users=4, duration=60, workers=2, client="lean")
    assert "bug in the flow" in str(caught.value)
    cause = caught.value.__cause__
    assert isinstance(cause, FlowTraceback)  # the worker's traceback, as text
    shown = "".join(traceback.format_exception(caught.value))
    assert 'shop_flows.py", line' in shown and "in misreader" in shown
    assert 'r.json()["tokn"]' in shown and "KeyError: 'tokn'" in shown
    assert app.counts.logins < 100  # both workers stopped after their first sessions


def test_a_flow_workers_cannot_import_is_refused_before_any_socket() -> None:
    async def local(client: Any) -> None: ...

    with pytest.raises(SpecError, match="must be a function at the top of a module"):
        flow(local, "http://127.0.0.1:9/", users=2, workers=2)


def test_a_flow_of_python_c_is_refused_with_workers_before_any_socket() -> None:
    # Its __main__ has no file, so no spawned worker could import the flow from it.
    program = (
        "from pytest_netbench import SpecError, flow\n"
        "async def visit(client): ...\n"
        "try:\n"
        "    flow(visit, 'http://127.0.0.1:9/', users=2, workers=2)\n"
        "except SpecError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert "visit was defined in an interactive session (or python -c)" in done.stdout
    assert "put it in a module" in done.stdout


def test_stages_move_the_rate_of_sessions(
    shop: tuple[ServerThread, ShopApp], consistent: Consistent
) -> None:
    """From 20 to 60 sessions a second over one second: about 40 fall due in it (the
    schedule's arithmetic, not a measured rate)."""
    server, _ = shop
    r = consistent(flow(shopper, server.url, rate=20, stages=[(1.0, 60)], users=4, client="lean"))
    assert_steps_consistent(r)
    assert r.sessions is not None
    due = r.sessions.started + r.sessions.not_started
    assert 34 <= due <= 42, due


@pytest.mark.parametrize("loop", ["auto", "trio"])
def test_stages_without_a_rate_move_the_number_of_users(
    shop: tuple[ServerThread, ShopApp], loop: str, consistent: Consistent
) -> None:
    """Users climb from 1 to 4, then fall to 1: a user the ramp retires ends its session
    first, so no session is cut and the counts hold; four users at the peak."""
    server, app = shop

    async def paced(client: Any) -> None:
        await shopper(client)
        await think(0.02)

    stages = [(0.4, 4), (0.8, 4), (0.3, 1)]
    r = consistent(flow(paced, server.url, users=1, stages=stages, loop=loop, client="lean"))
    assert_steps_consistent(r)
    assert r.sessions is not None
    assert r.sessions.users == 4 == r.generator.connections_peak
    assert r.sessions.failed == 0 and r.errors_total == 0
    assert app.counts.without_credentials == 0


def test_session_figures_are_metrics_for_matrices_and_gates(
    shop: tuple[ServerThread, ShopApp],
) -> None:
    from pytest_netbench import metric_value
    from pytest_netbench._compare.metrics import check_metrics, higher_is_better, is_count

    server, _ = shop
    r = flow(shopper, server.url, users=2, sessions=6, client="lean")
    assert metric_value(r, "sessions.completed") == 6
    assert metric_value(r, "sessions.p99_ms") > 0
    assert metric_value(r, "sessions.duration.count") == 6
    assert metric_value(r, "sessions.failed_at.login") == 0  # no session failed there
    assert higher_is_better("sessions.completed") and not higher_is_better("sessions.failed")
    assert is_count("sessions.failed") and not is_count("sessions.p99_ms")
    assert check_metrics(["sessions.completed", "sessions.p99_ms"])
    with pytest.raises(SpecError, match=r"unknown metric 'sessions\.compleeted'"):
        check_metrics(["sessions.compleeted"])


def test_a_flow_takes_cpus_as_every_load_does() -> None:
    # The users' loop runs on the cores asked for (issue 30: flow(..., cpus=) was refused).
    # The flow sends nothing, so no server is needed; port 9 on loopback is never reached.
    import os
    import threading

    from pytest_netbench import flow

    cores: set[tuple[int, ...]] = set()

    async def note_the_cores(client: object) -> None:
        cores.add(tuple(sorted(os.sched_getaffinity(threading.get_native_id()))))

    available = sorted(os.sched_getaffinity(0))
    r = flow(note_the_cores, "http://127.0.0.1:9/", users=1, sessions=3, cpus=[available[-1]])
    assert r.sessions is not None and r.sessions.completed == 3
    assert cores == {(available[-1],)}
