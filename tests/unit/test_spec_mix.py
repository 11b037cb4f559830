"""Request mixes before any socket: the checks of ``mix=``, the order kinds go out in, and
the bytes each kind renders to once."""

from __future__ import annotations

import math
from collections import Counter
from itertools import islice

import pytest

from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._errors import SpecError
from pytest_netbench._input.spec import http_spec
from pytest_netbench._model import LoadSpec, Request
from pytest_netbench._proto.source import mix_sequence

URL = "http://127.0.0.1:8080/"


def sequence(*weights: int, order: str = "weighted") -> tuple[int, ...]:
    mix = [Request("GET", f"/{i}", weight=w) for i, w in enumerate(weights)]
    return mix_sequence(http_spec(URL, mix=mix, mix_order=order))


def test_cycle_takes_each_kind_in_turn() -> None:
    mix = [Request("GET", "/a"), Request("GET", "/b"), Request("GET", "/c")]
    assert mix_sequence(http_spec(URL, mix=mix)) == (0, 1, 2)


@pytest.mark.parametrize("weights", [(3, 1), (5, 2, 1), (1, 1), (7,), (2, 4, 6)])
def test_weighted_periods_hold_the_shares(weights: tuple[int, ...]) -> None:
    seq = sequence(*weights)
    common = math.gcd(*weights)
    assert len(seq) == sum(weights) // common
    assert Counter(seq) == {i: w // common for i, w in enumerate(weights)}


def test_weighted_kinds_are_interleaved_not_sent_in_blocks() -> None:
    assert sequence(3, 1) == (0, 0, 1, 0)
    assert sequence(5, 2, 1) == (0, 1, 0, 0, 2, 0, 1, 0)


def test_a_prefix_of_a_weighted_sequence_is_near_its_shares() -> None:
    seq = sequence(70, 20, 10)  # a period of 10
    first = Counter(islice(seq, 10))
    assert first == {0: 7, 1: 2, 2: 1}


def test_each_kind_is_rendered_once_with_the_load_headers() -> None:
    spec = http_spec(
        URL,
        headers={"Authorization": "Bearer t", "X-Who": "load"},
        keepalive=False,
        mix=[
            Request("GET", "/list", name="list"),
            Request("POST", "/new", headers={"x-who": "kind"}, body="{}"),  # type: ignore[arg-type]
        ],
    )
    exchange = build_exchange(spec)
    assert exchange.chunks == ()
    get, post = exchange.mix_requests
    assert get.startswith(b"GET /list HTTP/1.1\r\n")
    assert b"Authorization: Bearer t\r\n" in get and b"X-Who: load\r\n" in get
    assert b"Connection: close\r\n" in get
    assert post.startswith(b"POST /new HTTP/1.1\r\n")
    assert b"x-who: kind\r\n" in post and b"X-Who: load" not in post
    assert post.endswith(b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
    assert [r.name for r in spec.mix] == ["list", "POST /new"]


def test_a_mix_through_a_proxy_uses_absolute_targets() -> None:
    spec = http_spec(URL, proxy="127.0.0.1:3128", mix=[Request("GET", "/a?b=c")])
    (data,) = build_exchange(spec).mix_requests
    assert data.startswith(b"GET http://127.0.0.1:8080/a?b=c HTTP/1.1\r\n")


def test_request_accepts_the_forms_users_write() -> None:
    request = Request("post", "/x", headers={"A": "1"}, body="text")  # type: ignore[arg-type]
    assert request.headers == (("A", "1"),)
    assert request.body == b"text"
    assert request.label == "POST /x"
    spec = http_spec(URL, mix=[request])
    assert spec.mix[0].method == "POST"
    assert spec.to_dict()["mix"] == [
        {"name": "POST /x", "method": "POST", "path": "/x", "headers": [["A", "1"]], "body": 4,
         "weight": 1}
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"mix": []}, "mix is empty"),
        ({"mix": Request("GET", "/")}, "must be a list of Request"),
        ({"mix": ["GET /"]}, "every entry of mix must be a Request"),
        ({"mix": [Request("GET", "a")]}, "starts with '/'"),
        ({"mix": [Request("GET", "/a b")]}, "no spaces"),
        ({"mix": [Request("G-T", "/")]}, "token of letters"),
        ({"mix": [Request("GET", "/", headers=(("X\nY", "1"),))]}, "line break"),
        ({"mix": [Request("GET", "/"), Request("GET", "/")]}, "both named 'GET /'"),
        ({"mix": [Request("GET", "/", name="a"), Request("PUT", "/", name="a")]}, "'a'"),
        ({"mix": [Request("HEAD", "/"), Request("GET", "/a")]}, "HEAD cannot share a mix"),
        ({"mix": [Request("GET", "/", weight=0)]}, "weight must be a whole number >= 1"),
        ({"mix": [Request("GET", "/", weight=1.5)]}, "weight must be"),  # type: ignore[arg-type]
        ({"mix": [Request("GET", "/", weight=2)]}, "weights apply to mix_order='weighted'"),
        ({"mix": [Request("GET", "/")], "mix_order": "random"}, "mix_order must be one of"),
        (
            {
                "mix": [Request("GET", "/", weight=9999), Request("GET", "/b", weight=9998)],
                "mix_order": "weighted",
            },
            "use smaller weights",
        ),
        ({"mix": [Request("GET", "/")], "method": "POST"}, "drop method= and body="),
        ({"mix": [Request("GET", "/")], "body": "x"}, "drop method= and body="),
    ],
)
def test_bad_mixes_say_what_is_wrong(options: dict[str, object], named: str) -> None:
    with pytest.raises(SpecError, match=named):
        http_spec(URL, **options)  # type: ignore[arg-type]


def test_a_mix_url_names_the_server_only() -> None:
    with pytest.raises(SpecError, match="path '/api'"):
        http_spec("http://127.0.0.1:8080/api", mix=[Request("GET", "/a")])


def test_a_load_spec_without_a_mix_is_unchanged() -> None:
    spec = http_spec(URL)
    assert spec.mix == () and spec.mix_order == "cycle"
    assert build_exchange(spec).mix_requests == ()
    assert LoadSpec(kind="http", host="127.0.0.1", port=1).timeline_resolution_s == 1.0
