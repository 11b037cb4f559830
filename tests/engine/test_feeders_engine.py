"""Loads whose requests are rendered from feeders, sent to a real server that keeps every
request it read: each row of a file once (also across workers), headers and bodies as
rendered, a mix's figures per kind adding up to the load's, on every loop; a feeder that
runs out ends the load, one told to fail fails it, and a row that renders no request
stops it with the reason."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from recording_server import RecordingApp
from servers import ServerThread

from pytest_netbench import FeederExhausted, LoadResult, Request, SpecError, feeders, http_load

PLANS = ("free", "pro", "team")


def write_users(path: Path, rows: int) -> Path:
    """A CSV of ``rows`` users: id (from 1), name, plan."""
    with path.open("w") as file:
        file.write("id,name,plan\n")
        file.writelines(f"{i},user{i},{PLANS[i % 3]}\n" for i in range(1, rows + 1))
    return path


@pytest.fixture
def recording() -> Iterator[tuple[ServerThread, RecordingApp]]:
    app = RecordingApp()
    with ServerThread(app) as server:
        yield server, app


def assert_kinds_add_up(result: LoadResult) -> None:
    """Each kind keeps the load's invariant, and the kinds sum to the load."""
    kinds = list(result.by_request.values())
    for kind in kinds:
        assert kind.sent == kind.ok + kind.errors_total + kind.in_flight, kind
    assert sum(k.sent for k in kinds) == result.sent
    assert sum(k.ok for k in kinds) == result.ok
    assert sum(k.in_flight for k in kinds) == result.in_flight
    for error in result.errors:
        assert sum(k.errors.get(error, 0) for k in kinds) == result.errors[error]


# Closed loop (the fused keep-alive path on asyncio), closed without keep-alive (the
# general path), and open loop (a claim per due request).
MODES: dict[str, dict[str, Any]] = {
    "closed": {"connections": 4},
    "closed-no-keepalive": {"connections": 3, "keepalive": False},
    "open": {"rate": 3000.0, "connections": 4},
}


