"""Flows that stream (issue 32, item 5): a flow's ``client.stream()`` and ``aiter_lines()``
see each piece of the body when it arrives, not all at the end, on every loop; the step is
timed to the body's end as before; a stream cut mid-body fails its step as ``reset``.

Against the catalog's Go server, whose ``/sse`` sends its first event F ms after the
request and then one every G ms. Before the flow transport handed bodies over as they
arrive, the first event was seen at the end of the stream (F + (N - 1) G), every gap 0.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import httpx
import pytest

from pytest_netbench import Server, ToolchainMissing, catalog, flow

F_MS, G_MS, N = 40, 10, 8
FLOW_LOOPS = ("uvloop", "asyncio", "trio")
# What each session saw: (ms to the first data: line, ms between data: lines).
SEEN: list[tuple[float, list[float]]] = []


@pytest.fixture(scope="module")
def go() -> Iterator[str]:
    try:
        spec = catalog.get("go")
    except ToolchainMissing as exc:
        pytest.skip(f"go cannot run here: {exc}")
    server = Server.from_spec(spec).start()
    try:
        yield server.url.rstrip("/")
    finally:
        server.stop()


async def watch_events(client: httpx.AsyncClient) -> None:
    path = f"/sse?first_ms={F_MS}&every_ms={G_MS}&events={N}"
    start = time.monotonic()
    stamps: list[float] = []
    async with client.stream("GET", path, extensions={"netbench_step": "events"}) as r:
        async for line in r.aiter_lines():
            if line.startswith("data:"):
                stamps.append((time.monotonic() - start) * 1000)
    SEEN.append((stamps[0], [b - a for a, b in itertools.pairwise(stamps)]))


def check_events_seen(go: str, loop: str) -> None:
    SEEN.clear()
    r = flow(watch_events, go, users=2, sessions=8, loop=loop)
    assert (r.ok, r.errors_total) == (8, 0), r.error_samples
    assert len(SEEN) == 8
    firsts = sorted(first for first, _ in SEEN)
    gaps = sorted(gap for _, session in SEEN for gap in session)
    assert len(gaps) == 8 * (N - 1)
    # The median session saw its first event at F (within 2 ms on a quiet machine; a
    # busy 2-core one adds a little), not at the end of the stream (F + (N - 1) G).
    assert abs(firsts[len(firsts) // 2] - F_MS) <= 5.0, firsts
    assert abs(gaps[len(gaps) // 2] - G_MS) <= 1.5, gaps
    # The step is timed to the body's end: the whole stream.
    step = r.by_request["events"]
    assert step.p50_ms >= F_MS + (N - 1) * G_MS - 1.0


@pytest.mark.parametrize("loop", FLOW_LOOPS)
def test_a_flow_sees_each_event_when_it_arrives(go: str, loop: str) -> None:
    # Timing on a busy 2-core machine: a neighbour's burst can hold a whole run's sessions
    # back (first events seen 60-80 ms late in one run of several while this was written),
    # so up to three runs, the first that lands meeting every bound (the test fails on
    # every run when the body is buffered: the first event at about 111 ms).
    for attempt in range(3):
        try:
            check_events_seen(go, loop)
            return
        except AssertionError:
            if attempt == 2:
                raise


async def read_a_cut_stream(client: httpx.AsyncClient) -> None:
    async with client.stream("GET", "/sse?events=6&cut=3") as r:
        async for _ in r.aiter_lines():
            pass


@pytest.mark.parametrize("loop", FLOW_LOOPS)
def test_a_stream_cut_mid_body_fails_its_step_as_a_reset(go: str, loop: str) -> None:
    r = flow(read_a_cut_stream, go, users=1, sessions=2, loop=loop)
    assert r.errors["reset"] == 2 and r.ok == 0
    assert r.sessions is not None and r.sessions.failure_kinds == {"reset": 2}


async def stop_reading_early(client: httpx.AsyncClient) -> None:
    async with client.stream("GET", "/sse?first_ms=0&every_ms=5&events=50") as r:
        assert r.status_code == 200  # the head is enough: closing abandons the body
    (await client.get("/")).raise_for_status()  # the next request goes out


@pytest.mark.parametrize("loop", FLOW_LOOPS)
def test_a_body_closed_early_lets_the_next_request_go(go: str, loop: str) -> None:
    r = flow(stop_reading_early, go, users=1, sessions=3, loop=loop)
    assert (r.ok, r.errors_total) == (6, 0), r.error_samples
    assert r.by_request["GET /"].ok == 3
