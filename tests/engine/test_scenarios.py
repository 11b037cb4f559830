"""Several named loads at once against one server (issue 33, scenarios): an open loop at a
set rate on one path beside a closed loop of a few connections on another, started
later. Each scenario's counts are exactly what the server saw on its paths, the total adds
them up, and an SLO on one scenario fails alone."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from servers import ServerThread

from pytest_netbench import LoadResult, Scenario, SpecError, run_scenarios
from pytest_netbench._experiment.slo import parse_slo


@dataclass
class PathsApp:
    """Answers ``/slow`` after 400 ms and everything else at once; counts the requests of
    each path."""

    seen: Counter[bytes] = field(default_factory=Counter)

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            path = head.split(b" ", 2)[1]
            self.seen[path] += 1
            if path == b"/slow":
                await asyncio.sleep(0.4)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()


@pytest.fixture
def paths() -> Iterator[tuple[ServerThread, PathsApp]]:
    app = PathsApp()
    with ServerThread(app) as server:
        yield server, app


def test_two_scenarios_at_once_each_counted_as_the_server_saw_it(
    paths: tuple[ServerThread, PathsApp],
    loop: str,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    server, app = paths
    r = run_scenarios(
        server.url,
        {
            "browse": Scenario("/items", rate=200, requests=400, loop=loop),
            "admin": Scenario("/slow", start=0.5, connections=2, requests=10, loop=loop),
        },
    )
    browse, admin = r.by_scenario["browse"], r.by_scenario["admin"]
    for result in (browse, admin):
        consistent(result)
    assert (browse.mode, admin.mode) == ("open", "closed")
    assert (browse.sent, browse.ok) == (400, 400) and app.seen[b"/items"] == 400
    assert (admin.sent, admin.ok) == (10, 10) and app.seen[b"/slow"] == 10
    # All together: the counts add up, each scenario is a request kind of the total.
    total = r.total
    assert (total.sent, total.ok, total.errors_total) == (410, 410, 0)
    assert total.latency.count == 410
    assert total.by_request["admin"].ok == 10 and total.by_request["browse"].ok == 400
    assert sum(row.ok for row in total.timeline) == 410
    # The admin scenario began half a second after browsing did, and ran alongside it.
    assert r.starts == {"browse": 0.0, "admin": 0.5}
    # An SLO on one scenario fails alone, on its result or by name in the total's.
    assert parse_slo("p99_ms < 250").evaluate(browse).passed
    assert not parse_slo("p99_ms < 250").evaluate(admin).passed
    verdict = parse_slo("by_request.browse.p99_ms < 250, by_request.admin.p99_ms < 250")
    assert [c.passed for c in verdict.evaluate(total).checks] == [True, False]


def test_a_bad_scenario_is_refused_by_name_before_any_load(
    paths: tuple[ServerThread, PathsApp],
) -> None:
    server, app = paths
    with pytest.raises(SpecError, match="scenario 'admin': unknown option 'conections'"):
        run_scenarios(
            server.url,
            {
                "browse": Scenario("/items", rate=100, requests=10),
                "admin": Scenario("/slow", conections=2),  # type: ignore[call-arg]
            },
        )
    with pytest.raises(SpecError, match="start must be seconds >= 0"):
        run_scenarios(server.url, {"a": Scenario("/", start=-1)})
    assert not app.seen  # nothing was sent


def test_scale_makes_every_scenario_and_its_start_that_much_longer(
    paths: tuple[ServerThread, PathsApp],
) -> None:
    """``--netbench-scale`` in the fixture: requests, durations and starts scaled alike."""
    server, app = paths
    r = run_scenarios(
        server.url,
        {
            "browse": Scenario("/items", connections=2, requests=100),
            "admin": Scenario("/slow", start=0.5, connections=1, requests=4),
        },
        scale=0.5,
    )
    assert (r.by_scenario["browse"].sent, r.by_scenario["admin"].sent) == (50, 2)
    assert (app.seen[b"/items"], app.seen[b"/slow"]) == (50, 2)
    assert r.starts == {"browse": 0.0, "admin": 0.25}
