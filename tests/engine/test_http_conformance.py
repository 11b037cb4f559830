"""HTTP conformance: every engine loop counts, frames and reconnects the same way.

Each test runs once per loop (see ``loop`` in conftest) against a real server on
127.0.0.1 that the test starts itself. Counts are exact; times are never asserted.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable

import pytest
from servers import HttpApp, ServerThread, StartHttp, render_response

from pytest_netbench import ERROR_KINDS, LoadResult, http_load, http_load_async, http_spec
from pytest_netbench._engine.rules.exchange import build_exchange

Check = Callable[[LoadResult], LoadResult]
NO_ERRORS = dict.fromkeys(ERROR_KINDS, 0)


def request_size(url: str, **options: object) -> int:
    return build_exchange(http_spec(url, **options)).size  # type: ignore[arg-type]


def test_request_count_is_exact(loop: str, http_server: StartHttp, consistent: Check) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url + "/hello", loop=loop, connections=8, requests=200))
    assert (r.sent, r.ok, r.in_flight) == (200, 200, 0)
    assert dict(r.errors) == NO_ERRORS
    assert dict(r.status_codes) == {200: 200}
    assert app.seen.requests == 200
    assert r.generator.connections_opened == app.seen.connections == 8
    assert r.bytes_written == 200 * request_size(server.url + "/hello")
    assert r.bytes_read == 200 * len(render_response("length", 200, False, False)[0])
    assert r.mode == "closed"
    assert r.generator.loop == loop
    assert r.latency.min_ms <= r.p50_ms <= r.p99_ms <= r.max_ms


def test_fewer_requests_than_connections_opens_only_what_is_needed(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, connections=10, requests=3))
    assert (r.sent, r.ok) == (3, 3)
    assert app.seen.requests == 3
    assert r.generator.connections_opened == 3


def test_duration_run_keeps_the_invariant(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, connections=4, duration=0.3))
    assert r.ok > 0
    assert r.errors_total == 0
    assert r.in_flight <= 4
    assert dict(r.status_codes) == {200: r.ok}
    assert 0 < r.bytes_written <= r.sent * request_size(server.url)
    assert r.duration_s > 0
    assert len(r.timeline) >= 1
    # The server read every request that was answered. The ones in flight at the stop were
    # written, but a busy server may not have read them before the connection was dropped
    # (1,078 sent and 1,075 seen once, beside other loads): nothing is asserted of them.
    assert app.seen.requests >= r.sent - r.in_flight == r.ok


def test_keepalive_off_opens_one_connection_per_request(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, connections=3, requests=30, keepalive=False))
    assert (r.sent, r.ok, r.errors_total) == (30, 30, 0)
    assert r.generator.connections_opened == 30
    assert app.seen.connections == 30
    assert app.seen.requests == 30


def test_requests_per_connection_closes_after_that_many(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(
        http_load(server.url, loop=loop, connections=1, requests=50, requests_per_connection=10)
    )
    assert (r.sent, r.ok, r.errors_total) == (50, 50, 0)
    assert r.generator.connections_opened == 5
    assert app.seen.per_connection == [10] * 5


def test_requests_per_connection_with_concurrent_connections(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(
        http_load(server.url, loop=loop, connections=3, requests=50, requests_per_connection=10)
    )
    assert (r.sent, r.ok, r.errors_total) == (50, 50, 0)
    # Connections racing for the last requests may each close early, never late.
    assert max(app.seen.per_connection) == 10
    assert sum(app.seen.per_connection) == 50
    assert 5 <= r.generator.connections_opened == app.seen.connections <= 5 + 2


def test_pipelining_keeps_counts_exact(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=200, pipeline=8))
    assert (r.sent, r.ok, r.errors_total) == (200, 200, 0)
    assert app.seen.requests == 200
    assert r.generator.connections_opened == 2


def test_warmup_requests_are_not_counted(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, connections=2, duration=0.3, warmup=0.3))
    assert r.ok > 0
    # The server also answered the warm-up's requests, which the result leaves out.
    assert app.seen.requests > r.sent
    assert r.bytes_written < app.seen.requests * request_size(server.url)


def test_warmup_with_a_request_count_sends_exactly_that_many_measured(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=40, warmup=0.2))
    assert (r.sent, r.ok) == (40, 40)
    assert app.seen.requests > 40


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_head_responses_end_at_their_headers(
    loop: str, http_server: StartHttp, consistent: Check, framing: str
) -> None:
    server, app = http_server(framing=framing)
    r = consistent(http_load(server.url, loop=loop, method="HEAD", connections=2, requests=20))
    assert (r.ok, r.errors_total) == (20, 0)
    assert all(line.startswith(b"HEAD / ") for line in app.seen.request_lines)


def test_chunked_responses(loop: str, http_server: StartHttp, consistent: Check) -> None:
    server, _ = http_server(framing="chunked")
    r = consistent(http_load(server.url, loop=loop, connections=3, requests=60))
    assert (r.sent, r.ok, r.errors_total) == (60, 60, 0)
    assert r.generator.connections_opened == 3
    assert r.bytes_read == 60 * len(render_response("chunked", 200, False, False)[0])


def test_close_delimited_responses_end_at_close_and_reconnect(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server(framing="close")
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=20))
    assert (r.sent, r.ok, r.errors_total) == (20, 20, 0)
    assert r.generator.connections_opened == 20
    assert app.seen.connections == 20


def test_http10_responses_close_and_the_engine_reconnects(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server(framing="http10")
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=20))
    assert (r.sent, r.ok, r.errors_total) == (20, 20, 0)
    assert r.generator.connections_opened == app.seen.connections == 20


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
def test_large_bodies_span_many_reads(
    loop: str, http_server: StartHttp, consistent: Check, framing: str
) -> None:
    server, app = http_server(framing=framing, body_size=300_000)
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=12))
    assert (r.sent, r.ok, r.errors_total) == (12, 12, 0)
    response = render_response(framing, 200, False, False, app.body)[0]
    assert r.bytes_read == 12 * len(response)


def test_post_body_is_sent_with_every_request(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    options = {"method": "POST", "body": b"x" * 300, "headers": {"X-Test": "1"}}
    r = consistent(http_load(server.url, loop=loop, connections=2, requests=10, **options))
    assert r.ok == 10
    assert r.bytes_written == 10 * request_size(server.url, **options)
    assert all(line == b"POST / HTTP/1.1" for line in app.seen.request_lines)


@pytest.mark.parametrize("arrival", ["uniform", "poisson"])
def test_open_loop_sends_about_rate_times_duration(
    loop: str, http_server: StartHttp, consistent: Check, arrival: str
) -> None:
    server, _ = http_server()
    r = consistent(http_load(server.url, loop=loop, rate=200, arrival=arrival, duration=0.5))
    assert r.mode == "open"
    # 100 intended sends: a count check with a loose bound, not a timing one.
    assert 50 <= r.sent <= 150, r.sent
    assert r.generator.intended_rate == 200
    assert r.uncorrected is not None
    assert r.uncorrected.count == r.ok
    # Latency from the intended send time can only be longer than from the actual send.
    assert r.p50_ms >= r.uncorrected.p50_ms
    assert r.max_ms >= r.uncorrected.max_ms


def test_open_loop_with_a_request_count_is_exact(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, rate=500, requests=50))
    assert (r.sent, r.ok, r.errors_total) == (50, 50, 0)
    assert app.seen.requests == 50
    assert r.generator.unsent == 0


def test_open_loop_without_keepalive_opens_a_connection_per_request(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, rate=300, requests=30, keepalive=False))
    assert (r.sent, r.ok, r.errors_total) == (30, 30, 0)
    assert app.seen.connections == 30


def test_open_loop_pool_grows_when_the_server_falls_behind(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    # Each answer takes 100 ms and a request is due every 10 ms: one connection cannot
    # keep the schedule, so the pool must grow (up to its default bound of 1024).
    server, app = http_server(delay_ms=100)
    r = consistent(http_load(server.url, loop=loop, rate=100, connections=1, duration=0.5))
    assert r.mode == "open"
    assert r.generator.connections_peak > 1
    # The schedule was kept: at most the few requests due just before the deadline may
    # still be waiting for a connection that is opening (the bound of 2 would leave ~40).
    assert r.generator.unsent < 5
    assert app.seen.connections == r.generator.connections_opened


def test_open_loop_pool_bound_leaves_requests_unsent_and_says_so(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    # Two connections answered 200 ms apart carry 10 requests a second of the 40 due.
    server, app = http_server(delay_ms=200)
    r = consistent(
        http_load(server.url, loop=loop, rate=40, connections=1, max_connections=2, duration=0.5)
    )
    assert r.generator.connections_peak <= 2
    assert app.seen.connections <= 2
    # The drain sends what was still waiting when the window closed, and awaits it.
    assert r.generator.sent_after_window > 0
    assert (r.generator.unsent, r.in_flight, r.generator.lower_bounds) == (0, 0, 0)
    assert r.generator.achieved_rate is not None and r.generator.achieved_rate < 30
    assert not r.valid
    assert any("rate not achieved" in reason for reason in r.invalid_reasons)
    # Without the drain they stay unsent, each in the corrected latency at a lower bound.
    r = consistent(
        http_load(
            server.url,
            loop=loop,
            rate=40,
            connections=1,
            max_connections=2,
            duration=0.5,
            drain=False,
        )
    )
    assert r.generator.unsent > 0
    assert r.generator.lower_bounds == r.in_flight + r.generator.unsent
    assert not r.valid
    assert any("rate not achieved" in reason for reason in r.invalid_reasons)


def test_open_loop_counts_requests_that_waited_for_a_busy_connection_as_late_sends(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    # One connection, answers 300 ms apart, a request due every 10 ms: every request after
    # the first waits for the connection to come free (the first may too, if it fell due
    # while the connection was still being opened). Every loop counts them alike.
    server, _ = http_server(delay_ms=300)
    r = consistent(
        http_load(server.url, loop=loop, rate=100, connections=1, max_connections=1, requests=4)
    )
    assert (r.sent, r.ok, r.generator.unsent) == (4, 4, 0)
    assert r.generator.connections_peak == 1
    assert 3 <= r.generator.late_sends <= 4


def test_open_loop_drains_requests_still_out_at_the_deadline(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    # Every answer takes 300 ms and the window is 0.5 s: without the drain the last 300 ms
    # of requests, the slowest, would drop out of the percentiles as "in flight".
    server, app = http_server(delay_ms=300)
    started = time.monotonic()
    r = consistent(http_load(server.url, loop=loop, rate=40, duration=0.5, timeout=5))
    elapsed = time.monotonic() - started
    assert r.in_flight == 0
    assert r.ok == r.sent == app.seen.requests
    assert r.errors_total == 0
    assert r.latency.min_ms >= 290
    # duration_s is the window: the last request, sent within 25 ms of the deadline, was
    # answered 300 ms later, and that drain is not part of it.
    assert elapsed - r.duration_s >= 0.27


def test_open_loop_without_drain_counts_the_deadline_stragglers_as_in_flight(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, _ = http_server(delay_ms=300)
    r = consistent(http_load(server.url, loop=loop, rate=40, duration=0.5, drain=False))
    assert r.in_flight > 0
    assert r.errors_total == 0


def test_two_workers_split_the_requests_and_merge_exactly(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, connections=4, requests=41, workers=2))
    assert (r.sent, r.ok, r.errors_total) == (41, 41, 0)
    assert app.seen.requests == 41
    assert r.generator.workers == 2
    assert r.generator.connections_opened == app.seen.connections == 4


def test_two_workers_in_open_loop_share_the_rate_and_the_count(
    loop: str, http_server: StartHttp, consistent: Check
) -> None:
    server, app = http_server()
    r = consistent(http_load(server.url, loop=loop, rate=400, requests=40, workers=2))
    assert (r.mode, r.sent, r.ok, r.errors_total) == ("open", 40, 40, 0)
    assert app.seen.requests == 40
    assert r.generator.workers == 2
    assert r.generator.intended_rate == 400


def test_auto_loop_is_uvloop_when_installed(http_server: StartHttp) -> None:
    pytest.importorskip("uvloop")
    server, _ = http_server()
    assert http_load(server.url, requests=3).generator.loop == "uvloop"


def test_async_variant_runs_on_the_callers_loop(http_server: StartHttp, consistent: Check) -> None:
    server, app = http_server()

    async def main() -> LoadResult:
        return await http_load_async(server.url, connections=2, requests=25)

    r = consistent(asyncio.run(main()))
    assert (r.sent, r.ok) == (25, 25)
    assert r.generator.loop == "asyncio"
    assert app.seen.requests == 25


def test_ipv6_loopback_target(loop: str, consistent: Check) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    with socket.socket(socket.AF_INET6) as probe:
        try:
            probe.bind(("::1", 0))
        except OSError:
            pytest.skip("::1 is not configured on this machine")
    app = HttpApp()
    with ServerThread(app, host="::1") as server:
        r = consistent(http_load(server.url, loop=loop, connections=2, requests=10))
    assert (r.ok, app.seen.requests) == (10, 10)
    assert r.url.startswith("http://[::1]:")
