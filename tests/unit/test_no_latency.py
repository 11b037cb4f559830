"""A result with no ok response keeps its latency figures numeric (nan, JSON null) but every
read of one says why: ``nan (no request succeeded: 50 of 50 requests were status errors,
e.g. HTTP 404)``."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import pickle

import pytest
from factories import make_result

from pytest_netbench._model import (
    LatencySummary,
    LoadResult,
    NoLatency,
    RequestStats,
    why_no_latency,
)

LATENCY_NAMES = (
    "p50_ms",
    "p75_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "p999_ms",
    "max_ms",
    "mean_ms",
    "stdev_ms",
)


def _all_404(sent: int = 50) -> LoadResult:
    return dataclasses.replace(
        make_result(0, errors={"status": sent}),
        status_codes={404: sent},
        error_samples={"status": "HTTP 404"},
    )


@pytest.mark.parametrize("name", LATENCY_NAMES)
def test_every_latency_figure_of_a_result_with_no_ok_response_says_why(name: str) -> None:
    value = getattr(_all_404(), name)
    assert isinstance(value, float) and math.isnan(value)
    assert repr(value) == (
        "nan (no request succeeded: 50 of 50 requests were status errors, e.g. HTTP 404)"
    )
    assert not value < 50 and not value > 50  # compares as nan: every bound fails


def test_percentile_says_why_too() -> None:
    value = _all_404().percentile(99)
    assert math.isnan(value) and "50 of 50 requests were status errors" in repr(value)


def test_the_reason_names_every_kind_in_flight_and_a_short_sample() -> None:
    result = dataclasses.replace(
        make_result(0, errors={"status": 30, "reset": 15}),
        sent=50,
        in_flight=5,
        error_samples={"status": "HTTP 503 " + "x" * 200, "reset": "reset by peer"},
    )
    why = why_no_latency(result)
    assert why.startswith(
        "no request succeeded: of 50 requests, 30 were status errors, 15 reset errors and"
        " 5 still in flight at the end, e.g. HTTP 503 x"
    )
    assert why.endswith("...") and len(why) < 200
    one = dataclasses.replace(make_result(0, errors={"timeout": 1}), error_samples={})
    assert why_no_latency(one) == "no request succeeded: 1 of 1 requests was a timeout error"
    nothing = make_result(0)
    assert why_no_latency(nothing) == "no request succeeded: nothing was sent"


def test_an_echo_result_says_exchange() -> None:
    result = dataclasses.replace(
        make_result(0, errors={"verify": 8}), url="tcp://127.0.0.1:9/", error_samples={}
    )
    assert repr(result.p99_ms) == (
        "nan (no exchange succeeded: 8 of 8 exchanges were verify errors)"
    )


def test_figures_that_exist_are_plain_floats() -> None:
    result = make_result(10, p50_ms=1.5, p99_ms=3.0)
    assert type(result.p99_ms) is float and result.p99_ms == 3.0
    assert type(result.p50_ms) is float


def test_the_value_stays_json_and_pickle_friendly() -> None:
    value = _all_404().p99_ms
    assert f"{value:.3f}" == "nan"  # formatted figures read as before
    assert json.dumps(value) == "NaN"
    assert _all_404().to_dict()["p99_ms"] is None
    for again in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value)):
        assert isinstance(again, NoLatency) and repr(again) == repr(value)
    assert type(value + 1) is float  # arithmetic gives a plain nan


def test_a_kind_of_a_mix_with_no_ok_response_says_why() -> None:
    stats = RequestStats(
        name="missing",
        method="GET",
        path="/missing",
        duration_s=1.0,
        sent=4,
        ok=0,
        errors={"status": 4},
        in_flight=0,
        status_codes={404: 4},
        latency=LatencySummary(),
    )
    assert repr(stats.p99_ms) == (
        "nan (missing: no request succeeded: 4 of 4 requests were status errors)"
    )