@pytest.mark.parametrize("mode", MODES)
def test_each_row_once_with_headers_and_bodies_as_rendered(
    recording: tuple[ServerThread, RecordingApp],
    tmp_path: Path,
    loop: str,
    mode: str,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    server, app = recording
    users = write_users(tmp_path / "users.csv", 300)
    result = consistent(
        http_load(
            server.url + "/users/${user.id}?n=${n}",
            method="POST",
            headers={"X-Plan": "${user.plan}", "Content-Type": "application/json"},
            body='{"name": "${user.name}", "n": ${n}}',
            feeders={"user": feeders.csv(users, on_end="stop"), "n": feeders.count(start=1)},
            duration=30.0,  # a bound: the 300 rows end it long before
            loop=loop,
            **MODES[mode],
        )
    )
    # The load ended when the rows ran out: every row sent once, every one answered.
    assert (result.sent, result.ok, result.errors_total, result.in_flight) == (300, 300, 0, 0)
    assert result.generator.feeders_ran_out  # an end, not an error
    assert result.duration_s < 30.0
    assert len(app.received) == 300
    seen_ids = Counter()
    for request in app.received:
        user_id = int(request.path.split(b"/")[2].split(b"?")[0])
        seen_ids[user_id] += 1
        n = int(request.path.split(b"?n=")[1])
        assert request.method == b"POST"
        assert request.headers[b"x-plan"] == PLANS[user_id % 3].encode()
        assert json.loads(request.body) == {"name": f"user{user_id}", "n": n}
        assert request.headers[b"content-length"] == str(len(request.body)).encode()
    assert seen_ids == Counter(range(1, 301))  # each row exactly once
    # In one request, both uses of a feeder take the same value: the path's n is the body's.
    assert sorted(json.loads(r.body)["n"] for r in app.received) == list(range(1, 301))
    assert result.bytes_written == sum(r.size for r in app.received)


def test_a_mix_fed_from_feeders_counts_each_kind_on_every_loop(
    recording: tuple[ServerThread, RecordingApp],
    tmp_path: Path,
    loop: str,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    server, app = recording
    orders = tmp_path / "orders.jsonl"
    orders.write_text(
        "".join(json.dumps({"sku": f"s{i}", "qty": i % 5 + 1}) + "\n" for i in range(50))
    )
    mix = [
        Request("GET", "/items/${item}", name="item", weight=3),
        Request("POST", "/orders", body="${order}", name="order"),
        Request("GET", "/health", name="health"),
    ]
    result = consistent(
        http_load(
            server.url,
            mix=mix,
            mix_order="weighted",
            feeders={"item": feeders.count(start=100), "order": feeders.jsonl(orders)},
            requests=500,
            connections=3,
            loop=loop,
        )
    )
    by = result.by_request
    assert (by["item"].sent, by["order"].sent, by["health"].sent) == (300, 100, 100)
    assert result.ok == 500 and result.errors_total == 0
    assert_kinds_add_up(result)
    paths = app.paths()
    assert paths[b"/orders"] == 100 and paths[b"/health"] == 100
    items = sorted(int(p.split(b"/")[2]) for p in paths if p.startswith(b"/items/"))
    assert items == list(range(100, 400))  # the counter: each value once, in no gap
    bodies = [json.loads(r.body) for r in app.received if r.path == b"/orders"]
    assert bodies == [{"sku": f"s{i % 50}", "qty": i % 50 % 5 + 1} for i in range(100)]
    assert result.bytes_written == sum(r.size for r in app.received)


def test_each_row_once_across_two_workers(
    recording: tuple[ServerThread, RecordingApp],
    tmp_path: Path,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    server, app = recording
    users = write_users(tmp_path / "users.csv", 301)  # odd: the shares differ by one
    result = consistent(
        http_load(
            server.url + "/users/${user.id}",
            feeders={"user": feeders.csv(users, order="shuffle", on_end="stop")},
            duration=30.0,
            connections=4,
            workers=2,
        )
    )
    assert (result.sent, result.ok) == (301, 301)
    assert result.generator.feeders_ran_out
    ids = Counter(int(r.path.split(b"/")[2]) for r in app.received)
    assert ids == Counter(range(1, 302))  # no row twice, none left out


def test_a_duration_load_that_wraps_keeps_its_invariants_by_kind(
    recording: tuple[ServerThread, RecordingApp],
    tmp_path: Path,
    loop: str,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    server, app = recording
    users = write_users(tmp_path / "users.csv", 7)
    mix = [
        Request("GET", "/u/${user.id}", name="user"),
        Request("GET", "/r/${r}", name="random", weight=2),
    ]
    result = consistent(
        http_load(
            server.url,
            mix=mix,
            mix_order="weighted",
            feeders={"user": feeders.csv(users), "r": feeders.randint(1, 9)},
            duration=0.6,
            warmup=0.1,
            connections=4,
            pipeline=2,
            loop=loop,
        )
    )
    assert result.ok > 0 and result.in_flight > 0
    assert not result.generator.feeders_ran_out  # wrapped: it ran to its duration
    assert_kinds_add_up(result)
    users_seen = {int(p.split(b"/")[2]) for p in app.paths() if p.startswith(b"/u/")}
    assert users_seen == set(range(1, 8))  # the 7 rows, over and over
    assert {int(p.split(b"/")[2]) for p in app.paths() if p.startswith(b"/r/")} <= set(range(1, 10))


def test_a_feeder_told_to_fail_fails_the_load(
    recording: tuple[ServerThread, RecordingApp], tmp_path: Path, loop: str
) -> None:
    server, app = recording
    users = write_users(tmp_path / "users.csv", 40)
    with pytest.raises(FeederExhausted, match="ran out of rows"):
        http_load(
            server.url + "/u/${user.id}",
            feeders={"user": feeders.csv(users, on_end="error")},
            requests=100,
            connections=2,
            loop=loop,
        )
    # Exactly as many rows as the load asks for: it never runs out.
    app.received.clear()
    result = http_load(
        server.url + "/u/${user.id}",
        feeders={"user": feeders.csv(users, on_end="error")},
        requests=40,
        connections=2,
        loop=loop,
    )
    assert result.ok == 40 and len(app.received) == 40


def test_a_row_that_renders_no_request_stops_the_load_with_the_reason(
    recording: tuple[ServerThread, RecordingApp], tmp_path: Path, loop: str
) -> None:
    server, _ = recording
    users = write_users(tmp_path / "users.csv", 100)
    # Row 70's plan holds a line break, which would inject a header.
    text = users.read_text()
    assert "\n70,user70,pro\n" in text
    users.write_text(text.replace("\n70,user70,pro\n", '\n70,user70,"p\nro"\n'))
    with pytest.raises(SpecError, match="line break"):
        http_load(
            server.url + "/u/${user.id}",
            headers={"X-Plan": "${user.plan}"},
            feeders={"user": feeders.csv(users)},
            requests=200,
            connections=2,
            loop=loop,
        )


def test_the_client_delay_probe_sends_the_first_rendered_request(
    recording: tuple[ServerThread, RecordingApp], consistent: Callable[[LoadResult], LoadResult]
) -> None:
    server, app = recording
    result = consistent(
        http_load(
            server.url + "/items/${id}",
            feeders={"id": feeders.count(start=1000)},
            duration=0.6,
            connections=1,
            probe_every=0.1,
        )
    )
    probe = result.probe
    assert probe is not None and probe.sent > 0 and probe.errors_total == 0
    # The probe's requests are share 0's first, again and again: /items/1000 beside the
    # load's (the probe's figures count those inside the window only).
    paths = app.paths()
    assert paths.pop(b"/items/1000") >= 1 + probe.sent
    assert set(paths.values()) == {1}  # the load's own: each value of the counter once


def test_a_worker_process_whose_feeder_runs_out_fails_the_load_with_feeder_exhausted(
    recording: tuple[ServerThread, RecordingApp], tmp_path: Path
) -> None:
    server, _ = recording
    users = write_users(tmp_path / "users.csv", 30)
    with pytest.raises(FeederExhausted, match=r"share [01] of 2 sent all of its rows"):
        http_load(
            server.url + "/u/${user.id}",
            feeders={"user": feeders.csv(users, on_end="error")},
            requests=100,
            workers=2,
        )


# A load of 2,000 requests from a 1,000,000-row file, run in a fresh interpreter that
# measures, across the load, the bytes it read (``rchar``: file reads; the asyncio loop
# and the test server receive with recv(), which it does not count) and its anonymous
# memory (the heap: a file's pages are the page cache's, shared through mmap). A warm-up
# load first imports whatever a load imports late.
BIG_FILE_LOAD = """
import sys
sys.path.insert(0, sys.argv[3])
from recording_server import RecordingApp
from servers import ServerThread
from pytest_netbench import feeders, http_load

def figures():
    io = dict(line.split(":") for line in open("/proc/self/io"))
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(io["rchar"]), int(status["RssAnon"].split()[0])

path, order = sys.argv[1], sys.argv[2]
app = RecordingApp()
with ServerThread(app) as server:
    http_load(server.url + "/${n}", feeders={"n": feeders.count()}, requests=50, loop="asyncio")
    app.received.clear()
    read, anon = figures()
    result = http_load(
        server.url + "/u/${user.id}",
        feeders={"user": feeders.csv(path, order=order, on_end="stop")},
        requests=2000,
        connections=4,
        loop="asyncio",
    )
    read_after, anon_after = figures()
ids = {int(r.path.split(b"/")[2]) for r in app.received}
print(result.ok, len(ids), max(ids), read_after - read, anon_after - anon)
"""


@pytest.fixture(scope="module")
def million_users(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "users.csv"
    with path.open("w") as file:
        file.write("id,email,name\n")
        file.writelines(f"{i},user{i}@example.com,User {i}\n" for i in range(1, 1_000_001))
    return path


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("order", ["sequential", "shuffle"])
def test_a_million_row_file_is_not_read_whole_for_a_short_load(
    million_users: Path, order: str
) -> None:
    engine_tests = str(Path(__file__).parent)
    out = subprocess.run(
        [sys.executable, "-c", BIG_FILE_LOAD, str(million_users), order, engine_tests],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    ok, distinct, highest, read, anon_kb = map(int, out.stdout.split())
    assert (ok, distinct) == (2000, 2000)  # 2,000 rows, none twice
    size = million_users.stat().st_size  # about 38 MB
    if order == "sequential":
        assert highest == 2000  # the first 2,000 rows, in file order
        # Streamed a chunk at a time: the rows read are the few thousand it sent, not the
        # million; and none of them is held.
        rows_read = read * 1_000_000 // size
        assert rows_read < 50_000, f"{rows_read:,} rows read"
        assert anon_kb < 8_000, f"{anon_kb:,} kB held"
    else:
        # Shuffled: read once to find where each row starts (8 bytes a row kept), the rows
        # themselves read through mmap; the file's 38 MB are never on the heap.
        assert anon_kb < 16_000, f"{anon_kb:,} kB held"
