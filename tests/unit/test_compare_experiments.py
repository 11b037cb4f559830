"""Experiments in a comparison: capacity as a metric (higher is better, never compared
when unknown), a sweep step by step, and thresholds that name them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from factories import make_result

from pytest_netbench._compare.gate import compare_runs, parse_thresholds
from pytest_netbench._compare.metrics import experiment_metric_value, higher_is_better
from pytest_netbench._compare.records import ExperimentRecord, without_nan
from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.capacity import CapacityResult, CapacityStep
from pytest_netbench._experiment.sweep import SweepResult, SweepStep
from pytest_netbench._load.attempts import Attempts
from pytest_netbench._report.comparison import render_comparison_text


def _capacity(rate: float | None, reason: str = "") -> dict[str, Any]:
    step = CapacityStep(
        rate=rate or 100.0,
        phase="confirm",
        verdict="pass" if rate else "unusable",
        why="",
        attempts=Attempts(make_result(100, p99_ms=5.0)),
    )
    result = CapacityResult(
        rate=rate,
        reason=reason or f"{rate} req/s met the SLO",
        slo="p99_ms < 50",
        precision=0.05,
        steps=(step,),
        at_least=rate,
    )
    # As the session carries it: through JSON, NaN as null.
    data: dict[str, Any] = json.loads(json.dumps(without_nan(result.to_dict())))
    return data


def _sweep(p99s: dict[float, float]) -> dict[str, Any]:
    steps = tuple(
        SweepStep(rate, Attempts(make_result(int(rate), p50_ms=p99 / 2, p99_ms=p99)))
        for rate, p99 in p99s.items()
    )
    data: dict[str, Any] = json.loads(
        json.dumps(without_nan(SweepResult(tuple(p99s), steps).to_dict()))
    )
    return data


def _record(kind: str, data: dict[str, Any], test: str = "test_cap") -> ExperimentRecord:
    return ExperimentRecord(
        nodeid=f"t.py::{test}",
        function=f"t.py::{test}",
        params={},
        kind=kind,  # type: ignore[arg-type]
        data=data,
    )


def test_capacity_is_a_gate_metric_where_higher_is_better() -> None:
    (threshold,) = parse_thresholds("capacity:5%")
    assert higher_is_better("capacity")
    assert threshold.describe() == "capacity drop > 5%"
    assert experiment_metric_value("capacity", _capacity(480.0), "capacity") == 480.0
    with pytest.raises(SpecError, match=r"unknown metric 'capacty'.*capacity"):
        parse_thresholds("capacty:5%")


def test_a_capacity_drop_past_the_threshold_fails_the_gate() -> None:
    comparison = compare_runs(
        [],
        [],
        parse_thresholds("capacity:5%,p99_ms:10%"),
        current_experiments=[_record("capacity", _capacity(400.0))],
        baseline_experiments=[_record("capacity", _capacity(480.0))],
    )
    (item,) = comparison.items
    assert item.metric == "capacity" and item.key == "t.py::test_cap"
    assert item.change == pytest.approx(400 / 480 - 1)
    assert item.verdict == "regression" and item.low_confidence
    assert comparison.failed
    text = render_comparison_text(comparison)
    assert "t.py::test_cap: capacity -16.7% (capacity drop > 5%)" in text


def test_an_unknown_capacity_is_never_compared_as_a_number() -> None:
    unknown = _capacity(None, "unknown: the generator could not produce 800 req/s")
    comparison = compare_runs(
        [],
        [],
        parse_thresholds("capacity:5%"),
        current_experiments=[_record("capacity", unknown)],
        baseline_experiments=[_record("capacity", _capacity(480.0))],
    )
    (item,) = comparison.items
    assert item.unknown and item.verdict == "unclear"
    assert item.current == () and item.baseline == (480.0,)
    assert item.note == (
        "capacity unknown in this run (unknown: the generator could not produce 800 req/s):"
        " not compared as a number"
    )
    assert not comparison.failed
    text = render_comparison_text(comparison)
    (row,) = [line for line in text.splitlines() if line.startswith("  capacity")]
    assert row.split()[-1] == "unknown"  # the verdict column
    assert "not compared as a number" in text


def test_a_sweep_is_compared_step_by_step_at_the_rates_both_ran() -> None:
    comparison = compare_runs(
        [],
        [],
        parse_thresholds("p99_ms:10%"),
        metrics=("p99_ms",),
        current_experiments=[_record("sweep", _sweep({100.0: 2.0, 200.0: 9.0}), "test_sw")],
        baseline_experiments=[_record("sweep", _sweep({100.0: 2.0, 300.0: 3.0}), "test_sw")],
    )
    (item,) = comparison.items
    assert item.key == "t.py::test_sw @ 100 req/s"
    assert item.verdict == "ok"


def test_tests_present_on_one_side_only_are_listed() -> None:
    comparison = compare_runs(
        [],
        [],
        current_experiments=[_record("capacity", _capacity(1.0), "test_new")],
        baseline_experiments=[_record("capacity", _capacity(1.0), "test_old")],
    )
    assert comparison.items == ()
    assert comparison.only_in_current == ("t.py::test_new",)
    assert comparison.only_in_baseline == ("t.py::test_old",)


def test_a_cold_start_compares_its_ratio_and_settle_time() -> None:
    def cold(ratio: float, settle: float | None) -> dict[str, Any]:
        return {
            "kind": "cold_start",
            "first_second_ratio": ratio,
            "settle_s": settle,
            "settled": settle is not None,
        }

    comparison = compare_runs(
        [],
        [],
        parse_thresholds("first_second_ratio:10%,settle_s:10%"),
        current_experiments=[_record("cold_start", cold(0.5, None), "test_cold")],
        baseline_experiments=[_record("cold_start", cold(0.8, 0.5), "test_cold")],
    )
    ratio, settle = comparison.items
    assert (ratio.metric, ratio.verdict) == ("first_second_ratio", "regression")
    assert settle.metric == "settle_s" and settle.unknown
    assert settle.note == (
        "settle_s unknown in this run (it never settled within the run): not compared as a number"
    )
    assert not higher_is_better("settle_s") and higher_is_better("first_second_ratio")
