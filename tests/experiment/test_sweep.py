"""Rate sweeps through a server of known capacity, and the rate lists they take."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.sweep import SweepResult, parse_rates, sweep
from pytest_netbench._input.spec import http_spec

CAPACITY = 500.0
StartPaced = Callable[[float], str]


@pytest.mark.parametrize(
    ("text", "rates"),
    [
        ("100:500:100", (100.0, 200.0, 300.0, 400.0, 500.0)),
        ("100:450:100", (100.0, 200.0, 300.0, 400.0)),
        ("0.1:0.3:0.1", (0.1, 0.2, 0.3)),
        ("100,200, 500", (100.0, 200.0, 500.0)),
        ("750", (750.0,)),
        ("5:5:1", (5.0,)),
    ],
)
def test_rate_lists(text: str, rates: tuple[float, ...]) -> None:
    assert parse_rates(text) == rates


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("100:2000", "start:stop:step"),
        ("100:2000:0", "step must be > 0"),
        ("2000:100:100", "below the start"),
        ("100,fast", "'fast' is not a number"),
        ("100,-5", "> 0"),
        ("1:100000:1", "more than"),
        ("", "not a number"),
    ],
)
def test_bad_rate_lists_say_what_is_wrong(text: str, named: str) -> None:
    with pytest.raises(SpecError, match=named):
        parse_rates(text)


def test_a_pipelined_spec_cannot_be_swept() -> None:
    spec = http_spec("http://127.0.0.1:9/", pipeline=4)
    with pytest.raises(SpecError, match="pipelining"):
        sweep(spec, rates=[100])


def test_a_sweep_through_capacity_keeps_the_rate_below_it_and_queues_above(
    paced_server: StartPaced,
) -> None:
    url = paced_server(CAPACITY)
    result = sweep(url, rates="250,400,480,560,700,900", duration=1.0, stop_p99_ms=250)

    assert [s.rate for s in result.steps][:3] == [250.0, 400.0, 480.0]
    for step in result.steps:
        r = step.result
        assert r.sent == r.ok + r.errors_total + r.in_flight
        assert r.mode == "open"
        assert r.uncorrected is not None
    below = [s for s in result.steps if s.rate < CAPACITY]
    above = [s for s in result.steps if s.rate > CAPACITY]
    for step in below:
        assert step.achieved_rate == pytest.approx(step.rate, rel=0.02)
        assert step.result.rps == pytest.approx(step.rate, rel=0.02)
    # Past capacity the queue grows for the whole step: latency climbs with the rate.
    p99s = [s.result.p99_ms for s in above]
    assert p99s == sorted(p99s)
    assert p99s[0] > 2 * max(s.result.p99_ms for s in below)
    # ... and the step far past it (p99 well over 250 ms) ends the sweep.
    assert result.stopped_early
    assert result.steps[-1].result.p99_ms > 250
    assert result.skipped_rates == (900.0,)
    assert "250 ms bound" in result.stop_reason

    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["kind"] == "sweep"
    row = data["steps"][0]
    assert row["rate"] == 250.0
    assert set(row["uncorrected"]) == {"p50_ms", "p90_ms", "p99_ms"}
    assert {"achieved_rate", "rps_stdev", "errors", "valid", "p90_ms"} <= set(row)
    back = SweepResult.from_dict(data)
    assert back.rates == result.rates
    assert back.skipped_rates == (900.0,)
    assert [s.result.ok for s in back.steps] == [s.result.ok for s in result.steps]
    assert back.to_dict()["steps"][2]["p99_ms"] == data["steps"][2]["p99_ms"]
    assert SweepResult.from_dict(back.to_dict()) == back
