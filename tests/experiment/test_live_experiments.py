"""Experiments as they run: each step handed on as it finishes, progress labelled
with the step, and a stop that ends the experiment with the steps done so far."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_netbench import LoadProgress, StopSignal
from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.capacity import CapacityResult, CapacityStep, capacity
from pytest_netbench._experiment.sweep import SweepResult, SweepStep, sweep
from pytest_netbench._input.spec import http_spec
from pytest_netbench._load.api import run_spec

StartPaced = Callable[[float], str]
CAPACITY = 1000.0
STEP_S = 1.5  # long enough for a progress report (every 0.5 s) well before its end


def test_a_sweep_hands_on_each_step_and_labels_its_progress(paced_server: StartPaced) -> None:
    url = paced_server(CAPACITY)
    seen: list[SweepStep] = []
    reports: list[LoadProgress] = []
    result = sweep(url, rates="100,200", duration=1.2, on_step=seen.append, progress=reports.append)
    assert seen == list(result.steps)
    assert not result.interrupted and not result.stopped_early
    assert {(p.step, p.steps, p.label) for p in reports} == {
        (1, 2, "100 req/s"),
        (2, 2, "200 req/s"),
    }


def test_a_sweep_stopped_between_steps_returns_the_steps_done(paced_server: StartPaced) -> None:
    url = paced_server(CAPACITY)
    stop = StopSignal()

    def after_step(step: SweepStep) -> None:
        if step.rate == 200:
            stop.request()

    result = sweep(url, rates="100,200,300,400", duration=0.5, stop=stop, on_step=after_step)
    assert result.interrupted and result.stopped_early
    assert [s.rate for s in result.steps] == [100, 200]
    assert result.skipped_rates == (300, 400)
    assert not any(s.result.interrupted for s in result.steps)
    assert "interrupted after 2 step(s)" in result.stop_reason
    assert "2 rate(s) not run" in result.stop_reason


def test_a_sweep_stopped_mid_step_keeps_the_cut_step(paced_server: StartPaced) -> None:
    url = paced_server(CAPACITY)
    stop = StopSignal()

    def watch(progress: LoadProgress) -> None:
        if progress.step == 2 and progress.completed > 0:
            stop.request()

    result = sweep(url, rates="100,200,300", duration=STEP_S, stop=stop, progress=watch)
    assert result.interrupted
    assert [s.rate for s in result.steps] == [100, 200]
    cut = result.steps[-1].result
    assert cut.interrupted and cut.ok > 0
    assert cut.sent == cut.ok + cut.errors_total + cut.in_flight
    assert cut.duration_s < STEP_S
    assert not result.steps[0].result.interrupted
    back = SweepResult.from_dict(result.to_dict())
    assert back.interrupted and back.steps[-1].result.interrupted


def test_a_capacity_search_hands_on_steps_in_order(paced_server: StartPaced) -> None:
    url = paced_server(CAPACITY)
    seen: list[CapacityStep] = []
    result = capacity(url, precision=0.2, duration=0.6, on_step=seen.append)
    assert seen == list(result.all_steps)
    assert seen[0].phase == "estimate"
    for step, after in zip(seen[1:], [*seen[2:], None], strict=True):
        if step.decision is None and step.verdict != "unusable":
            # Its rate was run again before it counted.
            assert after is not None and after.phase == "repeat" and after.rate == step.rate, seen


def test_a_capacity_search_stopped_mid_step_is_unknown_with_the_cut_step(
    paced_server: StartPaced,
) -> None:
    url = paced_server(CAPACITY)
    stop = StopSignal()
    reports: list[LoadProgress] = []

    def watch(progress: LoadProgress) -> None:
        reports.append(progress)
        if progress.step == 3 and progress.completed > 0:
            stop.request()

    result = capacity(
        url, start_rate=200, duration=STEP_S, stop=stop, progress=watch, max_error_rate=None
    )
    assert result.interrupted and not result.known
    assert len(result.all_steps) == 3
    cut = result.all_steps[-1]
    assert cut.result.interrupted and cut.verdict == "unusable"
    assert "interrupted" in cut.why and "not judged" in cut.why
    assert "interrupted" in result.reason
    # Each report is labelled with its step's number and rate (200, 400, then 800 req/s
    # unless a busy machine made a step near the bound worth repeating).
    labels = {(n, f"{p.rate:,.6g} req/s") for n, p in enumerate(result.all_steps, 1)}
    assert {(p.step, p.label) for p in reports} == labels
    assert all(p.steps is None for p in reports)  # a search does not know its length
    back = CapacityResult.from_dict(result.to_dict())
    assert back.interrupted and back.rate is None


def test_a_capacity_search_stopped_between_steps_runs_no_more(paced_server: StartPaced) -> None:
    url = paced_server(CAPACITY)
    stop = StopSignal()

    def after(step: CapacityStep) -> None:
        if step.phase != "estimate":
            stop.request()

    result = capacity(url, start_rate=200, duration=0.5, stop=stop, on_step=after)
    assert result.interrupted and not result.known
    assert [p.phase for p in result.all_steps] == ["bracket"]
    assert result.all_steps[0].decision == "pass"
    assert result.at_least == 200
    assert "interrupted before the next step" in result.reason


def test_progress_needs_the_default_runner() -> None:
    spec = http_spec("http://127.0.0.1:9/", duration=1.0)
    with pytest.raises(SpecError, match="progress= reaches the loads of the default runner"):
        sweep(spec, rates=[100], runner=run_spec, progress=lambda p: None)
