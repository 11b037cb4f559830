"""Sweeps and capacity searches as text: rows that fit 80 columns, notes that say what
went wrong, and an answer that says "unknown" with the reason when there is no number."""

from __future__ import annotations

import dataclasses
import math

from factories import make_result

from pytest_netbench._experiment.capacity import CapacityResult, CapacityStep
from pytest_netbench._experiment.cold_start import ColdStartResult
from pytest_netbench._experiment.sweep import SweepResult, SweepStep
from pytest_netbench._input.spec import http_spec
from pytest_netbench._load.attempts import Attempts
from pytest_netbench._model import TimelineRow
from pytest_netbench._report.experiments import (
    capacity_answer,
    capacity_step_lines,
    cold_start_lines,
    format_capacity,
    format_sweep,
    sweep_heading,
    sweep_row,
)

SPEC = http_spec("http://127.0.0.1:8080/", duration=5.0, rate=100.0)


def step(rate: float, **result: object) -> SweepStep:
    kept = dataclasses.replace(make_result(int(rate * 5), p50_ms=1.5, p99_ms=4.25), spec=SPEC)
    return SweepStep(rate, Attempts(dataclasses.replace(kept, **result)))  # type: ignore[arg-type]


def test_a_sweep_table_has_a_row_per_step_within_80_columns() -> None:
    result = SweepResult(
        (100.0, 200.0, 100_000.0),
        (step(100), step(200), step(100_000, errors={"timeout": 1_234_567})),
    )
    text = format_sweep(result)
    lines = text.splitlines()
    assert lines[0] == "Sweep GET http://127.0.0.1:8080/: 3 rates from 100 to 100,000 req/s"
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    rows = [line for line in lines if line.split() and line.split()[0] in ("100", "200")]
    assert len(rows) == 2
    assert rows[0].split()[-1] == "yes"
    assert "1.2M" in text  # a huge error count still fits its column
    assert "errors: 1,234,567 timeout" in text


def test_the_heading_says_how_each_step_runs() -> None:
    lines = sweep_heading(SPEC, (100.0,))
    assert lines[0] == "Sweep GET http://127.0.0.1:8080/: 1 rate, 100 req/s"
    assert lines[1].strip() == ("5 s per step, 10 connections (pool up to 1,024), uniform arrivals")


def test_a_step_row_notes_invalid_cut_and_discarded_runs() -> None:
    invalid = step(
        300,
        valid=False,
        invalid_reasons=("rate not achieved: 40 of 1500 scheduled requests were never sent",),
        invalid_causes=("rate_not_achieved",),
    )
    lines = sweep_row(invalid)
    assert lines[0].split()[-1] == "NO"
    assert "invalid: rate not achieved" in lines[1]

    cut = step(300, interrupted=True, duration_s=1.25)
    lines = sweep_row(cut)
    assert lines[0].split()[-1] == "cut"
    assert "interrupted after 1.2 s" in lines[1]

    spoiled = dataclasses.replace(make_result(10), valid=False, invalid_causes=("schedule_lag",))
    retried = SweepStep(300, Attempts(step(300).result, (spoiled, spoiled)))
    notes = " ".join(line.strip() for line in sweep_row(retried)[1:])
    assert "2 earlier run(s) discarded: the generator fell short (schedule_lag)" in notes


def test_a_sweep_says_why_it_stopped() -> None:
    early = SweepResult((1.0, 2.0), (step(1),), True, "stopped after 1 req/s: p99 9 ms is past")
    assert "Stopped past saturation: stopped after 1 req/s" in format_sweep(early)
    cut = dataclasses.replace(early, stop_reason="interrupted during 1 req/s", interrupted=True)
    assert format_sweep(cut).rstrip().endswith("Interrupted during 1 req/s.")


