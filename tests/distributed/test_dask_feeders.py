"""Requests rendered from feeders on a real Dask cluster (two worker processes): each row
of a file sent once across the shares, a fed mix counted by kind, and a feeder told to
fail failing the load with its own error."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import distributed
import pytest
from recording_server import RecordingApp
from servers import ServerThread

from pytest_netbench import FeederExhausted, LoadResult, Request, feeders, http_load


@pytest.fixture
def recording() -> Iterator[tuple[ServerThread, RecordingApp]]:
    app = RecordingApp()
    with ServerThread(app) as server:
        yield server, app


def write_users(path: Path, rows: int) -> Path:
    with path.open("w") as file:
        file.write("id,email\n")
        file.writelines(f"{i},user{i}@example.com\n" for i in range(1, rows + 1))
    return path


def test_each_row_once_across_the_clusters_shares(
    cluster: distributed.Client,
    recording: tuple[ServerThread, RecordingApp],
    tmp_path: Path,
    consistent: Callable[[LoadResult], LoadResult],
) -> None:
    server, app = recording
    users = write_users(tmp_path / "users.csv", 501)
    mix = [
        Request("GET", "/users/${user.id}", name="profile", weight=2),
        Request(
            "POST",
            "/signups",
            headers={"Content-Type": "application/json"},
            body='{"email": "${user.email}"}',
            name="signup",
        ),
    ]
    result = consistent(
        http_load(
            server.url,
            mix=mix,
            mix_order="weighted",
            feeders={"user": feeders.csv(users, order="shuffle", on_end="stop")},
            duration=30.0,  # a bound: the rows end it long before
            connections=4,
            workers=2,
            cluster=cluster,
        )
    )
    assert (result.sent, result.ok, result.in_flight) == (501, 501, 0)
    assert result.generator.feeders_ran_out
    shares = result.generator.shares
    assert sorted(s.sent for s in shares) == [250, 251]  # share i of 2 takes rows i, i+2, ...
    ids = Counter(int(r.path.split(b"/")[2]) for r in app.received if r.method == b"GET")
    emails = Counter(json.loads(r.body)["email"] for r in app.received if r.method == b"POST")
    ids.update(int(e.removeprefix("user").split("@")[0]) for e in emails)
    assert ids == Counter(range(1, 502))  # no row twice across the cluster, none left out
    by = result.by_request
    assert by["profile"].sent == sum(1 for r in app.received if r.method == b"GET")
    assert by["signup"].sent == len(emails)
    assert sum(k.sent for k in by.values()) == result.sent
    assert all(k.sent == k.ok + k.errors_total + k.in_flight for k in by.values())


def test_a_feeder_that_runs_out_with_on_end_error_fails_the_load(
    cluster: distributed.Client, recording: tuple[ServerThread, RecordingApp], tmp_path: Path
) -> None:
    server, _ = recording
    users = write_users(tmp_path / "users.csv", 30)
    with pytest.raises(FeederExhausted, match="ran out of rows"):
        http_load(
            server.url + "/users/${user.id}",
            feeders={"user": feeders.csv(users, on_end="error")},
            requests=100,
            workers=2,
            cluster=cluster,
        )
