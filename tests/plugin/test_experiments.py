"""End-to-end: ``netbench.sweep`` and ``netbench.capacity`` against a real server of known
capacity (the paced server), their tables, JSON records, and a gate on capacity."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

SWEEP_TEST = """
import pytest

@pytest.mark.parametrize("served", [1000])
def test_sweep(netbench, paced, served):
    srv = paced(served)
    r = netbench.sweep(srv, rates="200,400", duration=0.6, connections=4)
    assert [s.rate for s in r.steps] == [200.0, 400.0]
    for step in r.steps:
        res = step.result
        assert res.mode == "open" and res.sent == res.ok + res.errors_total + res.in_flight
        # --netbench-scale 0.5 halves each step's duration
        assert res.spec.duration_s == pytest.approx(0.3)
        # the managed server is sampled during every step, as for a plain load
        assert res.server is not None and res.server.pid == srv.pid
    assert netbench.experiments == [r]
"""

CAPACITY_TEST = """
import os

def test_capacity(netbench, paced):
    srv = paced(float(os.environ.get("PACED_RATE", "400")))
    c = netbench.capacity(
        srv.url, slo="p99_ms < 50", start_rate=150, precision=0.25, duration=0.25,
    )
    assert c.known, c.reason
    assert all(p.result.server is not None for p in c.all_steps)
"""


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_a_sweep_through_the_fixture_gets_a_table_and_a_record(
    pytester: pytest.Pytester, paced_app: object
) -> None:
    pytester.makepyfile(SWEEP_TEST)
    out = pytester.path / "out.json"
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-scale", "0.5", "-rP", f"--netbench-json={out}"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*netbench results*",
            "http://127.0.0.1:*/: sweep of 2 step(s), 2 valid",
            "*= netbench =*",
            "*::test_sweep  (rate sweep)",
            "rate*sent*answered*p50_ms*p99_ms*errors*runs*valid",
            "200 *1*yes",
            "400 *1*yes",
        ]
    )
    (record,) = _json(out)["records"]
    assert record["kind"] == "sweep"
    assert record["params"] == {"served": "1000"}
    steps = record["experiment"]["steps"]
    assert [s["rate"] for s in steps] == [200.0, 400.0]
    assert all(s["valid"] and s["result"]["ok"] > 0 for s in steps)
    assert record["started"] < record["ended"]


def test_bad_rates_fail_before_any_load(pytester: pytest.Pytester, paced_app: object) -> None:
    pytester.makepyfile(
        """
        def test_bad(netbench, paced):
            netbench.sweep(paced(100), rates="100:fast:10", duration=0.2)

        def test_bad_search(netbench, paced):
            netbench.capacity(paced(100), precision=0, duration=0.2)
        """
    )
    result = pytester.runpytest_subprocess("--netbench")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*netbench: rates '100:fast:10': write start:stop:step*", "*netbench: precision*"]
    )
    result.stdout.no_fnmatch_line("*sweep.py*")


def test_capacity_through_the_fixture_and_a_gate_on_it(
    pytester: pytest.Pytester, paced_app: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(CAPACITY_TEST)
    base = pytester.runpytest_subprocess("--netbench", "--netbench-save", "fast")
    base.assert_outcomes(passed=1)
    base.stdout.fnmatch_lines(
        [
            "*::test_capacity  (capacity search)",
            "capacity*slo*confirmed*steps*loads",
            "* req/s*p99_ms < 50*error_rate*yes*",
            "*met 'p99_ms < 50*",
        ]
    )
    (stored,) = (pytester.path / ".netbench").glob("*/0001_fast.json")
    (record,) = _json(stored)["records"]
    assert record["kind"] == "capacity" and record["experiment"]["known"]
    fast = record["experiment"]["rate"]

    # The same test against a server of half the capacity: the gate on capacity fires.
    monkeypatch.setenv("PACED_RATE", "200")
    slow = pytester.runpytest_subprocess(
        "--netbench", "--netbench-compare", "fast", "--netbench-compare-fail", "capacity:5%"
    )
    slow.assert_outcomes(passed=1)
    assert slow.ret == pytest.ExitCode.TESTS_FAILED
    slow.stdout.fnmatch_lines(
        [
            "*::test_capacity",
            "*capacity*REGRESSION*",
            "*Gate FAILED: 1 regression(s)*",
        ]
    )
    slow.stdout.fnmatch_lines(["*(capacity drop > 5%)"])
    assert fast > 0


def test_ab_mode_runs_an_experiment_on_both_arms_and_gates_capacity(
    pytester: pytest.Pytester, paced_app: object
) -> None:
    pytester.makepyfile(
        """
        def test_capacity(netbench, server):
            # retries: on a busy machine a short open-loop run's sends can lag; such runs
            # are run again rather than counted against the server.
            c = netbench.capacity(
                server.url, start_rate=150, precision=0.25, duration=0.25, max_error_rate=None,
                retries=6,
            )
            assert c.known, c.reason
            assert netbench.experiments[-1] is c and len(netbench.experiments) == 2
        """
    )
    paced = f"{sys.executable} paced_server.py {{rate}} {{{{port}}}}"
    out = pytester.path / "ab.json"
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-ab",
        paced.format(rate=400),
        paced.format(rate=200),
        "--netbench-compare-fail=capacity:5%",
        f"--netbench-json={out}",
    )
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "arm *capacity*",
            "base *req/s*",
            "head *req/s*",
            "*Comparison with baseline BASE*",
            "*capacity*REGRESSION*",
            "*Gate FAILED: 1 regression(s)*",
        ]
    )
    records = _json(out)["records"]
    assert [(r["kind"], r["params"]["arm"]) for r in records] == [
        ("capacity", "base"),
        ("capacity", "head"),
    ]
    base, head = (r["experiment"]["rate"] for r in records)
    assert head < base


def test_a_cold_start_through_the_fixture(pytester: pytest.Pytester, paced_app: object) -> None:
    pytester.makepyfile(
        """
        import pytest

        def test_cold(netbench, warming):
            srv = warming(200, 1000, 0.5)
            c = netbench.cold_start(srv, duration=3.0, resolution=0.25, connections=8,
                                    settle_tolerance=0.25)
            assert c.valid
            # --netbench-scale 0.5: 1.5 s of 0.25 s rows
            assert c.duration_s == pytest.approx(1.5) and len(c.rows) == 6
            assert c.first_second_ratio < 0.9 and c.settle_s >= 0.5
            assert c.result.server is not None and c.result.server.pid == srv.pid

        def test_not_cold(netbench, warming):
            netbench.cold_start(warming(200, 1000, 0.5), warmup=1.0)
        """
    )
    out = pytester.path / "out.json"
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-scale", "0.5", "-rP", f"--netbench-json={out}"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*netbench: warmup=0.5: a cold start measures from the very*"])
    result.stdout.fnmatch_lines(
        [
            "http://127.0.0.1:*/: cold start, first second at *% of the steady rate, settled at *",
            "*::test_cold  (cold start)",
            "first_s_rps*steady_rps*ratio*settle_s*first_s_p50*steady_p50*p50_settle_s*valid",
        ]
    )
    (record,) = _json(out)["records"]
    assert record["kind"] == "cold_start"
    assert record["experiment"]["result"]["spec"]["timeline_resolution_s"] == 0.25
    assert record["experiment"]["discarded"] == []  # no reruns by default