def capacity_step(rate: float, verdict: str, why: str, **fields: object) -> CapacityStep:
    kept = dataclasses.replace(make_result(10), spec=SPEC)
    return CapacityStep(rate, "bracket", verdict, why, Attempts(kept), **fields)  # type: ignore[arg-type]


def test_a_step_line_wraps_its_reason_under_itself() -> None:
    why = "p99_ms = 812 (needs < 50): FAILED; " * 4
    lines = capacity_step_lines(7, capacity_step(1234.5, "fail", why))
    assert lines[0].startswith("  7  bracket    1,234.5  fail     p99_ms = 812")
    assert len(lines) > 1
    assert all(len(line) <= 80 for line in lines)
    assert all(line.startswith(" " * 34) for line in lines[1:])


def test_a_repeated_step_says_how_its_rate_counted() -> None:
    repeat = dataclasses.replace(
        capacity_step(500, "pass", "p99_ms = 45 (needs < 50): ok"), phase="repeat", decision="pass"
    )
    assert "=> 500 req/s counts as pass" in " ".join(
        s.strip() for s in capacity_step_lines(3, repeat)
    )


def test_the_answer_or_unknown_with_the_reason() -> None:
    found = CapacityResult(990.0, "990 req/s met the SLO", "p99_ms < 50", 0.05, ())
    assert capacity_answer(found)[1] == "Capacity: 990 req/s"
    unknown = CapacityResult(
        None, "unknown: the generator could not produce 8,000 req/s", "p99_ms < 50", 0.05, (),
        at_least=4000.0,
    )  # fmt: skip
    lines = capacity_answer(unknown)
    assert lines[1] == "Capacity: unknown (at least 4,000 req/s)"
    assert lines[2].strip() == "the generator could not produce 8,000 req/s"
    cut = dataclasses.replace(unknown, interrupted=True)
    assert capacity_answer(cut)[1].startswith("Capacity: unknown (interrupted)")


def test_a_whole_search_numbers_its_steps() -> None:
    result = CapacityResult(
        100.0,
        "ok",
        "p99_ms < 50",
        0.05,
        (capacity_step(100, "pass", "fine"), capacity_step(200, "fail", "no")),
    )
    text = format_capacity(result)
    assert text.startswith("Capacity of GET http://127.0.0.1:8080/\n")
    assert "  1  bracket" in text and "  2  bracket" in text


def cold(oks: list[int]) -> ColdStartResult:
    rows = tuple(TimelineRow(i, ok, 0, 2.0, 1.0, 0.1) for i, ok in enumerate(oks))
    kept = dataclasses.replace(make_result(sum(oks)), timeline=rows, spec=SPEC)
    length = len(oks) / 10
    return ColdStartResult(Attempts(kept), length, resolution_s=0.1, settle_window_s=0.2)


def test_a_cold_start_row_per_step_with_its_share_of_the_fastest() -> None:
    lines = cold_start_lines(cold([10, 50, 100, 100, 100, 100]))
    rows = [line for line in lines if line.endswith(" 0") and " s " in line]
    assert len(rows) == 6
    assert rows[0].split()[:4] == ["0.0", "s", "10", "100"]
    assert "10%" in rows[0] and "100%" in rows[-1]
    assert "#" * 20 in rows[-1] and "#" * 3 not in rows[0]
    text = " ".join(" ".join(lines).split())
    assert "First second: 767 req/s, 0.77 of the steady 1,000 req/s" in text
    result = cold([10, 50, 100, 100, 100, 100])
    assert math.isfinite(result.settle_s)
    assert f"Settled: req/s within 10% of steady from {result.settle_s:.1f} s on" in text


def test_a_cold_start_that_never_settled_or_never_answered_says_so() -> None:
    text = " ".join(cold_start_lines(cold([100, 100, 100, 100, 100, 10])))
    assert "Not settled: the last row's req/s is more than 10% from steady" in text
    assert "No request succeeded" in " ".join(cold_start_lines(cold([0, 0, 0, 0])))
