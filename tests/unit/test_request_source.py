"""A load's requests as a share sends them (``RequestSource``) and as ``preview`` shows them:
kinds in the mix's order, feeders drawn in request order, the same bytes for the same seed
whatever the batches, each row once across shares, and the end when the rows run out
(issue 18)."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pytest_netbench import Request, feeders, http_spec, preview
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.source import RequestSource
from pytest_netbench._proto.templates import request_problem

URL = "http://127.0.0.1:8080/"


def users_csv(tmp_path: Path, rows: int) -> Path:
    path = tmp_path / "users.csv"
    path.write_text("id,email\n" + "".join(f"{i},u{i}@example.com\n" for i in range(rows)))
    return path


def take_all(
    spec: LoadSpec, n: int, *, share: int = 0, batch: int = 1000
) -> tuple[list[int], list[bytes]]:
    source = RequestSource(spec, share, spec.workers)
    kinds: list[int] = []
    data: list[bytes] = []
    try:
        while len(data) < n:
            more_kinds, more = source.take(min(batch, n - len(data)))
            if not more:
                break
            kinds += more_kinds
            data += more
    finally:
        source.close()
    return kinds, data


def test_fixed_requests_are_the_same_objects_in_the_mix_order() -> None:
    spec = http_spec(
        URL, mix=[Request("GET", "/a", weight=3), Request("GET", "/b")], mix_order="weighted"
    )
    kinds, data = take_all(spec, 8, batch=3)
    assert kinds == [0, 0, 1, 0] * 2
    assert data[0] is data[1] and data[0].startswith(b"GET /a ")
    assert not RequestSource(spec).varies


def test_a_plain_load_renders_its_url_template(tmp_path: Path) -> None:
    spec = http_spec(
        "http://127.0.0.1:8080/users/${u.id}?n=${n}",
        method="PUT",
        headers={"X-Mail": "${u.email}"},
        body='{"id": ${u.id}, "n": ${n}}',
        feeders={"u": feeders.csv(users_csv(tmp_path, 3)), "n": feeders.count(start=10)},
    )
    shown = preview(spec, 4)
    assert [name for name, _ in shown] == ["PUT /users/${u.id}?n=${n}"] * 4
    assert shown[0][1] == (
        b"PUT /users/0?n=10 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: netbench\r\n"
        b'X-Mail: u0@example.com\r\nContent-Length: 18\r\n\r\n{"id": 0, "n": 10}'
    )
    assert shown[3][1].startswith(b"PUT /users/0?n=13 ")  # three rows, wrapped
    for _, request in shown:
        assert request_problem(request) == ""
        body = request.split(b"\r\n\r\n", 1)[1]
        assert re.search(rb"Content-Length: (\d+)", request)[1] == b"%d" % len(body)  # type: ignore[index]


def test_a_feeder_shared_by_kinds_is_drawn_in_request_order(tmp_path: Path) -> None:
    spec = http_spec(
        URL,
        mix=[
            Request("GET", "/users/${u.id}", name="show", weight=2),
            Request("POST", "/orders", body='{"user": ${u.id}, "n": ${n}}', name="order"),
            Request("GET", "/health", name="health"),
        ],
        mix_order="weighted",
        feeders={"u": feeders.csv(users_csv(tmp_path, 100)), "n": feeders.count()},
    )
    kinds, data = take_all(spec, 12, batch=5)
    assert kinds == [0, 1, 2, 0] * 3  # show twice as often, interleaved
    users = [re.search(rb"/users/(\d+)|\"user\": (\d+)", d) for d in data]
    ids = [int(m[1] or m[2]) for m in users if m is not None]
    assert ids == list(range(9))  # each request that uses u takes the next row
    orders = [d for d, k in zip(data, kinds, strict=True) if k == 1]
    assert [re.search(rb'"n": (\d+)', d)[1] for d in orders] == [b"0", b"1", b"2"]  # type: ignore[index]
    assert data[2] is data[6]  # the fixed kind stays one object


@pytest.mark.parametrize("batch", [1, 7, 1000])
def test_the_same_seed_renders_the_same_bytes_whatever_the_batches(
    tmp_path: Path, batch: int
) -> None:
    spec = http_spec(
        "http://127.0.0.1:8080/items/${item}",
        headers={"X-Trace": "${trace}"},
        feeders={
            "item": feeders.randint(1, 10**6),
            "trace": feeders.uuid4(),
        },
        seed=42,
    )
    reference = take_all(spec, 300)
    assert take_all(spec, 300, batch=batch) == reference
    other = http_spec(
        "http://127.0.0.1:8080/items/${item}",
        headers={"X-Trace": "${trace}"},
        feeders={"item": feeders.randint(1, 10**6), "trace": feeders.uuid4()},
        seed=43,
    )
    assert take_all(other, 300)[1] != reference[1]


@pytest.mark.parametrize("workers", [2, 3])
def test_each_row_once_across_shares_sends_every_row_exactly_once(
    tmp_path: Path, workers: int
) -> None:
    spec = http_spec(
        "http://127.0.0.1:8080/users/${u.id}",
        feeders={"u": feeders.csv(users_csv(tmp_path, 1000), order="shuffle", on_end="stop")},
        workers=workers,
    )
    sent = []
    for share in range(workers):
        _, data = take_all(spec, 10_000, share=share, batch=128)
        sent += [int(d.split(b" ")[1].rsplit(b"/", 1)[1]) for d in data]
    assert Counter(sent) == Counter(range(1000))


def test_a_mix_ends_at_the_first_request_a_feeder_cannot_fill(tmp_path: Path) -> None:
    spec = http_spec(
        URL,
        mix=[Request("GET", "/users/${u.id}", name="show"), Request("GET", "/", name="home")],
        feeders={"u": feeders.csv(users_csv(tmp_path, 3), on_end="stop")},
    )
    source = RequestSource(spec)
    kinds, _ = source.take(100)
    assert kinds == [0, 1, 0, 1, 0, 1]  # the 4th show has no row: the load ends before it
    assert source.done and source.take(10) == ([], [])
    source.close()
    assert len(preview(spec, 100)) == 6


def test_a_value_that_cannot_go_in_a_header_stops_with_the_kind_named(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_text('v\nok\n"bad\nvalue"\n')
    spec = http_spec(
        URL,
        mix=[Request("GET", "/", headers={"X-V": "${h.v}"}, name="with-header")],
        feeders={"h": feeders.csv(path)},
    )
    with pytest.raises(ValueError, match=r"with-header.*cannot hold a line break"):
        preview(spec, 2)


def test_preview_shows_each_share_its_own_rows(tmp_path: Path) -> None:
    spec = http_spec(
        "http://127.0.0.1:8080/users/${u.id}",
        feeders={"u": feeders.csv(users_csv(tmp_path, 10))},
        workers=3,
    )
    firsts = [[r.split(b" ")[1] for _, r in preview(spec, 3, share=i)] for i in range(3)]
    assert firsts == [
        [b"/users/0", b"/users/3", b"/users/6"],
        [b"/users/1", b"/users/4", b"/users/7"],
        [b"/users/2", b"/users/5", b"/users/8"],
    ]
    with pytest.raises(ValueError, match=r"share must be 0\.\.2"):
        preview(spec, 1, share=3)


def names(batch: object) -> list[str]:
    return ["x"] * 4


def test_a_spec_with_feeders_pickles_into_a_fresh_process_and_renders_there(tmp_path: Path) -> None:
    spec = http_spec(
        "http://127.0.0.1:8080/users/${u.id}/${n}",
        feeders={
            "u": feeders.csv(users_csv(tmp_path, 5), order="shuffle"),
            "n": feeders.call("tests.unit.test_request_source:names"),
        },
        seed=5,
    )
    here = preview(spec, 5)
    code = (
        "import pickle, sys\n"
        "from pytest_netbench import preview\n"
        "spec = pickle.loads(sys.stdin.buffer.read())\n"
        "sys.stdout.buffer.write(pickle.dumps(preview(spec, 5)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps(spec),
        capture_output=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    assert pickle.loads(out.stdout) == here
