"""Goodput (``goodput="ttft:120 tpot:30"``): the ok streams meeting every bound of an SLO,
a second, as vLLM's ``vllm bench serve --goodput`` counts them, against the catalog's Go
OpenAI-compatible endpoint on asyncio, uvloop and trio.

Each request's timings come from a CSV feeder cycling four rows: the first token after
10 or 240 ms, then one every 2 or 60 ms, 5 tokens. The bounds sit far from every row's
figures (TTFT 10 vs 240 against 120, TPOT 2 vs 60 against 30, E2EL 18, 248, 250 vs 480
against 365: 110-120 ms of stall either side), so which streams are good holds: exactly
the rows that meet every bound, each sent twice. (Half these margins once miscounted on
a CI machine loaded beside the example suite: a generator stalled 60 ms reads a 30 ms
stream's tokens together, and its TPOT falls under 15.)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_netbench import LoadResult, SpecError, feeders, sse_load
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server

BODY = '{"model": "m", "max_tokens": 5, "stream": true}'


@pytest.fixture(scope="module")
def go_url() -> Iterator[str]:
    server = Server.from_spec(catalog.get("go")).start()
    try:
        yield server.url.rstrip("/")
    finally:
        server.stop()


@pytest.fixture
def timings(tmp_path: Path) -> Path:
    rows = tmp_path / "timings.csv"
    rows.write_text("first_ms,every_ms\n10,2\n240,2\n10,60\n240,60\n")
    return rows


def _load(url: str, loop: str, timings: Path, goodput: object) -> LoadResult:
    return sse_load(
        f"{url}/v1/completions?first_ms=${{t.first_ms}}&every_ms=${{t.every_ms}}",
        stream="openai", method="POST", body=BODY, requests=8, connections=2,
        feeders={"t": feeders.csv(timings)}, goodput=goodput, loop=loop,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.mark.parametrize(
    ("goodput", "good"),
    [
        ("ttft:120 tpot:30", 2),  # (10, 2) only
        ("ttft:120", 4),  # first_ms 10
        ({"tpot": 30}, 4),  # every_ms 2
        ("e2el:365", 6),  # all but (240, 60): 240 + 4 * 60 ms, the rest at most 250 ms
        ("ttft:1000 tpot:1000", 8),
        ("ttft:1", 0),
    ],
)
def test_goodput_counts_the_streams_meeting_every_bound(
    go_url: str, loop: str, timings: Path, goodput: object, good: int
) -> None:
    r = _load(go_url, loop, timings, goodput)
    assert (r.ok, r.errors_total) == (8, 0), r.error_samples
    s = r.stream
    assert s is not None and s.good_streams == good
    # Good streams a second of the window, as the rate is ok a second.
    assert math.isclose(s.goodput * r.duration_s, good, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(s.goodput, r.rps * good / 8, rel_tol=1e-9, abs_tol=1e-9)
    assert r.to_dict()["stream"]["good_streams"] == good


def test_no_slo_no_goodput(go_url: str, timings: Path) -> None:
    r = _load(go_url, "uvloop", timings, None)
    assert r.stream is not None and math.isnan(r.stream.goodput)
    assert r.to_dict()["stream"]["goodput"] is None


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"goodput": "ttft=200"}, r"as vLLM's --goodput: 'ttft:200 tpot:50'"),
        ({"goodput": "itl:5"}, "no metric 'itl'"),
        ({"goodput": "ttft:fast"}, "ttft's SLO 'fast' is no number of ms"),
        ({"goodput": "ttft:-1"}, "must be ms >= 0"),
        ({"goodput": "ttft:1 ttft:2"}, "ttft given twice"),
        ({"goodput": "ttft:200", "stream": None}, "it takes a streaming load"),
        ({"goodput": "tpot:50", "stream": "sse"}, "goodput with tpot takes stream='openai'"),
    ],
)
def test_a_bad_slo_is_refused_in_one_line(options: dict[str, object], words: str) -> None:
    from pytest_netbench import http_load

    options.setdefault("stream", "openai")
    with pytest.raises(SpecError, match=words):
        http_load("http://127.0.0.1:1/", **options)  # type: ignore[arg-type]
