"""End-to-end: a load with ``stages=`` through the ``netbench`` fixture, on a real server
started by ``netbench_server``: the test sees the ramp's counts, the JSON keeps each row's
target, and ``--netbench-plot`` draws its timeline."""

from __future__ import annotations

import json

import pytest

TESTS = """
def test_rate_ramp(netbench, hello):
    server = hello()
    r = netbench.http(
        server.url, rate=0, stages=[("1s", 200), ("0.5s", 0)], allow_invalid=True
    )
    assert r.mode == "open"
    assert 148 <= r.sent <= 150  # 100 up, 50 down
    assert r.sent == r.ok + r.errors_total + r.in_flight
    assert [row.target for row in r.timeline[:2]] == [100.0, 100.0]

def test_connection_ramp(netbench, hello):
    server = hello()
    r = netbench.http(server.url, stages=[("0.5s", 3), ("0.5s", 0)], allow_invalid=True)
    assert r.mode == "closed"
    assert r.generator.connections_opened == 3
    assert r.errors_total == 0 and r.in_flight == 0
"""


def test_a_ramp_through_the_fixture(pytester: pytest.Pytester, hello_app: object) -> None:
    pytester.makepyfile(test_ramp=TESTS)
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-json=out.json", "--netbench-plot=plots"
    )
    result.assert_outcomes(passed=2)
    data = json.loads((pytester.path / "out.json").read_text())
    ramp = next(r["result"] for r in data["records"] if r["function"].endswith("rate_ramp"))
    # The stored record keeps no spec: each row's target is what says the load ramped.
    assert [row["target"] for row in ramp["timeline"][:2]] == [100.0, 100.0]
    pictures = sorted(p.name for p in (pytester.path / "plots").iterdir())
    assert "test_ramp.test_connection_ramp-timeline.png" in pictures
    assert "test_ramp.test_rate_ramp-timeline.png" in pictures
