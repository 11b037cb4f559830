"""Cold starts: the fine timeline of one run from its first request, read as a warm-up
curve, against servers whose speed over time is known."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.cold_start import ColdStartResult, cold_start
from pytest_netbench._input.spec import http_spec
from pytest_netbench._load.api import run_spec
from pytest_netbench._model import LoadResult, LoadSpec

pytestmark = pytest.mark.usefixtures("hang_guard")

WARMING_SERVER = Path(__file__).with_name("warming_server.py")
StartPaced = Callable[[float], str]
# The warming server: 200 req/s for its first second (by default), then 1,000 req/s.
SLOW_RATE, FAST_RATE, SLOW_FOR_S = 200.0, 1000.0, 1.0


StartWarming = Callable[[float], str]


@pytest.fixture
def warming_server(script_server: Callable[..., str]) -> StartWarming:
    """``warming_server(slow_for_s)``: the URL of a server at SLOW_RATE for its first
    ``slow_for_s`` seconds, then at FAST_RATE (see warming_server.py)."""
    return lambda slow_for_s: script_server(WARMING_SERVER, SLOW_RATE, FAST_RATE, slow_for_s)


def refusing_runner(calls: list[LoadSpec]) -> Callable[[LoadSpec], LoadResult]:
    """A runner for argument checks: any load reaching it is a failure of the check."""

    def run(spec: LoadSpec) -> LoadResult:
        calls.append(spec)
        raise AssertionError("a load ran although its arguments were refused")

    return run


def test_the_timeline_has_one_row_per_step_and_they_add_up(paced_server: StartPaced) -> None:
    result = cold_start(paced_server(1000), duration=1.0, resolution=0.1, connections=4)

    run = result.result
    assert len(run.timeline) == 10
    assert [row.second for row in run.timeline] == list(range(10))
    assert all(row.span_s == 0.1 for row in run.timeline)
    assert sum(row.ok for row in run.timeline) == run.ok > 0
    assert sum(row.errors for row in run.timeline) == run.errors_total
    assert run.sent == run.ok + run.errors_total + run.in_flight
    assert run.spec is not None
    assert (run.spec.warmup_s, run.spec.rate, run.spec.timeline_resolution_s) == (0.0, None, 0.1)
    assert len(result.rows) == 10
    # A server at full speed from the start: nothing to warm.
    assert result.first_second_ratio == pytest.approx(1.0, abs=0.25)


def test_a_server_that_starts_slow_settles_when_it_warms(warming_server: StartWarming) -> None:
    # A wide tolerance: a busy 2-core machine shakes 250 ms rows by several per cent, and
    # the warm-up (a fifth of the speed) is far outside it anyway.
    result = cold_start(
        warming_server(SLOW_FOR_S),
        duration=3.0,
        resolution=0.25,
        connections=8,
        settle_tolerance=0.25,
    )

    assert result.valid, result.result.invalid_reasons
    assert len(result.rows) == 12
    assert result.first_second_rate == pytest.approx(SLOW_RATE, rel=0.2)
    assert result.steady_rate == pytest.approx(FAST_RATE, rel=0.1)
    assert result.first_second_ratio < 0.35
    # Settled when the server warmed (within a row or two of the instant, not long before).
    assert SLOW_FOR_S - 0.25 <= result.settle_s <= SLOW_FOR_S + 0.5
    for row in result.rows:
        if row.start_s >= result.settle_s + result.resolution_s:
            assert row.rate > 2 * SLOW_RATE  # no slow row once settled
    # Eight requests queue at the server: the wait falls from 8/200 s to 8/1000 s.
    assert result.first_second_p50_ms > 2 * result.steady_p50_ms
    assert SLOW_FOR_S - 0.25 <= result.p50_settle_s <= SLOW_FOR_S + 0.75

    data = json.loads(json.dumps(result.to_dict()))
    assert data["kind"] == "cold_start"
    assert data["settled"] is True
    assert data["settle_s"] == result.settle_s
    assert data["settle_window_s"] == 0.75  # a quarter of the run, under the 1 s default
    back = ColdStartResult.from_dict(data)
    for name in ("first_second_rate", "steady_rate", "settle_s", "p50_settle_s", "rows"):
        assert getattr(back, name) == getattr(result, name), name


def test_a_run_that_never_settles_says_so(warming_server: StartWarming) -> None:
    # The server warms up in the run's last row: the steady half is the slow one, and the
    # last row is far outside it.
    spec = http_spec(warming_server(0.9), connections=4, duration=1.0)
    result = cold_start(spec, resolution=0.1)
    assert result.steady_rate == pytest.approx(SLOW_RATE, rel=0.25)
    assert math.isinf(result.settle_s)
    assert result.to_dict()["settled"] is False
    assert result.to_dict()["settle_s"] is None
    assert result.duration_s == 1.0  # the spec's own duration


def test_a_load_spec_keeps_its_settings(paced_server: StartPaced) -> None:
    calls: list[LoadSpec] = []

    def runner(spec: LoadSpec) -> LoadResult:
        calls.append(spec)
        return run_spec(spec)

    spec = http_spec(paced_server(1000), connections=3, duration=5.0, requests=None)
    cold_start(spec, duration=0.4, resolution=0.1, runner=runner)
    (ran,) = calls
    assert (ran.connections, ran.duration_s, ran.timeline_resolution_s) == (3, 0.4, 0.1)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"warmup": 1.0}, "warmup=1.0: a cold start measures from the very first request"),
        ({"rate": 100.0}, "closed-loop run"),
        ({"requests": 100}, "drop requests"),
        ({"timeline_resolution": 0.5}, "use resolution="),
        ({"resolution": 0.001}, "at least 0.01 s"),
        ({"resolution": "fast"}, "must be a number of seconds"),
        ({"duration": 1.05}, "whole number of resolution steps"),
        ({"duration": 0.3}, "needs at least 4"),
        ({"duration": -1.0}, "duration must be"),
        ({"settle_tolerance": 1.5}, "settle_tolerance must be a fraction"),
        ({"settle_window": 0.15}, "settle_window (0.15 s) must be a whole number"),
        ({"settle_window": 6.0}, "at most half the run (5 s)"),
        ({"settle_window": 0}, "settle_window must be a number of seconds > 0"),
        ({"retries": -1}, "retries must be"),
        ({"loop": "trio"}, "needs the asyncio/uvloop engine"),
        ({"connections": 0}, "connections must be > 0"),
    ],
)
def test_bad_arguments_are_refused_before_any_load(options: dict[str, object], named: str) -> None:
    calls: list[LoadSpec] = []
    with pytest.raises(SpecError, match=re.escape(named)):
        cold_start("http://127.0.0.1:9/", runner=refusing_runner(calls), **options)  # type: ignore[arg-type]
    assert calls == []


@pytest.mark.parametrize(
    ("changes", "named"),
    [({"warmup_s": 2.0}, "warmup=2"), ({"rate": 50.0}, "rate=50")],
)
def test_a_load_spec_that_is_not_cold_is_refused(changes: dict[str, float], named: str) -> None:
    import dataclasses

    spec = dataclasses.replace(http_spec("http://127.0.0.1:9/", duration=1.0), **changes)
    calls: list[LoadSpec] = []
    with pytest.raises(SpecError, match=named):
        cold_start(spec, runner=refusing_runner(calls))
    assert calls == []


def test_runner_and_server_cannot_both_be_given() -> None:
    with pytest.raises(SpecError, match="either runner or server"):
        cold_start(
            "http://127.0.0.1:9/",
            runner=refusing_runner([]),
            server=object(),  # type: ignore[arg-type]
        )
