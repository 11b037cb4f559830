"""The client-delay probe (``probe_every``): one more client every interval, beside the
load, counted and timed on its own; only the probes that started inside the window count."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from servers import StartEcho, StartHttp

from pytest_netbench import LoadResult, SpecError, echo_load, http_load

Check = Callable[[LoadResult], LoadResult]


def test_one_more_echo_client_is_timed_beside_the_flood(
    echo_server: StartEcho, consistent: Check
) -> None:
    server, app = echo_server(payload_size=512)
    r = consistent(
        echo_load("127.0.0.1", server.port, connections=20, duration=1.0, probe_every=0.05)
    )
    probe = r.probe
    assert probe is not None
    assert probe.every_s == 0.05
    assert probe.sent >= 1
    assert (probe.ok, probe.errors_total) == (probe.sent, 0)
    assert probe.latency.count == probe.ok
    assert 0 < probe.p50_ms <= probe.p99_ms <= probe.max_ms
    # Each probe was a connection of its own, beside the flood's 20.
    assert app.seen.connections >= 20 + probe.sent
    # The load's own figures do not include the probes.
    assert r.generator.connections_opened == 20
    back = LoadResult.from_dict(r.to_dict())
    assert back.probe == probe


def test_wrong_echoes_to_the_probe_are_verify_errors(echo_server: StartEcho) -> None:
    server, _ = echo_server(payload_size=512, corrupt_every=1)
    r = echo_load("127.0.0.1", server.port, connections=2, duration=0.6, probe_every=0.05)
    assert r.probe is not None and r.probe.sent >= 1
    assert r.probe.errors["verify"] == r.probe.sent
    assert r.probe.ok == 0
    assert "differs" in r.probe.error_samples["verify"]


def test_an_http_probe_counts_its_status(http_server: StartHttp) -> None:
    server, _ = http_server()
    r = http_load(server.url, connections=4, duration=0.6, probe_every=0.05)
    assert r.probe is not None and r.probe.sent >= 1
    assert r.probe.ok == r.probe.sent


def test_a_load_without_a_probe_has_none(http_server: StartHttp) -> None:
    server, _ = http_server()
    assert http_load(server.url, connections=2, requests=10).probe is None


def test_a_probe_interval_must_be_positive() -> None:
    with pytest.raises(SpecError, match="probe_every must be > 0"):
        echo_load("127.0.0.1", 9, connections=1, duration=1, probe_every=0)


def test_a_probe_the_server_keeps_waiting_does_not_hold_back_the_next(
    http_server: StartHttp, consistent: Check
) -> None:
    # Every third connection is never answered. The load holds connections 1 and 2, so the
    # probes are the rest: one in three waits out its timeout (2 s, past the whole window).
    # Probes start on schedule beside it, as clients keep arriving at a stalled server;
    # before, the next waited for it, and the window held one or two probes.
    server, _ = http_server(stall_every=3)
    r = consistent(
        http_load(server.url, connections=2, duration=1.0, timeout=2.0, probe_every=0.05)
    )
    probe = r.probe
    assert probe is not None
    assert probe.sent >= 8, probe
    assert probe.errors["timeout"] >= 1, probe
    assert probe.ok >= 4, probe
