"""A load whose feeder runs out (``on_end="stop"``) ends when the rows do, on every loop and
in every shape: one request or a mix, a request budget or a duration, closed or open loop,
keep-alive or a connection per request, pipelined, HTTP/2, a ramp, one worker or two, and
whatever the server answers. Each row is sent once, the counting rules hold, and the result
says the feeder ended it (issue 34: a fused mix on asyncio and uvloop never told the run it
could finish, so a request budget hung and a duration idled to its deadline).

The loads ask for far more than the rows (``BUDGET`` requests, or ``LONG_S`` seconds): a
load that does not end with its rows hangs (the suite's hang guard fails it) or runs to its
deadline, which ``ENDS_WITHIN_S`` tells apart from ending with the rows with room to spare
on a busy machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from h2_servers import H2App
from servers import HttpApp, HttpOptions, ServerThread

from pytest_netbench import LoadResult, Request, feeders, http_load

Check = Callable[[LoadResult], LoadResult]
ROWS = 30
BUDGET = 1_000  # far more requests than rows
LONG_S = 30.0  # far longer than the rows last
# Ending with the rows takes a fraction of a second on loopback; a load that runs to its
# deadline takes LONG_S. The bound between them is generous for a busy 2-core machine.
ENDS_WITHIN_S = 10.0

SHAPES: dict[str, dict[str, Any]] = {
    "keep-alive": {"connections": 1},
    "keep-alive-3": {"connections": 3},
    "no-keep-alive": {"connections": 2, "keepalive": False},
    "pipelined": {"connections": 2, "pipeline": 4},
    "per-connection-3": {"connections": 1, "requests_per_connection": 3},
    "open": {"rate": 600.0, "connections": 1},
    "open-3": {"rate": 600.0, "connections": 3},
    "open-no-keep-alive": {"rate": 600.0, "connections": 2, "keepalive": False},
    "h2": {"protocol": "h2", "connections": 1, "streams": 4},
    "h2-open": {"protocol": "h2", "rate": 600.0, "connections": 1, "streams": 4},
}
BOUNDS: dict[str, dict[str, Any]] = {
    "requests": {"requests": BUDGET},
    "duration": {"duration": LONG_S},
}
RAMPS: dict[str, dict[str, Any]] = {
    "closed-ramp": {"stages": [("0.2s", 2), ("30s", 2)]},
    "open-ramp": {"rate": 300.0, "stages": [("0.2s", 600), ("30s", 600)]},
}


@pytest.fixture
def rows(tmp_path: Path) -> dict[str, Path]:
    """The same ROWS rows as CSV and as JSON lines."""
    csv = tmp_path / "rows.csv"
    csv.write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in range(ROWS)))
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps({"id": i, "name": f"n{i}"}) + "\n" for i in range(ROWS)))
    return {"csv": csv, "jsonl": jsonl}


@pytest.fixture
def serve() -> Iterator[Callable[..., ServerThread]]:
    started: list[ServerThread] = []

    def start(h2: bool = False, **options: Any) -> ServerThread:
        app = H2App() if h2 else HttpApp(HttpOptions(**options))
        server = ServerThread(app).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def fed_load(url: str, rows: dict[str, Path], kinds: str, loop: str, **options: Any) -> LoadResult:
    """A load whose every request takes a row: one request fed from the CSV, or a mix of
    two kinds (both taking a row) fed from the JSON lines."""
    if kinds == "mix":
        mix = [
            Request("GET", "/a/${row.id}", name="a"),
            Request("POST", "/b", body="${row.name}", name="b"),
        ]
        fed = {"row": feeders.jsonl(rows["jsonl"], on_end="stop")}
        return http_load(url, mix=mix, feeders=fed, loop=loop, **options)
    fed = {"row": feeders.csv(rows["csv"], on_end="stop")}
    return http_load(url + "/item/${row.id}", feeders=fed, loop=loop, **options)


def assert_ended_with_the_rows(result: LoadResult, consistent: Check, errors: bool = False) -> None:
    consistent(result)
    assert result.generator.feeders_ran_out, result
    assert result.sent == ROWS, result  # each row once, and the load ended there
    assert result.in_flight == 0 and result.ok + result.errors_total == ROWS, result
    if not errors:
        assert result.ok == ROWS, result.errors
    assert result.duration_s < ENDS_WITHIN_S, result.duration_s


@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kinds", ["single", "mix"])
def test_a_load_ends_when_its_rows_run_out(
    serve: Callable[..., ServerThread],
    rows: dict[str, Path],
    consistent: Check,
    loop: str,
    kinds: str,
    shape: str,
    bound: str,
) -> None:
    server = serve(h2=SHAPES[shape].get("protocol") == "h2")
    result = fed_load(server.url, rows, kinds, loop, **SHAPES[shape], **BOUNDS[bound])
    assert_ended_with_the_rows(result, consistent)


@pytest.mark.parametrize("ramp", RAMPS)
@pytest.mark.parametrize("kinds", ["single", "mix"])
def test_a_ramp_ends_when_its_rows_run_out(
    serve: Callable[..., ServerThread],
    rows: dict[str, Path],
    consistent: Check,
    loop: str,
    kinds: str,
    ramp: str,
) -> None:
    result = fed_load(serve().url, rows, kinds, loop, **RAMPS[ramp])
    assert_ended_with_the_rows(result, consistent)


@pytest.mark.parametrize("shape", ["keep-alive", "open", "no-keep-alive"])
@pytest.mark.parametrize("kinds", ["single", "mix"])
def test_a_load_ends_with_its_rows_whatever_the_server_answers(
    serve: Callable[..., ServerThread],
    rows: dict[str, Path],
    consistent: Check,
    loop: str,
    kinds: str,
    shape: str,
) -> None:
    # Every 4th request answered 503, every 3rd connection closed with its request
    # unanswered: the rows still end the load, failures counted, none left in flight.
    server = serve(status_every=4, close_every=3)
    result = fed_load(server.url, rows, kinds, loop, **SHAPES[shape], duration=LONG_S)
    assert_ended_with_the_rows(result, consistent, errors=True)
    assert result.errors.get("status", 0) > 0


@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize("kinds", ["single", "mix"])
def test_two_workers_end_when_their_rows_run_out(
    serve: Callable[..., ServerThread],
    rows: dict[str, Path],
    consistent: Check,
    loop: str,
    kinds: str,
    bound: str,
) -> None:
    # The rows are split between the workers' shares, each row sent once in all.
    result = fed_load(serve().url, rows, kinds, loop, workers=2, **BOUNDS[bound])
    assert_ended_with_the_rows(result, consistent)


@pytest.mark.parametrize("bound", [*BOUNDS, "ramp"])
def test_a_worker_given_no_rows_at_all_ends_at_once(
    serve: Callable[..., ServerThread], tmp_path: Path, consistent: Check, loop: str, bound: str
) -> None:
    # One row for two workers: the second share's first request finds none, with no
    # connection open to notice that the run is finished (with a ramp from no connections,
    # the first request is the ramp's to take, not the start's).
    one = tmp_path / "one.csv"
    one.write_text("id\n7\n")
    fed = {"row": feeders.csv(one, on_end="stop")}
    server = serve()
    result = consistent(
        http_load(
            server.url + "/item/${row.id}",
            feeders=fed,
            loop=loop,
            workers=2,
            **(BOUNDS[bound] if bound in BOUNDS else RAMPS["closed-ramp"]),
        )
    )
    assert result.generator.feeders_ran_out
    assert (result.sent, result.ok, result.in_flight) == (1, 1, 0)
    assert result.duration_s < ENDS_WITHIN_S
